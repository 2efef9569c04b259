//! Learning from a repository's flaky history, on the fixture repository `tests/fixtures/history/shop`
//! (Java, Python and Rust tests, git-ignored generated tests) and the reports and flaky list beside it.
//! The fixtures are only read here; tests that write use temporary directories.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use flakesense::category::Category;
use flakesense::embed::{TokenBag, Tokenizer};
use flakesense::history::{
    self, FlakyReport, IndexPlan, Repository, Source, SourceReport, label_from_annotations,
    label_from_flaky_list, label_from_junit,
};
use flakesense::index::{BuildSettings, Dims, Entry, Index, IndexWriter, Label, Origin};
use flakesense::language::Language;

fn fixture(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/history")
        .join(relative)
}

fn shop() -> Repository {
    let root = fixture("shop");
    let (files, problems) = history::find_test_files(&root).expect("the fixture is readable");
    assert!(problems.is_empty(), "{problems:?}");
    history::read_repository(&root, &files, &|| {}).expect("the fixture is readable")
}

/// What a report labels flaky: id to categories.
fn flaky_ids(repository: &Repository, report: &SourceReport) -> BTreeMap<String, Vec<Category>> {
    report
        .flaky
        .iter()
        .map(|(&test, categories)| {
            (
                repository.tests[test].test.id.clone(),
                categories.iter().copied().collect(),
            )
        })
        .collect()
}

fn expected(pairs: &[(&str, &[Category])]) -> BTreeMap<String, Vec<Category>> {
    pairs
        .iter()
        .map(|(id, categories)| (id.to_string(), categories.to_vec()))
        .collect()
}

fn position(repository: &Repository, id: &str) -> usize {
    repository
        .tests
        .iter()
        .position(|test| test.test.id == id)
        .unwrap_or_else(|| panic!("no test {id}"))
}

const ORDER: &str = "com.example.shop.OrderServiceTest";
const INVENTORY: &str = "com.example.shop.InventoryTest";
const CART: &str = "python/tests/test_cart.py";
const CACHE: &str = "rust/src/cache.rs::tests";
const CLIENT: &str = "rust/src/net/client.rs::tests";

#[test]
fn every_test_is_collected_and_ignored_files_are_skipped() {
    let repository = shop();
    assert_eq!(repository.name, "shop");
    let per_language: BTreeMap<Language, usize> =
        repository
            .tests
            .iter()
            .fold(BTreeMap::new(), |mut counts, test| {
                *counts.entry(test.test.language).or_insert(0) += 1;
                counts
            });
    assert_eq!(
        per_language,
        BTreeMap::from([
            (Language::Java, 12),
            (Language::Python, 10),
            (Language::Rust, 9)
        ])
    );
    let ids: BTreeSet<&str> = repository
        .tests
        .iter()
        .map(|test| test.test.id.as_str())
        .collect();
    for id in [
        "com.example.shop.OrderServiceTest$Refunds#refundsOrder",
        "python/tests/test_cart.py::TestCoupons::test_expires_coupon",
        "rust/tests/checkout.rs::end_to_end_order",
        "rust/src/lib.rs::tests::parses_config",
    ] {
        assert!(ids.contains(id), "{id} in {ids:?}");
    }
    assert!(
        !ids.iter().any(|id| id.contains("enerated")),
        "git-ignored tests were read: {ids:?}"
    );
    let paths: BTreeSet<&str> = repository
        .tests
        .iter()
        .map(|test| test.path.as_str())
        .collect();
    assert!(paths.contains("java/src/test/java/com/example/shop/OrderServiceTest.java"));
    assert!(repository.duplicate_ids.is_empty());
}

#[test]
fn a_repository_is_read_as_pytest_collects_it() {
    // `python_classes = test_*` in setup.cfg, as celery sets it; conftest.py is no test file.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/discovery/celery");
    let (files, problems) = history::find_test_files(&root).expect("the fixture is readable");
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(files, [root.join("t/unit/test_result.py")]);
    let repository = history::read_repository(&root, &files, &|| {}).expect("readable");
    let ids: Vec<&str> = repository
        .tests
        .iter()
        .map(|test| test.test.id.as_str())
        .collect();
    assert!(
        ids.contains(&"t/unit/test_result.py::test_AsyncResult::test_get_waits"),
        "{ids:?}"
    );
    assert!(
        !ids.iter().any(|id| id.contains("TestNotCollectedHere")),
        "{ids:?}"
    );
}

