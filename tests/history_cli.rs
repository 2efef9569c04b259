//! `flakesense train --repo` as a user runs it: the real binary on a temporary copy of the fixture
//! repository `tests/fixtures/history/shop` (the fixtures themselves are never written).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::copy_tree;
use flakesense::category::Category;
use flakesense::index::{Index, IndexWriter, Label, Origin};

mod common;

fn fixture(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/history")
        .join(relative)
}

/// A temporary copy of the fixture repository; the directory is deleted when dropped.
struct Shop {
    _directory: tempfile::TempDir,
    root: PathBuf,
}

impl Shop {
    fn new() -> Shop {
        let directory = tempfile::tempdir().expect("a temporary directory");
        let root = directory.path().join("shop");
        copy_tree(&fixture("shop"), &root);
        Shop {
            _directory: directory,
            root,
        }
    }

    fn index_path(&self) -> PathBuf {
        self.root.join(".flakesense/index")
    }

    fn train(&self, extra: &[&str]) -> Output {
        let mut arguments = vec!["train", "--repo", self.root.to_str().expect("UTF-8 path")];
        arguments.extend(extra);
        flakesense(&arguments)
    }
}

fn flakesense(arguments: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_flakesense"))
        .args(arguments)
        // The cache of signal shares of workspaces outside git goes here, not in the user's.
        .env(
            "XDG_CACHE_HOME",
            concat!(env!("CARGO_TARGET_TMPDIR"), "/xdg-cache"),
        )
        .output()
        .expect("the binary runs")
}

