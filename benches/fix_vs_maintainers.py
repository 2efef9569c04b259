#!/usr/bin/env python3
"""`flakesense fix` against the maintainers' own fixes (fixbench 2), and whether every fix it
offers leaves a file that parses and keeps its assertions.

    python3 benches/fix_vs_maintainers.py FLAKESENSE_BINARY DATA [--lang java|python|rust] [--jobs 2] [--json OUT.json] [-v]
    python3 benches/fix_vs_maintainers.py FLAKESENSE_BINARY OUT.json --report [-v]   # report a run again

DATA is `../shared/bench/data/fixbench2.tar.xz` or a folder it was unpacked into (see
`../shared/bench/README.md`). Each repository's snapshot is copied into a temporary git
repository (a project root for flakesense); nothing is written anywhere else, nothing is trained.
Repositories run in parallel, `--jobs` (default 2) at a time. Needs Python 3.8+, git, and for the
Java and Rust parses tree-sitter's bindings (`pip install tree-sitter tree-sitter-java
tree-sitter-rust`).

1. Against the maintainers. For each commit that fixed flaky tests, its `before/` files are
   written over the snapshot, as fixbench.py judges a fixed test "in place" (and the snapshot is
   put back afterwards). `flakesense check --format json` over the fixed tests' files says which
   of them are flagged (a warning, at check's default sigma); for each flagged one, `flakesense
   fix --diff --format json --test ID FILE` says whether a fix is offered. Each offered fix is
   compared with the maintainers' change (`before/` -> `after/`, lines compared with their
   indentation stripped, so re-indenting is no change):
   - same statements: a line our fix removes or rewrites (or, for a pure insertion, the lines on
     either side of it) is a line the maintainers changed in the same file. Our fix only edits
     the test or a function it calls, so the overlap lies there.
   - same kind: the maintainers' change is classified by the keyword heuristics of `KINDS` below,
     read over the lines they changed inside the test and the functions our fix edits; when
     those lines name no kind, over their whole change of the test's file; when that names none,
     over every file of the commit (the level is listed, "test", "file", "commit"). A change can
     have several kinds, and so can ours (a test can get several fixes); "same kind" means one of
     ours is among theirs. The kinds:
       condition-wait  added lines wait on a condition: Awaitility `await()`/`.until(`,
                       wait_until/waitFor/wait_for, eventually, a latch, `.join(`, a polling loop
                       (a loop and a sleep both added), retry/poll helpers;
       generous-wait   a line naming a timeout/wait/deadline/duration whose number (in ms, the
                       unit read from the line) the maintainers raised, sleeps excepted;
       longer-sleep    a sleep whose duration they raised (not a fix kind of ours);
       ephemeral-port  added lines bind port 0 or call a free-port helper;
       restore-state   added lines restore: finally, @After/@AfterEach/tearDown, monkeypatch,
                       setenv/delenv, clearProperty, mock.patch, addCleanup, restore/reset,
                       saved/original values;
       other           none of these.
2. Every offered fix parses. On every snapshot as shipped (no overlays), `flakesense fix
   --format json` applies every fix; each changed file is then parsed without flakesense (Python:
   `ast.parse`, and also `compile`, which refuses what the parser lets through: a duplicate
   parameter, a `from __future__` import that is no longer first; Java, Rust: tree-sitter,
   `root_node.has_error`) and its assertions counted before and after (`ASSERT` below); a count
   that falls is a removed assertion. The same run compares the tests `check` warns about with
   those `fix` reports (fixed or left unfixed), which part 1 reads as the warnings.

Prints Markdown tables (per language) and, with -v, every compared fix (repo, test, our kind,
theirs, same?).
"""

import argparse
import ast
import csv
import difflib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor

csv.field_size_limit(10**9)

ASSERT = {
    "java": re.compile(r"\b(assert\w*|fail|verify\w*)\s*\("),
    "python": re.compile(r"\bassert\b|\.assert\w*\s*\("),
    "rust": re.compile(r"\b(debug_)?assert(_eq|_ne|_matches)?!"),
}
EXT = {"java": (".java",), "python": (".py",), "rust": (".rs",)}

