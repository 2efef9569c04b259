//! `flakesense confirm` on the command line beyond one runner: the tests it runs when none is
//! named (the suspects of the uncommitted change), and a condition the kernel refuses, reported
//! unavailable in JSON and in the human format.

use serde_json::Value;

use crate::common::run_ok;
use crate::{PytestProject, condition, confirm_json, flakesense, test};

#[test]
fn by_default_the_suspects_of_the_uncommitted_change_are_run() {
    let Some(pytest) = PytestProject::start() else {
        return;
    };
    let (service, root) = (&pytest.service, pytest.root());
    let test_file = std::fs::read_to_string(root.join("test_shop.py")).unwrap();
    std::fs::remove_file(root.join("test_shop.py")).unwrap();
    run_ok("git", &["init", "-q", "-b", "main"], root);
    run_ok("git", &["add", "."], root);
    run_ok("git", &["commit", "-q", "-m", "settings"], root);
    std::fs::write(root.join("test_shop.py"), test_file).unwrap();
    let (output, report) = confirm_json(root, service, &["--runs", "1", "--conditions", "plain"]);
    assert_eq!(report["settings"]["changes"], "diff-base");
    assert_eq!(report["settings"]["diff_base"], "HEAD");
    let ids: Vec<&str> = report["tests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|test| test["id"].as_str().unwrap())
        .collect();
    // The race waits with a fixed sleep on a thread: above the information threshold. The
    // plain sum is not.
    assert!(
        ids.contains(&"test_shop.py::test_refreshes_the_cache_in_the_background"),
        "{report:#}"
    );
    assert!(
        !ids.contains(&"test_shop.py::test_adds_prices"),
        "{report:#}"
    );
    for test in report["tests"].as_array().unwrap() {
        assert!(test["score"].as_f64().unwrap() > 0.5, "{test:#}");
    }
    assert_eq!(output.status.code(), Some(0), "one plain run shows nothing");

    // Once committed, nothing is left to confirm.
    run_ok("git", &["add", "."], root);
    run_ok("git", &["commit", "-q", "-m", "tests"], root);
    let output = flakesense(root, service).arg("confirm").output().unwrap();
    assert_eq!(output.status.code(), Some(0));
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("no test to confirm"),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn offline_is_reported_unavailable_when_the_kernel_refuses() {
    let Some(pytest) = PytestProject::start() else {
        return;
    };
    let (service, root) = (&pytest.service, pytest.root());
    // An `unshare` that fails as it does where unprivileged namespaces are disabled.
    let bin = tempfile::tempdir().unwrap();
    let unshare = bin.path().join("unshare");
    std::fs::write(
        &unshare,
        "#!/bin/sh\necho 'unshare: unshare failed: Operation not permitted' >&2\nexit 1\n",
    )
    .unwrap();
    let mut permissions = std::fs::metadata(&unshare).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
    std::fs::set_permissions(&unshare, permissions).unwrap();
    let path = format!(
        "{}:{}",
        bin.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let output = flakesense(root, service)
        .env("PATH", path)
        .args([
            "confirm",
            "--runs",
            "1",
            "--conditions",
            "plain,offline",
            "--format",
            "json",
            "--test",
            "test_reads_the_price_service",
        ])
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    let network = test(&report, "test_reads_the_price_service");
    let offline = condition(network, "offline");
    let reason = offline["unavailable"].as_str().expect("said unavailable");
    assert!(reason.contains("Operation not permitted"), "{reason}");
    assert_eq!(offline["runs"], 0);
    assert_eq!(network["verdict"], "no-flakiness-seen");
    // The human format says it too.
    let output = flakesense(root, service)
        .env(
            "PATH",
            format!(
                "{}:{}",
                bin.path().display(),
                std::env::var("PATH").unwrap_or_default()
            ),
        )
        .args([
            "confirm",
            "--runs",
            "1",
            "--conditions",
            "offline",
            "--test",
            "test_reads_the_price_service",
        ])
        .output()
        .unwrap();
    let human = String::from_utf8_lossy(&output.stdout);
    assert!(
        human.contains("offline  unavailable: the kernel refused"),
        "{human}"
    );
}