/// Runs the binary from inside `directory`, as a user in their repository would.
fn flakesense_in(directory: &Path, arguments: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_flakesense"))
        .args(arguments)
        // The cache of signal shares of workspaces outside git goes here, not in the user's.
        .env(
            "XDG_CACHE_HOME",
            concat!(env!("CARGO_TARGET_TMPDIR"), "/xdg-cache"),
        )
        .current_dir(directory)
        .output()
        .expect("the binary runs")
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn fixture_arg(relative: &str) -> String {
    fixture(relative).display().to_string()
}

#[test]
fn training_on_every_source_writes_the_project_index_and_reports_each_source() {
    let shop = Shop::new();
    let list = fixture_arg("flaky-tests.txt");
    let runs = ["run-1", "run-2", "run-3-gradle"].map(|run| fixture_arg(&format!("reports/{run}")));
    let output = shop.train(&[
        "--flaky-list",
        &list,
        "--from-annotations",
        "--junit-xml",
        &runs[0],
        &runs[1],
        &runs[2],
    ]);
    let stderr = stderr(&output);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    for expected in [
        "read 31 tests in 10 of 11 source files",
        "flaky-tests.txt: 5 tests, 5 flaky (async-wait 2, concurrency 1, network 1)",
        "annotations: 31 tests, 8 flaky (concurrency 3, network 1, timeout 1)",
        "JUnit XML (3 runs, 11 report files, 71 results): 28 tests, 5 flaky (network 3, timeout 1)",
        "`com.example.shop.PaymentTest#refundsCard` (line 9)",
        "closest: python/tests/test_cart.py::TestCoupons::test_applies_coupon",
        "`OrderServiceTest#createsOrder` (line 7): com.example.shop.OrderServiceTest#createsOrder, com.example.shop.legacy.OrderServiceTest#createsOrder",
        "`com.example.shop.OrderServiceTest.cancelOrder` (flaky in the reports: passed in 1 run, failed in 1); closest: com.example.shop.OrderServiceTest#cancelsOrder",
        "unknown category `timing`",
        "31 tests, 15 flaky (async-wait 2, concurrency 4, network 4, timeout 2), 16 unlabelled",
    ] {
        assert!(
            stderr.contains(expected),
            "missing {expected:?} in\n{stderr}"
        );
    }
    let index = Index::load(&shop.index_path()).expect("the index was written");
    assert_eq!(index.len(), 31);
    assert_eq!(index.entries().filter(|entry| entry.is_flaky()).count(), 15);
    assert!(
        index
            .entries()
            .all(|entry| entry.origin() == Origin::History && entry.project() == "shop")
    );
}

/// `flakesense check` reads the repository's `.flakesense/index` by itself, beside the shipped
/// model; the project's own flaky test is the nearest neighbour of its look-alike.
#[test]
fn a_new_test_resembling_a_known_flaky_one_is_flagged_with_it_as_nearest_neighbour() {
    let shop = Shop::new();
    let runs = ["run-1", "run-2"].map(|run| fixture_arg(&format!("reports/{run}")));
    let output = flakesense_in(
        &shop.root,
        &[
            "train",
            "--repo",
            ".",
            "--from-annotations",
            "--junit-xml",
            &runs[0],
            &runs[1],
        ],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    // Ids and paths are relative to the repository however it was named.
    let trained = Index::load(&shop.index_path()).expect("the index was written");
    let cart = trained.entry(
        trained
            .position("python/tests/test_cart.py::test_adds_item")
            .expect("ids start at the repository root"),
    );
    assert_eq!(cart.path(), Some("python/tests/test_cart.py"));

    let new_test = shop
        .root
        .join("java/src/test/java/com/example/shop/NotificationTest.java");
    std::fs::write(
        &new_test,
        r#"package com.example.shop;

import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class NotificationTest {
    private final OrderService service = new OrderService(new InMemoryOrders());

    @Test
    void sendsShippingEmail() throws Exception {
        MailServer mail = MailServer.start();
        service.ship("book", 1);
        Thread.sleep(500);
        assertTrue(mail.inbox().contains("Order shipped"));
    }
}
"#,
    )
    .expect("writable");
    let output = flakesense_in(
        &shop.root,
        &[
            "check",
            "java/src/test/java/com/example/shop/NotificationTest.java",
            "--format",
            "json",
        ],
    );
    assert_eq!(
        output.status.code(),
        Some(1),
        "a flagged test fails the check: {}",
        stderr(&output)
    );
    let report: serde_json::Value =
        serde_json::from_slice(&output.stdout).expect("check prints JSON");
    let finding = &report["findings"][0];
    assert_eq!(
        finding["id"],
        "com.example.shop.NotificationTest#sendsShippingEmail"
    );
    let nearest = &finding["neighbors"][0];
    assert_eq!(
        nearest["id"], "com.example.shop.OrderServiceTest#sendsConfirmationEmail",
        "{finding:#}"
    );
    assert_eq!(nearest["flaky"], true);
    assert_eq!(nearest["project"], "shop");
}

#[test]
fn a_list_of_unknown_tests_labels_nothing_and_no_index_is_written() {
    let shop = Shop::new();
    let list = shop.root.join("unknown.txt");
    std::fs::write(
        &list,
        "com.example.shop.PaymentTest#refundsCard\ntests/test_gone.py::test_vanished\n",
    )
    .expect("writable");
    let output = shop.train(&["--flaky-list", list.to_str().expect("UTF-8 path")]);
    let stderr = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("`tests/test_gone.py::test_vanished` (line 2)"),
        "{stderr}"
    );
    assert!(stderr.contains("no test is labelled flaky"), "{stderr}");
    assert!(!shop.index_path().exists());
}

#[test]
fn a_malformed_report_stops_training_and_names_the_file() {
    let shop = Shop::new();
    let run = fixture_arg("reports/run-1");
    let broken = fixture_arg("reports/broken");
    let output = shop.train(&["--junit-xml", &run, &broken]);
    let stderr = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("broken/TEST-com.example.shop.OrderServiceTest.xml: malformed XML"),
        "{stderr}"
    );
    assert!(!shop.index_path().exists());
}

/// Marks a test flaky by hand, as the editor does.
fn mark_by_hand(index_path: &Path, id: &str, flaky: bool) {
    let index = Index::load(index_path).expect("readable");
    let mut writer = IndexWriter::from_index(&index);
    let label = if flaky { Label::Flaky } else { Label::Stable };
    assert!(writer.relabel(id, label, vec![Category::Time], Origin::Manual));
    writer
        .finish()
        .save(flakesense::files::write::Place::Named, index_path)
        .expect("writable");
}

fn label(index_path: &Path, id: &str) -> (bool, Origin) {
    let index = Index::load(index_path).expect("readable");
    let entry = index.entry(index.position(id).expect("indexed"));
    (entry.is_flaky(), entry.origin())
}

