//! The verdict rules as a user meets them on the command line: `twice` alone decides order
//! dependency, and `--record` writes a stable label only after 59 passing runs, never over a
//! flaky one.

use std::process::Output;

use flakesense::index::{Index, Label};

use crate::{PytestProject, flakesense};

fn confirm(pytest: &PytestProject, arguments: &[&str]) -> (Output, String) {
    let output = flakesense(pytest.root(), &pytest.service)
        .arg("confirm")
        .args(arguments)
        .output()
        .expect("flakesense runs");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    (output, stdout)
}

/// The stored label and source of a test of the fixture.
fn stored(pytest: &PytestProject, id: &str) -> Option<(Label, String)> {
    let index = Index::load(&pytest.root().join(".flakesense/index")).ok()?;
    let entry = index.entry(index.position(id)?);
    Some((entry.label(), entry.source().to_string()))
}

#[test]
fn twice_alone_calls_a_test_that_passes_then_fails_in_one_process_flaky() {
    let Some(pytest) = PytestProject::start() else {
        return;
    };
    let (output, stdout) = confirm(
        &pytest,
        &[
            "--conditions",
            "twice",
            "--runs",
            "1",
            "--test",
            "test_registers_a_customer",
        ],
    );
    assert!(
        stdout
            .contains("flaky (order-dependency): passed then failed in one process in 1 of 1 runs"),
        "{stdout}"
    );
    assert!(stdout.contains("  hint: Consider resetting static or global state"));
    assert_eq!(output.status.code(), Some(1), "{stdout}");
}

#[test]
fn a_stable_label_needs_59_passing_runs_and_never_replaces_a_flaky_one() {
    let Some(pytest) = PytestProject::start() else {
        return;
    };
    let registers = "test_shop.py::test_registers_a_customer";
    let adds = "test_shop.py::test_adds_prices";
    let (_, stdout) = confirm(
        &pytest,
        &[
            "--record",
            "--conditions",
            "twice",
            "--runs",
            "1",
            "--test",
            "test_registers_a_customer",
        ],
    );
    assert!(
        stdout.contains("recorded 1 flaky and 0 stable labels"),
        "{stdout}"
    );
    assert_eq!(
        stored(&pytest, registers),
        Some((
            Label::Flaky,
            "confirm: passed then failed in one process in 1 of 1 runs".to_string()
        ))
    );

    // 60 passing runs: enough for the stable test, and no reason to forget the flaky one.
    let (output, stdout) = confirm(
        &pytest,
        &[
            "--record",
            "--conditions",
            "plain,cpu1,offline",
            "--runs",
            "20",
            "--test",
            "test_registers_a_customer",
            "test_adds_prices",
        ],
    );
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains("recorded 0 flaky and 1 stable label "),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!(
            "not recorded: {registers}: labelled flaky (confirm: passed then failed in one process in 1 of 1 runs) already: passing runs do not undo a failure seen"
        )),
        "{stdout}"
    );
    assert_eq!(
        stored(&pytest, adds),
        Some((
            Label::Stable,
            "confirm: not flaky after 60 runs".to_string()
        ))
    );
    assert_eq!(stored(&pytest, registers).unwrap().0, Label::Flaky);

    // Fewer runs record nothing, say why, and leave the stronger label as it is.
    let (_, stdout) = confirm(
        &pytest,
        &[
            "--record",
            "--conditions",
            "plain",
            "--runs",
            "2",
            "--test",
            "test_adds_prices",
        ],
    );
    assert!(
        stdout.contains(&format!(
            "not recorded: {adds}: 2 passing runs; a stable label needs 59"
        )),
        "{stdout}"
    );
    assert_eq!(
        stored(&pytest, adds),
        Some((
            Label::Stable,
            "confirm: not flaky after 60 runs".to_string()
        ))
    );
}
