//! `flakesense confirm --compare REF`: a flaky version of the pytest fixture committed, a fix in
//! the working tree, and the runs at both, side by side; the repository and the working tree as
//! they were afterwards, nothing temporary left (also after Ctrl-C); an unknown revision and a
//! directory outside git are errors.

use std::path::Path;
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{copy_tree, fixtures, run_ok};
use crate::interrupt::processes_marked;
use crate::{PytestProject, condition, flakesense, test};

/// `test_registers_a_customer` leaves its customer behind (it fails the second time it runs in
/// one process); the fix keeps its customers to itself. A new test is added.
const FIX: (&str, &str) = (
    "    _customers.append(\"ada\")\n    assert _customers == [\"ada\"]\n",
    "    customers = [\"ada\"]\n    assert customers == [\"ada\"]\n\n\ndef test_welcomes_a_customer():\n    assert \"ada\".title() == \"Ada\"\n",
);

/// The fixture committed as it is, then fixed in the working tree.
fn commit_then_fix(root: &Path) -> String {
    run_ok("git", &["init", "-q", "-b", "main"], root);
    run_ok("git", &["add", "."], root);
    run_ok("git", &["commit", "-q", "-m", "flaky"], root);
    let source = std::fs::read_to_string(root.join("test_shop.py")).unwrap();
    assert!(source.contains(FIX.0));
    let fixed = source.replace(FIX.0, FIX.1);
    std::fs::write(root.join("test_shop.py"), &fixed).unwrap();
    fixed
}

/// What git says of the repository: the working tree's state and its worktrees.
fn git_state(root: &Path) -> (String, String) {
    (
        run_ok("git", &["status", "--porcelain"], root),
        run_ok("git", &["worktree", "list", "--porcelain"], root),
    )
}

