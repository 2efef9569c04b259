#!/usr/bin/env python3
"""The measure that led to Python's `sampled-tolerance` signal, read from the tests' text before
the signal existed: the share of all test functions, and of the tests later fixed for flakiness,
that assert within a tolerance and draw values at random. Regular expressions over each test
function's own text (no context), so the figures approximate what the catalogue's queries find.

    python3 benches/sampled_tolerance_lift.py /tmp/fixtrain/python

`<dir>/<owner+repo>/snapshot` holds a repository's test files and `fixes.csv` its fixed tests, as
they were before the fix under `fixes/<commit>/before/`.
"""

import ast
import collections
import csv
import os
import re
import sys

TOLERANCE = re.compile(
    r"\b(assert_allclose|assertAllClose\w*|assertAlmostEqual|assert_almost_equal|"
    r"assert_array_almost_equal\w*|assert_close|assertNear|assertArrayNear|approx|allclose|isclose)\s*\("
)
DRAW = re.compile(
    r"\b(np|numpy|onp)\.random\.(?!seed\b)\w+\s*\(|\btf\.random\.\w+\s*\(|"
    r"\btorch\.(rand|randn|randint|normal|randperm|bernoulli|multinomial|rand_like|randn_like)\s*\(|"
    r"\bjax\.random\.(?!PRNGKey|key|split|fold_in)\w+\s*\(|\brandom\.(?!seed\b)\w+\s*\(|"
    r"\b\w*(rng|random_state|generator)\.(normal|uniform|standard_normal|random|integers|choice|"
    r"randn|rand|randint|permutation|multivariate_normal|exponential|gamma|beta|poisson|binomial)\s*\(|"
    r"\.sample\s*\(|\.rvs\s*\("
)


def has_pattern(code):
    return TOLERANCE.search(code) is not None and DRAW.search(code) is not None


def test_functions(path):
    """(name, code) of every function whose name starts with `test` in a Python file."""
    try:
        source = open(path, encoding="utf-8", errors="replace").read()
        tree = ast.parse(source)
    except (OSError, SyntaxError, ValueError):
        return
    lines = source.split("\n")
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            yield node.name, "\n".join(lines[node.lineno - 1 : node.end_lineno])


def main(root):
    per_repo = collections.defaultdict(collections.Counter)
    for repo in sorted(os.listdir(root)):
        counts = per_repo[repo]
        for directory, _, files in os.walk(os.path.join(root, repo, "snapshot")):
            for name in files:
                if name.endswith(".py") and (name.startswith("test") or name.endswith("_test.py")):
                    for _, code in test_functions(os.path.join(directory, name)):
                        counts["tests"] += 1
                        counts["tests with it"] += has_pattern(code)
        seen = set()
        for fix in csv.DictReader(open(os.path.join(root, repo, "fixes.csv"))):
            name = fix["test_name"].split("::")[-1].split(".")[-1].split("[")[0]
            before = os.path.join(root, repo, "fixes", fix["fix_commit"][:12], "before", fix["path"])
            if (repo, name) in seen or not os.path.exists(before):
                continue
            for test, code in test_functions(before):
                if test == name:
                    seen.add((repo, name))
                    counts["fixed"] += 1
                    counts["fixed with it"] += has_pattern(code)
                    break
    total = sum(per_repo.values(), collections.Counter())
    share = total["tests with it"] / max(total["tests"], 1)
    fixed_share = total["fixed with it"] / max(total["fixed"], 1)
    print(f"{total['tests']} tests, {total['tests with it']} with the pattern ({share:.1%}); "
          f"{total['fixed']} fixed tests, {total['fixed with it']} with it ({fixed_share:.1%}); "
          f"lift {fixed_share / max(share, 1e-9):.2f}")
    for repo, counts in per_repo.items():
        if counts["fixed with it"]:
            print(f"  {repo}: {counts['tests with it']} of {counts['tests']} tests, "
                  f"{counts['fixed with it']} of {counts['fixed']} fixed")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "/tmp/fixtrain/python")
