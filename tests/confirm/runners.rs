//! Each fixture project confirmed by its own runner, every cause found: pytest (whose run also
//! records the labels that `check` then shows), cargo test, JUnit's console launcher, and the
//! runners named in `flakesense.toml` (a command template, cargo-nextest). Each under all five
//! conditions, four runs each: pytest and the JUnit launcher make a condition's runs in one
//! process, and the assertions show that each run still starts afresh.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use crate::common::{run_ok, tool_available};
use crate::{
    PriceService, PytestProject, condition, confirm_json, copy_fixture, flakesense, have, serial,
    several_cpus, test,
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

/// The fixture's tests, by what makes them flaky.
struct Fixture<'a> {
    stable: &'a str,
    one_cpu: &'a str,
    network: &'a str,
    non_idempotent: &'a str,
    second_run: &'a str,
}

/// The verdicts every fixture must give, whatever the machine's speed and load: the stable test
/// shows nothing; the CPU-count test fails on one CPU alone (`cpu1` its cause); the network test
/// fails offline alone (or offline is said to be unavailable); the non-idempotent test fails when
/// run twice (where the runner can); the test that fails on its second run is flaky, and no
/// condition is its cause.
fn assert_fixture_verdicts(report: &Value, names: &Fixture, runs: u64, twice: bool) {
    let verdict = |name| test(report, name)["verdict"].as_str().unwrap().to_string();
    assert_eq!(verdict(names.stable), "no-flakiness-seen", "{report:#}");
    for tally in test(report, names.stable)["conditions"].as_array().unwrap() {
        assert_eq!(tally["failed"], 0, "{report:#}");
    }

    let one_cpu = test(report, names.one_cpu);
    if several_cpus() {
        assert_eq!(one_cpu["verdict"], "flaky", "{one_cpu:#}");
        assert_eq!(one_cpu["exposed_by"], json!(["cpu1"]), "{one_cpu:#}");
        assert_eq!(one_cpu["category"], "concurrency", "{one_cpu:#}");
        assert_eq!(condition(one_cpu, "cpu1")["failed"], runs, "{one_cpu:#}");
        assert_eq!(condition(one_cpu, "plain")["failed"], 0, "{one_cpu:#}");
    } else {
        eprintln!("note: one CPU here: the CPU-count test fails every run");
        assert_eq!(one_cpu["verdict"], "broken", "{one_cpu:#}");
    }

    let network = test(report, names.network);
    if offline_available(report) {
        assert_eq!(network["verdict"], "flaky", "{network:#}");
        assert_eq!(network["category"], "network", "{network:#}");
        assert_eq!(network["exposed_by"], json!(["offline"]), "{network:#}");
        assert_eq!(condition(network, "plain")["failed"], 0);
    } else {
        eprintln!("note: this host refuses network namespaces; offline was reported unavailable");
        assert!(condition(network, "offline")["unavailable"].is_string());
    }

    let non_idempotent = test(report, names.non_idempotent);
    if twice {
        assert_eq!(non_idempotent["verdict"], "flaky", "{non_idempotent:#}");
        assert_eq!(non_idempotent["category"], "order-dependency");
        assert_eq!(non_idempotent["exposed_by"], json!(["twice"]));
        let twice = condition(non_idempotent, "twice");
        assert_eq!(twice["non_idempotent"], runs, "{twice:#}");
        // Every other condition starts each run afresh, also where one process makes many.
        assert_eq!(condition(non_idempotent, "plain")["failed"], 0);
    } else {
        assert_eq!(non_idempotent["verdict"], "no-flakiness-seen");
    }

    let second_run = test(report, names.second_run);
    assert_eq!(second_run["verdict"], "flaky", "{second_run:#}");
    assert_eq!(second_run["failed"], 1, "{second_run:#}");
    assert_eq!(second_run["exposed_by"], json!([]), "{second_run:#}");
    assert_ne!(second_run["category"], "network", "{second_run:#}");
}

