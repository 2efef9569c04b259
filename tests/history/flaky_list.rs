//! A list of flaky tests as a source of history: each line matched to a test of the repository,
//! whatever common spelling of its name it uses, and what it cannot match reported.

use std::collections::BTreeSet;

use flakesense::category::Category;
use flakesense::history::label_from_flaky_list;

use crate::{CACHE, CART, CLIENT, INVENTORY, ORDER, expected, fixture, flaky_ids, shop};

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
