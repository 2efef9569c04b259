//! A repository made to abuse whoever opens it: settings and git configuration that name
//! commands, links out of `.flakesense`, a FIFO where a file is expected. `check`, `predict` and
//! `serve` run on it must finish, run none of its commands and write nothing outside it.

mod common;
mod lsp_client;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

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

/// The repository of every trick at once, in `directory/repo`, and what it must not touch:
/// `directory/outside`. Returns the repository, the outside directory and the marker any
/// command of the repository's would leave behind. `None` where `mkfifo` is missing.
fn hostile_repository(directory: &Path) -> Option<(PathBuf, PathBuf, PathBuf)> {
    let outside = directory.join("outside");
    std::fs::create_dir_all(outside.join("elsewhere")).unwrap();
    std::fs::write(outside.join("keep"), "untouched\n").unwrap();
    let marker = directory.join("ran");
    let script = directory.join("hooks/hostile");
    std::fs::create_dir_all(script.parent().unwrap()).unwrap();
    marker_script(&script, &marker);
    let root = directory.join("repo");
    git_repository_running(&root, &script);
    write(
        &root,
        "flakesense.toml",
        &format!(
            "models = [{:?}]\n\n[confirm]\ncommand = \"touch '{}' {{tests}}\"\n",
            common::tiny_model().display().to_string(),
            marker.display()
        ),
    );
    // `.flakesense` of the repository's making: its cache a link out, its lock a dangling one.
    std::fs::create_dir_all(root.join(".flakesense")).unwrap();
    let link = |target: &Path, at: &str| {
        std::os::unix::fs::symlink(target, root.join(at)).unwrap();
    };
    link(&outside.join("elsewhere"), ".flakesense/cache");
    link(&outside.join("lock-made-here"), ".flakesense/index.lock");
    link(&outside.join("ignore-made-here"), ".flakesense/.gitignore");
    link(&outside.join("elsewhere"), ".git/flakesense");
    let made = std::process::Command::new("mkfifo")
        .arg(root.join(".gitignore"))
        .status();
    if !made.is_ok_and(|status| status.success()) {
        return None;
    }
    let _ = std::fs::remove_file(&marker);
    Some((root, outside, marker))
}

#[test]
fn check_predict_and_serve_on_a_hostile_repository_run_nothing_write_nothing_outside_and_finish() {
    if !common::tool_available("git") {
        eprintln!("git is missing: skipping");
        return;
    }
    let directory = tempfile::tempdir().unwrap();
    let Some((root, outside, marker)) = hostile_repository(directory.path()) else {
        eprintln!("mkfifo is missing: skipping");
        return;
    };
    let before = snapshot(&outside);

    // check: the FIFO .gitignore is named as an error, not waited for; nothing runs.
    let output = run_guarded(&root, &["check", "."]);
    assert_eq!(output.status.code(), Some(2), "{}", text(&output));
    assert!(
        text(&output).contains(".gitignore: ignore file not read: not a regular file"),
        "{}",
        text(&output)
    );
    let output = run_guarded(&root, &["check", "--staged"]);
    assert!(
        matches!(output.status.code(), Some(0 | 1)),
        "{}",
        text(&output)
    );
    // The bad-looking settings are used, but the [confirm] command is never run by a judge.
    let output = run_guarded(&root, &["predict", TEST_FILE]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    assert!(text(&output).contains("test_waits"), "{}", text(&output));

    serve(&root);

    assert!(!marker.exists(), "a command of the repository ran");
    assert_eq!(
        snapshot(&outside),
        before,
        "something was written outside the repository"
    );
}

/// The language server on the hostile repository: the test file is judged, the Confirm action
/// names the repository's command and runs it only after asking (the client declines), "Mark as
/// flaky" is refused with a clear error rather than written through the linked lock; then it
/// shuts down. Each step has a deadline.
fn serve(root: &Path) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let session = async {
            let (mut client, child) = lsp_client::spawn_server(common::binary(), root);
            let root_uri = format!("file://{}", root.display());
            client
                .initialize(json!({
                    "processId": null,
                    "rootUri": root_uri,
                    "workspaceFolders": [{"uri": root_uri, "name": "hostile"}],
                    "capabilities": {"window": {"showMessage": {}}},
                    "initializationOptions": {"defaultModels": false},
                }))
                .await;
            let uri = format!("{root_uri}/{TEST_FILE}");
            let text = std::fs::read_to_string(root.join(TEST_FILE)).unwrap();
            client.open(&uri, "python", 1, &text).await;
            client.diagnostics(&uri, None).await;
            // The background count of the workspace's tests ends: the FIFO is not waited for.
            client
                .wait_for(
                    "the count of the workspace's tests",
                    lsp_client::read_the_workspace,
                    Duration::from_secs(60),
                )
                .await;
            let line = text
                .lines()
                .position(|line| line.contains("def test_waits"))
                .unwrap();
            let response = client
                .request(
                    "textDocument/codeAction",
                    json!({"textDocument": {"uri": uri}, "range": {"start": {"line": line, "character": 6}, "end": {"line": line, "character": 6}}, "context": {"diagnostics": []}}),
                )
                .await;
            let actions = response["result"].as_array().cloned().unwrap_or_default();
            let confirm = actions
                .iter()
                .find(|action| {
                    action["title"]
                        .as_str()
                        .is_some_and(|title| title.starts_with("Confirm:"))
                })
                .unwrap_or_else(|| panic!("no confirm action in {actions:#?}"));
            assert!(
                confirm["title"]
                    .as_str()
                    .unwrap()
                    .ends_with("(from the repository's settings (flakesense.toml [confirm]))"),
                "{confirm}"
            );
            let started = client
                .request(
                    "workspace/executeCommand",
                    json!({"command": confirm["command"]["command"], "arguments": confirm["command"]["arguments"]}),
                )
                .await;
            assert_eq!(started["result"]["commandFrom"], "settings", "{started}");
            // The client answers the question with nothing (dismissed): nothing runs.
            let asked = client
                .wait_for(
                    "the question before running",
                    |message: &Value| message["method"] == "window/showMessageRequest",
                    Duration::from_secs(30),
                )
                .await;
            let titles: Vec<&Value> = asked["params"]["actions"]
                .as_array()
                .unwrap()
                .iter()
                .map(|action| &action["title"])
                .collect();
            assert_eq!(titles, ["Run", "Cancel"], "{asked}");
            assert!(asked["params"]["message"].as_str().unwrap().contains("touch"), "{asked}");
            client
                .wait_for(
                    "the log that nothing ran",
                    |message: &Value| {
                        message["params"]["message"]
                            .as_str()
                            .is_some_and(|text| text.contains("not run"))
                    },
                    Duration::from_secs(30),
                )
                .await;
            let marked = client
                .request(
                    "workspace/executeCommand",
                    json!({"command": "flakesense.markFlaky", "arguments": [uri, "tests/test_timing.py::test_waits", "async-wait"]}),
                )
                .await;
            assert!(
                marked["error"]["message"]
                    .as_str()
                    .is_some_and(|message| message.contains("is a symbolic link: refusing to write through it")),
                "{marked}"
            );
            client.shutdown_and_exit().await;
            drop(child);
        };
        tokio::time::timeout(Duration::from_secs(120), session)
            .await
            .expect("the server answers and ends in time");
    });
}