#[test]
fn a_flaky_list_labels_tests_of_each_language_and_reports_what_it_cannot_match() {
    let repository = shop();
    let report = label_from_flaky_list(
        &repository,
        &repository.catalogue(),
        &fixture("flaky-tests.txt"),
    )
    .expect("the list is readable");
    assert_eq!(
        flaky_ids(&repository, &report),
        expected(&[
            (
                &format!("{INVENTORY}#connectsToWarehouse"),
                &[Category::Network]
            ),
            (&format!("{ORDER}#syncsInventory"), &[Category::AsyncWait]),
            (
                "python/tests/test_search.py::test_search_index_refresh",
                &[Category::AsyncWait]
            ),
            (
                &format!("{CACHE}::refreshes_in_background"),
                &[Category::Concurrency]
            ),
            (&format!("{CLIENT}::reconnects_after_drop"), &[]),
        ])
    );
    assert_eq!(report.tests, 5);

    let unmatched: Vec<(&str, &str, &[String])> = report
        .unmatched
        .iter()
        .map(|miss| {
            (
                miss.name.as_str(),
                miss.context.as_str(),
                miss.closest.as_slice(),
            )
        })
        .collect();
    assert_eq!(
        unmatched,
        [
            (
                "com.example.shop.PaymentTest#refundsCard",
                "line 9",
                &[][..]
            ),
            (
                "python/tests/test_cart.py::TestCoupons::test_aplies_coupon[SAVE10]",
                "line 10",
                &[format!("{CART}::TestCoupons::test_applies_coupon")][..]
            ),
        ]
    );
    let ambiguous: Vec<(&str, Vec<&str>)> = report
        .ambiguous
        .iter()
        .map(|miss| {
            (
                miss.name.as_str(),
                miss.candidates.iter().map(String::as_str).collect(),
            )
        })
        .collect();
    assert_eq!(
        ambiguous,
        [
            (
                "OrderServiceTest#createsOrder",
                vec![
                    "com.example.shop.OrderServiceTest#createsOrder",
                    "com.example.shop.legacy.OrderServiceTest#createsOrder"
                ]
            ),
            (
                "test_cart.py::test_adds_item",
                vec![
                    "python/tests/legacy/test_cart.py::test_adds_item",
                    "python/tests/test_cart.py::test_adds_item"
                ]
            ),
        ]
    );
    assert!(
        report
            .notes
            .iter()
            .any(|note| note.contains("line 6") && note.contains("`timing`")),
        "{:?}",
        report.notes
    );
}

#[test]
fn every_common_spelling_of_a_test_name_matches_it() {
    let repository = shop();
    let spellings = [
        (
            "com.example.shop.OrderServiceTest#sendsConfirmationEmail",
            "com.example.shop.OrderServiceTest#sendsConfirmationEmail",
        ),
        (
            "com.example.shop.OrderServiceTest.sendsConfirmationEmail",
            "com.example.shop.OrderServiceTest#sendsConfirmationEmail",
        ),
        (
            "com.example.shop.OrderServiceTest::sendsConfirmationEmail",
            "com.example.shop.OrderServiceTest#sendsConfirmationEmail",
        ),
        (
            "com.example.shop.OrderServiceTest#appliesDiscount(int)[2]",
            "com.example.shop.OrderServiceTest#appliesDiscount",
        ),
        (
            "com.example.shop.OrderServiceTest.Refunds.refundsOrder",
            "com.example.shop.OrderServiceTest$Refunds#refundsOrder",
        ),
        (
            "OrderServiceTest$Refunds#refundsOrder",
            "com.example.shop.OrderServiceTest$Refunds#refundsOrder",
        ),
        (
            "python/tests/test_cart.py::test_quantity_limits[2]",
            "python/tests/test_cart.py::test_quantity_limits",
        ),
        (
            "tests/test_cart.py::TestCoupons::test_applies_coupon",
            "python/tests/test_cart.py::TestCoupons::test_applies_coupon",
        ),
        (
            "tests.test_cart.TestCoupons.test_applies_coupon",
            "python/tests/test_cart.py::TestCoupons::test_applies_coupon",
        ),
        (
            "crate::cache::tests::evicts_oldest",
            "rust/src/cache.rs::tests::evicts_oldest",
        ),
        (
            "shop::net::client::tests::binds_local_port",
            "rust/src/net/client.rs::tests::binds_local_port",
        ),
        (
            "net::client::tests::binds_local_port",
            "rust/src/net/client.rs::tests::binds_local_port",
        ),
        (
            "tests::parses_config",
            "rust/src/lib.rs::tests::parses_config",
        ),
        (
            "rust/src/net/client.rs::tests::formats_address",
            "rust/src/net/client.rs::tests::formats_address",
        ),
        (
            "checkout::end_to_end_order",
            "rust/tests/checkout.rs::end_to_end_order",
        ),
    ];
    let directory = tempfile::tempdir().expect("a temporary directory");
    let list = directory.path().join("flaky.txt");
    let text: String = spellings
        .iter()
        .map(|(spelling, _)| format!("{spelling}\n"))
        .collect();
    std::fs::write(&list, text).expect("writable");
    let report = label_from_flaky_list(&repository, &repository.catalogue(), &list)
        .expect("the list is readable");
    assert!(report.unmatched.is_empty(), "{:?}", report.unmatched);
    assert!(report.ambiguous.is_empty(), "{:?}", report.ambiguous);
    let labelled: BTreeSet<String> = flaky_ids(&repository, &report).into_keys().collect();
    let wanted: BTreeSet<String> = spellings.iter().map(|(_, id)| id.to_string()).collect();
    assert_eq!(labelled, wanted);
}

