#!/usr/bin/env python3
"""Variants of the signal prior, measured leave-one-project-out with a scikit-learn
re-implementation of `src/prior.rs`, to try ideas before building them into flakesense.

The shipped prior: the catalogue's patterns (read from `src/signals.rs`) as binary features, a
logistic regression with balanced class weights, its L2 penalty chosen from 1, 10, 100 and its
warning threshold at the best Matthews correlation on projects held out of the training side.
Only the prior is modelled: across projects the neighbours rarely vote (`VOTE_HORIZON`), so this
tracks `flakesense eval --leave-one-project-out --sigma 0.95` closely, not exactly (it merges
duplicates across all files at once).

Variants (see models/README.md, "Project-relative signals"):
  shipped       the catalogue as it is
  scaled        each risk also times its share among the project's tests (the regression learns
                how a signal's weight changes when it is common in a project)
  discounted    each risk times one minus that share (a common signal counts less, imposed)
  select        shipped or discounted, whichever held-out projects of the training side prefer
  errors        plus a mitigation "expects an error" (assertThrows, pytest.raises, should_panic)
  wide-penalty  penalty chosen from 0.1, 1, 10, 100

A project's shares come from all its tests' code. In training, projects without a stable test
(IDoFT, FlakyCat) get the mean of the others; a tested project always gets its own.
Needs scikit-learn. A run takes two to eight minutes on two cores.

Usage: python3 benches/prior_variants.py LANGUAGE VARIANT DATA.csv [EXTRA_TRAIN.csv ...]
  e.g. python3 benches/prior_variants.py rust discounted ../shared/data/rust-mined/labeled.csv
"""

import csv
import re
import sys
import warnings
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression

SIGNALS = Path(__file__).resolve().parent.parent / "src" / "signals.rs"
LOCAL_HOSTS = ["localhost", "127.0.0.1", "0.0.0.0", "[::1]"]
EXPECTS_AN_ERROR = {
    "java": r"assertThrows|expected\s*=\s*[\w.]+\.class|ExpectedException",
    "python": r"pytest\.raises|assertRaises",
    "rust": r"should_panic|is_err\(\)|unwrap_err\(|expect_err\(",
}


def catalogue(language):
    """(name, regex, is_risk) for each pattern of `src/signals.rs` in one language."""
    source = SIGNALS.read_text()
    risks = re.finditer(
        r'pattern\(\s*(Java|Python|Rust),\s*\w+,\s*"([^"]+)",\s*r"(.*?)",?\s*\)', source, re.S
    )
    mitigations = re.finditer(
        r'language:\s*(Java|Python|Rust),\s*name:\s*"([^"]+)",\s*regex:\s*r"([^"]*)"', source
    )
    patterns = [(m[2], m[3], True) for m in risks if m[1].lower() == language]
    patterns += [(m[2], m[3], False) for m in mitigations if m[1].lower() == language]
    return patterns


def features(patterns, code):
    row = []
    for name, regex, _ in patterns:
        found = (
            m for m in re.finditer(regex, code)
            if not (name == "remote URL" and any(host in m[0] for host in LOCAL_HOSTS))
        )
        row.append(1.0 if next(found, None) else 0.0)
    return row


def load(language, files, patterns):
    """Features, labels, projects and whether a row may be tested (the first file only)."""
    csv.field_size_limit(1 << 30)
    seen, rows = set(), []
    for position, path in enumerate(files):
        for row in csv.DictReader(open(path, encoding="utf-8")):
            key = " ".join(row["code"].split())
            if key in seen:
                continue
            seen.add(key)
            rows.append((features(patterns, row["code"]), int(row["flaky"]), row["project"],
                         position == 0))
    x = np.array([r[0] for r in rows])
    y = np.array([r[1] for r in rows])
    projects = np.array([r[2] for r in rows])
    testable = np.array([r[3] for r in rows])
    return x, y, projects, testable


def project_shares(x, y, projects):
    """Each row's project's share of tests matching each pattern, as training sees it: a
    project without a stable test (a set of flaky tests only) gets the mean of the others."""
    shares = {p: x[projects == p].mean(0) for p in np.unique(projects)
              if (y[projects == p] == 0).any()}
    neutral = np.mean(list(shares.values()), 0)
    return np.array([shares.get(p, neutral) for p in projects])


