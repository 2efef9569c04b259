//! `flakesense confirm` with real runs of real runners, nothing mocked: the fixtures of
//! `tests/fixtures/confirm` (a Rust crate run with cargo test, a pytest project, a JUnit 5
//! project compiled with javac and run with Debian's console launcher) each hold a stable test
//! and tests flaky by construction, not by timing, so that the verdicts hold on a machine of any
//! speed and under any load: one fails when it gets one CPU (it splits work by the CPU count),
//! one needs a loopback server it does not start, one is non-idempotent (it passes once per
//! process), and one fails on its second run (a counter in a file), whatever the condition. The
//! "price service" the network test needs is a listener of this process, its port passed in
//! `CONFIRM_FIXTURE_PORT`. (The fixtures' timing race is the benchmark's, never asserted here.)
//!
//! The tests run one at a time: the noise of one would fall on another's runs. Runs are few
//! (three or four per condition), enough for Fisher's test to call a condition that fails every
//! run a cause.
//!
//! The modules, one job each: `runners` confirms each fixture with its runner (pytest, cargo
//! test, JUnit's console launcher, a command template, cargo-nextest); `verdicts` the rules a
//! user meets on the command line (`twice` alone, the runs a stable label needs); `cli` the tests
//! chosen by default and a condition the kernel refuses; `interrupt` Ctrl-C during the runs;
//! `editor` a confirmation started from the language server; `compare` the runs at a revision
//! beside the working tree's (`--compare`).

#[path = "../common/mod.rs"]
mod common;
#[path = "../lsp_client/mod.rs"]
mod lsp_client;

mod cli;
mod compare;
mod editor;
mod interrupt;
mod runners;
mod verdicts;

use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::{Mutex, MutexGuard};

use serde_json::Value;

use common::{copy_tree, fixtures};

/// One confirmation at a time.
fn serial() -> MutexGuard<'static, ()> {
    static SERIAL: Mutex<()> = Mutex::new(());
    SERIAL
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Whether a tool a test drives is here. Where it is not, the test says so and passes; under
/// `.ci/run`, which installs every tool and sets `FLAKESENSE_REQUIRE_TOOLS`, it fails instead,
/// so that nothing skips silently in CI.
fn have(tool: &str, found: bool) -> bool {
    if !found {
        assert!(
            std::env::var_os("FLAKESENSE_REQUIRE_TOOLS").is_none(),
            "{tool} is missing, and FLAKESENSE_REQUIRE_TOOLS says every tool must be here"
        );
        eprintln!("skipped: {tool} is missing (.ci/run installs it)");
    }
    found
}

fn have_pytest() -> bool {
    have(
        "pytest",
        Command::new("python3")
            .args(["-m", "pytest", "--version"])
            .output()
            .is_ok_and(|output| output.status.success()),
    )
}

/// The loopback service the fixtures' network tests need: accepts and closes connections.
struct PriceService {
    port: u16,
}

impl PriceService {
    fn start() -> PriceService {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
        let port = listener.local_addr().unwrap().port();
        std::thread::spawn(move || {
            for connection in listener.incoming() {
                drop(connection);
            }
        });
        PriceService { port }
    }
}

/// The pytest fixture project, copied afresh, with the price service its tests call; held
/// alone (one confirmation at a time). `None` where pytest is missing, which fails under CI.
struct PytestProject {
    service: PriceService,
    project: tempfile::TempDir,
    _serial: MutexGuard<'static, ()>,
}

impl PytestProject {
    fn start() -> Option<PytestProject> {
        let serial = serial();
        if !have_pytest() {
            return None;
        }
        Some(PytestProject {
            service: PriceService::start(),
            project: copy_fixture("pytest"),
            _serial: serial,
        })
    }

    fn root(&self) -> &Path {
        self.project.path()
    }
}

/// A copy of a fixture project in a fresh directory.
fn copy_fixture(name: &str) -> tempfile::TempDir {
    let directory = tempfile::tempdir().unwrap();
    copy_tree(&fixtures().join("confirm").join(name), directory.path());
    directory
}

/// `flakesense` in a directory, with the price service's port and a cargo target directory
/// shared by every run of the Rust fixture.
fn flakesense(directory: &Path, service: &PriceService) -> Command {
    let mut command = common::command("flakesense", directory);
    command
        .env("CONFIRM_FIXTURE_PORT", service.port.to_string())
        .env(
            "CARGO_TARGET_DIR",
            Path::new(env!("CARGO_TARGET_TMPDIR")).join("confirm-fixture-target"),
        )
        .stdin(Stdio::null());
    command
}

fn confirm_json(directory: &Path, service: &PriceService, arguments: &[&str]) -> (Output, Value) {
    let output = flakesense(directory, service)
        .arg("confirm")
        .args(arguments)
        .args(["--format", "json"])
        .output()
        .expect("flakesense runs");
    let report: Value = serde_json::from_slice(&output.stdout).unwrap_or_else(|error| {
        panic!(
            "not JSON ({error}):\n{}\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    });
    (output, report)
}

/// Whether the tests' processes may use more than one CPU: the fixtures' CPU-count test is flaky
/// (it fails on one CPU only) where they can, and broken where they cannot.
fn several_cpus() -> bool {
    std::thread::available_parallelism().is_ok_and(|cpus| cpus.get() > 1)
}

/// The report's entry for a test whose id ends with `name`.
fn test<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["tests"]
        .as_array()
        .unwrap()
        .iter()
        .find(|test| test["id"].as_str().unwrap().ends_with(name))
        .unwrap_or_else(|| panic!("no {name} in {report:#}"))
}

fn condition<'a>(test: &'a Value, name: &str) -> &'a Value {
    test["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|tally| tally["condition"] == name)
        .unwrap_or_else(|| panic!("no condition {name} in {test:#}"))
}
