//! Tests the runners know and a file does not show by itself, end to end: pytest's tests a class
//! inherits from a base class of another module (`tests/fixtures/discovery/inherited`, shaped
//! like pallets/itsdangerous's `TestTimestampSigner(FreezeMixin, TestSigner)`), and a Rust
//! macro declaring several tests per invocation (dtolnay/itoa's `test! { a(..) b(..) }`): `check`
//! judges them, `confirm --test` runs them by the node id their runner prints.

mod common;

use std::path::Path;

use serde_json::Value;

use common::{command, copy_tree, fixtures, run_ok, write};

/// Whether a tool a test drives is here; where it is not, the test says so and passes, except
/// under `.ci/run` (`FLAKESENSE_REQUIRE_TOOLS`), which installs every tool.
fn have(tool: &str, program: &str, arguments: &[&str]) -> bool {
    let found = std::process::Command::new(program)
        .args(arguments)
        .output()
        .is_ok_and(|output| output.status.success());
    if !found {
        assert!(
            std::env::var_os("FLAKESENSE_REQUIRE_TOOLS").is_none(),
            "{tool} is missing, and FLAKESENSE_REQUIRE_TOOLS says every tool must be here"
        );
        println!("skipped: {tool} is missing");
    }
    found
}

/// The itsdangerous-like project, in a git repository of its own.
fn signing_project() -> tempfile::TempDir {
    let directory = tempfile::tempdir().unwrap();
    copy_tree(&fixtures().join("discovery/inherited"), directory.path());
    run_ok("git", &["init", "-q"], directory.path());
    directory
}

fn json(root: &Path, arguments: &[&str]) -> Value {
    let output = command("flakesense", root)
        .args(arguments)
        .output()
        .expect("flakesense runs");
    serde_json::from_slice(&output.stdout).unwrap_or_else(|error| {
        panic!(
            "{arguments:?}: not JSON ({error}):\n{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

#[test]
fn check_judges_a_test_inherited_from_another_module_in_its_subclass() {
    let project = signing_project();
    let report = json(
        project.path(),
        &["check", "--format", "json", "--sigma", "0"],
    );
    let findings = report["findings"].as_array().unwrap();
    let finding = |id: &str| {
        findings
            .iter()
            .find(|finding| finding["id"] == id)
            .unwrap_or_else(|| panic!("no {id}: {report:#}"))
    };
    let inherited = finding(
        "tests/test_signing/test_timed.py::TestTimestampSigner::test_waits_for_the_key_server",
    );
    let own =
        finding("tests/test_signing/test_signer.py::TestSigner::test_waits_for_the_key_server");
    // Reported where the subclass is named; its evidence is the base module's method.
    assert_eq!(inherited["path"], "tests/test_signing/test_timed.py");
    assert_eq!(inherited["line"], 16);
    let signal = &inherited["signals"][0];
    assert_eq!(signal["name"], own["signals"][0]["name"]);
    assert_eq!(signal["line"], own["signals"][0]["line"]);
    assert_eq!(signal["context"]["kind"], "inherited test");
    assert_eq!(
        signal["context"]["path"],
        "tests/test_signing/test_signer.py"
    );
    assert_eq!(inherited["score"], own["score"]);
    // Every test pytest collects in the subclass, and no other.
    let mut subclass: Vec<&str> = findings
        .iter()
        .filter_map(|finding| finding["id"].as_str())
        .filter(|id| id.contains("::TestTimestampSigner::"))
        .collect();
    subclass.sort_unstable();
    assert_eq!(
        subclass,
        [
            "tests/test_signing/test_timed.py::TestTimestampSigner::test_max_age",
            "tests/test_signing/test_timed.py::TestTimestampSigner::test_replaced_in_a_subclass",
            "tests/test_signing/test_timed.py::TestTimestampSigner::test_signs",
            "tests/test_signing/test_timed.py::TestTimestampSigner::test_waits_for_the_key_server",
        ]
    );
}

#[test]
fn confirm_runs_an_inherited_test_by_its_pytest_node_id() {
    if !have("pytest", "python3", &["-m", "pytest", "--version"]) {
        return;
    }
    let project = signing_project();
    let id = "tests/test_signing/test_timed.py::TestTimestampSigner::test_signs";
    let report = json(
        project.path(),
        &[
            "confirm",
            "--test",
            id,
            "--runs",
            "1",
            "--conditions",
            "plain",
            "--format",
            "json",
        ],
    );
    let test = &report["tests"][0];
    assert_eq!(test["id"], id, "{report:#}");
    assert_eq!(test["conditions"][0]["passed"], 1, "{report:#}");
}

/// A crate whose integration test declares its tests through a table macro, as itoa's does.
const TABLE_TESTS: &str = r#"macro_rules! test {
    ($($name:ident($value:expr, $expected:expr))*) => {
        $(
            #[test]
            fn $name() {
                assert_eq!(format!("{}", $value), $expected);
            }
        )*
    }
}

test! {
    test_u64_0(0u64, "0")
    test_i64_min(i64::MIN, "-9223372036854775808")
}
"#;

#[test]
fn every_test_of_a_table_macro_is_found_and_runs_by_its_name() {
    let project = tempfile::tempdir().unwrap();
    let root = project.path();
    write(
        root,
        "Cargo.toml",
        "[package]\nname = \"table\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n",
    );
    write(root, "src/lib.rs", "");
    write(root, "tests/test.rs", TABLE_TESTS);
    run_ok("git", &["init", "-q"], root);
    let report = json(root, &["check", "--format", "json", "--sigma", "0"]);
    let mut ids: Vec<&str> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|finding| finding["id"].as_str())
        .collect();
    ids.sort_unstable();
    assert_eq!(
        ids,
        ["tests/test.rs::test_i64_min", "tests/test.rs::test_u64_0"]
    );
    if !have("cargo", "cargo", &["--version"]) {
        return;
    }
    let output = command("flakesense", root)
        .args([
            "confirm",
            "--test",
            "test_i64_min",
            "--runs",
            "1",
            "--conditions",
            "plain",
            "--format",
            "json",
        ])
        .env(
            "CARGO_TARGET_DIR",
            Path::new(env!("CARGO_TARGET_TMPDIR")).join("table-fixture-target"),
        )
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&output.stdout).unwrap_or_else(|error| {
        panic!(
            "not JSON ({error}):\n{}",
            String::from_utf8_lossy(&output.stderr)
        )
    });
    let test = &report["tests"][0];
    assert_eq!(test["id"], "tests/test.rs::test_i64_min", "{report:#}");
    assert_eq!(test["conditions"][0]["passed"], 1, "{report:#}");
}