fn entries(directory: &Path) -> Vec<String> {
    std::fs::read_dir(directory)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn the_failure_before_the_fix_and_none_after() {
    let Some(pytest) = PytestProject::start() else {
        return;
    };
    let (service, root) = (&pytest.service, pytest.root());
    let fixed = commit_then_fix(root);
    let head = run_ok("git", &["rev-parse", "HEAD"], root);
    let state = git_state(root);
    let temporary = tempfile::tempdir().unwrap();
    let confirm = |arguments: &[&str]| {
        flakesense(root, service)
            .env("TMPDIR", temporary.path())
            .args(["confirm", "--compare", "HEAD", "--runs", "2"])
            .args(["--conditions", "plain,twice"])
            .args(arguments)
            .output()
            .unwrap()
    };

    let output = confirm(&[
        "--format",
        "json",
        "--test",
        "test_registers_a_customer",
        "test_welcomes_a_customer",
    ]);
    assert_eq!(output.status.code(), Some(0), "fixed: {}", stderr(&output));
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let compare = &report["compare"];
    assert_eq!(compare["reference"]["name"], "HEAD");
    assert_eq!(compare["reference"]["commit"], head.trim());
    let fixed_test = test(compare, "test_registers_a_customer");
    let before = &fixed_test["before"];
    assert_eq!(before["verdict"], "flaky", "{fixed_test:#}");
    assert_eq!(before["category"], "order-dependency");
    assert_eq!(condition(before, "twice")["failed"], 2);
    assert_eq!(condition(before, "twice")["non_idempotent"], 2);
    assert_eq!(condition(before, "plain")["failed"], 0);
    let after = &fixed_test["after"];
    assert_eq!(after["verdict"], "no-flakiness-seen", "{fixed_test:#}");
    assert_eq!(condition(after, "twice")["failed"], 0);
    assert_eq!(condition(after, "twice")["passed"], 2);
    assert!(fixed_test["missing_at_reference"].is_null());
    // The new test is not at HEAD: said so, and run in the working tree all the same.
    let new_test = test(compare, "test_welcomes_a_customer");
    assert!(new_test["before"].is_null());
    assert_eq!(
        new_test["missing_at_reference"],
        "HEAD has no test test_welcomes_a_customer in test_shop.py"
    );
    assert_eq!(new_test["after"]["verdict"], "no-flakiness-seen");
    // `tests` and `summary` are the working tree's, as without --compare.
    assert_eq!(report["summary"]["flaky"], 0);

    // A test flaky on both sides (it fails on its second run, whatever the condition): exit 1.
    let output = confirm(&[
        "--test",
        "test_registers_a_customer",
        "test_numbers_the_invoice",
    ]);
    let human = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{human}{}", stderr(&output));
    let short = &head[..7];
    for line in [
        "test_shop.py::test_registers_a_customer: flaky before, no flakiness seen after\n",
        &format!(
            "  before, HEAD ({short}): flaky (order-dependency): passed then failed in one process in 2 of 2 runs\n"
        ),
        "  after, working tree: no flakiness seen in 4 runs\n",
        "  twice    before: failed 2 of 2 runs    after: failed 0 of 2 runs\n",
        "           before: 2x AssertionError: assert ['ada', 'ada'] == ['ada']\n",
        "test_shop.py::test_numbers_the_invoice: flaky before, flaky after\n",
        "  plain    before: failed 1 of 2 runs    after: failed 1 of 2 runs\n",
        &format!("before, HEAD ({short}): 2 of 2 tests confirmed flaky\n"),
        "after, working tree: 1 of 2 tests confirmed flaky (2 runs under each of plain, twice); 1 with no flakiness seen\n",
    ] {
        assert!(human.contains(line), "no {line:?} in:\n{human}");
    }

    // The working tree and the repository as they were (but the counter the invoice test
    // writes), and nothing temporary left.
    assert_eq!(
        std::fs::read_to_string(root.join("test_shop.py")).unwrap(),
        fixed
    );
    assert_eq!(
        git_state(root),
        (format!("{}?? .invoice-counter\n", state.0), state.1)
    );
    assert!(
        entries(temporary.path()).is_empty(),
        "left behind: {:?}",
        entries(temporary.path())
    );
}

#[test]
fn ctrl_c_during_the_runs_at_the_revision_removes_its_tree() {
    let Some(pytest) = PytestProject::start() else {
        return;
    };
    let (service, root) = (&pytest.service, pytest.root());
    commit_then_fix(root);
    let temporary = tempfile::tempdir().unwrap();
    let marker = format!("FLAKESENSE_COMPARE_MARK={}", std::process::id());
    let (key, value) = marker.split_once('=').unwrap();
    let child = flakesense(root, service)
        .env(key, value)
        .env("TMPDIR", temporary.path())
        .args(["confirm", "--compare", "HEAD", "--runs", "50"])
        .args(["--conditions", "plain", "--test", "test_adds_prices"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // pytest running in the revision's tree, under the temporary directory.
    let started = Instant::now();
    while !processes_marked(&marker, child.id())
        .iter()
        .any(|(pid, _)| {
            std::fs::read_link(format!("/proc/{pid}/cwd"))
                .is_ok_and(|cwd| cwd.starts_with(temporary.path()))
        })
    {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "no run started in the revision's tree"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: a signal to a child of this test.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(130), "{}", stderr(&output));
    assert!(output.stdout.is_empty(), "no partial report");
    assert!(
        entries(temporary.path()).is_empty(),
        "left behind: {:?}",
        entries(temporary.path())
    );
    assert_eq!(
        run_ok("git", &["worktree", "list"], root).lines().count(),
        1,
        "the repository's own worktree only"
    );
}

/// `confirm --compare REF` outside git, or with a revision git does not know: an error, exit 2,
/// before any run.
#[test]
fn an_unknown_revision_or_no_repository_is_an_error() {
    let project = tempfile::tempdir().unwrap();
    copy_tree(&fixtures().join("confirm/pytest"), project.path());
    let confirm = |reference: &str| {
        crate::common::command("flakesense", project.path())
            .env("GIT_CEILING_DIRECTORIES", project.path().parent().unwrap())
            .args([
                "confirm",
                "--compare",
                reference,
                "--test",
                "test_adds_prices",
            ])
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    let output = confirm("HEAD");
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains(&format!(
            "error: --compare needs a git repository, and {} is not in one",
            project.path().display()
        )),
        "{}",
        stderr(&output)
    );
    run_ok("git", &["init", "-q", "-b", "main"], project.path());
    run_ok("git", &["add", "."], project.path());
    run_ok("git", &["commit", "-q", "-m", "tests"], project.path());
    let output = confirm("no-such-branch");
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("error: --compare no-such-branch: no commit of ")
            && stderr(&output).contains(" is named `no-such-branch`"),
        "{}",
        stderr(&output)
    );
    assert!(output.stdout.is_empty());
}
