//! `{"type": "mcp_tool", "server": "...", "tool": "..."}`: Claude Code calls a tool of one of its
//! connected MCP servers. amplihack has no MCP connection; `amplihack hooks validate` and `hooks
//! list` say so.

use serde_json::{Map, Value};

use super::{Context, FieldError, HandlerKind, optional_string};

#[derive(Debug, Clone, PartialEq)]
pub struct McpTool {
    label: String,
}

impl McpTool {
    pub fn parse(handler: &Map<String, Value>, at: &str) -> Result<McpTool, FieldError> {
        let server = optional_string(handler, at, "server")?.unwrap_or_default();
        let tool = optional_string(handler, at, "tool")?.unwrap_or_default();
        Ok(McpTool {
            label: format!("mcp_tool {server}/{tool}"),
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
}