# The maintainers' change, read from the lines they added (and removed). Case-sensitive unless (?i).
SLEEP = re.compile(r"(?i)sleep\w*\s*\(")
COND_WAIT = re.compile(
    r"\bawait\(\)|Awaitility|\.until\w*\s*\(|(?i:wait_?until)|\bwait_?for\w*\s*\(|waitFor\w*\s*\(|"
    r"(?i:eventually)|(?i:latch)|\.join\(\s*\)|\.join\(\s*(?:timeout|\d)|\bretry\w*\s*\(|\bpoll\w*\s*\(|\.wait\s*\(|assertTimeout|"
    r"\bwait_(?:for|until)\w*|\bwait\w*\s*\(")
LOOP = re.compile(r"^\s*(while\b|for\b|loop\b|do\b)")
TIMEOUT_CTX = re.compile(r"(?i)time_?out|wait|deadline|duration|\bsecs?\b|seconds|millis|_ms\b|\dms\b|await|"
                         r"until|within|expir|ttl|TimeUnit|from_(?:secs|millis)|of(?:Seconds|Millis)")
NUMBER = re.compile(r"(?<![\w.])(\d+(?:_\d+)*(?:\.\d+)?)(?![\w.])")
FREE_PORT = re.compile(
    r"(?i)free_?port|unused_?(?:tcp_?)?port|available_?port|random_?port|pick_?unused|portpicker|"
    r"ServerSocket\(\s*0\b|\(\s*['\"][^'\"]*['\"]\s*,\s*0\s*\)|['\"][\w.\[\]:]*:0['\"]|\bport\s*[=:]\s*0\b|"
    r"getLocalPort|local_addr\(\)|localPort|\bport\s*\(\s*0\s*\)|listen\(\s*0\b")
RESTORE = re.compile(
    r"\bfinally\b|@After\w*|\btear_?[Dd]own\b|monkeypatch|setenv|delenv|clearProperty|mock\.patch|"
    r"\bpatch(?:\.dict|\.object)?\(|addCleanup|(?i:restore)|\breset\w*\s*\(|\b(?:saved|original|previous|"
    r"old)_?\w*\s*=|remove_var|@SetSystemProperty|@ClearSystemProperty|SystemProperty\w*Extension|"
    r"\bimpl Drop\b|scopeguard|\bdefer\b")


def unit_ms(line):
    """The unit, in ms, a line's number is most likely in."""
    if re.search(r"(?i)minutes|from_mins|ofMinutes", line):
        return 60000.0
    if re.search(r"(?i)millis|_ms\b|\dms\b|MILLISECONDS|ofMillis|from_millis", line):
        return 1.0
    if re.search(r"(?i)micros|nanos", line):
        return 0.001
    return 1000.0  # seconds: Python's timeouts and sleeps, Duration::from_secs, SECONDS


def magnitude(line):
    numbers = [float(n.replace("_", "")) for n in NUMBER.findall(line)]
    return max(numbers) * unit_ms(line) if numbers else None


def classify(hunks):
    """The kinds of a change, given as (removed lines, added lines) pairs (lines stripped)."""
    kinds = set()
    for removed, added in hunks:
        moved = set(removed) & set(added)
        rem = [l for l in removed if l not in moved]
        add = [l for l in added if l not in moved]
        rem_text, add_text = "\n".join(rem), "\n".join(add)
        if any(COND_WAIT.search(l) and not COND_WAIT.search(rem_text) for l in add) or (
                any(LOOP.search(l) for l in add) and SLEEP.search(add_text)):
            kinds.add("condition-wait")
        if FREE_PORT.search(add_text) and not FREE_PORT.search(rem_text):
            kinds.add("ephemeral-port")
        if any(RESTORE.search(l) for l in add) and not RESTORE.search(rem_text):
            kinds.add("restore-state")
        for a in rem:  # a bound raised: a similar line whose number grew
            if not (TIMEOUT_CTX.search(a) or SLEEP.search(a)):
                continue
            for b in add:
                if difflib.SequenceMatcher(None, a, b).ratio() < 0.6:
                    continue
                before, after = magnitude(a), magnitude(b)
                if before is not None and after is not None and after > before:
                    kinds.add("longer-sleep" if SLEEP.search(a) and SLEEP.search(b) else "generous-wait")
    return kinds


