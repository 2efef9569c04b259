//! JUnit XML reports as a source of history: several runs of every dialect (Surefire, Gradle,
//! pytest, nextest), a single run's retries, and malformed or missing reports.

use flakesense::category::Category;
use flakesense::history::label_from_junit;

use crate::{CART, CLIENT, INVENTORY, ORDER, expected, flaky_ids, runs, shop};

#[test]
fn junit_reports_of_several_runs_label_flaky_tests_of_every_dialect() {
    let repository = shop();
    let report = label_from_junit(
        &repository,
        &repository.catalogue(),
        &runs(&["run-1", "run-2", "run-3-gradle"]),
    )
    .expect("the reports are readable");
    assert_eq!(
        flaky_ids(&repository, &report),
        expected(&[
            // Surefire: passed in run 1, failed in run 2; the message names no cause.
            (&format!("{ORDER}#sendsConfirmationEmail"), &[]),
            // Surefire: <flakyError> with a refused connection.
            (
                &format!("{INVENTORY}#connectsToWarehouse"),
                &[Category::Network]
            ),
            // Gradle: the test case repeated, failing then passing.
            (&format!("{INVENTORY}#releasesStock"), &[Category::Network]),
            // pytest: one parameter timed out in run 1 and passed in run 2.
            (
                &format!("{CART}::test_quantity_limits"),
                &[Category::Timeout]
            ),
            // nextest: <flakyFailure> with the port taken.
            (&format!("{CLIENT}::binds_local_port"), &[Category::Network]),
        ])
    );
    // `cancelOrder` was renamed `cancelsOrder` since the reports were written.
    let unmatched: Vec<(&str, &[String])> = report
        .unmatched
        .iter()
        .map(|miss| (miss.name.as_str(), miss.closest.as_slice()))
        .collect();
    assert_eq!(
        unmatched,
        [(
            "com.example.shop.OrderServiceTest.cancelOrder",
            &[format!("{ORDER}#cancelsOrder")][..]
        )]
    );
    assert!(
        report.unmatched[0]
            .context
            .contains("passed in 1 run, failed in 1")
    );
    assert!(report.ambiguous.is_empty(), "{:?}", report.ambiguous);
    assert!(
        report
            .notes
            .iter()
            .any(|note| note.contains("failsafe-summary.xml")),
        "{:?}",
        report.notes
    );
    // Every test that ran is matched, the integration test and nested class included; the
    // skipped `expires_entries_concurrently` did not run and `cancelsOrder` has its old name.
    assert_eq!(report.tests, 28);
}

#[test]
fn a_single_run_shows_only_the_tests_retried_within_it() {
    let repository = shop();
    let report = label_from_junit(&repository, &repository.catalogue(), &runs(&["run-1"]))
        .expect("the reports are readable");
    let flaky: Vec<String> = flaky_ids(&repository, &report).into_keys().collect();
    assert_eq!(
        flaky,
        [
            format!("{INVENTORY}#connectsToWarehouse"),
            format!("{CLIENT}::binds_local_port")
        ]
    );
    assert!(
        report
            .notes
            .iter()
            .any(|note| note.contains("with one run"))
    );
}

#[test]
fn malformed_xml_is_an_error_naming_the_file() {
    let repository = shop();
    let error = label_from_junit(
        &repository,
        &repository.catalogue(),
        &runs(&["run-1", "broken"]),
    )
    .expect_err("a truncated report is malformed");
    let message = format!("{error:#}");
    assert!(
        message.contains("broken/TEST-com.example.shop.OrderServiceTest.xml")
            && message.contains("malformed XML"),
        "{message}"
    );
    let missing = label_from_junit(
        &repository,
        &repository.catalogue(),
        &runs(&["no-such-run"]),
    )
    .expect_err("a missing directory is an error");
    assert!(format!("{missing:#}").contains("no-such-run"));
}
