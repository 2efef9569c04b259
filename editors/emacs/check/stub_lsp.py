"""A stand-in language server for checking the Emacs configuration (not flakesense itself).

Started as NAME [ARGS], it logs what it receives as JSON lines to $STUB_LOG_DIR/NAME.jsonl, asks
for its settings with workspace/configuration, publishes one diagnostic per opened document and
offers one code action."""
import json, os, sys

name = sys.argv[1]
args = sys.argv[2:]
log_path = os.path.join(os.environ.get("STUB_LOG_DIR", "/tmp"), name + ".jsonl")
stdin, stdout = sys.stdin.buffer, sys.stdout.buffer

def log(event, data=None):
    with open(log_path, "a") as f:
        f.write(json.dumps({"event": event, "data": data}) + "\n")

def read():
    length = None
    while True:
        line = stdin.readline()
        if not line:
            return None
        line = line.strip()
        if not line:
            break
        key, _, value = line.decode().partition(":")
        if key.lower() == "content-length":
            length = int(value)
    return json.loads(stdin.read(length))

def send(message):
    body = json.dumps(message).encode()
    stdout.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    stdout.flush()

log("start", {"args": args})
is_flakesense = name == "flakesense"
while True:
    message = read()
    if message is None:
        break
    method = message.get("method")
    if method is None:
        log("response", message)
        continue
    if method == "initialize":
        log("initialize", {"initializationOptions": message["params"].get("initializationOptions", "absent"),
                           "rootUri": message["params"].get("rootUri")})
        capabilities = {"textDocumentSync": 1}
        if is_flakesense:
            capabilities["codeActionProvider"] = True
            capabilities["executeCommandProvider"] = {"commands": ["flakesense.markFlaky", "flakesense.markNotFlaky", "flakesense.showSimilar"]}
        else:
            capabilities["hoverProvider"] = True
        send({"jsonrpc": "2.0", "id": message["id"], "result": {"capabilities": capabilities, "serverInfo": {"name": name}}})
    elif method == "initialized":
        log("initialized")
        if is_flakesense:
            send({"jsonrpc": "2.0", "id": "configuration-1", "method": "workspace/configuration",
                  "params": {"items": [{"section": "flakesense"}]}})
    elif method == "textDocument/didOpen":
        document = message["params"]["textDocument"]
        log("didOpen", {"uri": document["uri"], "languageId": document["languageId"]})
        send({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics", "params": {
            "uri": document["uri"], "diagnostics": [{
                "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 5}},
                "severity": 2, "source": name, "message": f"{name} saw this file"}]}})
    elif method == "workspace/didChangeConfiguration":
        log("didChangeConfiguration", message["params"])
    elif method == "textDocument/codeAction":
        uri = message["params"]["textDocument"]["uri"]
        result = [{"title": "flakesense: mark as flaky", "kind": "quickfix",
                   "command": {"title": "mark", "command": "flakesense.markFlaky", "arguments": [uri, "Test#waits"]}}] if is_flakesense else []
        send({"jsonrpc": "2.0", "id": message["id"], "result": result})
    elif method == "workspace/executeCommand":
        log("executeCommand", message["params"])
        send({"jsonrpc": "2.0", "id": message["id"], "result": None})
    elif method == "shutdown":
        send({"jsonrpc": "2.0", "id": message["id"], "result": None})
    elif method == "exit":
        break
    elif "id" in message:
        send({"jsonrpc": "2.0", "id": message["id"], "result": None})
    else:
        log("notification", {"method": method})
log("exit")
