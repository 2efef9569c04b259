//! This repository's `.pre-commit-hooks.yaml`, and the README's `.pre-commit-config.yaml` as
//! written, run by the real `pre-commit` on a temporary repository: a commit that stages a
//! flaky-looking test is refused, a clean one goes through.
//!
//! The tests use hooks of `language: system` with `PATH` leading to the freshly built binary;
//! the `language: rust` hook has the same entry but would compile the crate inside pre-commit's
//! cache. `.ci/run` installs pre-commit (`pip install pre-commit`); where it is absent the tests
//! say so and skip.

mod common;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Output;

use common::{binary, command, fixtures, readme_block, run_ok, tiny_model, tool_available, write};

const FLAKY_LOOKING: &str = r#"import time


def test_waits_for_server():
    server.start()
    time.sleep(1)
    assert server.is_running()
"#;

const CLEAN: &str = r#"def test_adds():
    assert 1 + 1 == 2
"#;

/// The environment of a developer who has pre-commit and the freshly built flakesense.
struct Developer {
    path: OsString,
    cache: PathBuf,
}

impl Developer {
    fn run(&self, program: &str, arguments: &[&str], directory: &Path) -> Output {
        command(program, directory)
            .args(arguments)
            .env("PATH", &self.path)
            .env("PRE_COMMIT_HOME", &self.cache)
            .output()
            .unwrap_or_else(|error| panic!("cannot run {program}: {error}"))
    }

    fn run_ok(&self, program: &str, arguments: &[&str], directory: &Path) -> String {
        let output = self.run(program, arguments, directory);
        assert!(
            output.status.success(),
            "{program} {arguments:?} failed:\n{}",
            text(&output)
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    }
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// A repository holding only this repository's hook definitions, as pre-commit clones it.
fn hooks_repository(directory: &Path) -> String {
    std::fs::create_dir_all(directory).unwrap();
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join(".pre-commit-hooks.yaml"),
        directory.join(".pre-commit-hooks.yaml"),
    )
    .unwrap();
    run_ok("git", &["init", "-q", "-b", "main"], directory);
    run_ok("git", &["add", "-A"], directory);
    run_ok("git", &["commit", "-q", "-m", "hooks"], directory);
    run_ok("git", &["rev-parse", "HEAD"], directory)
        .trim()
        .to_string()
}

/// A developer whose `PATH` leads to the freshly built flakesense first.
fn developer(directory: &Path) -> Developer {
    let binary_directory = Path::new(binary()).parent().unwrap();
    Developer {
        path: std::env::join_paths(std::iter::once(binary_directory.to_path_buf()).chain(
            std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
        ))
        .unwrap(),
        cache: directory.join("pre-commit-cache"),
    }
}

#[test]
fn the_readmes_pre_commit_configuration_works_as_written() {
    if !tool_available("pre-commit") {
        println!("skipped: `pre-commit` is not installed (pip install pre-commit)");
        return;
    }
    let directory = tempfile::tempdir().unwrap();
    let project = directory.path().join("project");
    let developer = developer(directory.path());
    let configuration = readme_block("**pre-commit.**", "yaml");
    assert!(
        !configuration.contains("OWNER"),
        "the README's snippet must work as written:\n{configuration}"
    );
    write(&project, ".pre-commit-config.yaml", &configuration);
    write(&project, "README.md", "A project.\n");
    developer.run_ok("git", &["init", "-q", "-b", "main"], &project);
    developer.run_ok("git", &["add", "-A"], &project);
    developer.run_ok("git", &["commit", "-q", "-m", "base"], &project);
    developer.run_ok("pre-commit", &["install"], &project);
    let base = developer.run_ok("git", &["rev-parse", "HEAD"], &project);

    // The demo's waiting test, judged by the shipped models: the commit is refused.
    let flaky = std::fs::read_to_string(fixtures().join("demo/tests/test_status_page.py")).unwrap();
    write(&project, "tests/test_status_page.py", &flaky);
    developer.run_ok("git", &["add", "-A"], &project);
    let refused = developer.run("git", &["commit", "-m", "a status page test"], &project);
    let output = text(&refused);
    assert!(
        !refused.status.success(),
        "the commit went through:\n{output}"
    );
    assert!(
        output.contains("test_status_page_reports_healthy_after_restart is likely flaky"),
        "{output}"
    );
    assert_eq!(
        developer.run_ok("git", &["rev-parse", "HEAD"], &project),
        base
    );

    // A clean test goes through.
    write(&project, "tests/test_status_page.py", CLEAN);
    developer.run_ok("git", &["add", "-A"], &project);
    let accepted = developer.run("git", &["commit", "-m", "a math test"], &project);
    let output = text(&accepted);
    assert!(
        accepted.status.success(),
        "the commit was refused:\n{output}"
    );
    assert!(
        output.contains("flakesense (likely flaky tests)"),
        "{output}"
    );
}

#[test]
fn pre_commit_refuses_a_flaky_looking_staged_test_and_accepts_a_clean_one() {
    if !tool_available("pre-commit") {
        println!("skipped: `pre-commit` is not installed (pip install pre-commit)");
        return;
    }
    let directory = tempfile::tempdir().unwrap();
    let hooks = directory.path().join("hooks");
    let revision = hooks_repository(&hooks);
    let project = directory.path().join("project");
    let developer = developer(directory.path());

    write(
        &project,
        ".pre-commit-config.yaml",
        &format!(
            r#"repos:
  - repo: {}
    rev: {revision}
    hooks:
      - id: flakesense-system
        args: [--no-default-models, --model, "{}", --k, "3", --sigma, "0.5"]
"#,
            hooks.display(),
            tiny_model().display()
        ),
    );
    write(&project, "README.md", "A project.\n");
    developer.run_ok("git", &["init", "-q", "-b", "main"], &project);
    developer.run_ok("git", &["add", "-A"], &project);
    developer.run_ok("git", &["commit", "-q", "-m", "base"], &project);
    developer.run_ok("pre-commit", &["install"], &project);
    let base = developer.run_ok("git", &["rev-parse", "HEAD"], &project);

    // A flaky-looking test: the hook fails, the commit does not happen.
    write(&project, "tests/test_server.py", FLAKY_LOOKING);
    developer.run_ok("git", &["add", "tests/test_server.py"], &project);
    let refused = developer.run("git", &["commit", "-m", "add a server test"], &project);
    let output = text(&refused);
    assert!(
        !refused.status.success(),
        "the commit went through:\n{output}"
    );
    assert!(
        output.contains("tests/test_server.py::test_waits_for_server is likely flaky (async-wait)"),
        "{output}"
    );
    assert!(
        output.contains("flakesense (likely flaky tests)"),
        "{output}"
    );
    assert_eq!(
        developer.run_ok("git", &["rev-parse", "HEAD"], &project),
        base
    );

    // The same file with a clean test: the hook passes and the commit is made.
    write(&project, "tests/test_server.py", CLEAN);
    developer.run_ok("git", &["add", "tests/test_server.py"], &project);
    let accepted = developer.run("git", &["commit", "-m", "add a math test"], &project);
    let output = text(&accepted);
    assert!(
        accepted.status.success(),
        "the commit was refused:\n{output}"
    );
    assert!(
        output.contains("flakesense (likely flaky tests)"),
        "{output}"
    );
    assert_ne!(
        developer.run_ok("git", &["rev-parse", "HEAD"], &project),
        base
    );
}
