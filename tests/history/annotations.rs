//! Annotations and markers in the code as a source of history: the tests developers marked
//! flaky in each language, and the markers kept out of the tokens the model learns from.

use flakesense::category::Category;
use flakesense::embed::{TokenBag, Tokenizer};
use flakesense::history::label_from_annotations;

use crate::{CACHE, CART, CLIENT, INVENTORY, ORDER, expected, flaky_ids, position, shop};

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
