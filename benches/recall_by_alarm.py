#!/usr/bin/env python3
"""Reads the predictions `flakesense eval --fixes DIR --predictions FILE.csv` writes (fixtrain's
repositories, each judged by a prior fitted without it) and shows the share of the tests later
fixed for flakiness that a ranking by score catches when it warns 1%, 2%, ... 10% of all tests,
and the mean of those ten recalls: how `flakesense train` scores a candidate penalty
(`src/prior/calibration.rs`), here computed over the folds' own fits. As `check` judges, a test
whose evidence names no risk is never warned; tests tied at the cut count in proportion.

With `--within`, each repository warns that share of its own tests: what a user of one
repository sees. The pooled ranking also rewards telling flaky-prone repositories from the
others; this one only rewards telling a repository's flaky tests from its other tests.

    python3 benches/recall_by_alarm.py [--within] java.csv [more.csv ...]
"""

import csv
import sys
from collections import defaultdict


def caught_within(ranked, allowed):
    """The fixed tests among the `allowed` first of `ranked` ((score, fixed) pairs, likeliest
    first), a group tied at the cut counted in proportion."""
    caught, taken, index = 0.0, 0, 0
    while index < len(ranked) and taken < allowed:
        score = ranked[index][0]
        end = index
        while end < len(ranked) and ranked[end][0] == score:
            end += 1
        group = ranked[index:end]
        share = min(1.0, (allowed - taken) / len(group))
        caught += share * sum(flaky for _, flaky in group)
        taken += len(group)
        index = end
    return caught


def recalls(path, within):
    csv.field_size_limit(sys.maxsize)
    rows = list(csv.DictReader(open(path, newline="")))
    fixed = sum(row["flaky"] == "1" for row in rows)
    groups = defaultdict(list)
    for row in rows:
        groups[row["project"] if within else ""].append(row)
    # Per group: its size, and the tests that can be warned, likeliest first.
    ranked = [
        (
            len(group),
            sorted(
                ((float(row["score"]), row["flaky"] == "1") for row in group if row["evidence"]),
                key=lambda scored: -scored[0],
            ),
        )
        for group in groups.values()
    ]
    shares = []
    for percent in range(1, 11):
        caught = sum(caught_within(tests, percent / 100 * size) for size, tests in ranked)
        shares.append(caught / fixed if fixed else 0.0)
    return shares


def main():
    arguments = sys.argv[1:]
    within = "--within" in arguments
    paths = [argument for argument in arguments if argument != "--within"]
    if not paths:
        sys.exit(__doc__)
    width = max(len(path) for path in paths)
    print("file".ljust(width) + "".join(f"{p:>7}%" for p in range(1, 11)) + "     mean")
    for path in paths:
        shares = recalls(path, within)
        cells = "".join(f"{100 * share:7.1f}%" for share in shares)
        print(f"{path.ljust(width)}{cells}  {100 * sum(shares) / len(shares):6.1f}%")


if __name__ == "__main__":
    main()