#[test]
fn annotations_label_the_tests_developers_marked_in_each_language() {
    let repository = shop();
    let report = label_from_annotations(&repository);
    assert_eq!(report.tests, 31);
    assert_eq!(
        flaky_ids(&repository, &report),
        expected(&[
            (&format!("{ORDER}#syncsInventory"), &[Category::Timeout]),
            (
                &format!("{INVENTORY}#chargesPaymentGateway"),
                &[Category::Network]
            ),
            (&format!("{CART}::test_checkout_with_payment_service"), &[]),
            (
                &format!("{CART}::TestCoupons::test_expires_coupon"),
                &[Category::Concurrency]
            ),
            (&format!("{CART}::test_recommendations_refresh"), &[]),
            (
                &format!("{CACHE}::expires_entries_concurrently"),
                &[Category::Concurrency]
            ),
            (
                &format!("{CACHE}::warms_up_on_start"),
                &[Category::Concurrency]
            ),
            (&format!("{CLIENT}::reconnects_after_drop"), &[]),
        ])
    );
    // Disabled and expected to fail for reasons other than flakiness: not flaky.
    for id in [
        format!("{ORDER}#exportsReport"),
        format!("{CART}::TestCoupons::test_rounds_total"),
    ] {
        assert!(
            !report.flaky.contains_key(&position(&repository, &id)),
            "{id}"
        );
    }
}

#[test]
fn markers_are_stripped_from_the_tokens_but_kept_in_the_code() {
    let repository = shop();
    let mut checked = 0;
    for test in repository.tests.iter().filter(|test| test.marks.is_flaky()) {
        let bag = TokenBag::from_code(Tokenizer::Code, test.test.language, &test.tokenised_code());
        for leak in ["flaky", "racy", "races", "flakytest", "reruns", "runs"] {
            assert!(
                !bag.contains(leak),
                "{} keeps `{leak}` in {:?}",
                test.test.id,
                test.tokenised_code()
            );
        }
        assert!(!bag.is_empty(), "{} lost all its tokens", test.test.id);
        checked += 1;
    }
    assert_eq!(checked, 8);
    // A skip without a flaky reason is not a marker and stays.
    let report = &repository.tests[position(&repository, &format!("{ORDER}#exportsReport"))];
    assert!(
        report
            .tokenised_code()
            .contains("@Disabled(\"needs a licence server\")")
    );
    // The code kept for showing the test is the code as written.
    let synced = &repository.tests[position(&repository, &format!("{ORDER}#syncsInventory"))];
    assert!(
        synced
            .test
            .code
            .contains("@Disabled(\"flaky: times out on the CI runners\")")
    );
}

fn runs(names: &[&str]) -> Vec<PathBuf> {
    names
        .iter()
        .map(|name| fixture(&format!("reports/{name}")))
        .collect()
}

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

fn all_sources(repository: &Repository) -> Vec<SourceReport> {
    let catalogue = repository.catalogue();
    vec![
        label_from_flaky_list(repository, &catalogue, &fixture("flaky-tests.txt"))
            .expect("the list is readable"),
        label_from_annotations(repository),
        label_from_junit(
            repository,
            &catalogue,
            &runs(&["run-1", "run-2", "run-3-gradle"]),
        )
        .expect("the reports are readable"),
    ]
}

