#!/usr/bin/env bash
# Starts Emacs in batch mode with ../flakesense.el and checks two things.
#
# The configuration, against stand-in servers (stub_lsp.py) named flakesense, jdtls and pylsp:
# that eglot runs flakesense beside jdtls through rassumfrassum, or alone, and that lsp-mode runs
# it as an add-on beside pylsp, each with the settings as initialization options and a server
# command routed to flakesense.
#
# The real server ($FLAKESENSE, else `flakesense` on PATH) on a copy of tests/fixtures/demo, as a
# user sees it: the warning on a flaky test's name in Flymake, the code actions on another test,
# and, after picking "Mark as flaky", the label in .flakesense/index and the new diagnostic on
# that test without another edit; with eglot alone, eglot through rass ($RASS_RUNS times, 3 by
# default: the new diagnostic once showed only at the next edit in 7 of 8 runs) and lsp-mode.
#
# Needs emacs (28+) with eglot and lsp-mode, python3 and rass (`pip install rassumfrassum`); on
# Debian 12: apt-get install emacs-nox elpa-eglot elpa-lsp-mode. A check whose client is missing
# says so and is skipped. Prints one line per check; exits 1 when one failed.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repository="$(cd "$here/../../.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
rass_runs="${RASS_RUNS:-3}"
failures=0

has_feature() { emacs --batch --eval "(require '$1)" > /dev/null 2>&1; }
has_eglot=false; has_feature eglot && has_eglot=true
has_lsp_mode=false; has_feature lsp-mode && has_lsp_mode=true
has_rass=false; command -v rass > /dev/null && has_rass=true
# skip_unless CONDITION NAME WHAT: says why NAME is skipped when CONDITION is false.
skip_unless() {
    if [ "$1" = true ]; then return 0; fi
    echo "skipped $2: $3 is not installed"; return 1
}

mkdir -p "$work/bin" "$work/project/src"
for name in flakesense jdtls pylsp; do
    printf '#!/bin/sh\nexec python3 %s %s "$@"\n' "$here/stub_lsp.py" "$name" > "$work/bin/$name"
    chmod +x "$work/bin/$name"
done
git -C "$work/project" init -q .
printf 'class OrderServiceTest {\n  @Test void waits() throws Exception { Thread.sleep(1000); }\n}\n' \
    > "$work/project/src/OrderServiceTest.java"
printf 'def test_waits():\n    import time\n    time.sleep(1)\n' > "$work/project/src/test_order.py"

# judge NAME FILE EXPECTATION...: runs each python3 expression with `report` (the JSON in FILE)
# and `log(server, event)` (what the stand-in SERVER logged) in scope.
judge() {
    local name="$1" file="$2"; shift 2
    local before=$failures
    for expectation in "$@"; do
        if ! python3 - "$file" "$expectation" <<'PY'
import json, os, sys
path, expectation = sys.argv[1], sys.argv[2]
report = json.load(open(path)) if path.endswith(".json") else {}
for key in ("before", "after", "actions", "order"):
    report[key] = report.get(key) or []
def log(name, event):
    path = os.path.join(sys.argv[1], name + ".jsonl")
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
    [ "$failures" -eq "$before" ]
}

# config NAME FILE ELISP; then the expectations on `log`. $environment holds VAR=VALUE settings.
config() {
    local name="$1" file="$2" script="$3"; shift 3
    local logs="$work/logs-$name"
    mkdir -p "$logs"
    if ! env PATH="$work/bin:$PATH" STUB_LOG_DIR="$logs" FLAKESENSE_EL="$here/../flakesense.el" \
        FILE="$work/project/src/$file" "${environment[@]}" \
        timeout 120 emacs --batch -l "$here/$script" > "$logs/emacs.txt" 2>&1; then
        echo "FAIL $name: emacs exited with an error"; sed 's/^/    /' "$logs/emacs.txt" | tail -20
        failures=$((failures + 1)); return 0
    fi
    if judge "$name" "$logs" "$@"; then echo "ok $name"; fi
}

settings='{"warningThreshold": 0.9, "debounceMs": 50, "models": ["'"$work"'/project/ci/flaky.idx"], "exclude": ["gen/**"]}'

environment=()
if skip_unless "$has_eglot" eglot-rass-java eglot && skip_unless "$has_rass" eglot-rass-java rass; then
    config eglot-rass-java OrderServiceTest.java config-eglot.el \
        "log('flakesense', 'start') == [{'args': ['serve']}]" \
        "log('flakesense', 'initialize')[0]['initializationOptions'] == $settings" \
        "log('jdtls', 'initialize')[0]['initializationOptions'] == {}" \
        "len(log('jdtls', 'didOpen')) == 1 and len(log('flakesense', 'didOpen')) == 1" \
        "log('flakesense', 'executeCommand')[0]['command'] == 'flakesense.markFlaky'" \
        "log('jdtls', 'executeCommand') == []"
fi

# The default set-up where a companion is not installed (pylsp, say) or rass is missing:
# flakesense starts alone instead of taking eglot down with it ("Server died").
environment=(ALONE=1 COMPANION=no-such-language-server)
if skip_unless "$has_eglot" eglot-missing-companion-python eglot; then
    config eglot-missing-companion-python test_order.py config-eglot.el \
        "log('flakesense', 'start') == [{'args': ['serve']}]" \
        "log('flakesense', 'initialize')[0]['initializationOptions'] == $settings" \
        "len(log('flakesense', 'didOpen')) == 1" \
        "log('flakesense', 'executeCommand')[0]['command'] == 'flakesense.markFlaky'"
