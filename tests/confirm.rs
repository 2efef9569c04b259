//! `flakesense confirm` with real runs of real runners, nothing mocked: the fixtures of
//! `tests/fixtures/confirm` (a Rust crate run with cargo test, a pytest project, a JUnit 5
//! project compiled with javac and run with Debian's console launcher) each hold a stable test,
//! a timing race, a test that needs a loopback server it does not start, and a non-idempotent
//! test. The "price service" they need is a listener of this process, its port passed in
//! `CONFIRM_FIXTURE_PORT`.
//!
//! The tests run one at a time: the noise of one would fall on another's runs. Runs are few (one
//! or two per condition): the fixtures' races are wide enough that plain runs pass and noisy
//! ones fail.

mod common;
mod lsp_client;

use std::io::Read;
use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use common::{binary, fixtures, run_ok, tool_available};
use flakesense::index::Index;
use lsp_client::{ClientBehaviour, LspClient};

const LAUNCHER: &str = "/usr/share/java/junit-platform-console-standalone.jar";

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

/// A copy of a fixture project in a fresh directory.
fn copy_fixture(name: &str) -> tempfile::TempDir {
    let directory = tempfile::tempdir().unwrap();
    copy_tree(&fixtures().join("confirm").join(name), directory.path());
    directory
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
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
    let _serial = serial();
    if !have_pytest() {
        return;
    }
    let service = PriceService::start();
    let project = copy_fixture("pytest");
    let root = project.path();
    let (output, report) = confirm_json(
        root,
        &service,
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
    let check = flakesense(root, &service)
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
fn by_default_the_suspects_of_the_uncommitted_change_are_run() {
    let _serial = serial();
    if !have_pytest() {
        return;
    }
    let service = PriceService::start();
    let project = copy_fixture("pytest");
    let root = project.path();
    let test_file = std::fs::read_to_string(root.join("test_shop.py")).unwrap();
    std::fs::remove_file(root.join("test_shop.py")).unwrap();
    run_ok("git", &["init", "-q", "-b", "main"], root);
    run_ok("git", &["add", "."], root);
    run_ok("git", &["commit", "-q", "-m", "settings"], root);
    std::fs::write(root.join("test_shop.py"), test_file).unwrap();
    let (output, report) = confirm_json(root, &service, &["--runs", "1", "--conditions", "plain"]);
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
    let output = flakesense(root, &service).arg("confirm").output().unwrap();
    assert_eq!(output.status.code(), Some(0));
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("no test to confirm"),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn offline_is_reported_unavailable_when_the_kernel_refuses() {
    let _serial = serial();
    if !have_pytest() {
        return;
    }
    let service = PriceService::start();
    let project = copy_fixture("pytest");
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
    let output = flakesense(project.path(), &service)
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
    let output = flakesense(project.path(), &service)
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

#[test]
fn a_command_template_runs_the_tests_and_nextest_is_driven_whole() {
    let _serial = serial();
    if !have_pytest() {
        return;
    }
    let service = PriceService::start();
    // pytest through a command of flakesense.toml: `{tests}` and `{report}` filled in.
    let project = copy_fixture("pytest");
    std::fs::write(
        project.path().join("flakesense.toml"),
        "[confirm.python]\ncommand = \"python3 -m pytest -p no:cacheprovider {tests} --junitxml={report}\"\n",
    )
    .unwrap();
    let (_, report) = confirm_json(
        project.path(),
        &service,
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
        &service,
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

/// The processes whose environment holds `marker`, but `except`.
fn processes_marked(marker: &str, except: u32) -> Vec<(u32, String)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if pid == except {
            continue;
        }
        let mut environ = Vec::new();
        let readable = std::fs::File::open(entry.path().join("environ"))
            .and_then(|mut file| file.read_to_end(&mut environ));
        if readable.is_ok()
            && environ
                .windows(marker.len())
                .any(|window| window == marker.as_bytes())
        {
            let command = std::fs::read_to_string(entry.path().join("cmdline"))
                .unwrap_or_default()
                .replace('\0', " ");
            found.push((pid, command));
        }
    }
    found
}

#[test]
fn ctrl_c_ends_every_test_process_and_records_nothing() {
    let _serial = serial();
    if !have_pytest() {
        return;
    }
    let service = PriceService::start();
    let project = copy_fixture("pytest");
    let root = project.path();
    let marker = format!("FLAKESENSE_INTERRUPT_MARK={}", std::process::id());
    let (key, value) = marker.split_once('=').unwrap();
    let child = flakesense(root, &service)
        .env(key, value)
        .args([
            "confirm",
            "--runs",
            "50",
            "--conditions",
            "plain,noise",
            "--record",
            "--test",
            "test_refreshes_the_cache_in_the_background",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    loop {
        let running = processes_marked(&marker, child.id());
        if running
            .iter()
            .any(|(_, command)| command.contains("pytest"))
        {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "no pytest run started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: a signal to a child of this test.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("nothing was recorded"), "{stderr}");
    assert!(output.stdout.is_empty(), "no partial report");
    // The signal-share cache may be there (`.flakesense/cache`); no index is.
    assert!(!root.join(".flakesense/index").exists(), "no partial label");
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let left = processes_marked(&marker, std::process::id());
        if left.is_empty() {
            break;
        }
        assert!(Instant::now() < deadline, "left running: {left:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A `$/progress` message of a kind (`begin`, `report`, `end`).
fn progress_of(kind: &'static str) -> impl Fn(&Value) -> bool {
    move |message: &Value| {
        message["method"] == "$/progress" && message["params"]["value"]["kind"] == kind
    }
}

#[test]
fn the_editor_confirms_in_the_background_with_progress_and_shows_the_verdict() {
    let _serial = serial();
    if !have_pytest() {
        return;
    }
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(editor_confirms_in_the_background());
}

async fn editor_confirms_in_the_background() {
    let service = PriceService::start();
    let project = copy_fixture("pytest");
    let root = project.path().to_path_buf();
    std::fs::write(
        root.join("flakesense.toml"),
        "[confirm]\nruns = 1\nconditions = [\"plain\", \"noise\"]\n",
    )
    .unwrap();
    let mut server = tokio::process::Command::new(binary())
        .arg("serve")
        .current_dir(&root)
        .env("CONFIRM_FIXTURE_PORT", service.port.to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut client = LspClient::new(
        server.stdout.take().unwrap(),
        server.stdin.take().unwrap(),
        ClientBehaviour::default(),
    );
    let root_uri = format!("file://{}", root.display());
    client
        .initialize(json!({
            "processId": null,
            "rootUri": root_uri,
            "workspaceFolders": [{"uri": root_uri, "name": "shop"}],
            "capabilities": {"window": {"workDoneProgress": true}},
        }))
        .await;
    let uri = format!("{root_uri}/test_shop.py");
    let text = std::fs::read_to_string(root.join("test_shop.py")).unwrap();
    client.open(&uri, "python", 1, &text).await;
    client.diagnostics(&uri, None).await;
    let line = text
        .lines()
        .position(|line| line.contains("def test_refreshes_the_cache_in_the_background"))
        .unwrap();
    let response = client
        .request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": uri}, "range": {"start": {"line": line, "character": 8}, "end": {"line": line, "character": 8}}, "context": {"diagnostics": []}}),
        )
        .await;
    let actions = response["result"].as_array().unwrap();
    let confirm = actions
        .iter()
        .find(|action| action["title"] == "Confirm: run this test 1 time")
        .unwrap_or_else(|| panic!("no confirm action in {actions:#?}"));
    let asked = Instant::now();
    let started = client
        .request(
            "workspace/executeCommand",
            json!({"command": confirm["command"]["command"], "arguments": confirm["command"]["arguments"]}),
        )
        .await;
    assert_eq!(started["result"]["runs"], 1, "{started}");
    assert!(
        asked.elapsed() < Duration::from_secs(10),
        "answered at once"
    );

    // While the tests run, the server answers.
    client
        .collect_until(
            "the progress's start",
            progress_of("begin"),
            Duration::from_secs(60),
        )
        .await;
    let hover = client
        .request(
            "textDocument/hover",
            json!({"textDocument": {"uri": uri}, "position": {"line": line, "character": 8}}),
        )
        .await;
    assert!(hover.get("error").is_none(), "{hover}");
    let verdict_shown = |message: &Value| {
        message["method"] == "window/showMessage"
            && message["params"]["message"]
                .as_str()
                .is_some_and(|text| text.contains("test_refreshes_the_cache_in_the_background"))
    };
    assert!(
        !client.received.iter().any(verdict_shown),
        "the hover was answered while the runs went on"
    );
    let shown = client
        .wait_for("the verdict", verdict_shown, Duration::from_secs(180))
        .await;
    let message = shown["params"]["message"].as_str().unwrap();
    assert!(message.contains("is flaky (async-wait)"), "{message}");
    assert!(message.contains("under noise"), "{message}");
    let reports = client
        .received
        .iter()
        .filter(|message| progress_of("report")(message))
        .count();
    assert!(reports >= 1, "progress was reported");
    client
        .collect_until(
            "the progress's end",
            progress_of("end"),
            Duration::from_secs(10),
        )
        .await;
    client.shutdown_and_exit().await;
    let status = tokio::time::timeout(Duration::from_secs(10), server.wait())
        .await
        .expect("the server exits")
        .unwrap();
    assert!(status.success());
}