def candidates(variant, x, shares, risk):
    """The feature matrices a variant chooses from."""
    discounted = x.copy()
    discounted[:, risk] = x[:, risk] * (1 - shares[:, risk])
    return {
        "scaled": [np.column_stack([x, x[:, risk] * shares[:, risk]])],
        "discounted": [discounted],
        "select": [x, discounted],
    }.get(variant, [x])


def mcc(tp, fp, fn, tn):
    denominator = np.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
    return (tp * tn - fp * fn) / denominator if denominator > 0 else 0.0


def best_threshold(probabilities, labels, floor=0.5):
    """The `p > threshold` rule (threshold >= floor) with the best MCC, and that MCC."""
    order = np.argsort(-probabilities)
    p, y = probabilities[order], labels[order]
    positives, negatives = y.sum(), len(y) - y.sum()
    tp, fp = np.cumsum(y), np.cumsum(1 - y)
    best = (0.5, -1.0)
    for i in range(len(p)):
        if i + 1 < len(p) and p[i + 1] == p[i]:
            continue
        following = p[i + 1] if i + 1 < len(p) else 0.0
        score = mcc(tp[i], fp[i], positives - tp[i], negatives - fp[i])
        if score > best[1]:
            best = (following, score)
        if following < floor:
            break
    return best


def fit(x, y, penalty):
    model = LogisticRegression(C=1.0 / penalty, class_weight="balanced", max_iter=1000)
    return model.fit(x, y)


def held_out(x, y, projects, penalty):
    """Predictions for each mixed project of a training side, from fits without it."""
    mixed = [p for p in np.unique(projects) if 0 < y[projects == p].sum() < (projects == p).sum()]
    predicted, labels = [], []
    for project in mixed:
        inside = projects != project
        predicted.append(fit(x[inside], y[inside], penalty).predict_proba(x[~inside])[:, 1])
        labels.append(y[~inside])
    return np.concatenate(predicted), np.concatenate(labels)


def choose(candidates, y, projects, penalties):
    """The (candidate's position, penalty, threshold) whose held-out predictions have the best
    MCC; ties go to the earlier candidate and the smaller penalty."""
    best = None
    for position, x in enumerate(candidates):
        for penalty in penalties:
            threshold, score = best_threshold(*held_out(x, y, projects, penalty))
            if best is None or score > best[0] + 1e-12:
                best = (score, position, penalty, threshold)
    return best[1:]


def main():
    warnings.filterwarnings("ignore")
    language, variant, files = sys.argv[1], sys.argv[2], sys.argv[3:]
    patterns = catalogue(language)
    if variant == "errors":
        patterns.append(("expects an error", EXPECTS_AN_ERROR[language], False))
    x, y, projects, testable = load(language, files, patterns)
    risk = np.array([is_risk for _, _, is_risk in patterns])
    training_candidates = candidates(variant, x, project_shares(x, y, projects), risk)
    penalties = [0.1, 1, 10, 100] if variant == "wide-penalty" else [1, 10, 100]
    largest = max(np.unique(projects[testable]), key=lambda p: y[(projects == p) & testable].sum())
    counts = np.zeros((2, 4))  # all projects, all but the largest: tp, fp, fn, tn
    for project in np.unique(projects[testable]):
        tested, training = (projects == project) & testable, projects != project
        position, penalty, threshold = choose(
            [c[training] for c in training_candidates], y[training], projects[training], penalties
        )
        model = fit(training_candidates[position][training], y[training], penalty)
        # The tested project's shares are its own, whatever its labels.
        own = np.tile(x[tested].mean(0), (tested.sum(), 1))
        columns = candidates(variant, x[tested], own, risk)[position]
        flagged = model.predict_proba(columns)[:, 1] > threshold
        truth = y[tested] == 1
        row = [(flagged & truth).sum(), (flagged & ~truth).sum(), (~flagged & truth).sum(),
               (~flagged & ~truth).sum()]
        counts[0] += row
        if project != largest:
            counts[1] += row
    for label, (tp, fp, fn, tn) in zip(["all projects", f"all but {largest}"], counts):
        precision = tp / (tp + fp) if tp + fp else 0.0
        prevalence = (tp + fn) / (tp + fp + fn + tn)
        print(f"{language} {variant}, {label}: MCC {mcc(tp, fp, fn, tn):.3f} lift "
              f"{precision / prevalence:.2f} precision {precision:.3f} recall {tp / (tp + fn):.3f}"
              f" (tp {tp:.0f}, fp {fp:.0f})")


if __name__ == "__main__":
    main()