def changed_old_lines(a_lines, b_lines):
    """The maintainers' change of one file as opcodes over stripped lines: [(old line set,
    removed lines, added lines)], old lines 1-based; a pure insertion marks the lines either side."""
    a = [l.strip() for l in a_lines]
    b = [l.strip() for l in b_lines]
    out = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        olds = set(range(i1 + 1, i2 + 1)) if i2 > i1 else {i1, i1 + 1}
        out.append((olds, [l for l in a[i1:i2] if l], [l for l in b[j1:j2] if l]))
    return out


def diff_old_lines(diff):
    """The old-file lines a unified diff removes, or (pure insertion) sits between."""
    lines, old = set(), 0
    for text in diff.splitlines():
        m = re.match(r"@@ -(\d+)(?:,\d+)? \+\d+(?:,\d+)? @@", text)
        if m:
            old = int(m.group(1))
            continue
        if text.startswith("---") or text.startswith("+++"):
            continue
        if text.startswith("-"):
            lines.add(old)
            old += 1
        elif text.startswith("+"):
            lines.update((old - 1, old))
        else:
            old += 1
    return lines


# --- function spans -------------------------------------------------------------------------
_parsers = {}


def ts_parser(lang):
    if lang not in _parsers:
        from tree_sitter import Language, Parser
        if lang == "java":
            import tree_sitter_java as grammar
        else:
            import tree_sitter_rust as grammar
        _parsers[lang] = Parser(Language(grammar.language()))
    return _parsers[lang]


def functions(lang, text):
    """[(name, first line, last line)] of every function or method (1-based, decorators and
    annotations included)."""
    out = []
    if lang == "python":
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            return indented_functions(text)
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                first = min([node.lineno] + [d.lineno for d in node.decorator_list])
                out.append((node.name, first, node.end_lineno))
        return out
    tree = ts_parser(lang).parse(text.encode("utf-8", "surrogateescape"))
    kinds = {"java": ("method_declaration", "constructor_declaration"), "rust": ("function_item",)}[lang]
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.type in kinds:
            name = node.child_by_field_name("name")
            out.append((name.text.decode("utf-8", "replace") if name else "",
                        node.start_point[0] + 1, node.end_point[0] + 1))
        stack.extend(node.children)
    return out


def indented_functions(text):
    """Python functions by indentation, for files `ast` cannot read (Python 2)."""
    lines = text.splitlines()
    out = []
    for i, line in enumerate(lines):
        m = re.match(r"(\s*)(?:async\s+)?def\s+(\w+)", line)
        if not m:
            continue
        indent, end = len(m.group(1)), i + 1
        for j in range(i + 1, len(lines)):
            if lines[j].strip() and len(lines[j]) - len(lines[j].lstrip()) <= indent:
                break
            end = j + 1
        out.append((m.group(2), i + 1, end))
    return out


def test_span(funcs, name, line):
    same = [f for f in funcs if f[0] == name]
    if not same:
        return None
    inside = [f for f in same if f[1] <= line <= f[2]]
    return min(inside or same, key=lambda f: (abs(f[1] - line), f[2] - f[1]))[1:]


def enclosing(funcs, line):
    inside = [f for f in funcs if f[1] <= line <= f[2]]
    return min(inside, key=lambda f: f[2] - f[1])[1:] if inside else None


# --- running flakesense -----------------------------------------------------------------------
def run(argv, cwd):
    p = subprocess.run(argv, cwd=cwd, capture_output=True, text=True)
    if p.returncode not in (0, 1):
        raise RuntimeError(f"{' '.join(argv[:4])} ... exited {p.returncode}: {p.stderr[-300:]}")
    return json.loads(p.stdout)


