#!/usr/bin/env python3
"""Whether another way of ranking the same evidence would catch more fixed tests at the same alarm
rate than the shipped prior. Reads the predictions `flakesense eval --fixes DIR --predictions
FILE.csv` writes (every test of fixtrain's repositories, each judged by a prior fitted without its
repository) and compares, at alarm rates of 3%, 5% and 10% of all tests, the share of fixed tests
caught by:
  shipped       the score in the file
  additive      a logistic regression over the risks the evidence names (each one in the test's own
                code, or only in what it runs), fitted with each repository held out
  pairs         the same with every pair of risks that 20 tests share as a feature of its own
  trees         gradient-boosted trees (depth 3) over the same risks, each repository held out
  capped N%     the shipped score, but no repository warned beyond its N% likeliest tests
As `check` judges, a test whose evidence names no risk is never warned, so some rankings cannot
reach the higher rates. The file names only the risks with a positive weight, not mitigations
nor a test's length, so the refitted rankings know less than the shipped prior does: what they
measure is whether interactions between risks, or a cap per repository, carry what the additive
prior misses. Needs scikit-learn; a run takes one to three minutes.
    python3 benches/ranking_headroom.py java.csv
"""

import csv
import os
import re
import sys
import warnings

import numpy as np
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.linear_model import LogisticRegression

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from recall_by_alarm import caught_within  # noqa: E402

RATES = (0.03, 0.05, 0.10)
CAPS = (0.05, 0.10)
MIN_PAIR = 20


def risks(evidence):
    """The risks an evidence cell names: "fixed sleep", or "fixed sleep@context" when it sits only
    in what the test runs ("... `setUp` in set-up (line 12)")."""
    named = set()
    for item in filter(None, (part.strip() for part in evidence.split(";"))):
        name = re.sub(r" `.*", "", item)
        context = re.search(r"` in [\w-]+ `", item) is not None
        named.add(name + ("@context" if context else ""))
    return named


def held_out(make, features, flaky, projects):
    """Each repository's probabilities from a model fitted on the others."""
    probabilities = np.zeros(len(flaky))
    for project in np.unique(projects):
        test = projects == project
        model = make()
        model.fit(features[~test], flaky[~test])
        probabilities[test] = model.predict_proba(features[test])[:, 1]
    return probabilities


def recall_at(scores, flaky, warnable, rate):
    """The share of fixed tests among the `rate` highest scores of the tests with a risk (a group
    tied at the cut counted in proportion, as `recall_by_alarm.py` counts), and the share of
    tests warned."""
    ranked = sorted(
        ((score, fixed) for score, fixed, can in zip(scores, flaky, warnable) if can),
        key=lambda scored: -scored[0],
    )
    allowed = rate * len(scores)
    caught = caught_within(ranked, allowed)
    return 100.0 * caught / flaky.sum(), 100.0 * min(allowed, len(ranked)) / len(scores)


def capped(scores, projects, cap):
    """The score, or -1 beyond each repository's `cap` likeliest tests."""
    out = np.full(len(scores), -1.0)
    for project in np.unique(projects):
        members = np.where(projects == project)[0]
        keep = members[np.argsort(-scores[members], kind="stable")][: int(cap * len(members))]
        out[keep] = scores[keep]
    return out


def main():
    csv.field_size_limit(sys.maxsize)
    rows = list(csv.DictReader(open(sys.argv[1], newline="")))
    named = [risks(row["evidence"]) for row in rows]
    names = sorted(set().union(*named))
    features = np.zeros((len(rows), len(names)))
    for i, these in enumerate(named):
        for name in these:
            features[i, names.index(name)] = 1.0
    flaky = np.array([row["flaky"] == "1" for row in rows])
    projects = np.array([row["project"] for row in rows])
    warnable = features.sum(axis=1) > 0
    shipped = np.where(warnable, [float(row["score"]) for row in rows], -1.0)

    pairs = [
        features[:, a] * features[:, b]
        for a in range(len(names))
        for b in range(a + 1, len(names))
    ]
    pairs = [pair for pair in pairs if pair.sum() >= MIN_PAIR]
    with_pairs = np.column_stack([features, *pairs]) if pairs else features

    def regression():
        return LogisticRegression(C=0.1, class_weight="balanced", max_iter=2000)

    def trees():
        return HistGradientBoostingClassifier(
            max_depth=3, max_iter=200, learning_rate=0.05, class_weight="balanced"
        )

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rankings = [
            ("shipped", shipped),
            ("additive", held_out(regression, features, flaky, projects)),
            (f"pairs ({len(pairs)})", held_out(regression, with_pairs, flaky, projects)),
            ("trees", held_out(trees, features, flaky, projects)),
        ] + [(f"capped {cap:.0%}", capped(shipped, projects, cap)) for cap in CAPS]

    print(
        f"{len(rows):,} tests, {flaky.sum()} fixed, {len(names)} risks named; "
        "fixed tests caught (and share of tests warned) at each alarm rate"
    )
    print(f"{'ranking':<14}" + "".join(f"{rate:>20.0%}" for rate in RATES))
    for label, scores in rankings:
        cells = []
        for rate in RATES:
            recall, alarm = recall_at(scores, flaky, warnable & (scores >= 0), rate)
            cells.append(f"{recall:5.1f}% ({alarm:4.1f}%)")
        print(f"{label:<14}" + "".join(f"{cell:>20}" for cell in cells))


if __name__ == "__main__":
    main()