#[test]
fn an_update_merges_labels_and_keeps_those_set_by_hand_unless_overridden() {
    let shop = Shop::new();
    let index = shop.index_path();
    let output = shop.train(&["--from-annotations"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let by_hand = "com.example.shop.OrderServiceTest#createsOrder";
    let annotated = "com.example.shop.InventoryTest#chargesPaymentGateway";
    let listed = "com.example.shop.InventoryTest#connectsToWarehouse";
    mark_by_hand(&index, by_hand, true);

    let list = fixture_arg("flaky-tests.txt");
    let output = shop.train(&["--update", "--flaky-list", &list]);
    let stderr_text = stderr(&output);
    assert_eq!(output.status.code(), Some(0), "{stderr_text}");
    assert!(
        stderr_text.contains("kept 1 label set by hand"),
        "{stderr_text}"
    );
    assert_eq!(label(&index, by_hand), (true, Origin::Manual));
    assert_eq!(label(&index, annotated), (true, Origin::History));
    assert_eq!(label(&index, listed), (true, Origin::History));

    // A rebuild from the list alone forgets the annotations but not the hand label.
    let output = shop.train(&["--flaky-list", &list]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert_eq!(label(&index, by_hand), (true, Origin::Manual));
    assert_eq!(label(&index, annotated), (false, Origin::History));

    let output = shop.train(&["--update", "--flaky-list", &list, "--override-manual"]);
    let stderr_text = stderr(&output);
    assert_eq!(output.status.code(), Some(0), "{stderr_text}");
    assert!(
        stderr_text.contains("replaced 1 label set by hand"),
        "{stderr_text}"
    );
    assert_eq!(label(&index, by_hand), (false, Origin::History));
}

#[test]
fn a_file_that_is_not_an_index_is_never_overwritten() {
    let shop = Shop::new();
    let index = shop.index_path();
    std::fs::create_dir_all(index.parent().expect("a parent")).expect("writable");
    std::fs::write(&index, b"my notes, not an index").expect("writable");
    for extra in [
        &["--from-annotations"][..],
        &["--from-annotations", "--update"],
    ] {
        let output = shop.train(extra);
        let stderr = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains("not a flakesense index"), "{stderr}");
        assert_eq!(
            std::fs::read(&index).expect("still there"),
            b"my notes, not an index"
        );
    }
}

#[test]
fn a_damaged_index_is_not_updated_and_a_rebuild_moves_it_aside() {
    let shop = Shop::new();
    let index = shop.index_path();
    let output = shop.train(&["--from-annotations"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let mut bytes = std::fs::read(&index).expect("readable");
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    std::fs::write(&index, &bytes).expect("writable");

    let output = shop.train(&["--from-annotations", "--update"]);
    let stderr_text = stderr(&output);
    assert_eq!(output.status.code(), Some(2), "{stderr_text}");
    assert!(
        stderr_text.contains("run without --update"),
        "{stderr_text}"
    );
    assert_eq!(std::fs::read(&index).expect("still there"), bytes);

    let output = shop.train(&["--from-annotations"]);
    let stderr_text = stderr(&output);
    assert_eq!(output.status.code(), Some(0), "{stderr_text}");
    assert!(stderr_text.contains("moved it to"), "{stderr_text}");
    assert_eq!(
        std::fs::read(index.with_file_name("index.corrupt-1")).expect("kept aside"),
        bytes
    );
    assert!(Index::load(&index).is_ok());
}

#[test]
fn data_and_repo_are_alternative_inputs() {
    let shop = Shop::new();
    let root = shop.root.to_str().expect("UTF-8 path");
    for (arguments, expected) in [
        (vec!["train", "--out", "x.idx"], "--data"),
        (
            vec![
                "train",
                "--data",
                "x.csv",
                "--repo",
                root,
                "--from-annotations",
            ],
            "cannot be used with",
        ),
        (vec!["train", "--data", "x.csv"], "--out"),
        (
            vec![
                "train",
                "--data",
                "x.csv",
                "--out",
                "x.idx",
                "--from-annotations",
            ],
            "--repo",
        ),
        (vec!["train", "--repo", root], "source of labels"),
    ] {
        let output = flakesense(&arguments);
        let stderr = stderr(&output);
        assert_eq!(output.status.code(), Some(2), "{arguments:?}: {stderr}");
        assert!(stderr.contains(expected), "{arguments:?}: {stderr}");
    }
}
