//! `--record`: the verdicts become labels of the project index, `.flakesense/index`, so that the
//! editor and `check` learn from them at once.
//!
//! [`record`] is the only place `confirm` writes. It goes through the label store
//! ([`crate::labels::record_with`]), as the editor's "Mark as flaky" does: under the index's
//! lock, from the index as it is on disk, so that no label another process records is lost. A
//! label already stored is never replaced by weaker evidence ([`decide`]).

use std::path::Path;
use std::path::PathBuf;

use anyhow::Result;

use super::verdict::{Label, LabelKind};
use crate::index::{self, EntryRef, Origin};
use crate::labels::{self, TestLabel};

/// What was written, and what was not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recorded {
    pub index: PathBuf,
    pub flaky: usize,
    pub stable: usize,
    /// Tests that got no label, by id, and why (too few runs, a label already stored).
    pub not_recorded: Vec<(String, String)>,
    /// A damaged index met on the way, moved aside.
    pub note: Option<String>,
}

/// Writes the labels into the project index of the workspace at `root`, creating it when
/// missing; `refused` are the tests whose verdicts give no label, with the reason, reported with
/// those [`decide`] keeps. Confirmed labels are kept as labels given by hand are
/// (`Origin::Manual`): a rerun of `train --repo` must not undo what was run and seen.
pub fn record(root: &Path, labels: &[Label], refused: Vec<(String, String)>) -> Result<Recorded> {
    let test_labels: Vec<TestLabel> = labels.iter().map(test_label).collect();
    let mut kept: Vec<(String, String)> = Vec::new();
    let recorded = labels::record_with(
        root,
        &test_labels,
        |position, label, existing| match decide(&labels[position].kind, label, existing) {
            Ok(label) => Some(label),
            Err(reason) => {
                kept.push((label.test.id.clone(), reason));
                None
            }
        },
    )?;
    let (mut flaky, mut stable) = (0, 0);
    for (label, written) in labels.iter().zip(&recorded.written) {
        match (&label.kind, written) {
            (LabelKind::Flaky { .. }, true) => flaky += 1,
            (LabelKind::Stable { .. }, true) => stable += 1,
            _ => {}
        }
    }
    let note = recorded.moved_aside.map(|(error, moved_to)| {
        format!(
            "the project index was damaged ({error}); it was moved to {} and a new one started",
            moved_to.display()
        )
    });
    let mut not_recorded = refused;
    not_recorded.extend(kept);
    Ok(Recorded {
        index: recorded.path,
        flaky,
        stable,
        not_recorded,
        note,
    })
}

fn test_label(label: &Label) -> TestLabel {
    let (kind, categories) = match &label.kind {
        LabelKind::Flaky { category, .. } => {
            (index::Label::Flaky, category.iter().copied().collect())
        }
        LabelKind::Stable { .. } => (index::Label::Stable, Vec::new()),
    };
    TestLabel {
        test: label.test.clone(),
        path: label.path.clone(),
        label: kind,
        categories,
        origin: Origin::Manual,
        source: label.kind.source(),
    }
}

/// The label to write over the test's stored entry, or why the entry stays as it is:
///
/// - no entry, or an unlabelled one: the new label;
/// - flaky over stable: a failure seen on this code outweighs passing runs and opinions;
/// - stable over flaky: never, however many runs passed;
/// - flaky over flaky: only a category the entry lacks is added (its own are kept);
/// - stable over stable: only a confirmation of more runs than the stored one replaces it.
pub fn decide(
    kind: &LabelKind,
    label: &TestLabel,
    existing: Option<EntryRef<'_>>,
) -> Result<TestLabel, String> {
    let Some(existing) = existing.filter(|entry| entry.label() != index::Label::Unlabelled) else {
        return Ok(label.clone());
    };
    let stored = || format!("{} ({})", existing.label().name(), existing.source());
    match (existing.label(), kind) {
        (index::Label::Stable, LabelKind::Flaky { .. }) => Ok(label.clone()),
        (index::Label::Flaky, LabelKind::Stable { .. }) => Err(format!(
            "labelled {} already: passing runs do not undo a failure seen",
            stored()
        )),
        (index::Label::Flaky, LabelKind::Flaky { category, .. }) => {
            let mut categories = existing.categories();
            match category {
                Some(category) if !categories.contains(category) => {
                    categories.push(*category);
                    categories.sort();
                    Ok(TestLabel {
                        categories,
                        ..label.clone()
                    })
                }
                _ => Err(format!("labelled {} already", stored())),
            }
        }
        (_, LabelKind::Stable { runs }) => match confirmed_stable_runs(existing.source()) {
            Some(before) if before < *runs => Ok(label.clone()),
            _ => Err(format!("labelled {} already", stored())),
        },
        (_, LabelKind::Flaky { .. }) => Ok(label.clone()),
    }
}

/// The runs of a stable label `confirm` recorded (`confirm: not flaky after 100 runs`).
fn confirmed_stable_runs(source: &str) -> Option<u32> {
    source
        .strip_prefix("confirm: not flaky after ")?
        .strip_suffix(" runs")?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests;
