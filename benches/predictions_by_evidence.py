#!/usr/bin/env python3
"""Reads the predictions `flakesense eval --fixes DIR --predictions FILE.csv` writes (fixtrain's
repositories, each judged by a prior fitted without it) and groups the warned tests by the risks
their evidence names, with how many of each group were later fixed for flakiness; with
`--by-count`, by how many distinct risks their evidence names instead; or, with
`--matching REGEX`, counts the tests (warned or not) with an evidence item matching it.

    python3 benches/predictions_by_evidence.py java.csv [--sigma 0.95] [--project REPO] [--top 12]
    python3 benches/predictions_by_evidence.py java.csv --by-count
    python3 benches/predictions_by_evidence.py rust.csv --matching 'child process `[^`]*(cargo_bin|CARGO_BIN_EXE)'
"""

import argparse
import collections
import csv
import re
import sys


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("predictions")
    parser.add_argument("--sigma", type=float, default=0.95)
    parser.add_argument("--project")
    parser.add_argument("--top", type=int, default=12)
    parser.add_argument("--matching")
    parser.add_argument("--by-count", action="store_true")
    args = parser.parse_args()
    csv.field_size_limit(sys.maxsize)
    groups, fixed = collections.Counter(), collections.Counter()
    matching = re.compile(args.matching) if args.matching else None
    for row in csv.DictReader(open(args.predictions, newline="")):
        if args.project and row["project"] != args.project:
            continue
        items = [item.strip() for item in row["evidence"].split(";") if item.strip()]
        if matching:
            key = "warned" if float(row["score"]) >= args.sigma else "not warned"
            if any(matching.search(item) for item in items):
                groups[key] += 1
                fixed[key] += row["flaky"] == "1"
            continue
        if float(row["score"]) < args.sigma:
            continue
        risks = sorted({re.sub(r" `.*", "", item) for item in items})
        if args.by_count:
            key = {0: "no risk", 1: "one risk", 2: "two risks"}.get(len(risks), "three or more risks")
        else:
            key = " + ".join(risks) or "(none)"
        groups[key] += 1
        fixed[key] += row["flaky"] == "1"
    for key, count in groups.most_common(args.top):
        print(f"{count:6} {fixed[key]:4} fixed  {key}")


if __name__ == "__main__":
    main()
