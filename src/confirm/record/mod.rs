//! `--record`: the verdicts become labels of the project index, `.flakesense/index`, so that the
//! editor and `check` learn from them at once.
//!
//! [`record`] is the only place `confirm` writes. It goes through the label store
//! ([`crate::labels::record`]), as the editor's "Mark as flaky" does: under the index's lock,
//! from the index as it is on disk, so that no label another process records is lost.

use std::path::Path;
use std::path::PathBuf;

use anyhow::Result;

use super::verdict::{Label, LabelKind};
use crate::index::{self, Origin};
use crate::labels::{self, TestLabel};

/// What was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recorded {
    pub index: PathBuf,
    pub flaky: usize,
    pub stable: usize,
    /// A damaged index met on the way, moved aside.
    pub note: Option<String>,
}

/// Writes the labels into the project index of the workspace at `root`, creating it when
/// missing. A label replaces the test's earlier one. Confirmed labels are kept as labels given
/// by hand are (`Origin::Manual`): a rerun of `train --repo` must not undo what was run and
/// seen.
pub fn record(root: &Path, labels: &[Label]) -> Result<Recorded> {
    let (mut flaky, mut stable) = (0, 0);
    let test_labels: Vec<TestLabel> = labels
        .iter()
        .map(|label| {
            let (kind, categories) = match &label.kind {
                LabelKind::Flaky { category, .. } => {
                    flaky += 1;
                    (index::Label::Flaky, category.iter().copied().collect())
                }
                LabelKind::Stable { .. } => {
                    stable += 1;
                    (index::Label::Stable, Vec::new())
                }
            };
            TestLabel {
                test: label.test.clone(),
                path: label.path.clone(),
                label: kind,
                categories,
                origin: Origin::Manual,
                source: label.kind.source(),
            }
        })
        .collect();
    let recorded = labels::record(root, &test_labels)?;
    let note = recorded.moved_aside.map(|(error, moved_to)| {
        format!(
            "the project index was damaged ({error}); it was moved to {} and a new one started",
            moved_to.display()
        )
    });
    Ok(Recorded {
        index: recorded.path,
        flaky,
        stable,
        note,
    })
}
