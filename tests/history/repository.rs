//! Reading a repository: every test of each language is collected, git-ignored files are
//! skipped, and Python tests are found as pytest's settings collect them.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use flakesense::history;
use flakesense::language::Language;

use crate::shop;

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
