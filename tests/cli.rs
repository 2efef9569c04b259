//! The command line, one data file per case: `tests/cli/*.toml` give the arguments, the input
//! tree, setup steps (git commands, later edits), the exit code and the expected output; this
//! file only runs them. Every case also checks that the command left the tree as it found it.
//!
//! Fields of a case (all but `args` and `status` optional):
//!
//! - `about`: what the case shows.
//! - `args`: the arguments after `flakesense`.
//! - `status`: the expected exit code.
//! - `[files]`: path = content, written into a fresh temporary directory, the case's root.
//! - `[[setup]]`: steps run in order before the command, each `run = [program, args...]`
//!   (`flakesense` is the binary under test) or `write = { path = content }`.
//! - `cwd`: where the command runs, relative to the root.
//! - `stdout`, `stderr`: the whole expected output. A line `...` stands for any number of
//!   lines, `[..]` for any text within a line; `[ROOT]` is the case's root and `[MODEL]` the
//!   tiny model.
//! - `stdout_contains`, `stdout_excludes`, `stderr_contains`: texts that must (not) appear.
//!
//! In any text, `{model}` is the path of a tiny model trained once from
//! `tests/fixtures/check/tiny.csv`, and `{fixtures}` the `tests/fixtures` directory. Set
//! `FLAKESENSE_CASE` to a name to run one case.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use common::{command, fixtures, tiny_model};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    #[allow(dead_code, reason = "documentation for the reader of the case file")]
    about: Option<String>,
    args: Vec<String>,
    status: i32,
    #[serde(default)]
    files: BTreeMap<String, String>,
    #[serde(default)]
    setup: Vec<Step>,
    cwd: Option<String>,
    stdout: Option<String>,
    stderr: Option<String>,
    #[serde(default)]
    stdout_contains: Vec<String>,
    #[serde(default)]
    stdout_excludes: Vec<String>,
    #[serde(default)]
    stderr_contains: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged, deny_unknown_fields)]
enum Step {
    Run { run: Vec<String> },
    Write { write: BTreeMap<String, String> },
}

fn expand(text: &str) -> String {
    text.replace("{model}", &tiny_model().display().to_string())
        .replace("{fixtures}", &fixtures().display().to_string())
}

fn write_files(root: &Path, files: &BTreeMap<String, String>) {
    for (path, content) in files {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().expect("a file has a parent")).unwrap();
        std::fs::write(path, expand(content)).unwrap();
    }
}

/// Every file, directory and link under `root` with its content, to show nothing changed, except
/// the cache of the workspace's signal shares, which any run may write in git's directory
/// (`.git/flakesense`): that is not the working tree.
fn snapshot(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut seen = BTreeMap::new();
    let mut pending = vec![root.to_path_buf()];
    let (flakesense, cache) = (root.join(".flakesense"), root.join(".git/flakesense"));
    while let Some(directory) = pending.pop() {
        for entry in std::fs::read_dir(&directory).unwrap() {
            let path = entry.unwrap().path();
            if path == cache {
                continue;
            }
            if path == flakesense && path.is_dir() {
                pending.push(path);
                continue;
            }
            let metadata = std::fs::symlink_metadata(&path).unwrap();
            let content = if metadata.file_type().is_symlink() {
                std::fs::read_link(&path)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned()
                    .into_bytes()
            } else if metadata.is_dir() {
                pending.push(path.clone());
                b"<dir>".to_vec()
            } else if !metadata.is_file() {
                // A FIFO or a device is never read: that could block or never end.
                b"<not a regular file>".to_vec()
            } else {
                std::fs::read(&path).unwrap_or_else(|_| b"<unreadable>".to_vec())
            };
            seen.insert(path, content);
        }
    }
    seen
}

