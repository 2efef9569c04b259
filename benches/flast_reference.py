#!/usr/bin/env python3
"""The FLAST reference protocol with scikit-learn, to compare speed and accuracy with
`flakesense eval --per-project --tokenizer flast --keep-duplicates` on the same data.

Per project with at least 7 flaky tests: stratified 10-fold; CountVectorizer defaults fitted on the
training fold; SparseRandomProjection to johnson_lindenstrauss_min_dim(n_train, eps=0.33);
brute-force cosine kNN, k = 7, neighbours weighted by 1/distance; flaky when the weighted flaky
share exceeds sigma. Needs scikit-learn (`pip install scikit-learn`).

Usage: python3 benches/flast_reference.py ../shared/data/flakeflagger/labeled.csv [sigma]
"""

import csv
import sys
import time

import numpy as np
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.model_selection import StratifiedKFold
from sklearn.neighbors import NearestNeighbors
from sklearn.random_projection import SparseRandomProjection, johnson_lindenstrauss_min_dim


def main():
    path = sys.argv[1]
    sigma = float(sys.argv[2]) if len(sys.argv) > 2 else 0.5
    started = time.perf_counter()
    csv.field_size_limit(1 << 30)
    rows = [row for row in csv.DictReader(open(path, encoding="utf-8")) if row["code"].strip()]
    by_project = {}
    for row in rows:
        by_project.setdefault(row["project"], []).append(row)
    tp = fp = fn = 0
    for project, tests in sorted(by_project.items()):
        labels = np.array([test["flaky"] == "1" for test in tests])
        if labels.sum() < 7:
            continue
        codes = [test["code"] for test in tests]
        folds = StratifiedKFold(n_splits=10, shuffle=True, random_state=42)
        for train, test in folds.split(codes, labels):
            vectorizer = CountVectorizer()
            train_vectors = vectorizer.fit_transform([codes[i] for i in train])
            test_vectors = vectorizer.transform([codes[i] for i in test])
            dims = johnson_lindenstrauss_min_dim(len(train), eps=0.33)
            projection = SparseRandomProjection(n_components=dims, random_state=42)
            train_projected = projection.fit_transform(train_vectors)
            test_projected = projection.transform(test_vectors)
            knn = NearestNeighbors(n_neighbors=min(7, len(train)), metric="cosine", algorithm="brute")
            knn.fit(train_projected)
            distances, neighbours = knn.kneighbors(test_projected)
            for row, (distance, neighbour) in enumerate(zip(distances, neighbours)):
                flaky = labels[train][neighbour]
                if (distance == 0).any():
                    weights = (distance == 0).astype(float)
                else:
                    weights = 1.0 / distance
                score = (weights * flaky).sum() / weights.sum()
                predicted, actual = score > sigma, labels[test][row]
                tp += predicted and actual
                fp += predicted and not actual
                fn += actual and not predicted
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    print(f"cumulative precision {precision:.3f} recall {recall:.3f} f1 {f1:.3f}; "
          f"{time.perf_counter() - started:.2f} s end to end")


if __name__ == "__main__":
    main()
