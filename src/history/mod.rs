//! Learning from a repository's own flaky history: every test of the repository, labelled flaky
//! from one or more sources, becomes the project index that the language server and
//! `flakesense check` consult beside the shipped models.
//!
//! The stages, in the order `flakesense train --repo` runs them:
//!
//! 1. [`find_test_files`] and [`read_repository`] (`repository.rs`): the Java, Python and Rust files of the
//!    repository (`.gitignore` and `flakesense.toml` excludes honoured), their tests, and the
//!    flakiness markers in each test ([`annotations`]), which never reach the tokens.
//! 2. One [`SourceReport`] per source (`sources.rs`): a [`flaky_list`], the [`annotations`], [`junit`] reports.
//!    Names are matched to the tests by [`names`]; names matching nothing or several tests are
//!    reported, never guessed.
//! 3. [`combine`]: a test is flaky when any source says so, with the union of the categories
//!    the sources give or hint at ([`category_hints`]). Every other test is a negative.
//! 4. [`build_index`]: a new index, or the previous one updated, keeping labels set by hand.

/// The largest flaky list or test report read: far past any real one, short of exhausting memory.
pub const MAX_HISTORY_FILE_BYTES: u64 = 256 << 20;

pub mod annotations;
pub mod category_hints;
pub mod flaky_list;
pub mod junit;
pub mod names;
mod repository;
mod sources;

pub use repository::{
    Repository, RepositoryTest, find_test_files, read_repository, tokenised_code,
};
use sources::count_categories;
pub use sources::{
    Ambiguous, Source, SourceReport, Unmatched, label_from_annotations, label_from_flaky_list,
    label_from_junit, marked_tests,
};

use std::collections::{BTreeMap, BTreeSet};

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use crate::category::Category;
use crate::embed::{TokenBag, TokenInterner};
use crate::index::{self, BuildSettings, Dims, Entry, EntryRef, Index, NewEntry, Origin};

/// What the sources say of one flaky test, combined.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FlakyReport {
    pub categories: BTreeSet<Category>,
    pub sources: BTreeSet<Source>,
}

/// A test is flaky when any source says so; its categories are the union of theirs. A test both
/// annotated and listed is one flaky test.
pub fn combine(reports: &[SourceReport]) -> BTreeMap<usize, FlakyReport> {
    let mut labels: BTreeMap<usize, FlakyReport> = BTreeMap::new();
    for report in reports {
        for (&test, categories) in &report.flaky {
            let label = labels.entry(test).or_default();
            label.categories.extend(categories);
            label.sources.insert(report.source);
        }
    }
    labels
}

/// How the index is written.
#[derive(Debug, Clone)]
pub struct IndexPlan<'a> {
    /// The settings of a new index. An update keeps the tokenizer, dimension and seed of the
    /// previous index, so that its entries stay comparable, and takes only the description.
    pub settings: BuildSettings,
    /// The index already at the output path, if it could be read.
    pub previous: Option<&'a Index>,
    /// Merge into `previous` instead of rebuilding: its entries for tests no longer in the
    /// repository stay, and a test it knew as flaky stays flaky.
    pub update: bool,
    /// Keep the labels users set by hand in the editor (`Origin::Manual`), in both modes.
    pub keep_manual: bool,
}

/// What went into the written index.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IndexSummary {
    pub entries: usize,
    pub flaky: usize,
    /// Entries known not to be flaky (marked so by hand); the others are unlabelled.
    pub stable: usize,
    pub categories: BTreeMap<Category, usize>,
    /// Tests of the repository in the index.
    pub repository_tests: usize,
    /// Labels set by hand that were kept, and those replaced by the sources' labels.
    pub manual_kept: usize,
    pub manual_overridden: usize,
    /// Entries of the previous index kept although their test is not in the repository.
    pub carried_over: usize,
    /// Tests of the repository that an update keeps flaky because the previous index said so.
    pub flaky_from_previous: usize,
    /// Entries of the previous index that could not be carried over: hand labels of deleted
    /// tests whose tokens the new tokenizer cannot reproduce.
    pub dropped: usize,
}