fi
environment=(ALONE=1 NO_RASS=1)
if skip_unless "$has_eglot" eglot-without-rass-java eglot; then
    config eglot-without-rass-java OrderServiceTest.java config-eglot.el \
        "log('flakesense', 'start') == [{'args': ['serve']}]" \
        "log('jdtls', 'start') == []" \
        "len(log('flakesense', 'didOpen')) == 1"
fi

environment=(ALONE=1 MULTIPLEXER=none WSCONF=1)
if skip_unless "$has_eglot" eglot-alone-python eglot; then
    config eglot-alone-python test_order.py config-eglot.el \
        "log('flakesense', 'initialize')[0]['initializationOptions'] == $settings" \
        "log('pylsp', 'start') == []" \
        "[r['result'] for r in log('flakesense', 'response')] == [[{'k': 5}]]" \
        "log('flakesense', 'didChangeConfiguration') == [{'settings': {'flakesense': {'k': 5}}}]"
fi

environment=()
if skip_unless "$has_lsp_mode" lsp-mode-python lsp-mode; then
    config lsp-mode-python test_order.py config-lsp-mode.el \
        "log('flakesense', 'initialize')[0]['initializationOptions'] == {'warningThreshold': 0.9, 'defaultModels': False, 'exclude': ['gen/**']}" \
        "len(log('pylsp', 'didOpen')) == 1 and len(log('flakesense', 'didOpen')) == 1" \
        "[r['result'] for r in log('flakesense', 'response')] == [[{'warningThreshold': 0.9, 'defaultModels': False, 'exclude': ['gen/**']}]]" \
        "log('flakesense', 'executeCommand')[0]['arguments'][1] == 'Test#waits'"
fi

# server NAME ELISP FILE FLAGGED MARK; then the expectations on `report`, the JSON the script
# wrote. $environment holds VAR=VALUE settings. KEEP_FAILED=DIR keeps a failed check's folder.
server() {
    local name="$1" script="$2" file="$3" flagged="$4" mark="$5"; shift 5
    local project="$work/$name"
    cp -r "$repository/tests/fixtures/demo" "$project"
    git -C "$project" init -q .
    local started=$SECONDS
    if ! env PATH="$work/bin:$PATH" FLAKESENSE="$flakesense" FLAKESENSE_EL="$here/../flakesense.el" \
        FILE="$project/$file" FLAGGED="$flagged" MARK="$mark" REPORT="$project/report.json" \
        "${environment[@]}" timeout 240 emacs --batch -l "$here/$script" > "$project/emacs.txt" 2>&1; then
        echo "FAIL $name: emacs exited with an error"; sed 's/^/    /' "$project/emacs.txt" | tail -20
        failures=$((failures + 1)); return 0
    fi
    if judge "$name" "$project/report.json" "$@"; then
        echo "ok $name ($((SECONDS - started)) s)"
    else
        sed 's/^/    /' "$project/report.json"; echo
        if [ -n "${KEEP_FAILED:-}" ]; then cp -r "$project" "$KEEP_FAILED/"; fi
    fi
}

flakesense="${FLAKESENSE:-$(command -v flakesense || true)}"
if [ -z "$flakesense" ]; then
    echo "skipped the checks against the real server: set FLAKESENSE or put flakesense on PATH"
else
    # What every client must show: the warning on the flaky test's name, the code actions on the
    # other test, the label written, and the marked test's diagnostic without another edit.
    shown=(
        "len(report['before']) >= 1"
        "any(title.startswith('Mark as flaky') for title in report['actions'])"
        "report['index'] is True"
        "len(report['after']) == len(report['before']) + 1"
    )
    # With eglot, the new diagnostics arrive before the reply to the command: Emacs 28's
    # jsonrpc.el leaves the messages behind a reply in the same read for the next one.
    ordered="report['order'][:1] == ['publication']"
    java=(src/test/java/demo/NotificationTest.java deliversAnOrderNotification formatsTheSubjectLine)
    python=(tests/test_status_page.py test_status_page_reports_healthy_after_restart test_formats_uptime)

    environment=(MULTIPLEXER=none)
    if skip_unless "$has_eglot" eglot-alone-java-server eglot; then
        server eglot-alone-java-server server-eglot.el "${java[@]}" "${shown[@]}" "$ordered"
    fi
    environment=()
    if skip_unless "$has_eglot" eglot-rass-python-server eglot \
        && skip_unless "$has_rass" eglot-rass-python-server rass; then
        for run in $(seq "$rass_runs"); do
            server "eglot-rass-python-server-$run" server-eglot.el "${python[@]}" "${shown[@]}" "$ordered"
        done
    fi
    if skip_unless "$has_lsp_mode" lsp-mode-python-server lsp-mode; then
        server lsp-mode-python-server server-lsp-mode.el "${python[@]}" "${shown[@]}" \
            "sorted(report['workspaces']) == ['flakesense', 'pylsp']"
    fi
fi

if [ "$failures" -ne 0 ]; then
    echo "$failures failed"; exit 1
fi
echo "all Emacs checks passed"
