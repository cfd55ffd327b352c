// amplihack bridge plugin for Cline: written by `amplihack install`, removed by `amplihack uninstall`; re-run install rather than editing.
// Cline loads it (its plugin API) into a process of its own and calls its hooks; each runs
// amplihack-hooks with Claude Code's event on stdin (Cline's tool names and arguments; `--host
// cline` renames them) and acts on the JSON reply: a deny skips the tool with its reason (the model
// reads it as the tool's result), context (`contextModification`) is appended for the model's next
// request. If amplihack-hooks is missing, fails or is slow, the plugin does nothing: Cline carries on.
import { spawn } from "node:child_process";

const HOOKS = "@AMPLIHACK_HOOKS@";
// Cline gives a plugin hook 3 s, then ends the plugin's process (and with it every later hook of
// the run): a call still running at 2.5 s is given up, and the hook answers nothing.
const LIMIT_MS = 2500;

// Runs one event; resolves to the JSON reply (an empty object when there is none or the binary
// could not run).
function call(payload) {
  return new Promise((resolve) => {
    let child;
    try {
      child = spawn(HOOKS, ["dispatch", "--host", "cline"], { stdio: ["pipe", "pipe", "ignore"] });
    } catch {
      resolve({});
      return;
    }
    let out = "";
    const timer = setTimeout(() => {
      try { child.kill("SIGKILL"); } catch {}
    }, LIMIT_MS);
    child.stdout.on("data", (d) => { out += d; });
    child.stdin.on("error", () => {});
    child.on("error", () => { clearTimeout(timer); resolve({}); });
    child.on("close", () => {
      clearTimeout(timer);
      let reply = {};
      try { reply = out.trim() ? JSON.parse(out) : {}; } catch { reply = {}; }
      resolve(reply && typeof reply === "object" ? reply : {});
    });
    child.stdin.end(JSON.stringify(payload));
  });
}

function context(reply) {
  const text = reply?.contextModification;
  return typeof text === "string" && text.trim() ? text : undefined;
}

function text(content) {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.filter((p) => p?.type === "text").map((p) => p.text).join("\n");
}

const started = new Set(); // sessions whose SessionStart ran
const skipped = new Set(); // tool calls amplihack denied: Cline still runs afterTool for them
let sessionId; // Cline's session id (its record: ~/.cline/data/sessions/<id>/), from setup
const idOf = (snapshot) => sessionId ?? snapshot?.conversationId ?? snapshot?.agentId ?? "";
const base = (snapshot, event) => ({ session_id: idOf(snapshot), cwd: process.cwd(), hook_event_name: event });

export default {
  name: "amplihack",
  manifest: { capabilities: ["hooks"] },
  setup(_api, ctx) {
    if (typeof ctx?.session?.sessionId === "string") sessionId = ctx.session.sessionId;
  },
  hooks: {
    async beforeRun({ snapshot }) {
      // SessionStart and UserPromptSubmit side by side: the hook has 3 s for both.
      const calls = [];
      const id = idOf(snapshot);
      if (!started.has(id)) {
        started.add(id);
        calls.push(call({ ...base(snapshot, "SessionStart"), source: "startup" }));
      }
      const users = (snapshot?.messages ?? []).filter((m) => m?.role === "user");
      const prompt = text(users[users.length - 1]?.content);
      calls.push(call({ ...base(snapshot, "UserPromptSubmit"), prompt }));
      const appendContext = (await Promise.all(calls)).map(context).filter(Boolean).join("\n\n");
      return appendContext ? { appendContext } : undefined;
    },
    async beforeTool({ snapshot, toolCall, input }) {
      const reply = await call({
        ...base(snapshot, "PreToolUse"),
        tool_name: toolCall?.toolName,
        tool_input: input ?? {},
        tool_use_id: toolCall?.toolCallId,
      });
      const appendContext = context(reply);
      if (reply.skip === true) {
        if (toolCall?.toolCallId) skipped.add(toolCall.toolCallId);
        return { skip: true, reason: String(reply.reason ?? "denied by amplihack"), appendContext };
      }
      return appendContext ? { appendContext } : undefined;
    },
    async afterTool({ snapshot, toolCall, input, result }) {
      if (skipped.delete(toolCall?.toolCallId)) return undefined;
      const reply = await call({
        ...base(snapshot, "PostToolUse"),
        tool_name: toolCall?.toolName,
        tool_input: input ?? {},
        tool_use_id: toolCall?.toolCallId,
        tool_response: result?.output ?? result,
      });
      const appendContext = context(reply);
      return appendContext ? { appendContext } : undefined;
    },
    async afterRun({ snapshot }) {
      await call({ ...base(snapshot, "Stop"), stop_hook_active: false });
    },
  },
};
