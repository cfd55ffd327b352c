// amplihack bridge extension for Pi: written by `amplihack install`, removed by `amplihack uninstall`; re-run install rather than editing.
// On each Pi event it runs amplihack-hooks with Claude Code's event on stdin (Pi's tool names and
// arguments; `--host pi` renames them) and acts on the JSON reply: a deny blocks the tool call
// with its reason (the model reads it as the tool's result), context becomes a message after the
// prompt, a Stop "block" at the end of a turn queues the reason as a follow-up prompt. If
// amplihack-hooks is missing, fails or is slow, the extension does nothing: Pi carries on.
import { spawn, spawnSync } from "node:child_process";

const HOOKS = "@AMPLIHACK_HOOKS@";
const LIMIT_MS = 60000;

// Runs one event; resolves to { code, reply, stderr }, or null when the binary could not run.
function call(payload) {
  return new Promise((resolve) => {
    let child;
    try {
      child = spawn(HOOKS, ["dispatch", "--host", "pi"], { stdio: ["pipe", "pipe", "pipe"] });
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

// Runs one event and waits for it, blocking: for turn_end, whose handler Pi does not await
// before it looks for a follow-up prompt (a Stop "block" must be queued by then).
function callNow(payload) {
  try {
    const run = spawnSync(HOOKS, ["dispatch", "--host", "pi"], { input: JSON.stringify(payload), encoding: "utf8", timeout: LIMIT_MS });
    if (run.error) return null;
    let reply = {};
    try { reply = run.stdout.trim() ? JSON.parse(run.stdout) : {}; } catch { reply = {}; }
    return { code: run.status, reply: reply && typeof reply === "object" ? reply : {}, stderr: (run.stderr ?? "").trim() };
  } catch {
    return null;
  }
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

function text(content) {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.filter((p) => p?.type === "text").map((p) => p.text).join("\n");
}

export default function amplihackBridge(pi) {
  // Installed for the user and for this project, Pi loads both copies: only the one loaded
  // last acts, so each event runs amplihack once.
  const me = Symbol("amplihack");
  globalThis.__amplihackPiBridge = me;
  const mine = () => globalThis.__amplihackPiBridge === me;
  const started = new Set(); // sessions whose SessionStart ran
  const continued = new Set(); // sessions whose last prompt was a Stop continuation
  const base = (ctx, event) => {
    const sm = ctx?.sessionManager;
    const payload = { session_id: sm?.getSessionId?.() ?? "", cwd: ctx?.cwd ?? process.cwd(), hook_event_name: event };
    const file = sm?.getSessionFile?.();
    if (file) payload.transcript_path = file;
    return payload;
  };

  pi.on("before_agent_start", async (event, ctx) => {
    if (!mine()) return;
    const notes = [];
    const id = ctx?.sessionManager?.getSessionId?.() ?? "";
    if (!started.has(id)) {
      started.add(id);
      notes.push(context(await call({ ...base(ctx, "SessionStart"), source: "startup" })));
    }
    notes.push(context(await call({ ...base(ctx, "UserPromptSubmit"), prompt: event?.prompt ?? "" })));
    const content = notes.filter(Boolean).join("\n\n");
    if (!content) return;
    return { message: { customType: "amplihack", content, display: false } };
  });

  pi.on("tool_call", async (event, ctx) => {
    if (!mine()) return;
    const result = await call({
      ...base(ctx, "PreToolUse"),
      tool_name: event?.toolName,
      tool_input: event?.input ?? {},
      tool_use_id: event?.toolCallId,
    });
    const reason = denial(result);
    if (reason) return { block: true, reason };
    const updated = result?.reply?.hookSpecificOutput?.updatedInput;
    if (updated && typeof updated === "object" && event?.input && typeof updated.command === "string" && "command" in event.input) {
      event.input.command = updated.command;
    }
  });

  pi.on("tool_result", async (event, ctx) => {
    if (!mine()) return;
    const result = await call({
      ...base(ctx, "PostToolUse"),
      tool_name: event?.toolName,
      tool_input: event?.input ?? {},
      tool_use_id: event?.toolCallId,
      tool_response: text(event?.content),
    });
    const extra = [denial(result), context(result)].filter(Boolean).join("\n");
    if (!extra) return;
    const content = Array.isArray(event?.content) ? event.content : [];
    return { content: [...content, { type: "text", text: extra }] };
  });

  pi.on("turn_end", (event, ctx) => {
    if (!mine()) return;
    const parts = Array.isArray(event?.message?.content) ? event.message.content : [];
    if (event?.message?.role !== "assistant" || parts.some((p) => p?.type === "toolCall")) return;
    const id = ctx?.sessionManager?.getSessionId?.() ?? "";
    const active = continued.delete(id);
    const result = callNow({ ...base(ctx, "Stop"), stop_hook_active: active, last_assistant_message: text(parts) });
    const reason = result?.reply?.decision === "block" ? result.reply.reason : null;
    if (!reason) return;
    continued.add(id);
    try {
      pi.sendUserMessage(reason, { deliverAs: "followUp" });
    } catch {
      continued.delete(id);
    }
  });

  pi.on("session_before_compact", async (_event, ctx) => {
    if (!mine()) return;
    await call({ ...base(ctx, "PreCompact"), trigger: "auto" });
  });

  pi.on("session_shutdown", async (event, ctx) => {
    if (!mine()) return;
    await call({ ...base(ctx, "SessionEnd"), reason: event?.reason === "quit" ? "prompt_input_exit" : "other" });
  });
}
