//! Building the index from the history: the sources combined into one label per test, a first
//! build, and an update, an override and a rebuild over an index with hand labels.

use std::collections::BTreeSet;

use flakesense::category::Category;
use flakesense::embed::Tokenizer;
use flakesense::history::{
    self, FlakyReport, IndexPlan, Repository, Source, SourceReport, label_from_annotations,
    label_from_flaky_list, label_from_junit,
};
use flakesense::index::{BuildSettings, Dims, Entry, Index, IndexWriter, Label, Origin};
use flakesense::language::Language;

use crate::{CACHE, CART, INVENTORY, ORDER, fixture, position, runs, shop};

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
    index
        .save(flakesense::files::write::Place::Named, &path)
        .expect("writable");
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
