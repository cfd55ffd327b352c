// amplihack bridge plugin for opencode: written by `amplihack install`, removed by `amplihack uninstall`; re-run install rather than editing.
// On each opencode event it runs amplihack-hooks with Claude Code's event on stdin and acts on the
// JSON reply: a deny throws in tool.execute.before, context goes into the system prompt, a Stop
// "block" at session.idle sends the reason as the next prompt. If amplihack-hooks is missing,
// fails or is slow, the plugin does nothing: opencode carries on.
import { spawn } from "node:child_process";

const HOOKS = "@AMPLIHACK_HOOKS@";
const LIMIT_MS = 60000;

// Runs one event; resolves to { code, reply, stderr }, or null when the binary could not run.
function call(payload) {
  return new Promise((resolve) => {
    let child;
    try {
      child = spawn(HOOKS, ["dispatch", "--host", "opencode"], { stdio: ["pipe", "pipe", "pipe"] });
    } catch {
      resolve(null);
      return;
    }
    let out = "";
    let err = "";
    const timer = setTimeout(() => {
      try { child.kill("SIGKILL"); } catch {}
    }, LIMIT_MS);
    child.stdout.on("data", (d) => { out += d; });
    child.stderr.on("data", (d) => { err += d; });
    child.stdin.on("error", () => {});
    child.on("error", () => { clearTimeout(timer); resolve(null); });
    child.on("close", (code) => {
      clearTimeout(timer);
      let reply = {};
      try { reply = out.trim() ? JSON.parse(out) : {}; } catch { reply = {}; }
      if (!reply || typeof reply !== "object") reply = {};
      resolve({ code, reply, stderr: err.trim() });
    });
    child.stdin.end(JSON.stringify(payload));
  });
}

function context(result) {
  const text = result?.reply?.hookSpecificOutput?.additionalContext;
  return typeof text === "string" && text.trim() ? text : null;
}

function denial(result) {
  if (!result) return null;
  if (result.code === 2) return result.stderr || "denied by amplihack";
  const r = result.reply;
  const specific = r.hookSpecificOutput ?? {};
  if (specific.permissionDecision === "deny") return specific.permissionDecisionReason || r.reason || "denied by amplihack";
  if (r.decision === "block" || r.decision === "deny") return r.reason || "denied by amplihack";
  return null;
}

export const AmplihackBridge = async ({ client, directory }) => {
  // Installed for the user and for this project, opencode loads both copies: only the one
  // loaded last for a directory acts, so each event runs amplihack once.
  const me = Symbol("amplihack");
  const live = (globalThis.__amplihackBridges ??= new Map());
  live.set(directory, me);
  const mine = () => live.get(directory) === me;
  const started = new Map(); // sessionID -> SessionStart context (or null)
  const prompted = new Map(); // sessionID -> the latest prompt's context (or null)
  const continued = new Set(); // sessions whose last prompt was a Stop continuation
  const base = (sessionID, event) => ({ session_id: sessionID, cwd: directory, hook_event_name: event });

  return {
    "chat.message": async (input, output) => {
      if (!mine()) return;
      const id = input?.sessionID;
      if (!id) return;
      if (!started.has(id)) {
        started.set(id, null);
        started.set(id, context(await call({ ...base(id, "SessionStart"), source: "startup" })));
      }
      const parts = Array.isArray(output?.parts) ? output.parts : [];
      const prompt = parts.filter((p) => p?.type === "text" && !p.synthetic).map((p) => p.text).join("\n");
      prompted.set(id, context(await call({ ...base(id, "UserPromptSubmit"), prompt })));
    },
    "experimental.chat.system.transform": async (input, output) => {
      if (!mine()) return;
      const id = input?.sessionID;
      if (!id || !Array.isArray(output?.system)) return;
      for (const text of [started.get(id), prompted.get(id)]) {
        if (text) output.system.push(text);
      }
    },
    "tool.execute.before": async (input, output) => {
      if (!mine()) return;
      const result = await call({
        ...base(input?.sessionID, "PreToolUse"),
        tool_name: input?.tool,
        tool_input: output?.args ?? {},
        tool_use_id: input?.callID,
      });
      const reason = denial(result);
      if (reason) throw new Error(reason);
      const updated = result?.reply?.hookSpecificOutput?.updatedInput;
      if (updated && typeof updated === "object" && output?.args) Object.assign(output.args, updated);
    },
    "tool.execute.after": async (input, output) => {
      if (!mine()) return;
      const result = await call({
        ...base(input?.sessionID, "PostToolUse"),
        tool_name: input?.tool,
        tool_input: input?.args ?? {},
        tool_use_id: input?.callID,
        tool_response: output?.output,
      });
      const extra = [denial(result), context(result)].filter(Boolean).join("\n");
      if (extra && typeof output?.output === "string") output.output += "\n\n" + extra;
    },
    "experimental.session.compacting": async (input) => {
      if (!mine()) return;
      await call({ ...base(input?.sessionID, "PreCompact"), trigger: "auto" });
    },
    event: async ({ event }) => {
      if (!mine()) return;
      if (event?.type !== "session.idle") return;
      const id = event.properties?.sessionID;
      if (!id) return;
      const active = continued.delete(id);
      const result = await call({ ...base(id, "Stop"), stop_hook_active: active });
      const reason = result?.reply?.decision === "block" ? result.reply.reason : null;
      if (!reason) return;
      continued.add(id);
      try {
        await client.session.prompt({ path: { id }, body: { parts: [{ type: "text", text: reason }] } });
      } catch {
        continued.delete(id);
      }
    },
  };
};
