//! A repository made to abuse whoever opens it: settings and git configuration that name
//! commands, links out of `.flakesense`, a FIFO where a file is expected. `check`, `predict` and
//! `serve` run on it must finish, run none of its commands and write nothing outside it.

mod common;
mod lsp_client;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use common::{command, run_ok, write};

const TEST_FILE: &str = "tests/test_timing.py";
const TEST_TEXT: &str =
    "import time\n\n\ndef test_waits():\n    time.sleep(1)\n    assert done()\n";

/// A script at `path` that leaves `marker` behind when anything runs it.
fn marker_script(path: &Path, marker: &Path) {
    std::fs::write(
        path,
        format!("#!/bin/sh\ntouch '{}'\ncat\n", marker.display()),
    )
    .unwrap();
    run_ok(
        "chmod",
        &["+x", &path.display().to_string()],
        Path::new("/"),
    );
}

/// A git repository at `root` with one committed test, whose git configuration names `script`
/// as its fsmonitor, its hooks' directory holding it, its external diff and a clean filter of
/// every file; and a staged change and a change in the working tree.
fn git_repository_running(root: &Path, script: &Path) {
    std::fs::create_dir_all(root).unwrap();
    run_ok("git", &["init", "-q", "."], root);
    write(root, TEST_FILE, TEST_TEXT);
    write(root, ".gitattributes", "* filter=hostile diff=hostile\n");
    run_ok("git", &["add", "."], root);
    run_ok("git", &["commit", "-qm", "first"], root);
    let script = script.display().to_string();
    let hooks = Path::new(&script).parent().unwrap().display().to_string();
    for (key, value) in [
        ("core.fsmonitor", script.as_str()),
        ("core.hooksPath", hooks.as_str()),
        ("core.pager", script.as_str()),
        ("diff.external", script.as_str()),
        ("diff.hostile.textconv", script.as_str()),
        ("filter.hostile.clean", script.as_str()),
        ("filter.hostile.smudge", script.as_str()),
    ] {
        run_ok("git", &["config", key, value], root);
    }
    write(
        root,
        TEST_FILE,
        &format!("{TEST_TEXT}\n\ndef test_more():\n    time.sleep(2)\n"),
    );
    write(
        root,
        "tests/test_staged.py",
        "def test_staged():\n    assert True\n",
    );
    // Staging runs the filter itself: the marker is made here, by git, and removed below.
    command("git", root)
        .args(["-c", "filter.hostile.clean=", "add", "tests/test_staged.py"])
        .output()
        .unwrap();
    // A later modification time, so that git hashes the file again (through its filter).
    std::thread::sleep(Duration::from_millis(1100));
    write(
        root,
        TEST_FILE,
        &format!("{TEST_TEXT}\n\ndef test_later():\n    time.sleep(3)\n"),
    );
}

/// Runs `flakesense` with `arguments` in `root`, failing the test when it takes over two
/// minutes (a guard against a hang only: each command answers in a second or two).
fn run_guarded(root: &Path, arguments: &[&str]) -> Output {
    let mut child = command("flakesense", root)
        .args(arguments)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            child.kill().unwrap();
            panic!("flakesense {arguments:?} hangs");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

/// Every path under `directory` with its content (a link's target for a link).
#[allow(dead_code)]
fn snapshot(directory: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut seen = BTreeMap::new();
    let mut pending = vec![directory.to_path_buf()];
    while let Some(directory) = pending.pop() {
        for entry in std::fs::read_dir(&directory).unwrap() {
            let path = entry.unwrap().path();
            let metadata = std::fs::symlink_metadata(&path).unwrap();
            let content = if metadata.file_type().is_symlink() {
                std::fs::read_link(&path)
                    .unwrap()
                    .into_os_string()
                    .into_encoded_bytes()
            } else if metadata.is_dir() {
                pending.push(path.clone());
                b"<dir>".to_vec()
            } else if metadata.is_file() {
                std::fs::read(&path).unwrap()
            } else {
                b"<not a regular file>".to_vec()
            };
            seen.insert(path, content);
        }
    }
    seen
}

fn text(output: &Output) -> String {
    format!(
        "status {:?}\n{}{}",
        output.status.code(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

#[test]
fn check_runs_nothing_the_repositorys_git_configuration_names() {
    if !common::tool_available("git") {
        eprintln!("git is missing: skipping");
        return;
    }
    let directory = tempfile::tempdir().unwrap();
    let marker = directory.path().join("ran");
    let script = directory.path().join("hooks/hostile");
    std::fs::create_dir_all(script.parent().unwrap()).unwrap();
    marker_script(&script, &marker);
    let root = directory.path().join("repo");
    git_repository_running(&root, &script);
    let _ = std::fs::remove_file(&marker);
    let model = common::tiny_model().display().to_string();
    for arguments in [
        &["check", "--model", &model, "--staged"][..],
        &["check", "--model", &model, "--diff-base", "HEAD"],
    ] {
        let output = run_guarded(&root, arguments);
        assert!(
            matches!(output.status.code(), Some(0 | 1)),
            "{arguments:?}: {}",
            text(&output)
        );
        assert!(
            !marker.exists(),
            "{arguments:?} ran a command of the repository's git configuration: {}",
            text(&output)
        );
    }
    // The change is seen all the same: the staged new test and the one added in the working tree.
    let output = run_guarded(
        &root,
        &[
            "check",
            "--model",
            &model,
            "--diff-base",
            "HEAD",
            "--format",
            "json",
        ],
    );
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["summary"]["tests"], 2, "{}", text(&output));
}