#[test]
fn a_test_named_by_several_sources_is_one_flaky_test_with_their_categories() {
    let repository = shop();
    let labels = history::combine(&all_sources(&repository));
    assert_eq!(labels.len(), 15);
    assert_eq!(
        labels[&position(&repository, &format!("{ORDER}#syncsInventory"))],
        FlakyReport {
            categories: BTreeSet::from([Category::AsyncWait, Category::Timeout]),
            sources: BTreeSet::from([Source::FlakyList, Source::Annotations]),
        }
    );
    assert_eq!(
        labels[&position(&repository, &format!("{INVENTORY}#connectsToWarehouse"))].sources,
        BTreeSet::from([Source::FlakyList, Source::JunitXml])
    );
}

fn settings() -> BuildSettings {
    BuildSettings {
        tokenizer: Tokenizer::Code,
        dims: Dims::Eps(0.33),
        seed: 42,
        description: "test".to_string(),
    }
}

#[test]
fn the_index_holds_every_test_of_the_repository_with_its_label() {
    let repository = shop();
    let labels = history::combine(&all_sources(&repository));
    let plan = IndexPlan {
        settings: settings(),
        previous: None,
        update: false,
        keep_manual: true,
    };
    let (index, summary) = history::build_index(&repository, &labels, &plan);
    assert_eq!((summary.entries, summary.flaky), (31, 15));
    assert_eq!(summary.repository_tests, 31);
    for entry in index.entries() {
        assert_eq!(entry.origin(), Origin::History);
        assert_eq!(entry.project(), "shop");
        assert!(entry.path().is_some(), "{}", entry.id());
        assert_eq!(entry.code().is_some(), entry.is_flaky(), "{}", entry.id());
        // No source names the others: they are unlabelled, not stable.
        let expected = if entry.is_flaky() {
            Label::Flaky
        } else {
            Label::Unlabelled
        };
        assert_eq!(entry.label(), expected, "{}", entry.id());
    }
    let synced = index.entry(
        index
            .position(&format!("{ORDER}#syncsInventory"))
            .expect("indexed"),
    );
    assert_eq!(synced.source(), "flaky-list+annotations");
    assert_eq!(
        synced.categories(),
        [Category::AsyncWait, Category::Timeout]
    );
    assert_eq!(index.params().tokenizer, Tokenizer::Code);
    assert_eq!(index.params().projection.seed, 42);
    // A saved index loads back unchanged.
    let directory = tempfile::tempdir().expect("a temporary directory");
    let path = directory.path().join(".flakesense/index");
    index.save(&path).expect("writable");
    let loaded = Index::load(&path).expect("readable");
    let entries = |index: &Index| {
        index
            .entries()
            .map(|entry| entry.to_entry())
            .collect::<Vec<Entry>>()
    };
    assert_eq!(entries(&loaded), entries(&index));
}

/// An index as the editor leaves it: built from the annotations, then a test marked flaky by hand
/// and a hand-marked test that has since been deleted.
fn edited_index(repository: &Repository) -> Index {
    let labels = history::combine(&[label_from_annotations(repository)]);
    let plan = IndexPlan {
        settings: settings(),
        previous: None,
        update: false,
        keep_manual: true,
    };
    let (index, _) = history::build_index(repository, &labels, &plan);
    let mut writer = IndexWriter::from_index(&index);
    assert!(writer.relabel(
        &format!("{ORDER}#createsOrder"),
        Label::Flaky,
        vec![Category::Time],
        Origin::Manual
    ));
    assert!(writer.relabel(
        &format!("{CACHE}::expires_entries_concurrently"),
        Label::Stable,
        vec![],
        Origin::Manual
    ));
    let code = "@Test void vanished() { new Socket(\"a\", 1); }";
    let gone = Entry::new(flakesense::index::NewEntry {
        id: "com.example.shop.GoneTest#vanished",
        project: "shop",
        source: "editor",
        language: Language::Java,
        label: Label::Flaky,
        categories: &[Category::Network],
        origin: Origin::Manual,
        path: Some("java/src/test/java/com/example/shop/GoneTest.java"),
        code: Some(code),
    });
    let bag = index.bag(Language::Java, code);
    writer.upsert(gone, &bag);
    writer.finish()
}

