#!/usr/bin/env python3
"""How often each kind of warning points at a test that was later fixed for flakiness: runs
`flakesense check --format json` over every repository of a fixtrain- or fixbench-style directory
(`<dir>/<owner+repo>/snapshot` and its `fixes.csv`) and groups the warned tests by their evidence:
several distinct risks, or one risk alone (named). Precision is the share of warned tests in each
group that are among the fixed ones.

    python3 benches/evidence_precision.py target/release/flakesense ../shared/data/fixtrain/java [--sigma 0.95]

fixtrain is where the shipped priors are fitted, so its figures are in-sample; fixbench is held
out (never train on it).
"""

import argparse
import collections
import csv
import json
import os
import subprocess


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("binary")
    parser.add_argument("directory", help="one language's directory of repositories")
    parser.add_argument("--sigma", default="0.95")
    arguments = parser.parse_args()
    groups = collections.defaultdict(lambda: [0, 0])
    tests = fixed_total = 0
    for repository in sorted(os.listdir(arguments.directory)):
        root = os.path.join(arguments.directory, repository)
        if not os.path.isdir(os.path.join(root, "snapshot")):
            continue
        with open(os.path.join(root, "fixes.csv"), newline="") as handle:
            fixed = {(row["path"], row["test_name"]) for row in csv.DictReader(handle)}
        fixed_total += len(fixed)
        report = subprocess.run(
            [arguments.binary, "check", "--exit-zero", "--format", "json", "--sigma",
             arguments.sigma, os.path.join(root, "snapshot")],
            capture_output=True, text=True, check=True,
        ).stdout
        report = json.loads(report)
        tests += report["summary"]["tests"]
        for finding in report["findings"]:
            risks = sorted({signal["id"] for signal in finding["signals"]})
            group = "several risks" if len(risks) > 1 else f"only {risks[0]}" if risks else "none"
            is_fixed = (finding["path"], finding["name"]) in fixed
            for name in (group, "all warnings"):
                groups[name][0] += 1
                groups[name][1] += is_fixed
    print(f"{tests} tests, {fixed_total} fixed; base rate {fixed_total / max(tests, 1):.4f}")
    print(f"{'warned tests':32s} {'warned':>7s} {'fixed':>6s} {'precision':>9s}")
    for name, (warned, fixed) in sorted(groups.items(), key=lambda item: -item[1][0]):
        print(f"{name:32s} {warned:7d} {fixed:6d} {fixed / warned:9.3f}")


if __name__ == "__main__":
    main()