/// Builds the index from the repository's tests and their labels, keeping what the plan says to
/// keep from the previous index.
///
/// The index is assembled anew with [`Index::build`] even for an update: replacing entries one
/// by one re-packs every vector per replacement, which is quadratic in the repository's size.
pub fn build_index(
    repository: &Repository,
    labels: &BTreeMap<usize, FlakyReport>,
    plan: &IndexPlan,
) -> (Index, IndexSummary) {
    let previous = plan.previous;
    let settings = match previous {
        Some(previous) if plan.update => BuildSettings {
            tokenizer: previous.params().tokenizer,
            dims: Dims::Fixed(previous.params().projection.dims),
            seed: previous.params().projection.seed,
            description: plan.settings.description.clone(),
        },
        _ => plan.settings.clone(),
    };
    let tokenizer = settings.tokenizer;
    let mut summary = IndexSummary::default();
    let mut interner = TokenInterner::default();
    let mut tests: Vec<(Entry, TokenBag)> = Vec::new();
    let repository_ids: HashSet<&str> = repository
        .tests
        .iter()
        .map(|test| test.test.id.as_str())
        .collect();
    let mut previous_entries: HashMap<&str, EntryRef<'_>> = HashMap::default();

    if let Some(previous) = previous {
        for entry in previous.entries() {
            if repository_ids.contains(entry.id()) {
                previous_entries.insert(entry.id(), entry);
                continue;
            }
            let manual = entry.origin() == Origin::Manual;
            if !(plan.update || (manual && plan.keep_manual)) {
                summary.manual_overridden += usize::from(manual);
                continue;
            }
            let bag = if previous.params().tokenizer == tokenizer {
                previous.entry_bag(entry.position())
            } else {
                entry.code().map(|code| {
                    TokenBag::from_code_interned(tokenizer, entry.language(), code, &mut interner)
                })
            };
            let Some(bag) = bag else {
                summary.dropped += 1;
                continue;
            };
            summary.manual_kept += usize::from(manual);
            summary.carried_over += 1;
            tests.push((entry.to_entry(), bag));
        }
    }

    for (position, test) in repository.tests.iter().enumerate() {
        let label = labels.get(&position);
        let known = previous_entries.get(test.test.id.as_str()).copied();
        let mut verdict = if label.is_some() {
            index::Label::Flaky
        } else {
            index::Label::Unlabelled
        };
        let mut categories: BTreeSet<Category> = label
            .map(|label| label.categories.clone())
            .unwrap_or_default();
        let mut origin = Origin::History;
        let mut source = match label {
            Some(label) => label
                .sources
                .iter()
                .map(|source| source.name())
                .collect::<Vec<_>>()
                .join("+"),
            None => "repository".to_string(),
        };
        match known {
            Some(entry) if entry.origin() == Origin::Manual => {
                if plan.keep_manual {
                    summary.manual_kept += 1;
                    verdict = entry.label();
                    categories = entry.categories().into_iter().collect();
                    origin = Origin::Manual;
                    source = entry.source().to_string();
                } else {
                    summary.manual_overridden += 1;
                }
            }
            Some(entry) if plan.update && entry.is_flaky() => {
                if verdict != index::Label::Flaky {
                    summary.flaky_from_previous += 1;
                    source = entry.source().to_string();
                }
                verdict = index::Label::Flaky;
                categories.extend(entry.categories());
            }
            _ => {}
        }
        let categories: Vec<Category> = categories.into_iter().collect();
        let entry = Entry::new(NewEntry {
            id: &test.test.id,
            project: &repository.name,
            source: &source,
            language: test.test.language,
            label: verdict,
            categories: &categories,
            origin,
            path: Some(&test.path),
            code: Some(&test.test.code),
        });
        let bag = TokenBag::from_code_interned(
            tokenizer,
            test.test.language,
            &test.tokenised_code(),
            &mut interner,
        );
        tests.push((entry, bag));
        summary.repository_tests += 1;
    }

    let index = Index::build(&settings, tests);
    summary.entries = index.len();
    summary.flaky = index.entries().filter(|entry| entry.is_flaky()).count();
    summary.stable = index
        .entries()
        .filter(|entry| entry.label() == index::Label::Stable)
        .count();
    let categories: Vec<Category> = index
        .entries()
        .filter(|entry| entry.is_flaky())
        .flat_map(|entry| entry.categories())
        .collect();
    summary.categories = count_categories(categories.iter());
    (index, summary)
}
