//! Helpers shared by the integration tests that run the `flakesense` binary.

#![allow(
    dead_code,
    reason = "each test crate includes this module and uses a different part of it"
)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

pub fn binary() -> &'static str {
    env!("CARGO_BIN_EXE_flakesense")
}

pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// A tiny model trained once per test process from `tests/fixtures/check/tiny.csv`, so no
/// expectation depends on the shipped models, which move whenever they are retrained. It is a
/// plain FLAST model (`--no-prior`): its verdicts follow from the handwritten neighbours alone,
/// not from a signal prior fitted on a dozen tests. It lives
/// in Cargo's scratch directory for tests; `train` replaces the file atomically, so test
/// processes running at once cannot see half of it.
pub fn tiny_model() -> &'static Path {
    static MODEL: OnceLock<PathBuf> = OnceLock::new();
    MODEL.get_or_init(|| {
        let model = Path::new(env!("CARGO_TARGET_TMPDIR")).join("tiny.idx");
        let output = Command::new(binary())
            .arg("train")
            .arg("--data")
            .arg(fixtures().join("check/tiny.csv"))
            .arg("--out")
            .arg(&model)
            .arg("--no-prior")
            .output()
            .expect("flakesense runs");
        assert!(
            output.status.success(),
            "training the tiny model failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        model
    })
}

/// A command isolated from the user's and the machine's git configuration, with fixed
/// identities and dates so commits are reproducible. `flakesense` is the binary under test.
pub fn command(program: &str, directory: &Path) -> Command {
    let program = if program == "flakesense" {
        binary()
    } else {
        program
    };
    let mut command = Command::new(program);
    command
        .current_dir(directory)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "Test Author")
        .env("GIT_AUTHOR_EMAIL", "author@example.com")
        .env("GIT_COMMITTER_NAME", "Test Author")
        .env("GIT_COMMITTER_EMAIL", "author@example.com")
        .env("GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z")
        .env("GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z")
        .env_remove("GIT_DIR")
        .env_remove("GIT_INDEX_FILE")
        .env_remove("GIT_WORK_TREE")
        .env_remove("NO_COLOR")
        // The cache of signal shares of workspaces outside git goes here, not in the user's.
        .env(
            "XDG_CACHE_HOME",
            Path::new(env!("CARGO_TARGET_TMPDIR")).join("xdg-cache"),
        );
    command
}

/// Runs a setup command and panics with its output when it fails.
pub fn run_ok(program: &str, arguments: &[&str], directory: &Path) -> String {
    let output = command(program, directory)
        .args(arguments)
        .output()
        .unwrap_or_else(|error| panic!("cannot run {program}: {error}"));
    assert!(
        output.status.success(),
        "{program} {arguments:?} failed:\n{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Whether a tool answers `--version`; tests that drive it skip with a note when it does not.
pub fn tool_available(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .output()
        .is_ok_and(|output| output.status.success())
}

pub fn write(root: &Path, path: &str, content: &str) {
    let path = root.join(path);
    std::fs::create_dir_all(path.parent().expect("a file has a parent")).unwrap();
    std::fs::write(path, content).unwrap();
}

/// Copies the directory tree `from` to `to`, creating `to`.
pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("a directory to copy into");
    for entry in std::fs::read_dir(from).expect("a readable directory") {
        let entry = entry.expect("a readable entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("a file type").is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("a copied file");
        }
    }
}

/// The first code block of `language` (` ```yaml `) in the README after the first line holding
/// `marker`, as written: tests run the README's snippets themselves.
pub fn readme_block(marker: &str, language: &str) -> String {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"))
        .expect("the README reads");
    let after = &readme[readme
        .find(marker)
        .unwrap_or_else(|| panic!("the README has no `{marker}`"))..];
    let fence = format!("```{language}\n");
    let start = after
        .find(&fence)
        .unwrap_or_else(|| panic!("no {language} block after `{marker}`"))
        + fence.len();
    let end = after[start..].find("```").expect("the block ends") + start;
    after[start..end].to_string()
}
