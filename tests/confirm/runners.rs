//! Each fixture project confirmed by its own runner, every cause found: pytest (whose run also
//! records the labels that `check` then shows), cargo test, JUnit's console launcher, and the
//! runners named in `flakesense.toml` (a command template, cargo-nextest).

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use crate::common::{run_ok, tool_available};
use crate::{
    PriceService, PytestProject, condition, confirm_json, copy_fixture, flakesense, have, serial,
    test,
};
use flakesense::index::Index;

const LAUNCHER: &str = "/usr/share/java/junit-platform-console-standalone.jar";

/// Whether the host gives a process a network namespace (`unshare -n`, or `-r -n`).
fn offline_available(report: &Value) -> bool {
    report["tests"][0]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .any(|tally| tally["condition"] == "offline" && tally["unavailable"].is_null())
}

/// The verdicts every fixture must give: the stable test shows nothing, the race fails under
/// noise, the network test fails offline (or offline is said to be unavailable), and the
/// non-idempotent test fails when run twice (where the runner can).
fn assert_fixture_verdicts(report: &Value, names: [&str; 4], twice: bool) {
    let [stable, race, network, non_idempotent] = names;
    let verdict = |name| test(report, name)["verdict"].as_str().unwrap().to_string();
    assert_eq!(verdict(stable), "no-flakiness-seen", "{report:#}");
    for tally in test(report, stable)["conditions"].as_array().unwrap() {
        assert_eq!(tally["failed"], 0, "{report:#}");
    }

    let race = test(report, race);
    assert_eq!(race["verdict"], "flaky", "{race:#}");
    assert_eq!(race["category"], "async-wait", "{race:#}");
    assert!(
        race["exposed_by"]
            .as_array()
            .unwrap()
            .contains(&json!("noise")),
        "{race:#}"
    );
    assert!(condition(race, "noise")["failed"].as_u64().unwrap() > 0);

    let network = test(report, network);
    if offline_available(report) {
        assert_eq!(network["verdict"], "flaky", "{network:#}");
        assert_eq!(network["category"], "network", "{network:#}");
        assert_eq!(network["exposed_by"], json!(["offline"]), "{network:#}");
        assert_eq!(condition(network, "plain")["failed"], 0);
    } else {
        eprintln!("note: this host refuses network namespaces; offline was reported unavailable");
        assert!(condition(network, "offline")["unavailable"].is_string());
    }

    let non_idempotent = test(report, non_idempotent);
    if twice {
        assert_eq!(non_idempotent["verdict"], "flaky", "{non_idempotent:#}");
        assert_eq!(non_idempotent["category"], "order-dependency");
        let twice = condition(non_idempotent, "twice");
        assert!(twice["non_idempotent"].as_u64().unwrap() > 0, "{twice:#}");
    } else {
        assert_eq!(non_idempotent["verdict"], "no-flakiness-seen");
    }
}

#[test]
fn pytest_project_confirms_each_cause_and_record_teaches_check() {
    let Some(pytest) = PytestProject::start() else {
        return;
    };
    let (service, root) = (&pytest.service, pytest.root());
    let (output, report) = confirm_json(
        root,
        service,
        &[
            "--runs",
            "2",
            "--conditions",
            "plain,noise,offline,twice",
            "--record",
            "--test",
            "test_shop.py::test_adds_prices",
            "test_refreshes_the_cache_in_the_background",
            "test_shop.py::test_reads_the_price_service",
            "test_registers_a_customer",
        ],
    );
    assert_fixture_verdicts(
        &report,
        [
            "test_adds_prices",
            "test_refreshes_the_cache_in_the_background",
            "test_reads_the_price_service",
            "test_registers_a_customer",
        ],
        true,
    );
    assert_eq!(output.status.code(), Some(1), "a test is confirmed flaky");
    assert_eq!(test(&report, "test_adds_prices")["runner"], "pytest");
    // pytest left nothing in the working tree: no cache, no bytecode.
    assert!(!root.join(".pytest_cache").exists());
    assert!(!root.join("__pycache__").exists());

    // The labels are in the project index, and `check` shows them.
    let index = Index::load(&root.join(".flakesense/index")).expect("recorded");
    let entry = |id: &str| {
        index
            .entries()
            .find(|entry| entry.id() == id)
            .unwrap_or_else(|| panic!("no entry {id}"))
            .to_entry()
    };
    let stable = entry("test_shop.py::test_adds_prices");
    assert_eq!(stable.label, flakesense::index::Label::Stable);
    assert_eq!(stable.source, "confirm: not flaky after 8 runs");
    let race = entry("test_shop.py::test_refreshes_the_cache_in_the_background");
    assert!(race.is_flaky());
    assert_eq!(race.categories, [flakesense::category::Category::AsyncWait]);
    assert!(
        race.source.starts_with("confirm: failed"),
        "{}",
        race.source
    );
    let check = flakesense(root, service)
        .args(["check", "--format", "json", "."])
        .output()
        .unwrap();
    let checked: Value = serde_json::from_slice(&check.stdout).unwrap();
    let flagged: Vec<(&str, &str)> = checked["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|finding| {
            (
                finding["id"].as_str().unwrap(),
                finding["category"].as_str().unwrap_or("none"),
            )
        })
        .collect();
    assert!(
        flagged.contains(&(
            "test_shop.py::test_refreshes_the_cache_in_the_background",
            "async-wait"
        )),
        "{flagged:?}"
    );
    assert!(
        flagged.contains(&(
            "test_shop.py::test_registers_a_customer",
            "order-dependency"
        )),
        "{flagged:?}"
    );
    assert!(
        !flagged
            .iter()
            .any(|(id, _)| *id == "test_shop.py::test_adds_prices"),
        "the stable label silences the stable test: {flagged:?}"
    );
}

