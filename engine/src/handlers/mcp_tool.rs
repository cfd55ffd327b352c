//! `{"type": "mcp_tool", "server": "...", "tool": "..."}`: Claude Code calls a tool of one of its
//! connected MCP servers (2.1.118). amplihack has no MCP connection: under Claude Code the handler
//! is registered as Claude Code's own hook entry ([`HandlerKind::host_entry`]); under Amplifier it
//! does not run, and `hooks validate` and `hooks list` say so.

use serde_json::{Map, Value};

use super::{Context, FieldError, HandlerKind, optional_string};

#[derive(Debug, Clone, PartialEq)]
pub struct McpTool {
    label: String,
    /// The handler as written, for Claude Code to run.
    pub raw: Map<String, Value>,
}

impl McpTool {
    pub fn parse(handler: &Map<String, Value>, at: &str) -> Result<McpTool, FieldError> {
        let server = optional_string(handler, at, "server")?.unwrap_or_default();
        let tool = optional_string(handler, at, "tool")?.unwrap_or_default();
        Ok(McpTool {
            label: format!("mcp_tool {server}/{tool}"),
            raw: handler.clone(),
        })
    }
}

impl HandlerKind for McpTool {
    fn type_name(&self) -> &'static str {
        "mcp_tool"
    }

    fn label(&self) -> &str {
        &self.label
    }

    fn program(&self, _context: &Context<'_>) -> Result<Vec<String>, String> {
        Err(
            "an `mcp_tool` handler needs the host's MCP connection, which amplihack does not have"
                .into(),
        )
    }

    fn host_entry(&self) -> Option<(&Map<String, Value>, super::Version)> {
        Some((&self.raw, (2, 1, 118)))
    }
}