def norm(path):
    return path[2:] if path.startswith("./") else path


def short_name(name):
    return re.split(r"::|#|\.", name.split("(")[0].split("[")[0])[-1]


def read(path):
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        return f.read()


def overlay(root, side_dir):
    """Writes a fix's side over the workspace; returns what puts it back."""
    saved, created = {}, []
    for dirpath, _dirs, names in os.walk(side_dir):
        for name in names:
            rel = os.path.relpath(os.path.join(dirpath, name), side_dir)
            target = os.path.join(root, rel)
            if os.path.exists(target):
                with open(target, "rb") as f:
                    saved[target] = f.read()
            else:
                created.append(target)
                os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copyfile(os.path.join(dirpath, name), target)

    def put_back():
        for target, content in saved.items():
            with open(target, "wb") as f:
                f.write(content)
        for target in created:
            os.remove(target)
    return put_back


def against_maintainers(binary, lang, repo, root):
    """One record per fixed test: flagged, fixed, and the comparison of each offered fix."""
    with open(os.path.join(repo, "fixes.csv"), encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    by_commit = {}
    for r in rows:
        by_commit.setdefault(r["fix_commit"][:12], []).append(r)
    records = []
    for commit, rows in sorted(by_commit.items()):
        before_dir = os.path.join(repo, "fixes", commit, "before")
        after_dir = os.path.join(repo, "fixes", commit, "after")
        if not os.path.isdir(before_dir):
            records += [dict(test=r["test_name"], path=r["path"], commit=commit, found=False) for r in rows]
            continue
        put_back = overlay(root, before_dir)
        try:
            paths = sorted({r["path"] for r in rows if os.path.exists(os.path.join(before_dir, r["path"]))})
            # fix's own reading of the warnings (every warned test is either fixed or left unfixed): as check's
            # on every snapshot (see apply_all), and fast where nothing is warned, unlike a check of one file
            warned = run([binary, "fix", "--diff", "--format", "json"] + paths, root) if paths else {}
            warned = [dict(id=x["test"], path=x["path"], mechanisms=[x["mechanism"]] if "mechanism" in x else x["mechanisms"])
                      for x in warned.get("fixes", []) + warned.get("unfixed", [])]
            checked = None
            # the maintainers' whole change, per file of the commit
            theirs = {}
            for dirpath, _dirs, names in os.walk(before_dir):
                for name in names:
                    rel = os.path.relpath(os.path.join(dirpath, name), before_dir)
                    after = os.path.join(after_dir, rel)
                    if os.path.exists(after):  # a file only in before/ is a setting shipped with it, not deleted
                        theirs[rel] = changed_old_lines(read(os.path.join(before_dir, rel)).splitlines(),
                                                        read(after).splitlines())
            for r in rows:
                rec = dict(test=r["test_name"], path=r["path"], commit=commit, found=r["path"] in paths)
                records.append(rec)
                if not rec["found"]:
                    continue
                text = read(os.path.join(before_dir, r["path"]))
                funcs = functions(lang, text)
                line = int(r["line_before"] or 0)
                span = test_span(funcs, r["test_name"], line)
                rec["span"] = span
                hits = [w for w in warned if norm(w["path"]) == norm(r["path"]) and short_name(w["id"]) == r["test_name"]]
                if len(hits) > 1 or sum(f[0] == r["test_name"] for f in funcs) > 1:
                    # several tests of that name in the file: check's lines tell which one is this one
                    if checked is None:
                        checked = run([binary, "check", "--format", "json", "--exit-zero"] + paths, root)["findings"]
                    ids = {f["id"] for f in checked if norm(f["path"]) == norm(r["path"]) and
                           short_name(f["name"]) == r["test_name"] and (span is None or span[0] <= f["line"] <= span[1])}
                    hits = [w for w in hits if w["id"] in ids]
                rec["flagged"] = bool(hits)
                if not hits:
                    continue
                hit = hits[0]
                rec["id"] = hit["id"]
                out = run([binary, "fix", "--diff", "--format", "json", "--test", hit["id"], r["path"]], root)
                mine = [x for x in out["fixes"] if x["test"] == hit["id"]]
                rec["mechanisms"] = sorted({m for w in hits for m in w["mechanisms"]} |
                                           {x["mechanism"] for x in mine})
                rec["fixed"] = bool(mine)
                if not mine:
                    rec["hint"] = next((u.get("hint") for u in out["unfixed"] if u["test"] == hit["id"]), None)
                    continue
                # a test can get several fixes (two bounds raised, a restore and a bound): all are ours
                rec["kind"] = "+".join(sorted({x["kind"] for x in mine}))
                rec["fix"] = "+".join(sorted({x["fix"] for x in mine}))
                compare(lang, rec, out["diffs"], theirs, before_dir, funcs, span)
        finally:
            put_back()
    return records


def compare(lang, rec, diffs, theirs, before_dir, funcs, span):
    same_lines = False
    regions = {}  # path -> [(first, last)]: the test and the functions our fix edits
    if span:
        regions.setdefault(rec["path"], []).append(span)
    for d in diffs:
        ours = diff_old_lines(d["diff"])
        path = norm(d["path"])
        if path in theirs:
            if any(ours & olds for olds, _r, _a in theirs[path]):
                same_lines = True
        fs = funcs if path == rec["path"] else (
            functions(lang, read(os.path.join(before_dir, path))) if path in theirs else [])
        for line in ours:
            f = enclosing(fs, line)
            if f:
                regions.setdefault(path, []).append(f)
    rec["same_lines"] = same_lines

    def in_region(path, olds):
        return any(lo <= l <= hi for lo, hi in regions.get(path, []) for l in olds)

    levels = [
        ("test", [(rm, ad) for p, hs in theirs.items() for olds, rm, ad in hs if in_region(p, olds)]),
        ("file", [(rm, ad) for olds, rm, ad in theirs.get(rec["path"], [])]),
        ("commit", [(rm, ad) for hs in theirs.values() for olds, rm, ad in hs]),
    ]
    rec["their_hunks"] = levels  # kept, so that the report classifies them (and --report again)


def judge_kind(rec):
    """The maintainers' kinds, from the narrowest level of their change that names one."""
    rec["their_kinds"], rec["their_level"] = [], "none"
    for level, hunks in rec["their_hunks"]:
        kinds = classify(hunks)
        if kinds:
            rec["their_kinds"], rec["their_level"] = sorted(kinds), level
            break
    rec["same_kind"] = any(k in rec["their_kinds"] for k in rec["kind"].split("+"))


# --- part 2: apply every fix on the snapshot, parse ---------------------------------------------
def parses(lang, text):
    if lang == "python":
        try:
            ast.parse(text)
            return True
        except (SyntaxError, ValueError):
            return False
    return not ts_parser(lang).parse(text.encode("utf-8", "surrogateescape")).root_node.has_error


def compiles(lang, text):
    """Python only: what `ast.parse` lets through but the compiler refuses (a duplicate parameter, a
    `from __future__` import after another statement); None for the other languages."""
    if lang != "python":
        return None
    try:
        compile(text, "<fixed>", "exec", dont_inherit=True)
        return True
    except (SyntaxError, ValueError):
        return False


def apply_all(binary, lang, snapshot, root):
    check = run([binary, "check", "--format", "json", "--exit-zero"], root)["findings"]
    out = run([binary, "fix", "--format", "json"], root)
    warned = {x["test"] for x in out["fixes"] + out["unfixed"]}
    agree = dict(check=len({f["id"] for f in check}), fix=len(warned), both=len(warned & {f["id"] for f in check}))
    paths = sorted({x["path"] for x in out["fixes"]} | {d["path"] for d in out.get("diffs", [])})
    files = []
    for p in paths:
        rel = norm(p)
        old = read(os.path.join(snapshot, rel))
        new = read(os.path.join(root, rel))
        if old == new:
            continue
        files.append(dict(path=rel, parsed_before=parses(lang, old), parses=parses(lang, new),
                          compiled_before=compiles(lang, old), compiles=compiles(lang, new),
                          asserts_before=len(ASSERT[lang].findall(old)), asserts_after=len(ASSERT[lang].findall(new)),
                          fixes=[x["test"] for x in out["fixes"] if norm(x["path"]) == rel]))
    return dict(offered=len(out["fixes"]), agree=agree, kinds=[x["kind"] for x in out["fixes"]], files=files)


def one_repository(args):
    binary, lang, repo = args
    started = time.time()
    root = tempfile.mkdtemp(prefix="fixvs-")
    try:
        shutil.copytree(os.path.join(repo, "snapshot"), root, dirs_exist_ok=True)
        subprocess.run(["git", "init", "-q", root], check=True)
        result = dict(lang=lang, repo=os.path.basename(repo))
        try:
            result["tests"] = against_maintainers(binary, lang, repo, root)
            result["applied"] = apply_all(binary, lang, os.path.join(repo, "snapshot"), root)
        except Exception as e:  # reported, not fatal: the other repositories still count
            result["error"] = str(e)
        result["seconds"] = time.time() - started
        return result
    finally:
        shutil.rmtree(root, ignore_errors=True)


def pct(a, b):
    return f"{a / b:.0%}" if b else "-"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("binary")
    ap.add_argument("data")
    ap.add_argument("--lang", action="append")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--json")
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("--report", action="store_true", help="DATA is a --json file of an earlier run: report it again")
    a = ap.parse_args()
    if a.report:
        with open(a.data) as f:
            report(json.load(f), a.verbose)
        return
    started = time.time()
    binary = os.path.abspath(a.binary)
    data, unpacked = a.data, None
    if os.path.isfile(data):
        unpacked = data = tempfile.mkdtemp(prefix="fixvs-data-")
        with tarfile.open(a.data) as archive:
            archive.extractall(data)
    try:
        jobs = []
        for lang in ("java", "python", "rust"):
            folder = os.path.join(data, lang)
            if not os.path.isdir(folder) or (a.lang and lang not in a.lang):
                continue
            for name in sorted(os.listdir(folder)):
                if os.path.isfile(os.path.join(folder, name, "fixes.csv")):
                    jobs.append((binary, lang, os.path.join(folder, name)))
        # the biggest snapshots first, so that the two workers finish together
        jobs.sort(key=lambda j: -sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(j[2]) for f in fs))
        with ProcessPoolExecutor(max_workers=max(1, min(2, a.jobs))) as pool:
            results = list(pool.map(one_repository, jobs))
    finally:
        if unpacked:
            shutil.rmtree(unpacked, ignore_errors=True)
    results.sort(key=lambda r: (r["lang"], r["repo"]))
    report(results, a.verbose)
    for r in results:
        if "error" in r:
            print(f"\nerror in {r['lang']}/{r['repo']}: {r['error']}")
    print(f"\n{len(results)} repositories in {time.time() - started:.0f} s")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)


