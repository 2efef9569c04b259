#!/usr/bin/env python3
"""Starts `flakesense serve` on a workspace, waits for its first count of the workspace's tests,
saves one test file (`textDocument/didSave`) and reports how long the count that follows took:
what a save costs the server in signal shares (the count waits one second for more saves first).

    python3 benches/recount_after_save.py WORKSPACE SAVED_FILE target/release/flakesense
"""

import json
import os
import subprocess
import sys
import time


def main():
    root, saved, binary = sys.argv[1:4]
    server = subprocess.Popen(
        [binary, "serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )

    def send(message):
        body = json.dumps(message).encode()
        server.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        server.stdin.flush()

    def receive():
        length = None
        while True:
            line = server.stdout.readline()
            if not line:
                sys.exit("the server closed its output")
            if line == b"\r\n":
                break
            name, value = line.decode().split(":", 1)
            if name.strip().lower() == "content-length":
                length = int(value)
        return json.loads(server.stdout.read(length))

    def uri(path):
        return "file://" + os.path.abspath(path)

    send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
          "params": {"processId": None, "rootUri": uri(root), "capabilities": {}}})
    started = time.time()
    saved_at = None
    try:
        while True:
            message = receive()
            if message.get("id") == 1:
                send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
            elif "id" in message and "method" in message:
                send({"jsonrpc": "2.0", "id": message["id"], "result": None})
            elif message.get("method") == "window/logMessage" and message["params"][
                "message"
            ].startswith("read the"):
                print(f"{time.time() - started:6.2f} s: {message['params']['message']}")
                if saved_at is not None:
                    print(f"logged {time.time() - saved_at:.2f} s after the save")
                    return
                saved_at = time.time()
                send({"jsonrpc": "2.0", "method": "textDocument/didSave",
                      "params": {"textDocument": {"uri": uri(saved)}}})
    finally:
        server.kill()


if __name__ == "__main__":
    main()
