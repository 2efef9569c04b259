//! An entry of an index: what it says about its test (flaky, stable or unlabelled, who said so),
//! the owned form a writer builds from, and the form read where it lies.

use serde::{Deserialize, Serialize};

use super::Index;
use super::layout::{self, EntryRecord, kind};
use crate::category::Category;
use crate::dataset::LabeledTest;
use crate::language::Language;

/// Where a label came from. Labels given by hand are kept when a history is re-imported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Origin {
    /// A labelled research or mined dataset.
    Dataset,
    /// A project's own flaky history: a flaky list, annotations, test reports.
    History,
    /// Marked by a user in the editor.
    Manual,
}

impl Origin {
    const ALL: [Origin; 3] = [Origin::Dataset, Origin::History, Origin::Manual];

    pub(super) fn code(self) -> u8 {
        self as u8
    }

    pub(super) fn from_code(code: u8) -> Option<Origin> {
        Origin::ALL.get(usize::from(code)).copied()
    }
}

/// What an entry says about its test.
///
/// Only flaky and stable entries vote on a test's verdict; unlabelled ones are still similar
/// tests to show and count among the workspace's tests, but "named by no source" is not evidence
/// of stability: a test missing from a flaky list, or a mined dataset's "not flaky", may be
/// flaky all the same.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Label {
    /// Known to be flaky: a person, a flaky list, a marker, test reports or a dataset said so.
    Flaky,
    /// Known not to be flaky: a person marked it so, or a list of stable tests names it.
    Stable,
    /// Seen, but named by no source.
    Unlabelled,
}

impl Label {
    const ALL: [Label; 3] = [Label::Flaky, Label::Stable, Label::Unlabelled];

    /// Whether an entry with this label votes on its neighbours' verdicts.
    pub fn votes(self) -> bool {
        self != Label::Unlabelled
    }

    pub fn is_flaky(self) -> bool {
        self == Label::Flaky
    }

    /// The word outputs use: `flaky`, `stable`, `unlabelled`.
    pub fn name(self) -> &'static str {
        match self {
            Label::Flaky => "flaky",
            Label::Stable => "stable",
            Label::Unlabelled => "unlabelled",
        }
    }

    pub(super) fn code(self) -> u8 {
        self as u8
    }

    pub(super) fn from_code(code: u8) -> Option<Label> {
        Label::ALL.get(usize::from(code)).copied()
    }
}

/// A labelled test as an index is built from: the owned form of an entry.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub id: String,
    pub project: String,
    pub source: String,
    pub language: Language,
    pub label: Label,
    /// In the taxonomy's order, each once.
    pub categories: Vec<Category>,
    pub origin: Origin,
    /// The file the test lives in, relative to the workspace root, for tests of the user's own project.
    pub path: Option<String>,
    /// The test's code, kept for flaky tests so a user can read what a neighbour looks like.
    pub code: Option<String>,
    /// For a flaky test, the ids of the catalogue's risks found in its code (strongest evidence
    /// first is not implied: catalogue order), so that a warning can show the flaky tests that
    /// share its signal. Empty for other tests and for entries of format 1 and 2 files.
    pub signals: Vec<String>,
}

/// What an entry is made from: see [`Entry::new`].
#[derive(Debug, Clone)]
pub struct NewEntry<'a> {
    pub id: &'a str,
    pub project: &'a str,
    pub source: &'a str,
    pub language: Language,
    pub label: Label,
    pub categories: &'a [Category],
    pub origin: Origin,
    pub path: Option<&'a str>,
    /// The test's code. A flaky test's is kept, with the catalogue's risks found in it; other
    /// tests keep none.
    pub code: Option<&'a str>,
}

/// The longest code kept in an entry for showing a flaky neighbour to a user.
pub const MAX_KEPT_CODE: usize = 4000;

/// A test's code as an entry keeps it: whole up to [`MAX_KEPT_CODE`] bytes, else cut there and
/// marked with `...`.
pub fn kept_code(code: &str) -> String {
    if code.len() <= MAX_KEPT_CODE {
        return code.to_string();
    }
    let mut end = MAX_KEPT_CODE;
    while !code.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}\n...", &code[..end])
}

/// Categories in the taxonomy's order, each once, as an entry holds them.
pub(super) fn normalised_categories(
    categories: impl IntoIterator<Item = Category>,
) -> Vec<Category> {
    let mut categories: Vec<Category> = categories.into_iter().collect();
    categories.sort_unstable();
    categories.dedup();
    categories
}