def report(results, verbose):
    for r in results:
        for t in r.get("tests", []):
            if t.get("fixed"):
                judge_kind(t)
    langs = [l for l in ("java", "python", "rust") if any(r["lang"] == l for r in results)]
    print("## Against the maintainers\n")
    print("| language | fixed tests | found | flagged | with a fix | same statements | same kind | both |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    total = [0] * 7
    for lang in langs + ["all"]:
        recs = [t for r in results if lang in (r["lang"], "all") for t in r.get("tests", [])]
        fixed = [t for t in recs if t.get("fixed")]
        row = [len(recs), sum(t["found"] for t in recs), sum(bool(t.get("flagged")) for t in recs), len(fixed),
               sum(t["same_lines"] for t in fixed), sum(t["same_kind"] for t in fixed),
               sum(t["same_lines"] and t["same_kind"] for t in fixed)]
        f = row[3]
        print(f"| {lang} | {row[0]} | {row[1]} | {row[2]} | {row[3]} | {row[4]} ({pct(row[4], f)}) | "
              f"{row[5]} ({pct(row[5], f)}) | {row[6]} ({pct(row[6], f)}) |")
    print("\nOur kinds of fix offered, and the maintainers' kinds for the same tests:\n")
    print("| language | our kind | offered | same kind | their kinds (count) |")
    print("|---|---|---:|---:|---|")
    for lang in langs:
        fixed = [t for r in results if r["lang"] == lang for t in r.get("tests", []) if t.get("fixed")]
        for kind in sorted({t["kind"] for t in fixed}):
            group = [t for t in fixed if t["kind"] == kind]
            counts = {}
            for t in group:
                k = "+".join(t["their_kinds"]) or "other"
                counts[k] = counts.get(k, 0) + 1
            theirs = ", ".join(f"{k} ({n})" for k, n in sorted(counts.items(), key=lambda x: -x[1]))
            print(f"| {lang} | {kind} | {len(group)} | {sum(t['same_kind'] for t in group)} | {theirs} |")
    print("\nEvery flagged fixed test: our kind (or the mechanisms left without a fix), the maintainers' kinds "
          "and where they were read (test, file, commit), same statements, same kind:\n")
    print("| repository | commit | test | ours | theirs | same statements | same kind |")
    print("|---|---|---|---|---|:---:|:---:|")
    for r in results:
        for t in r.get("tests", []):
            if not t.get("flagged") or (not t.get("fixed") and not verbose):
                continue
            if t.get("fixed"):
                print(f"| {r['repo']} | {t['commit'][:7]} | {t['test']} | {t['kind']} | "
                      f"{'+'.join(t['their_kinds']) or 'other'} ({t['their_level']}) | "
                      f"{'yes' if t['same_lines'] else 'no'} | {'yes' if t['same_kind'] else 'no'} |")
            else:
                print(f"| {r['repo']} | {t['commit'][:7]} | {t['test']} | no fix ({', '.join(t['mechanisms'])}) | | | |")
    print("\n## Every offered fix parses (each snapshot, every fix applied)\n")
    print("| language | fixes offered | tests fixed | files changed | files that parse | rate | parsed before | "
          "compile (Python) | compiled before | files with fewer assertions | fixes in them |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    bad = []
    for lang in langs + ["all"]:
        apps = [(r["repo"], r["applied"]) for r in results if lang in (r["lang"], "all") and "applied" in r]
        files = [(repo, f) for repo, ap in apps for f in ap["files"]]
        ok = sum(f["parses"] for _, f in files)
        fewer = [(repo, f) for repo, f in files if f["asserts_after"] < f["asserts_before"]]
        if lang != "all":
            bad += [(lang, repo, f, "does not parse") for repo, f in files if f["parsed_before"] and not f["parses"]]
            bad += [(lang, repo, f, "parses but does not compile") for repo, f in files
                    if f.get("compiled_before") and f["parses"] and f.get("compiles") is False]
            bad += [(lang, repo, f, f"assertions {f['asserts_before']} -> {f['asserts_after']}") for repo, f in fewer]
        tests = len({(repo, t) for repo, f in files for t in f["fixes"]})
        print(f"| {lang} | {sum(ap['offered'] for _, ap in apps)} | {tests} | {len(files)} | {ok} | {pct(ok, len(files))} | "
              f"{sum(f['parsed_before'] for _, f in files)} | "
              f"{sum(bool(f.get('compiles')) for _, f in files) if lang == 'python' else '-'} | "
              f"{sum(bool(f.get('compiled_before')) for _, f in files) if lang == 'python' else '-'} | {len(fewer)} | {sum(len(f['fixes']) for _, f in fewer)} |")
    agree = [r["applied"]["agree"] for r in results if "applied" in r]
    print(f"\nOn the snapshots, `check` warns about {sum(x['check'] for x in agree)} tests, `fix` reports "
          f"{sum(x['fix'] for x in agree)} (fixed or not), {sum(x['both'] for x in agree)} of them the same.\n")
    for lang, repo, f, why in bad:
        print(f"- {lang} {repo} {f['path']}: {why} ({', '.join(f['fixes'])})")


if __name__ == "__main__":
    main()
