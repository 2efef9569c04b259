"""flakesense confirm's runs for pytest: one pytest process collects the selected tests once and
runs them many times, so that pytest's start-up (often most of a run's time) is paid once per
batch of runs instead of once per run.

Loaded with `-p flakesense_confirm` and driven by its options (`--flakesense-results` turns it on).
Each run of a test happens in a child forked from the collected session: it starts from the
state a fresh pytest process would have after collection (module globals as imported, no
fixture set up yet), and nothing it changes survives into the next run. With
`--flakesense-executions 2` (flakesense's `twice` condition) the child runs the test two times,
only its function-scoped fixtures torn down and set up again in between, module state kept: a
test that passes and then fails leaves behind state it depends on.

Each execution becomes one line of JSON in the results file (run, execution, node id, the class
and name a JUnit XML report would give it, outcome, failure text), written as it ends. flakesense
runs pytest with `--tb=native`: a failure's traceback is Python's own, formatted at a quarter of
the processor time of pytest's long one, which under noise is time the run waits for. A run past
`--flakesense-timeout` seconds is ended and written as timed out; a child that dies without a
word is written as failed, with how it ended.
"""

import json
import os
import re
import select
import signal
import time

import pytest
from _pytest.runner import runtestprotocol

# The end of a failure's traceback kept: flakesense reads a few thousand characters.
TRACEBACK_CHARS = 3000


def pytest_addoption(parser):
    group = parser.getgroup("flakesense", "flakesense confirm's runs")
    group.addoption("--flakesense-results", default=None, help="where to write the outcomes")
    group.addoption("--flakesense-runs", type=int, default=1, help="runs of each test")
    group.addoption(
        "--flakesense-executions", type=int, default=1, help="executions per run in one process"
    )
    group.addoption("--flakesense-timeout", type=float, default=0, help="seconds per run")
    group.addoption("--flakesense-ready", default=None, help="a file made once collected")


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session):
    config = session.config
    results = config.getoption("flakesense_results")
    if results is None:
        return None
    if session.testsfailed and not config.option.continue_on_collection_errors:
        raise session.Interrupted(f"{session.testsfailed} errors during collection")
    ready = config.getoption("flakesense_ready")
    if ready:
        # flakesense starts its noise now: pytest's start-up is not what is being tested.
        open(ready, "w").close()
    runs = max(1, config.getoption("flakesense_runs"))
    executions = max(1, config.getoption("flakesense_executions"))
    timeout = config.getoption("flakesense_timeout")
    with open(results, "w", encoding="utf-8") as out:
        for run in range(1, runs + 1):
            for item in session.items:
                for record in run_isolated(item, executions, timeout):
                    record["run"] = run
                    out.write(json.dumps(record) + "\n")
                    out.flush()
    return True


def run_isolated(item, executions, timeout):
    """The records of one run of `item`, in a forked child where the system can fork."""
    if not hasattr(os, "fork"):
        return run_in_process(item, executions)
    reading, writing = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(reading)
        try:
            data = json.dumps(run_in_process(item, executions)).encode()
            with os.fdopen(writing, "wb") as pipe:
                pipe.write(data)
        finally:
            os._exit(0)
    os.close(writing)
    data, timed_out = read_until_exit(reading, timeout)
    if timed_out:
        os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    if timed_out:
        return [dict(names(item), execution=1, outcome="timed-out", timeout=timeout)]
    try:
        return json.loads(data.decode())
    except ValueError:
        return [
            dict(
                names(item),
                execution=1,
                outcome="failed",
                message=f"the test's process ended without a result ({describe(status)})",
            )
        ]


def read_until_exit(reading, timeout):
    """Everything the child writes, until it closes the pipe or the time is up."""
    deadline = time.monotonic() + timeout if timeout > 0 else None
    chunks = []
    with os.fdopen(reading, "rb") as pipe:
        while True:
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select([pipe], [], [], wait)
            if not ready:
                return b"".join(chunks), True
            chunk = os.read(pipe.fileno(), 65536)
            if not chunk:
                return b"".join(chunks), False
            chunks.append(chunk)


def run_in_process(item, executions):
    records = []
    for execution in range(1, executions + 1):
        # Tearing down towards the item's parent ends the function scope alone; after the last
        # execution everything is torn down, as at the end of a session.
        nextitem = item.parent if execution < executions else None
        reports = runtestprotocol(item, nextitem=nextitem, log=False)
        records.append(dict(names(item), execution=execution, **outcome(reports)))
    return records


def outcome(reports):
    """Failed when a phase failed, skipped when set-up or the call skipped (xfail too, as in a
    JUnit XML report), else passed."""
    for report in reports:
        if report.failed:
            crash = getattr(report.longrepr, "reprcrash", None)
            message = getattr(crash, "message", "") or ""
            # The deepest frames say most (where it failed); the outermost are pytest's own.
            text = (report.longreprtext or "")[-TRACEBACK_CHARS:]
            if report.when != "call":
                message = f"failed on {report.when}: {message}"
            return {"outcome": "failed", "message": f"{message}\n{text}".strip()}
    if any(report.skipped for report in reports if report.when in ("setup", "call")):
        return {"outcome": "skipped"}
    return {"outcome": "passed"}


def names(item):
    """The node id, and the class and name pytest's JUnit XML report gives the test."""
    path, bracket, params = item.nodeid.partition("[")
    parts = path.split("::")
    parts[0] = re.sub(r"\.py$", "", parts[0].replace("/", "."))
    parts[-1] += bracket + params
    return {"nodeid": item.nodeid, "classname": ".".join(parts[:-1]), "name": parts[-1]}


def describe(status):
    if os.WIFSIGNALED(status):
        return f"signal {os.WTERMSIG(status)}"
    return f"exit code {os.WEXITSTATUS(status)}"