#[test]
fn rust_crate_confirms_each_cause_and_says_cargo_cannot_run_twice() {
    let _serial = serial();
    let service = PriceService::start();
    let project = copy_fixture("rust");
    let (output, report) = confirm_json(
        project.path(),
        &service,
        &[
            "--runs",
            "2",
            "--test",
            "tests::adds_prices",
            "tests::refreshes_the_cache_in_the_background",
            "tests::reads_the_price_service",
            "tests::registers_a_customer",
        ],
    );
    assert_fixture_verdicts(
        &report,
        [
            "adds_prices",
            "refreshes_the_cache_in_the_background",
            "reads_the_price_service",
            "registers_a_customer",
        ],
        false,
    );
    assert_eq!(output.status.code(), Some(1));
    let registers = test(&report, "registers_a_customer");
    assert_eq!(registers["runner"], "cargo test");
    let reason = condition(registers, "twice")["unavailable"]
        .as_str()
        .unwrap();
    assert!(
        reason.contains("cargo test cannot run a test twice"),
        "{reason}"
    );
    // cpu1 ran too (all five conditions by default).
    assert_eq!(condition(registers, "cpu1")["runs"], 2);
}

#[test]
fn junit_project_confirms_each_cause_with_the_console_launcher() {
    let _serial = serial();
    if !have(
        "javac (default-jdk-headless) or Debian's junit5 console launcher",
        Path::new(LAUNCHER).is_file() && tool_available("javac"),
    ) {
        return;
    }
    let service = PriceService::start();
    let project = copy_fixture("junit");
    let root = project.path();
    run_ok(
        "javac",
        &[
            "-d",
            "out",
            "-cp",
            LAUNCHER,
            "src/test/java/com/example/shop/ShopTest.java",
        ],
        root,
    );
    let (output, report) = confirm_json(
        root,
        &service,
        &[
            "--runs",
            "1",
            "--conditions",
            "plain,noise,offline,twice",
            "--test",
            "com.example.shop.ShopTest#addsPrices",
            "ShopTest#refreshesTheCacheInTheBackground",
            "ShopTest#readsThePriceService",
            "ShopTest#registersACustomer",
        ],
    );
    assert_fixture_verdicts(
        &report,
        [
            "#addsPrices",
            "#refreshesTheCacheInTheBackground",
            "#readsThePriceService",
            "#registersACustomer",
        ],
        true,
    );
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(test(&report, "#addsPrices")["runner"], "junit-console");
}

#[test]
fn a_command_template_runs_the_tests_and_nextest_is_driven_whole() {
    // pytest through a command of flakesense.toml: `{tests}` and `{report}` filled in.
    let Some(pytest) = PytestProject::start() else {
        return;
    };
    let (service, root) = (&pytest.service, pytest.root());
    std::fs::write(
        root.join("flakesense.toml"),
        "[confirm.python]\ncommand = \"python3 -m pytest -p no:cacheprovider {tests} --junitxml={report}\"\n",
    )
    .unwrap();
    let (_, report) = confirm_json(
        root,
        service,
        &[
            "--runs",
            "1",
            "--conditions",
            "plain,offline,twice",
            "--test",
            "test_reads_the_price_service",
        ],
    );
    let network = test(&report, "test_reads_the_price_service");
    assert_eq!(network["runner"], "command");
    assert_eq!(condition(network, "plain")["passed"], 1, "{network:#}");
    let twice = condition(network, "twice")["unavailable"].as_str().unwrap();
    assert!(twice.contains("a command of flakesense.toml"), "{twice}");
    if offline_available(&report) {
        assert_eq!(network["verdict"], "flaky", "{network:#}");
        assert_eq!(network["category"], "network");
    }

    // cargo-nextest, named in flakesense.toml, with its JUnit report.
    if !have(
        "cargo-nextest",
        Command::new("cargo")
            .args(["nextest", "--version"])
            .output()
            .is_ok_and(|output| output.status.success()),
    ) {
        return;
    }
    let project = copy_fixture("rust");
    std::fs::write(
        project.path().join("flakesense.toml"),
        "[confirm.rust]\nrunner = \"nextest\"\n",
    )
    .unwrap();
    let (_, report) = confirm_json(
        project.path(),
        service,
        &[
            // Two runs: one run under noise missed the race once on a loaded machine.
            "--runs",
            "2",
            "--conditions",
            "plain,noise,twice",
            "--test",
            "tests::adds_prices",
            "tests::refreshes_the_cache_in_the_background",
        ],
    );
    let stable = test(&report, "adds_prices");
    assert_eq!(stable["runner"], "cargo-nextest");
    assert_eq!(stable["verdict"], "no-flakiness-seen", "{stable:#}");
    let race = test(&report, "refreshes_the_cache_in_the_background");
    assert_eq!(race["verdict"], "flaky", "{race:#}");
    assert_eq!(race["exposed_by"], json!(["noise"]), "{race:#}");
}
