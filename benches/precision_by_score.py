#!/usr/bin/env python3
"""Reads the predictions `flakesense eval --fixes DIR --predictions FILE.csv` writes (fixtrain's
repositories, each judged by a prior fitted without it) and shows, for bands of score at and
above the warning threshold, how many tests were warned and how many of them were later fixed
for flakiness: whether a higher score is right more often, which is why `check` lists its
findings most likely first.

    python3 benches/precision_by_score.py java.csv [--edges 0.95 0.97 0.99 0.999 1]
"""

import argparse
import csv
import sys


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("predictions")
    parser.add_argument("--edges", type=float, nargs="+", default=[0.95, 0.97, 0.99, 0.999, 1.0])
    args = parser.parse_args()
    csv.field_size_limit(sys.maxsize)
    bands = list(zip(args.edges, args.edges[1:]))
    tests = [0] * len(bands)
    fixed = [0] * len(bands)
    for row in csv.DictReader(open(args.predictions, newline="")):
        score = float(row["score"])
        for band, (low, high) in enumerate(bands):
            # The last band includes its upper edge (a score of exactly 1).
            if low <= score < high or (band == len(bands) - 1 and score == high):
                tests[band] += 1
                fixed[band] += row["flaky"] == "1"
    print("score band     tests  fixed  share fixed")
    for (low, high), count, caught in zip(bands, tests, fixed):
        share = f"{100 * caught / count:.1f}%" if count else "-"
        print(f"{low:.3f}-{high:.3f}  {count:6} {caught:6}  {share:>10}")


if __name__ == "__main__":
    main()
