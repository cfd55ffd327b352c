//! The proposal's `type: llm` hook, run by a spawned helper: `python3` with the helper below,
//! which renders the prompt (`{{tool}}`, `{{args}}`), asks the Anthropic Messages API
//! (`$ANTHROPIC_BASE_URL`, `$ANTHROPIC_API_KEY`, as the host has them) and answers in the
//! proposal's JSON: `{"safe": false, "reason": ...}` from the model blocks with the reason. With
//! `cache: true` an identical request (model, max_tokens, rendered prompt) is answered from a
//! cache kept for the session under the plugin's data directory. The hook binary itself links no
//! HTTP or TLS: the helper is a separate process, and its failure (no python3, no key, an answer
//! that is not the JSON asked for) is the hook's failure, for its `on_failure`.

use serde_json::{Map, Value, json};

/// The helper: argv is model, max_tokens, cache (1/0), the prompt template; the proposal's event on stdin.
const HELPER: &str = r#"import hashlib, json, os, sys, urllib.request
def main():
    model, max_tokens, cache, template = sys.argv[1], int(sys.argv[2]), sys.argv[3] == '1', sys.argv[4]
    event = json.load(sys.stdin)
    prompt = template.replace('{{tool}}', str(event.get('tool') or '')).replace('{{args}}', json.dumps(event.get('args'), sort_keys=True))
    key = hashlib.sha256(json.dumps([model, max_tokens, prompt]).encode()).hexdigest()
    path, store = None, {}
    if cache and os.environ.get('CLAUDE_PLUGIN_DATA'):
        folder = os.path.join(os.environ['CLAUDE_PLUGIN_DATA'], 'llm-cache')
        os.makedirs(folder, exist_ok=True)
        session = ''.join(c for c in str(event.get('session_id') or 'none') if c.isalnum() or c in '-_')[:80]
        path = os.path.join(folder, session + '.json')
        try:
            with open(path) as f:
                store = json.load(f)
        except (OSError, ValueError):
            store = {}
        if key in store:
            print(json.dumps(store[key]))
            return
    api_key = os.environ.get('ANTHROPIC_API_KEY')
    if not api_key:
        sys.exit('llm hook: ANTHROPIC_API_KEY is not set, so no model can be asked')
    base = os.environ.get('ANTHROPIC_BASE_URL', 'https://api.anthropic.com').rstrip('/')
    body = json.dumps({'model': model, 'max_tokens': max_tokens, 'messages': [{'role': 'user', 'content': prompt}]}).encode()
    request = urllib.request.Request(base + '/v1/messages', data=body, headers={'content-type': 'application/json', 'x-api-key': api_key, 'anthropic-version': '2023-06-01'})
    with urllib.request.urlopen(request, timeout=60) as response:
        reply = json.load(response)
    text = ''.join(b.get('text', '') for b in reply.get('content', []) if b.get('type') == 'text')
    start, end = text.find('{'), text.rfind('}')
    if start < 0 or end < start:
        sys.exit('llm hook: the model did not answer with JSON: ' + text[:200])
    verdict = json.loads(text[start:end + 1])
    safe = verdict.get('safe', True) is not False
    answer = {'action': 'allow' if safe else 'block', 'message': None if safe else str(verdict.get('reason') or 'the model judged it unsafe')}
    if path:
        store[key] = answer
        with open(path, 'w') as f:
            json.dump(store, f)
    print(json.dumps(answer))
try:
    main()
except SystemExit:
    raise
except Exception as error:
    sys.exit('llm hook: ' + type(error).__name__ + ': ' + str(error))
"#;

/// The exec-form handler that runs the helper for one `type: llm` hook.
pub fn handler(model: &str, max_tokens: u64, cache: bool, prompt: &str) -> Map<String, Value> {
    let spec = json!({
        "type": "command",
        "command": "python3",
        "args": ["-c", HELPER, model, max_tokens.to_string(), if cache { "1" } else { "0" }, prompt],
    });
    match spec {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// Why the helper cannot run here, if it cannot: no `python3` on PATH.
pub fn cannot_run() -> Option<String> {
    let path = std::env::var_os("PATH")?;
    let found = std::env::split_paths(&path).any(|dir| dir.join("python3").is_file());
    (!found).then(|| "type `llm` runs through python3, which is not on PATH here: it will fail (and its on_failure decides)".to_string())
}
