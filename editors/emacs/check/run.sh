#!/usr/bin/env bash
# Starts Emacs in batch mode with ../flakesense.el, against stand-in servers (stub_lsp.py) named
# flakesense, jdtls and pylsp, and checks what reached them: that eglot runs flakesense beside jdtls
# through rassumfrassum, or alone, and that lsp-mode runs it as an add-on beside pylsp, each with
# the settings as initialization options and a server command routed to flakesense.
#
# Needs: emacs (28+) with eglot and lsp-mode, python3, and rass (`pip install rassumfrassum`).
# On Debian 12: apt-get install emacs-nox elpa-eglot elpa-lsp-mode.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

mkdir -p "$work/bin" "$work/project/src"
for name in flakesense jdtls pylsp; do
    printf '#!/bin/sh\nexec python3 %s %s "$@"\n' "$here/stub_lsp.py" "$name" > "$work/bin/$name"
    chmod +x "$work/bin/$name"
done
git -C "$work/project" init -q .
printf 'class OrderServiceTest {\n  @Test void waits() throws Exception { Thread.sleep(1000); }\n}\n' \
    > "$work/project/src/OrderServiceTest.java"
printf 'def test_waits():\n    import time\n    time.sleep(1)\n' > "$work/project/src/test_order.py"

failures=0
# run NAME FILE ELISP [VAR=VALUE...]; then the expectations as python3 expressions on `log`
check() {
    local name="$1" file="$2" script="$3"; shift 3
    local logs="$work/logs-$name"
    mkdir -p "$logs"
    if ! env PATH="$work/bin:$PATH" STUB_LOG_DIR="$logs" FLAKESENSE_EL="$here/../flakesense.el" \
        FILE="$work/project/src/$file" "${environment[@]}" \
        timeout 120 emacs --batch -l "$here/$script" > "$logs/emacs.txt" 2>&1; then
        echo "FAIL $name: emacs exited with an error"; sed 's/^/    /' "$logs/emacs.txt" | tail -20
        failures=$((failures + 1)); return
    fi
    local before=$failures
    for expectation in "$@"; do
        if ! python3 - "$logs" "$expectation" <<'PY'
import json, os, sys
logs, expectation = sys.argv[1], sys.argv[2]
def log(name, event):
    path = os.path.join(logs, name + ".jsonl")
    if not os.path.exists(path):
        return []
    entries = [json.loads(line) for line in open(path)]
    return [entry["data"] for entry in entries if entry["event"] == event]
sys.exit(0 if eval(expectation) else 1)
PY
        then
            echo "FAIL $name: $expectation"; failures=$((failures + 1))
        fi
    done
    [ "$failures" -eq "$before" ] && echo "ok $name"
    return 0
}

settings='{"warningThreshold": 0.9, "models": ["'"$work"'/project/ci/flaky.idx"], "exclude": ["gen/**"]}'

environment=()
check eglot-rass-java OrderServiceTest.java eglot-check.el \
    "log('flakesense', 'start') == [{'args': ['serve']}]" \
    "log('flakesense', 'initialize')[0]['initializationOptions'] == $settings" \
    "log('jdtls', 'initialize')[0]['initializationOptions'] == {}" \
    "len(log('jdtls', 'didOpen')) == 1 and len(log('flakesense', 'didOpen')) == 1" \
    "log('flakesense', 'executeCommand')[0]['command'] == 'flakesense.markFlaky'" \
    "log('jdtls', 'executeCommand') == []"

environment=(MULTIPLEXER=none WSCONF=1)
check eglot-alone-python test_order.py eglot-check.el \
    "log('flakesense', 'initialize')[0]['initializationOptions'] == $settings" \
    "log('pylsp', 'start') == []" \
    "[r['result'] for r in log('flakesense', 'response')] == [[{'k': 5}]]" \
    "log('flakesense', 'didChangeConfiguration') == [{'settings': {'flakesense': {'k': 5}}}]"

environment=()
check lsp-mode-python test_order.py lsp-mode-check.el \
    "log('flakesense', 'initialize')[0]['initializationOptions'] == {'warningThreshold': 0.9, 'exclude': ['gen/**']}" \
    "len(log('pylsp', 'didOpen')) == 1 and len(log('flakesense', 'didOpen')) == 1" \
    "[r['result'] for r in log('flakesense', 'response')] == [[{'warningThreshold': 0.9, 'exclude': ['gen/**']}]]" \
    "log('flakesense', 'executeCommand')[0]['arguments'][1] == 'Test#waits'"

if [ "$failures" -ne 0 ]; then
    echo "$failures failed"; exit 1
fi
echo "all Emacs checks passed"