const PYTEST_FIXTURE: Fixture = Fixture {
    stable: "test_adds_prices",
    one_cpu: "test_prices_the_basket_on_every_cpu",
    network: "test_reads_the_price_service",
    non_idempotent: "test_registers_a_customer",
    second_run: "test_numbers_the_invoice",
};

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
            "4",
            "--record",
            "--test",
            "test_shop.py::test_adds_prices",
            "test_prices_the_basket_on_every_cpu",
            "test_shop.py::test_reads_the_price_service",
            "test_registers_a_customer",
            "test_numbers_the_invoice",
        ],
    );
    assert_fixture_verdicts(&report, &PYTEST_FIXTURE, 4, true);
    assert_eq!(output.status.code(), Some(1), "a test is confirmed flaky");
    assert_eq!(test(&report, "test_adds_prices")["runner"], "pytest");
    // pytest left nothing in the working tree: no cache, no bytecode.
    assert!(!root.join(".pytest_cache").exists());
    assert!(!root.join("__pycache__").exists());

    // The labels are in the project index, and `check` shows them; 20 passing runs are too few
    // for a stable label, which the report says.
    let not_recorded = &report["summary"]["recorded"]["not_recorded"];
    assert_eq!(not_recorded[0]["id"], "test_shop.py::test_adds_prices");
    let reason = not_recorded[0]["reason"].as_str().unwrap();
    assert!(reason.starts_with("20 passing runs;"), "{reason}");
    let index = Index::load(&root.join(".flakesense/index")).expect("recorded");
    let entry = |id: &str| {
        index
            .entries()
            .find(|entry| entry.id() == id)
            .map(|entry| entry.to_entry())
    };
    assert!(entry("test_shop.py::test_adds_prices").is_none());
    let network = entry("test_shop.py::test_reads_the_price_service").unwrap();
    assert!(network.is_flaky());
    assert_eq!(
        network.categories,
        [flakesense::category::Category::Network]
    );
    assert_eq!(network.source, "confirm: failed 4 of 4 runs offline");
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
            "test_shop.py::test_registers_a_customer",
            "order-dependency"
        )),
        "{flagged:?}"
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
            "4",
            "--test",
            "tests::adds_prices",
            "tests::prices_the_basket_on_every_cpu",
            "tests::reads_the_price_service",
            "tests::registers_a_customer",
            "tests::numbers_the_invoice",
        ],
    );
    assert_fixture_verdicts(
        &report,
        &Fixture {
            stable: "adds_prices",
            one_cpu: "prices_the_basket_on_every_cpu",
            network: "reads_the_price_service",
            non_idempotent: "registers_a_customer",
            second_run: "numbers_the_invoice",
        },
        4,
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
    // noise ran too (all five conditions by default).
    assert_eq!(condition(registers, "noise")["runs"], 4);
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
            "4",
            "--test",
            "com.example.shop.ShopTest#addsPrices",
            "ShopTest#pricesTheBasketOnEveryCpu",
            "ShopTest#readsThePriceService",
            "ShopTest#registersACustomer",
            "ShopTest#numbersTheInvoice",
        ],
    );
    assert_fixture_verdicts(
        &report,
        &Fixture {
            stable: "#addsPrices",
            one_cpu: "#pricesTheBasketOnEveryCpu",
            network: "#readsThePriceService",
            non_idempotent: "#registersACustomer",
            second_run: "#numbersTheInvoice",
        },
        4,
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
            "3",
            "--conditions",
            "plain,offline,twice",
            "--test",
            "test_reads_the_price_service",
        ],
    );
    let network = test(&report, "test_reads_the_price_service");
    assert_eq!(network["runner"], "command");
    assert_eq!(condition(network, "plain")["passed"], 3, "{network:#}");
    let twice = condition(network, "twice")["unavailable"].as_str().unwrap();
    assert!(twice.contains("a command of flakesense.toml"), "{twice}");
    if offline_available(&report) {
        // Three of three offline against three passing plain runs: p = 0.05, a cause.
        assert_eq!(network["verdict"], "flaky", "{network:#}");
        assert_eq!(network["category"], "network");
        assert_eq!(network["exposed_by"], json!(["offline"]));
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
            "--runs",
            "3",
            "--conditions",
            "plain,cpu1,twice",
            "--test",
            "tests::adds_prices",
            "tests::prices_the_basket_on_every_cpu",
        ],
    );
    let stable = test(&report, "adds_prices");
    assert_eq!(stable["runner"], "cargo-nextest");
    assert_eq!(stable["verdict"], "no-flakiness-seen", "{stable:#}");
    let one_cpu = test(&report, "prices_the_basket_on_every_cpu");
    if several_cpus() {
        assert_eq!(one_cpu["verdict"], "flaky", "{one_cpu:#}");
        assert_eq!(one_cpu["exposed_by"], json!(["cpu1"]), "{one_cpu:#}");
    }
}
