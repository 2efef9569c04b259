#!/usr/bin/env python3
"""Reads the predictions `flakesense eval --fixes DIR --predictions FILE.csv` writes (fixtrain's
repositories, each judged by a prior fitted without it) and shows the share of the tests later
fixed for flakiness that a ranking by score catches when it warns 1%, 2%, ... 10% of all tests,
and the mean of those ten recalls: how `flakesense train` scores a candidate penalty
(`src/prior/calibration.rs`), here computed over the folds' own fits. As `check` judges, a test
whose evidence names no risk is never warned; tests tied at the cut count in proportion.

    python3 benches/recall_by_alarm.py java.csv [more.csv ...]
"""

import csv
import sys


def recalls(path):
    csv.field_size_limit(sys.maxsize)
    rows = list(csv.DictReader(open(path, newline="")))
    fixed = sum(row["flaky"] == "1" for row in rows)
    # Tests that can be warned, likeliest first.
    ranked = sorted(
        ((float(row["score"]), row["flaky"] == "1") for row in rows if row["evidence"]),
        key=lambda scored: -scored[0],
    )
    shares = []
    for percent in range(1, 11):
        allowed = percent / 100 * len(rows)
        caught, taken, index = 0.0, 0, 0
        while index < len(ranked) and taken < allowed:
            # The group tied at this score, taken whole or in proportion.
            score = ranked[index][0]
            end = index
            while end < len(ranked) and ranked[end][0] == score:
                end += 1
            group = ranked[index:end]
            share = min(1.0, (allowed - taken) / len(group))
            caught += share * sum(flaky for _, flaky in group)
            taken += len(group)
            index = end
        shares.append(caught / fixed if fixed else 0.0)
    return shares


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    width = max(len(path) for path in sys.argv[1:])
    print("file".ljust(width) + "".join(f"{p:>7}%" for p in range(1, 11)) + "     mean")
    for path in sys.argv[1:]:
        shares = recalls(path)
        cells = "".join(f"{100 * share:7.1f}%" for share in shares)
        print(f"{path.ljust(width)}{cells}  {100 * sum(shares) / len(shares):6.1f}%")


if __name__ == "__main__":
    main()
