//! The record rule: a stored label is never lost to weaker evidence.

use super::*;
use crate::category::Category;
use crate::extract::{TestMethod, extract_tests};
use crate::index::Index;
use crate::language::Language;

fn test_method() -> TestMethod {
    let source = "def test_reads():\n    assert read() == 1\n";
    extract_tests(Language::Python, "test_a.py", source)
        .tests
        .remove(0)
}

fn label(kind: LabelKind) -> Label {
    Label {
        test: test_method(),
        path: "test_a.py".to_string(),
        kind,
    }
}

fn flaky(category: Option<Category>) -> LabelKind {
    LabelKind::Flaky {
        category,
        evidence: "failed 3 of 3 runs offline".to_string(),
    }
}

/// The stored entry's label, categories and source.
fn stored(root: &Path) -> (index::Label, Vec<Category>, String) {
    let index = Index::load(&root.join(".flakesense/index")).unwrap();
    let entry = index.entry(index.position("test_a.py::test_reads").unwrap());
    (
        entry.label(),
        entry.categories(),
        entry.source().to_string(),
    )
}

/// A label as a person gives it in the editor.
fn by_hand(root: &Path, label: index::Label, categories: Vec<Category>) {
    labels::record(
        root,
        &[TestLabel {
            test: test_method(),
            path: "test_a.py".to_string(),
            label,
            categories,
            origin: Origin::Manual,
            source: "editor".to_string(),
        }],
    )
    .unwrap();
}

#[test]
fn passing_runs_never_replace_a_flaky_label() {
    let root = tempfile::tempdir().unwrap();
    by_hand(root.path(), index::Label::Flaky, vec![Category::Time]);
    let recorded = record(
        root.path(),
        &[label(LabelKind::Stable { runs: 100 })],
        Vec::new(),
    )
    .unwrap();
    assert_eq!((recorded.flaky, recorded.stable), (0, 0));
    let (id, reason) = &recorded.not_recorded[0];
    assert_eq!(id, "test_a.py::test_reads");
    assert!(
        reason.contains("labelled flaky (editor) already"),
        "{reason}"
    );
    assert_eq!(
        stored(root.path()),
        (
            index::Label::Flaky,
            vec![Category::Time],
            "editor".to_string()
        )
    );
}

#[test]
fn a_confirmed_failure_replaces_a_stable_label() {
    let root = tempfile::tempdir().unwrap();
    by_hand(root.path(), index::Label::Stable, Vec::new());
    let recorded = record(
        root.path(),
        &[label(flaky(Some(Category::Network)))],
        Vec::new(),
    )
    .unwrap();
    assert_eq!(recorded.flaky, 1);
    assert_eq!(
        stored(root.path()),
        (
            index::Label::Flaky,
            vec![Category::Network],
            "confirm: failed 3 of 3 runs offline".to_string()
        )
    );
}

#[test]
fn a_flaky_label_only_gains_a_category_it_lacks() {
    let root = tempfile::tempdir().unwrap();
    by_hand(root.path(), index::Label::Flaky, vec![Category::Time]);
    // No category: nothing to add, the stored label stays.
    let recorded = record(root.path(), &[label(flaky(None))], Vec::new()).unwrap();
    assert_eq!(recorded.flaky, 0);
    assert_eq!(stored(root.path()).1, [Category::Time]);
    let recorded = record(
        root.path(),
        &[label(flaky(Some(Category::Network)))],
        Vec::new(),
    )
    .unwrap();
    assert_eq!(recorded.flaky, 1);
    let (label, categories, _) = stored(root.path());
    assert_eq!(label, index::Label::Flaky);
    assert!(categories.contains(&Category::Time) && categories.contains(&Category::Network));
}

#[test]
fn a_stable_label_is_renewed_only_by_more_runs() {
    let root = tempfile::tempdir().unwrap();
    record(
        root.path(),
        &[label(LabelKind::Stable { runs: 80 })],
        Vec::new(),
    )
    .unwrap();
    let recorded = record(
        root.path(),
        &[label(LabelKind::Stable { runs: 60 })],
        Vec::new(),
    )
    .unwrap();
    assert_eq!(recorded.stable, 0);
    assert_eq!(stored(root.path()).2, "confirm: not flaky after 80 runs");
    record(
        root.path(),
        &[label(LabelKind::Stable { runs: 100 })],
        Vec::new(),
    )
    .unwrap();
    assert_eq!(stored(root.path()).2, "confirm: not flaky after 100 runs");
    // A person's word is not a count of runs: it stays.
    by_hand(root.path(), index::Label::Stable, Vec::new());
    record(
        root.path(),
        &[label(LabelKind::Stable { runs: 500 })],
        Vec::new(),
    )
    .unwrap();
    assert_eq!(stored(root.path()).2, "editor");
}

#[test]
fn tests_without_a_label_are_reported_and_nothing_is_written() {
    let root = tempfile::tempdir().unwrap();
    let refused = vec![(
        "test_a.py::test_reads".to_string(),
        "12 passing runs; a stable label needs 59".to_string(),
    )];
    let recorded = record(root.path(), &[], refused.clone()).unwrap();
    assert_eq!(recorded.not_recorded, refused);
    assert!(!root.path().join(".flakesense/index").exists());
}
