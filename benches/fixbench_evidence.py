#!/usr/bin/env python3
"""How many of fixbench's fixed tests have any evidence at all: a risk of the catalogue with a
positive weight, in the test's code or in what it runs. A test without one scores as a test with
no signal does and is never flagged at either threshold, so this share is the highest recall any
weighing or threshold of the present catalogue can reach; the rest needs new kinds of evidence.

    python3 benches/fixbench_evidence.py target/release/flakesense /tmp/fixbench [--lang L] [-v]

It judges each fixed test as fixbench.py does (the same workspace: the snapshot with every fix's
files before and after it under _fixbench/, `predict --format json`), and reads each test's
`signals` beside its score. It imports fixbench.py from ../shared/bench for the workspace, the
fixes and the choice among same-named tests (`score_of`); only the reading of `predict`'s ids and
paths mirrors fixbench's `scores`, which keeps the score alone. It never writes or trains
anything. Beside the count it gives the fixed tests caught at the warning
and information thresholds (a score above 0.95, above 0.5), as fixbench.py counts them. -v lists
the fixed tests without evidence, with the fix's subject.
"""

import argparse
import collections
import json
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.join(HERE, "..", "..", "shared", "bench")
if not os.path.isfile(os.path.join(BENCH, "fixbench.py")):
    sys.exit(f"fixbench_evidence: no fixbench.py in {os.path.normpath(BENCH)} (the shared data beside the repository)")
sys.path.insert(0, BENCH)
import fixbench  # noqa: E402  (the benchmark's own workspace and fix readers)


def fixed_tests(binary, repo):
    """(fix row, (signal ids, score) or None when the test was not found) per fixed test of `repo`."""
    fixes = fixbench.fixes_of(repo)
    root = fixbench.workspace(os.path.join(repo, "snapshot"))
    try:
        wanted = set()
        for commit, rows in fixes.items():
            for side in ("before", "after"):
                source = os.path.join(repo, "fixes", commit, side)
                if os.path.isdir(source):
                    shutil.copytree(source, os.path.join(root, "_fixbench", commit, side), dirs_exist_ok=True)
            for path in {r["path"] for r in rows}:
                rel = os.path.join("_fixbench", commit, "before", path)
                if os.path.exists(os.path.join(root, rel)):
                    wanted.add(rel)
        judged = json.loads(fixbench.run([binary, "predict", "--format", "json"] + sorted(wanted), root)) if wanted else []
    finally:
        shutil.rmtree(root, ignore_errors=True)
    table = {}
    for t in judged:
        name = t["id"].replace("::", "#").split("#")[-1].split("(")[0].split("[")[0]
        path = t["path"][2:] if t["path"].startswith("./") else t["path"]
        table.setdefault((path, name), []).append((t["line"], ([s["id"] for s in t["signals"]], t["score"])))
    for commit, rows in sorted(fixes.items()):
        for r in rows:
            path = os.path.join("_fixbench", commit, "before", r["path"])
            yield r, fixbench.score_of(table, path, r["test_name"], int(r["line_before"] or 0))


def line(name, counts):
    n, evidence, warned, flagged = counts
    return f"{name:34} {n:6} {evidence:9} {evidence / max(n, 1):6.1%} {warned:8} {flagged:7}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("data", help="fixbench unpacked (the folder holding java/, python/, rust/)")
    ap.add_argument("--lang", action="append")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    binary = os.path.abspath(args.binary)
    for lang in args.lang or ["java", "python", "rust"]:
        base = os.path.join(args.data, lang)
        print(f"\n{lang}\n{'repository':34} {'fixed':>6} {'evidence':>9} {'share':>6} {'at 0.95':>8} {'at 0.5':>7}")
        totals = [0, 0, 0, 0]
        risks = collections.Counter()
        for name in sorted(os.listdir(base)):
            counts = [0, 0, 0, 0]  # fixed tests found, with evidence, caught at 0.95, caught at 0.5
            for row, judged in fixed_tests(binary, os.path.join(base, name)):
                if judged is None:
                    continue
                signals, score = judged
                counts = [c + d for c, d in zip(counts, [1, bool(signals), score > 0.95, score > 0.5])]
                risks.update(set(signals))
                if args.verbose and not signals:
                    print(f"    no evidence: {row['path']}::{row['test_name']} [{row['category_hint']}] {row['subject'][:70]}")
            totals = [t + c for t, c in zip(totals, counts)]
            print(line(name, counts))
        print(line("all", totals))
        print("  risks named (fixed tests): " + ", ".join(f"{k} {v}" for k, v in risks.most_common()))


if __name__ == "__main__":
    main()
