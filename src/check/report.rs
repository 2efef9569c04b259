//! What a check found: the findings, the files skipped and the counts, as every format reads them.

use crate::analysis::Severity;
use crate::category::Category;
use crate::language::Language;
use crate::predict::Neighbor;
use crate::signals::{MechanismHit, SignalHit};

/// The settings a check ran with.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// A test is flagged when its score exceeds this (FLAST's sigma).
    pub sigma: f64,
    pub k: usize,
    /// At or above this score a finding is a warning, below it a note (`warning-threshold`).
    pub warning: f64,
    pub changes: Changes,
}

/// Which tests were judged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Changes {
    /// Every test of the paths.
    All,
    /// Tests the staged change adds or modifies.
    Staged,
    /// Tests added or modified since the branch point of `reference` and HEAD.
    DiffBase {
        reference: String,
        merge_base: String,
    },
}

/// A test flagged as likely flaky.
#[derive(Debug, Clone)]
pub struct Finding {
    /// Relative to the report root (the repository), `/`-separated.
    pub path: String,
    /// As a person in the current directory would type it.
    pub display_path: String,
    pub language: Language,
    pub id: String,
    pub name: String,
    /// Where the test's name starts and ends.
    pub start: Position,
    pub end: Position,
    pub score: f64,
    pub severity: Severity,
    pub category: Option<Category>,
    /// The whole mechanisms a warning rests on, with their parts and lines.
    pub mechanisms: Vec<MechanismHit>,
    /// Catalogue signals that speak for flakiness, strongest first, with the line of each.
    pub signals: Vec<SignalHit>,
    /// Tokens shared with the flaky neighbours, most telling first.
    pub shared_tokens: Vec<String>,
    /// The k nearest labelled tests, nearest first.
    pub neighbors: Vec<Neighbor>,
    /// The nearest known flaky tests with the strongest signal's risk (see
    /// [`crate::predict::Prediction::examples`]).
    pub examples: Vec<Neighbor>,
    /// The hint at a fix ([`crate::analysis::hint`]).
    pub hint: String,
}

/// A one-based line and column; columns counted both in characters (terminals, JSON, GitHub)
/// and in UTF-16 code units (SARIF's default column kind).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Position {
    pub line: u32,
    pub column: u32,
    pub column_utf16: u32,
}

/// Why a file was not judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SkipKind {
    NotSource,
    TooLarge,
    Binary,
    NotUtf8,
    SymlinkLoop,
    /// Analysing the file reached a bound on the work one file may take (parsing time, nesting).
    TooComplex,
    /// A symbolic link to nothing.
    BrokenSymlink,
    /// A symbolic link out of the tree: the walk never leaves it.
    SymlinkOutside,
    /// The file or directory could not be read: an IO error, which fails the check.
    Unreadable,
}

impl SkipKind {
    pub(super) fn is_error(self) -> bool {
        self == SkipKind::Unreadable
    }
}

#[derive(Debug, Clone)]
pub struct SkippedFile {
    /// Relative to the report root, `/`-separated, like a finding's path.
    pub path: String,
    /// As a person in the current directory would type it.
    pub display_path: String,
    pub kind: SkipKind,
    pub reason: String,
}

/// Counts over the whole check.
#[derive(Debug, Clone, Default)]
pub struct Summary {
    /// Files whose tests were judged.
    pub files: usize,
    /// Tests judged.
    pub tests: usize,
    /// Tests in changed files that the change left as they were (`--staged`, `--diff-base`).
    pub unchanged_tests: usize,
    pub flagged: usize,
    pub skipped: Vec<SkippedFile>,
}

impl Summary {
    pub fn errors(&self) -> usize {
        self.skipped
            .iter()
            .filter(|skipped| skipped.kind.is_error())
            .count()
    }
}

/// Everything a format needs.
#[derive(Debug, Clone)]
pub struct Report {
    pub settings: Settings,
    pub findings: Vec<Finding>,
    pub summary: Summary,
}
