//! `--record`: the verdicts become labels of the project index, `.flakesense/index`, so that the
//! editor and `check` learn from them at once.
//!
//! [`record`] is the only place `confirm` writes. It goes through the index write path the
//! editor's "Mark as flaky" uses today ([`workspace`] and [`crate::index`]); when the project
//! index gets its locked label store, this function alone changes.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use super::verdict::{Label, LabelKind};
use crate::index::{Entry, Index, Origin, kept_code};
use crate::workspace::{self, ProjectIndex};

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
    let path = workspace::index_path(root);
    let mut note = None;
    let mut index = match workspace::load_project_index(root) {
        ProjectIndex::Missing => Index::empty(workspace::new_index_params()),
        ProjectIndex::Loaded(index) => *index,
        ProjectIndex::Corrupt { error, moved_to } => {
            note = Some(format!(
                "the project index was damaged ({error}); it was moved to {} and a new one started",
                moved_to.display()
            ));
            Index::empty(workspace::new_index_params())
        }
        ProjectIndex::Unusable(error) => {
            bail!("cannot record into {}: {error}", path.display())
        }
    };
    let project = root.file_name().map_or_else(
        || "workspace".to_string(),
        |name| name.to_string_lossy().into_owned(),
    );
    let (mut flaky, mut stable) = (0, 0);
    for label in labels {
        let (is_flaky, categories) = match &label.kind {
            LabelKind::Flaky { category, .. } => {
                flaky += 1;
                (true, category.iter().copied().collect())
            }
            LabelKind::Stable { .. } => {
                stable += 1;
                (false, Vec::new())
            }
        };
        let entry = Entry {
            id: label.id.clone(),
            project: project.clone(),
            source: label.kind.source(),
            language: label.language,
            flaky: is_flaky,
            categories,
            origin: Origin::Manual,
            path: Some(label.path.clone()),
            code: is_flaky.then(|| kept_code(&label.code)),
        };
        let bag = index.bag(label.language, &label.code);
        index.upsert(entry, &bag);
    }
    index
        .save(&path)
        .with_context(|| format!("cannot save {}", path.display()))?;
    Ok(Recorded {
        index: path,
        flaky,
        stable,
        note,
    })
}