/// Matches one line against a pattern where `[..]` stands for any text.
fn line_matches(pattern: &str, line: &str) -> bool {
    let parts: Vec<&str> = pattern.split("[..]").collect();
    if parts.len() == 1 {
        return pattern == line;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !line.starts_with(first) || !line[first.len()..].ends_with(last) {
        return false;
    }
    let mut rest = &line[first.len()..line.len() - last.len()];
    for part in &parts[1..parts.len() - 1] {
        match rest.find(part) {
            Some(found) => rest = &rest[found + part.len()..],
            None => return false,
        }
    }
    true
}

/// Matches lines against patterns where a `...` line stands for any number of lines.
fn lines_match(patterns: &[&str], lines: &[&str]) -> bool {
    match patterns.split_first() {
        None => lines.is_empty(),
        Some((&"...", rest)) => (0..=lines.len()).any(|skip| lines_match(rest, &lines[skip..])),
        Some((pattern, rest)) => {
            !lines.is_empty() && line_matches(pattern, lines[0]) && lines_match(rest, &lines[1..])
        }
    }
}

fn normalise_output(bytes: &[u8], root: &Path) -> String {
    String::from_utf8_lossy(bytes)
        .replace(&tiny_model().display().to_string(), "[MODEL]")
        .replace(&root.display().to_string(), "[ROOT]")
}

fn check_output(
    failures: &mut Vec<String>,
    stream: &str,
    actual: &str,
    expected: Option<&String>,
    contains: &[String],
    excludes: &[String],
) {
    if let Some(expected) = expected {
        let patterns: Vec<&str> = expected.lines().collect();
        let lines: Vec<&str> = actual.lines().collect();
        if !lines_match(&patterns, &lines) {
            failures.push(format!(
                "{stream} differs.\n--- expected\n{expected}\n--- actual\n{actual}"
            ));
        }
    }
    for text in contains {
        if !actual.contains(text.as_str()) {
            failures.push(format!("{stream} lacks `{text}`:\n{actual}"));
        }
    }
    for text in excludes {
        if actual.contains(text.as_str()) {
            failures.push(format!("{stream} holds `{text}`:\n{actual}"));
        }
    }
}

/// Runs one case; returns what went wrong.
fn run_case(case: &Case) -> Vec<String> {
    let directory = tempfile::tempdir().unwrap();
    // Canonical, so the root matches the paths git and the binary print.
    let root = directory.path().canonicalize().unwrap();
    write_files(&root, &case.files);
    for step in &case.setup {
        match step {
            Step::Write { write } => write_files(&root, write),
            Step::Run { run } => {
                let arguments: Vec<String> = run.iter().map(|argument| expand(argument)).collect();
                let output = command(&arguments[0], &root)
                    .args(&arguments[1..])
                    .output()
                    .unwrap_or_else(|error| panic!("cannot run {arguments:?}: {error}"));
                if !output.status.success() {
                    return vec![format!(
                        "setup step {arguments:?} failed: {}",
                        String::from_utf8_lossy(&output.stderr)
                    )];
                }
            }
        }
    }
    let before = snapshot(&root);
    let cwd = case
        .cwd
        .as_ref()
        .map_or_else(|| root.clone(), |cwd| root.join(cwd));
    let arguments: Vec<String> = case.args.iter().map(|argument| expand(argument)).collect();
    let output = command("flakesense", &cwd)
        .args(&arguments)
        .output()
        .expect("flakesense runs");
    let mut failures = Vec::new();
    let stdout = normalise_output(&output.stdout, &root);
    let stderr = normalise_output(&output.stderr, &root);
    if output.status.code() != Some(case.status) {
        failures.push(format!(
            "exit status {:?}, expected {}\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
            output.status.code(),
            case.status
        ));
    }
    let expected_stdout = case.stdout.as_ref().map(|text| expand(text));
    check_output(
        &mut failures,
        "stdout",
        &stdout,
        expected_stdout.as_ref(),
        &case.stdout_contains,
        &case.stdout_excludes,
    );
    let expected_stderr = case.stderr.as_ref().map(|text| expand(text));
    check_output(
        &mut failures,
        "stderr",
        &stderr,
        expected_stderr.as_ref(),
        &case.stderr_contains,
        &[],
    );
    if snapshot(&root) != before {
        failures.push("the command changed the tree it ran on".to_string());
    }
    failures
}

#[test]
fn cli_cases() {
    let only = std::env::var("FLAKESENSE_CASE").ok();
    let mut paths: Vec<PathBuf> =
        std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cli"))
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .filter(|path| {
                path.extension()
                    .is_some_and(|extension| extension == "toml")
            })
            .filter(|path| {
                only.as_deref()
                    .is_none_or(|only| path.file_stem().is_some_and(|stem| stem == only))
            })
            .collect();
    paths.sort();
    assert!(!paths.is_empty(), "no case in tests/cli");
    let mut failed = Vec::new();
    for path in &paths {
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(path).unwrap();
        let case: Case = match toml::from_str(&text) {
            Ok(case) => case,
            Err(error) => {
                failed.push(format!("{name}: invalid case file: {error}"));
                continue;
            }
        };
        let failures = run_case(&case);
        if failures.is_empty() {
            println!("case {name} ... ok");
        } else {
            println!("case {name} ... FAILED");
            failed.push(format!("{name}:\n{}", failures.join("\n")));
        }
    }
    assert!(
        failed.is_empty(),
        "{} of {} cases failed:\n\n{}",
        failed.len(),
        paths.len(),
        failed.join("\n\n")
    );
}

#[test]
fn patterns_match_as_documented() {
    assert!(line_matches("a [..] c", "a b b c"));
    assert!(line_matches("[..]x", "x"));
    assert!(!line_matches("a [..] c", "a b d"));
    assert!(lines_match(&["a", "...", "d"], &["a", "b", "c", "d"]));
    assert!(lines_match(&["a", "...", "b"], &["a", "b"]));
    assert!(!lines_match(&["a", "b"], &["a", "b", "c"]));
}
