//! Every command ends quietly when the reader of its output goes away (`flakesense ... | head -1`
//! and `2>&1 | head -1`): no panic, no message, and the exit code its work earned.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use common::copy_tree;

mod common;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");

/// The commands to try, with the exit code each earns; `out` is a scratch directory.
fn commands(out: &Path) -> Vec<(Vec<String>, i32)> {
    // A copy of the demo tree, so that `check` reads no repository around it.
    let demo = out.join("demo").display().to_string();
    copy_tree(&Path::new(FIXTURES).join("demo"), &out.join("demo"));
    let csv = format!("{FIXTURES}/check/tiny.csv");
    let model = out.join("model.idx").display().to_string();
    [
        (vec!["check", &demo], 1),
        (
            vec![
                "predict",
                &format!("{demo}/src/test/java/demo/NotificationTest.java"),
                &format!("{demo}/tests/test_status_page.py"),
                &format!("{demo}/tests/server.rs"),
            ],
            0,
        ),
        (vec!["train", "--data", &csv, "--out", &model], 0),
        (vec!["eval", "--data", &csv, "--leave-one-project-out"], 0),
    ]
    .into_iter()
    .map(|(args, code)| (args.into_iter().map(str::to_string).collect(), code))
    .collect()
}

fn flakesense(args: &[String]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_flakesense"));
    command
        .args(args)
        .stdin(Stdio::null())
        // The cache of signal shares of workspaces outside git goes here, not in the user's.
        .env(
            "XDG_CACHE_HOME",
            concat!(env!("CARGO_TARGET_TMPDIR"), "/xdg-cache"),
        );
    command
}

/// A pipe whose reading end is already closed: every write to it fails with EPIPE.
fn closed_pipe() -> std::io::PipeWriter {
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    writer
}

fn code(output: &Output) -> i32 {
    output
        .status
        .code()
        .unwrap_or_else(|| panic!("ended by a signal: {:?}", output.status))
}

#[test]
fn every_command_ends_quietly_when_its_reader_goes_away() {
    let scratch = tempfile::tempdir().expect("a temporary directory");
    for (args, expected) in commands(scratch.path()) {
        // `| head -1` having ended: standard output is closed, standard error is read.
        let only_stdout = flakesense(&args)
            .stdout(closed_pipe())
            .stderr(Stdio::piped())
            .output()
            .expect("runs");
        let stderr = String::from_utf8_lossy(&only_stdout.stderr);
        assert_eq!(code(&only_stdout), expected, "{args:?}: {stderr}");
        assert!(
            !stderr.contains("Broken pipe") && !stderr.contains("panicked"),
            "{args:?}: {stderr}"
        );

        // `2>&1 | head -1` having ended: both are closed.
        let pipe = closed_pipe();
        let both = flakesense(&args)
            .stdout(pipe.try_clone().expect("a second handle"))
            .stderr(pipe)
            .output()
            .expect("runs");
        assert_eq!(code(&both), expected, "{args:?}");
    }
    assert!(
        scratch.path().join("model.idx").is_file(),
        "train finished its work"
    );
}
