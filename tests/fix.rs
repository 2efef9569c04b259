//! `flakesense fix` on a project with a test per fix kind in each language
//! (`tests/fixtures/fix`): the fixes offered, the files they write compiling, the warnings they
//! cure gone, and nothing else touched.

mod common;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use common::{binary, command, copy_tree, fixtures, tool_available};

const JAVA: &str = "src/test/java/fixes/FixesTest.java";
const PYTHON: &str = "tests/test_fixes.py";
const RUST: &str = "tests/fixes.rs";

/// A copy of the fixture project in a temporary directory.
fn project() -> tempfile::TempDir {
    let directory = tempfile::tempdir().expect("a temporary directory");
    copy_tree(&fixtures().join("fix"), directory.path());
    directory
}

fn fix(directory: &Path, arguments: &[&str]) -> (i32, String, String) {
    let output = command("flakesense", directory)
        .arg("fix")
        .args(arguments)
        .output()
        .expect("flakesense runs");
    (
        output.status.code().expect("an exit code"),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

fn read(directory: &Path, path: &str) -> String {
    std::fs::read_to_string(directory.join(path)).expect("the file reads")
}

/// Fails when a tool is missing under `.ci/run`, which installs every tool; else says so.
fn have(tool: &str, present: bool) -> bool {
    if present {
        return true;
    }
    assert!(
        std::env::var_os("FLAKESENSE_REQUIRE_TOOLS").is_none(),
        "{tool} is missing, and FLAKESENSE_REQUIRE_TOOLS says every tool must be here"
    );
    eprintln!("note: {tool} is missing; the fixed file is not compiled with it");
    false
}

#[test]
fn the_diff_offers_each_kind_of_fix_and_writes_nothing() {
    let project = project();
    let before: Vec<String> = [JAVA, PYTHON, RUST]
        .iter()
        .map(|path| read(project.path(), path))
        .collect();
    let (code, stdout, stderr) = fix(project.path(), &["--diff", "--format", "json", "."]);
    assert_eq!(code, 1, "a diff with fixes exits 1: {stderr}");
    let report: serde_json::Value = serde_json::from_str(&stdout).expect("JSON");
    let offered: BTreeSet<(String, String)> = report["fixes"]
        .as_array()
        .expect("a list of fixes")
        .iter()
        .map(|fix| {
            (
                fix["name"].as_str().unwrap().to_string(),
                fix["kind"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let expected: BTreeSet<(String, String)> = [
        ("receivesAfterSleep", "condition-wait"),
        ("waitsTightly", "generous-wait"),
        ("bindsAFixedPort", "ephemeral-port"),
        ("setsAProperty", "restore-state"),
        ("test_receives_after_sleep", "condition-wait"),
        ("test_waits_tightly", "generous-wait"),
        ("test_binds_a_fixed_port", "ephemeral-port"),
        ("test_sets_an_environment_variable", "restore-state"),
        // The fixture it already asks for, not a second one.
        ("test_sets_a_variable_beside_monkeypatch", "restore-state"),
        ("receives_after_sleep", "condition-wait"),
        ("waits_tightly", "generous-wait"),
        ("binds_a_fixed_port", "ephemeral-port"),
    ]
    .into_iter()
    .map(|(name, kind)| (name.to_string(), kind.to_string()))
    .collect();
    assert_eq!(offered, expected);
    // A value read into a variable before the assertion (waiting on the assertion would not
    // read it again), or an assertion that something has not happened (which holds at once):
    // the hint stays words.
    let unfixed: BTreeSet<&str> = report["unfixed"]
        .as_array()
        .expect("a list of warnings without a fix")
        .iter()
        .map(|warning| warning["test"].as_str().unwrap())
        .collect();
    assert_eq!(
        unfixed,
        BTreeSet::from([
            "fixes.FixesTest#readsBeforeAsserting",
            "tests/test_fixes.py::test_reads_before_asserting",
            "tests/test_fixes.py::test_calls_nothing_back_early",
            "tests/fixes.rs::reads_before_asserting",
        ])
    );
    for diff in report["diffs"].as_array().unwrap() {
        assert!(diff["diff"].as_str().unwrap().starts_with("--- a/"));
    }
    for (path, text) in [JAVA, PYTHON, RUST].iter().zip(&before) {
        assert_eq!(&read(project.path(), path), text, "--diff wrote {path}");
    }
}

#[test]
fn applied_fixes_compile_and_cure_their_warnings() {
    let project = project();
    let untouched = [
        (
            JAVA,
            "    void addsNumbers() {\n        assertEquals(4, 2 + 2);\n    }",
        ),
        (PYTHON, "def test_adds_numbers():\n    assert 2 + 2 == 4\n"),
        (RUST, "fn adds_numbers() {\n    assert_eq!(2 + 2, 4);\n}"),
    ];
    let (code, _, stderr) = fix(project.path(), &["."]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("fixed 12 of 16 warned tests in 3 files (12 fixes)"),
        "{stderr}"
    );

    // Each file still compiles (Java with JUnit 5's console launcher on the class path).
    let python = Command::new("python3")
        .args(["-m", "py_compile", PYTHON])
        .current_dir(project.path())
        .output()
        .expect("python3 runs");
    assert!(python.status.success(), "{python:?}");
    let rust = Command::new("rustc")
        .args([
            "--edition",
            "2021",
            "--test",
            "--emit=metadata",
            "--crate-name",
            "fixes",
        ])
        .arg("--out-dir")
        .arg(project.path().join("out"))
        .arg(RUST)
        .current_dir(project.path())
        .output()
        .expect("rustc runs");
    assert!(
        rust.status.success(),
        "{}",
        String::from_utf8_lossy(&rust.stderr)
    );
    let junit = Path::new("/usr/share/java/junit-platform-console-standalone.jar");
    if have("javac", tool_available("javac")) && have("JUnit 5's console launcher", junit.exists())
    {
        let java = Command::new("javac")
            .arg("-d")
            .arg(project.path().join("out"))
            .arg("-cp")
            .arg(junit)
            .arg(JAVA)
            .current_dir(project.path())
            .output()
            .expect("javac runs");
        assert!(
            java.status.success(),
            "{}",
            String::from_utf8_lossy(&java.stderr)
        );
    }

    // The tests without a warning read as they did.
    for (path, text) in untouched {
        assert!(
            read(project.path(), path).contains(text),
            "{path} changed:\n{}",
            read(project.path(), path)
        );
    }
    // Only the warnings without a mechanical fix are left, and a second run has nothing to do.
    let check = command("flakesense", project.path())
        .args(["check", "--format", "json", "."])
        .output()
        .expect("flakesense runs");
    let report: serde_json::Value = serde_json::from_slice(&check.stdout).expect("JSON");
    let left: BTreeSet<&str> = report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|finding| finding["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        left,
        BTreeSet::from([
            "fixes.FixesTest#readsBeforeAsserting",
            "tests/test_fixes.py::test_reads_before_asserting",
            "tests/test_fixes.py::test_calls_nothing_back_early",
            "tests/fixes.rs::reads_before_asserting",
        ])
    );
    let (code, stdout, _) = fix(project.path(), &["--diff", "."]);
    assert_eq!((code, stdout.as_str()), (0, ""));
}

#[test]
fn a_named_test_is_the_only_one_fixed() {
    let project = project();
    let (code, stdout, stderr) = fix(
        project.path(),
        &[
            "--diff",
            "--test",
            "tests/test_fixes.py::test_waits_tightly",
            ".",
        ],
    );
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stdout.starts_with("--- a/tests/test_fixes.py\n+++ b/tests/test_fixes.py\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("-    assert done.wait(0.5)\n+    assert done.wait(30.0)\n"),
        "{stdout}"
    );
    assert_eq!(stdout.matches("@@").count(), 2, "one hunk: {stdout}");
    let (_, _, stderr) = fix(project.path(), &["--test", "no.such#test", "."]);
    assert!(
        stderr.contains("`no.such#test` has no warning to fix"),
        "{stderr}"
    );
    assert!(Path::new(binary()).exists());
}

#[cfg(unix)]
#[test]
fn a_linked_test_file_stays_a_link_and_its_target_gets_the_fix() {
    let project = project();
    let real = project.path().join("real");
    std::fs::create_dir(&real).unwrap();
    std::fs::rename(project.path().join(PYTHON), real.join("test_fixes.py")).unwrap();
    std::os::unix::fs::symlink("../real/test_fixes.py", project.path().join(PYTHON)).unwrap();
    let (code, _, stderr) = fix(project.path(), &[PYTHON]);
    assert_eq!(code, 0, "{stderr}");
    let link = std::fs::symlink_metadata(project.path().join(PYTHON)).unwrap();
    assert!(
        link.file_type().is_symlink(),
        "the link was replaced by a file"
    );
    assert!(
        read(project.path(), "real/test_fixes.py")
            .contains("monkeypatch.setenv(\"FIXES_MODE\", \"test\")")
    );
}