fn label_of(index: &Index, id: &str) -> (Label, Vec<Category>, Origin) {
    let entry = index.entry(index.position(id).unwrap_or_else(|| panic!("no {id}")));
    (entry.label(), entry.categories(), entry.origin())
}

#[test]
fn an_update_merges_new_labels_and_keeps_hand_labels() {
    let repository = shop();
    let previous = edited_index(&repository);
    let list = label_from_flaky_list(
        &repository,
        &repository.catalogue(),
        &fixture("flaky-tests.txt"),
    )
    .expect("the list is readable");
    let labels = history::combine(&[list]);
    let plan = IndexPlan {
        settings: settings(),
        previous: Some(&previous),
        update: true,
        keep_manual: true,
    };
    let (index, summary) = history::build_index(&repository, &labels, &plan);
    // Set by hand: kept, including on a test the repository no longer has.
    assert_eq!(
        label_of(&index, &format!("{ORDER}#createsOrder")),
        (Label::Flaky, vec![Category::Time], Origin::Manual)
    );
    assert_eq!(
        label_of(&index, &format!("{CACHE}::expires_entries_concurrently")),
        (Label::Stable, vec![], Origin::Manual)
    );
    assert_eq!(
        label_of(&index, "com.example.shop.GoneTest#vanished"),
        (Label::Flaky, vec![Category::Network], Origin::Manual)
    );
    // Flaky from the earlier annotations, and merged with the list's categories.
    assert_eq!(
        label_of(&index, &format!("{CART}::test_recommendations_refresh")),
        (Label::Flaky, vec![], Origin::History)
    );
    assert_eq!(
        label_of(&index, &format!("{ORDER}#syncsInventory")),
        (
            Label::Flaky,
            vec![Category::AsyncWait, Category::Timeout],
            Origin::History
        )
    );
    // New from the list.
    assert_eq!(
        label_of(&index, &format!("{CACHE}::refreshes_in_background")),
        (Label::Flaky, vec![Category::Concurrency], Origin::History)
    );
    assert_eq!(summary.manual_kept, 3);
    assert_eq!(summary.carried_over, 1);
    assert_eq!(summary.entries, 32);
    // The update keeps the previous index's embedding settings.
    assert_eq!(
        index.params().projection.dims,
        previous.params().projection.dims
    );
}

#[test]
fn overriding_hand_labels_lets_the_sources_decide() {
    let repository = shop();
    let previous = edited_index(&repository);
    let labels = history::combine(&[label_from_annotations(&repository)]);
    let plan = IndexPlan {
        settings: settings(),
        previous: Some(&previous),
        update: true,
        keep_manual: false,
    };
    let (index, summary) = history::build_index(&repository, &labels, &plan);
    assert_eq!(
        label_of(&index, &format!("{ORDER}#createsOrder")),
        (Label::Unlabelled, vec![], Origin::History)
    );
    assert_eq!(
        label_of(&index, &format!("{CACHE}::expires_entries_concurrently")),
        (Label::Flaky, vec![Category::Concurrency], Origin::History)
    );
    assert_eq!(summary.manual_overridden, 2);
    assert_eq!(
        summary.manual_kept, 1,
        "the deleted test's entry is carried over as it is"
    );
}

#[test]
fn a_rebuild_keeps_hand_labels_but_forgets_earlier_sources() {
    let repository = shop();
    let previous = edited_index(&repository);
    let list = label_from_flaky_list(
        &repository,
        &repository.catalogue(),
        &fixture("flaky-tests.txt"),
    )
    .expect("the list is readable");
    let labels = history::combine(&[list]);
    let plan = IndexPlan {
        settings: settings(),
        previous: Some(&previous),
        update: false,
        keep_manual: true,
    };
    let (index, summary) = history::build_index(&repository, &labels, &plan);
    assert_eq!(
        label_of(&index, &format!("{ORDER}#createsOrder")),
        (Label::Flaky, vec![Category::Time], Origin::Manual)
    );
    assert!(
        index
            .position("com.example.shop.GoneTest#vanished")
            .is_some()
    );
    // Only annotated, and annotations were not a source this time.
    assert_eq!(
        label_of(&index, &format!("{CART}::test_recommendations_refresh")),
        (Label::Unlabelled, vec![], Origin::History)
    );
    assert_eq!(summary.flaky, 5 + 2);
}