impl Entry {
    /// The one constructor of an entry: what a label keeps of its test. A flaky test keeps its
    /// code (cut at [`MAX_KEPT_CODE`]) and the ids of the catalogue's risks in it; a stable or
    /// unlabelled one keeps neither. Categories go in the taxonomy's order.
    pub fn new(test: NewEntry<'_>) -> Entry {
        let kept = test.code.filter(|_| test.label.is_flaky());
        let signals = kept.map_or_else(Vec::new, |code| {
            crate::signals::detect(test.language, code)
                .risks
                .iter()
                .map(|hit| hit.id.to_string())
                .collect()
        });
        Entry {
            id: test.id.to_string(),
            project: test.project.to_string(),
            source: test.source.to_string(),
            language: test.language,
            label: test.label,
            categories: normalised_categories(test.categories.iter().copied()),
            origin: test.origin,
            path: test.path.map(str::to_string),
            code: kept.map(kept_code),
            signals,
        }
    }

    /// The entry of a test from a labelled dataset, keeping its code (and signals) if flaky and
    /// `keep_code` says so. A row's "not flaky" becomes `not_flaky`: stable where the dataset
    /// is the contrast class of FLAST's vote, unlabelled where it means "not known to be flaky"
    /// beside a signal prior.
    pub fn from_labeled(test: &LabeledTest, keep_code: bool, not_flaky: Label) -> Entry {
        Entry::new(NewEntry {
            id: &test.id,
            project: &test.project,
            source: &test.source,
            language: test.language,
            label: if test.flaky { Label::Flaky } else { not_flaky },
            categories: &test.categories,
            origin: Origin::Dataset,
            path: None,
            code: keep_code.then_some(test.code.as_str()),
        })
    }

    pub fn is_flaky(&self) -> bool {
        self.label.is_flaky()
    }
}

/// One entry of an index, read where it lies.
#[derive(Clone, Copy)]
pub struct EntryRef<'a> {
    pub(super) index: &'a Index,
    pub(super) position: usize,
    pub(super) record: EntryRecord,
}

impl std::fmt::Debug for EntryRef<'_> {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("EntryRef")
            .field("position", &self.position)
            .field("id", &self.id())
            .field("label", &self.label())
            .finish()
    }
}

impl<'a> EntryRef<'a> {
    fn text(&self, reference: (u32, u32)) -> Option<&'a str> {
        let strings = self.index.section(kind::STRINGS);
        // Checked when the index was opened: in bounds, on character boundaries of UTF-8.
        EntryRecord::range(reference)
            .map(|range| std::str::from_utf8(&strings[range]).unwrap_or(""))
    }

    /// Where the entry is in its index: what [`Index::nearest`] returns.
    pub fn position(&self) -> usize {
        self.position
    }

    pub fn id(&self) -> &'a str {
        self.text(self.record.id).unwrap_or("")
    }

    pub fn project(&self) -> &'a str {
        self.text(self.record.project).unwrap_or("")
    }

    pub fn source(&self) -> &'a str {
        self.text(self.record.source).unwrap_or("")
    }

    pub fn path(&self) -> Option<&'a str> {
        self.text(self.record.path)
    }

    /// The code kept for a flaky test.
    pub fn code(&self) -> Option<&'a str> {
        self.text(self.record.code)
    }

    pub fn language(&self) -> Language {
        Language::ALL[usize::from(self.record.language)]
    }

    pub fn label(&self) -> Label {
        Label::from_code(self.record.label).unwrap_or(Label::Unlabelled)
    }

    pub fn is_flaky(&self) -> bool {
        self.label().is_flaky()
    }

    pub fn origin(&self) -> Origin {
        Origin::from_code(self.record.origin).unwrap_or(Origin::Dataset)
    }

    /// In the taxonomy's order.
    pub fn categories(&self) -> Vec<Category> {
        Category::ALL
            .into_iter()
            .filter(|&category| self.record.categories & (1 << category as u16) != 0)
            .collect()
    }

    /// For a flaky test, the ids of the catalogue's risks found in its code, in catalogue order;
    /// none for others, and for entries of format 1 and 2 files.
    pub fn signals(&self) -> Vec<&'a str> {
        let entry_signals = self.index.section(kind::ENTRY_SIGNALS);
        let (start, len) = self.record.signals;
        (0..usize::from(len))
            .map(|offset| {
                let signal = layout::le_u16(entry_signals, (start as usize + offset) * 2) as usize;
                self.index.signal_id(signal)
            })
            .collect()
    }

    /// The owned form, for a writer.
    pub fn to_entry(&self) -> Entry {
        Entry {
            id: self.id().to_string(),
            project: self.project().to_string(),
            source: self.source().to_string(),
            language: self.language(),
            label: self.label(),
            categories: self.categories(),
            origin: self.origin(),
            path: self.path().map(str::to_string),
            code: self.code().map(str::to_string),
            signals: self.signals().into_iter().map(str::to_string).collect(),
        }
    }
}
