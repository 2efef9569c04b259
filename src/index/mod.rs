//! The persisted kNN index: labelled tests, their token bags, and the projected vectors searched
//! for nearest neighbours.
//!
//! An index is read where it lies (format 3, [`layout`]): from a memory-mapped file or from the
//! bytes embedded in the binary, with nothing decoded per entry when it is opened. A search
//! reads the stored vectors; an entry's strings, bag and signals are read when asked for. Files
//! of formats 1 and 2 (a bincode payload of token bags, see [`v1`] and [`v2`]) still load: they
//! are decoded and laid out as format 3 in memory.
//!
//! An index is immutable. [`IndexWriter`] makes a new one from labelled tests, or from an index
//! with some entries changed; the label store of a workspace ([`crate::labels`]) is the one
//! place that rewrites a project's index.

mod entry;
pub mod file;
mod layout;
mod numbers;
mod search;
mod storage;
mod v1;
mod v2;
mod vectors;
mod writer;

use std::collections::HashMap;
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

use crate::category::Category;
use crate::embed::{Projection, TokenBag, Tokenizer};
use crate::language::Language;
use crate::prior::SignalPrior;
use entry::normalised_categories;
pub use entry::{Entry, EntryRef, Label, MAX_KEPT_CODE, NewEntry, Origin, kept_code};
pub use file::{FormatError, LoadError};
use layout::reading::{Layout, table_string};
use layout::{EntryRecord, kind};
pub use search::Query;
use storage::Storage;
pub use writer::IndexWriter;

/// Everything needed to embed a new test exactly as the indexed ones were.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelParams {
    pub tokenizer: Tokenizer,
    pub projection: Projection,
    /// How the model was built (the command, the data), shown by `flakesense info`.
    pub description: String,
    /// For a shipped model trained on many projects: what the catalogue's signals say about a
    /// test of a project the model has never seen, one prior per language. A project's own
    /// index has none.
    pub priors: Vec<SignalPrior>,
}

/// How the dimension of a new index is chosen.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Dims {
    /// The Johnson-Lindenstrauss bound for this distortion (FLAST uses 0.33).
    Eps(f64),
    Fixed(u32),
}

/// Settings for building an index from labelled tests.
#[derive(Debug, Clone, PartialEq)]
pub struct BuildSettings {
    pub tokenizer: Tokenizer,
    pub dims: Dims,
    pub seed: u64,
    pub description: String,
}

/// A searchable set of labelled tests, read in place.
#[derive(Clone)]
pub struct Index {
    storage: Storage,
    layout: Layout,
    params: ModelParams,
    /// The params were changed after the bytes were laid out ([`Index::set_priors`]): saving
    /// lays them out again.
    params_changed: bool,
    /// The flaky entries that carry each signal id, found on first use (see
    /// [`Index::nearest_flaky_with`]).
    flaky_by_signal: OnceLock<HashMap<String, Vec<usize>>>,
}

impl std::fmt::Debug for Index {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Index")
            .field("entries", &self.len())
            .field("vocabulary", &self.vocabulary_len())
            .field("params", &self.params)
            .finish()
    }
}

impl Index {
    /// An index with no entries that embeds tests with `params`.
    pub fn empty(params: ModelParams) -> Index {
        IndexWriter::new(params).finish()
    }

    /// Builds an index from labelled tests and their bags. The vocabulary is the tokens of these
    /// tests; the projection's dimension and density follow from their number (see [`Projection`]).
    pub fn build(
        settings: &BuildSettings,
        tests: impl IntoIterator<Item = (Entry, TokenBag)>,
    ) -> Index {
        writer::build(settings, tests)
    }

    fn bytes(&self) -> &[u8] {
        self.storage.bytes()
    }

    fn section(&self, section_kind: u32) -> &[u8] {
        self.layout.section(self.bytes(), section_kind)
    }

    fn signal_id(&self, signal: usize) -> &str {
        table_string(
            self.section(kind::SIGNAL_OFFSETS),
            self.section(kind::SIGNAL_TEXT),
            signal,
        )
    }

    fn token(&self, id: u32) -> &str {
        table_string(
            self.section(kind::VOCABULARY_OFFSETS),
            self.section(kind::VOCABULARY_TEXT),
            id as usize,
        )
    }

    pub fn params(&self) -> &ModelParams {
        &self.params
    }

    /// Gives the model its signal priors (see [`ModelParams::priors`]).
    pub fn set_priors(&mut self, priors: Vec<SignalPrior>) {
        self.params.priors = priors;
        self.params_changed = true;
    }

    /// The signal prior for tests of a language, if the model has one.
    pub fn prior(&self, language: Language) -> Option<&SignalPrior> {
        self.params
            .priors
            .iter()
            .find(|prior| prior.language == language)
    }

    /// The entry at `position`; panics past the end, as indexing a slice does.
    pub fn entry(&self, position: usize) -> EntryRef<'_> {
        self.get(position)
            .unwrap_or_else(|| panic!("entry {position} of an index of {}", self.len()))
    }

    /// The entry at `position`, if there is one.
    pub fn get(&self, position: usize) -> Option<EntryRef<'_>> {
        (position < self.len()).then(|| EntryRef {
            index: self,
            position,
            record: EntryRecord::read(self.section(kind::ENTRIES), position),
        })
    }

    pub fn entries(&self) -> impl ExactSizeIterator<Item = EntryRef<'_>> + '_ {
        (0..self.len()).map(|position| self.entry(position))
    }

    /// The language of the entry at `position`, without reading the rest of it.
    pub fn entry_language(&self, position: usize) -> Option<Language> {
        let record = self
            .section(kind::ENTRIES)
            .get(position * layout::ENTRY_LEN + 48)?;
        Language::ALL.get(usize::from(*record)).copied()
    }

    /// Whether some entry is a test of `language`.
    pub fn has_language(&self, language: Language) -> bool {
        self.layout.summary.languages & (1 << language as u32) != 0
    }

    pub fn len(&self) -> usize {
        self.layout.summary.entries
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn vocabulary_len(&self) -> usize {
        self.layout.summary.vocabulary
    }

    /// The entry with this id.
    pub fn position(&self, id: &str) -> Option<usize> {
        let strings = self.section(kind::STRINGS);
        let entries = self.section(kind::ENTRIES);
        (0..self.len()).find(|&position| {
            EntryRecord::range(EntryRecord::read(entries, position).id)
                .is_some_and(|range| &strings[range] == id.as_bytes())
        })
    }
}

#[cfg(test)]
mod tests;
