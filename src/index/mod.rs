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

pub mod file;
mod layout;
mod v1;
mod v2;
mod vectors;
mod writer;

use std::path::Path;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::category::Category;
use crate::dataset::LabeledTest;
use crate::embed::{Projection, TokenBag, Tokenizer};
use crate::language::Language;
use crate::prior::SignalPrior;
pub use file::{FormatError, LoadError};
use layout::{EntryRecord, Layout, kind};
use vectors::{QueryVector, VectorsView};
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

    fn code(self) -> u8 {
        self as u8
    }

    fn from_code(code: u8) -> Option<Origin> {
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

    fn code(self) -> u8 {
        self as u8
    }

    fn from_code(code: u8) -> Option<Label> {
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
fn normalised_categories(categories: impl IntoIterator<Item = Category>) -> Vec<Category> {
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

/// A test embedded for searching one index.
#[derive(Debug, Clone)]
pub struct Query {
    vector: QueryVector,
    /// The test's tokens that the index knows, by vocabulary id, sorted.
    known_tokens: Vec<u32>,
}

impl Query {
    /// True when the test shares no token with the index: it has no meaningful neighbours.
    pub fn is_empty(&self) -> bool {
        self.vector.is_zero()
    }
}

/// Where an index's bytes are.
#[derive(Clone)]
enum Storage {
    /// A model embedded in the binary.
    Static(&'static [u8]),
    /// Built in memory, or converted from an older format.
    Owned(Arc<[u8]>),
    /// A file mapped into memory. Index files are replaced by renaming a new file over them,
    /// never rewritten in place, so the mapped bytes stay as they were checked.
    Mapped(Arc<memmap2::Mmap>),
}

impl Storage {
    fn bytes(&self) -> &[u8] {
        match self {
            Storage::Static(bytes) => bytes,
            Storage::Owned(bytes) => bytes,
            Storage::Mapped(map) => map,
        }
    }
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

/// One entry of an index, read where it lies.
#[derive(Clone, Copy)]
pub struct EntryRef<'a> {
    index: &'a Index,
    position: usize,
    record: EntryRecord,
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

    /// Opens laid-out bytes: the directory and the tables are checked, the params decoded and
    /// checked. The header was checked by the caller.
    fn open(storage: Storage) -> Result<Index, FormatError> {
        let bytes = storage.bytes();
        let layout = Layout::read(bytes, file::HEADER_LEN)?;
        layout.check_contents(bytes)?;
        let params: ModelParams = file::decode_payload(layout.section(bytes, kind::PARAMS))?;
        if params.projection.dims as usize != layout.summary.dims {
            return Err(FormatError::Undecodable(
                "the vectors and the projection differ in dimension".to_string(),
            ));
        }
        check_numbers(
            &params,
            layout.summary.vocabulary,
            layout.summary.entries,
            bytes.len() - file::HEADER_LEN,
        )?;
        let mut params = params;
        for prior in &mut params.priors {
            prior.rename_old_features();
        }
        Ok(Index {
            storage,
            layout,
            params,
            params_changed: false,
        })
    }

    /// Bytes this build just laid out: read back without checking what it wrote.
    fn laid_out(storage: Storage, params: ModelParams) -> Index {
        // The writer's own layout: a failure here is a bug in the writer, not a bad file.
        let layout = Layout::read(storage.bytes(), file::HEADER_LEN)
            .unwrap_or_else(|error| panic!("a laid-out index reads back: {error}"));
        Index {
            storage,
            layout,
            params,
            params_changed: false,
        }
    }

    fn bytes(&self) -> &[u8] {
        self.storage.bytes()
    }

    fn section(&self, section_kind: u32) -> &[u8] {
        self.layout.section(self.bytes(), section_kind)
    }

    fn vectors(&self) -> VectorsView<'_> {
        VectorsView::new(
            self.layout.summary.dims,
            self.len(),
            self.section(kind::VECTORS),
            self.section(kind::SQUARED_NORMS),
            self.section(kind::INVERSE_NORMS),
        )
    }

    fn signal_id(&self, signal: usize) -> &str {
        layout::table_string(
            self.section(kind::SIGNAL_OFFSETS),
            self.section(kind::SIGNAL_TEXT),
            signal,
        )
    }

    fn token(&self, id: u32) -> &str {
        layout::table_string(
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

    /// Tokenises code the way this index's tests were tokenised.
    pub fn bag(&self, language: Language, code: &str) -> TokenBag {
        TokenBag::from_code(self.params.tokenizer, language, code)
    }

    /// The vocabulary id of a token: a binary search of the tokens in text order.
    fn token_id(&self, token: &str) -> Option<u32> {
        let order = self.section(kind::VOCABULARY_ORDER);
        let (mut low, mut high) = (0, self.vocabulary_len());
        while low < high {
            let middle = (low + high) / 2;
            let id = layout::le_u32(order, middle * 4);
            match self.token(id).cmp(token) {
                std::cmp::Ordering::Less => low = middle + 1,
                std::cmp::Ordering::Greater => high = middle,
                std::cmp::Ordering::Equal => return Some(id),
            }
        }
        None
    }

    /// Embeds a bag for searching. Tokens that no indexed test has are left out: they cannot
    /// bring the test closer to any neighbour, only add noise (the FLAST paper's footnote 4).
    pub fn embed(&self, bag: &TokenBag) -> Query {
        let projection = &self.params.projection;
        let mut projected = vec![0i32; projection.dims as usize];
        let mut known_tokens = Vec::new();
        for (token, count) in &bag.tokens {
            let Some(id) = self.token_id(token) else {
                continue;
            };
            known_tokens.push(id);
            // Saturating: a count read from a file can be any u32.
            let count = i32::try_from(*count).unwrap_or(i32::MAX);
            for (column, sign) in projection.row(token) {
                let slot = &mut projected[column as usize];
                *slot = slot.saturating_add(i32::from(sign).saturating_mul(count));
            }
        }
        known_tokens.sort_unstable();
        Query {
            vector: QueryVector::new(&projected),
            known_tokens,
        }
    }

    /// The `k` entries most similar to the query among those `include` accepts, as
    /// `(entry position, cosine similarity)`, most similar first.
    pub fn nearest(
        &self,
        query: &Query,
        k: usize,
        include: impl Fn(usize) -> bool,
    ) -> Vec<(usize, f64)> {
        if query.is_empty() || self.is_empty() {
            return Vec::new();
        }
        self.vectors().nearest(&query.vector, k, include)
    }

    /// The bag of the entry at `position`, by vocabulary id.
    fn stored_bag(&self, position: usize) -> Vec<(u32, u32)> {
        let offsets = self.section(kind::BAG_OFFSETS);
        let start = layout::le_u32(offsets, position * 4) as usize;
        let end = layout::le_u32(offsets, position * 4 + 4) as usize;
        layout::decode_bag(
            &self.section(kind::BAG_BYTES)[start..end],
            self.vocabulary_len(),
        )
    }

    /// How many entries hold the token with this id.
    fn id_frequency(&self, id: u32) -> u32 {
        layout::le_u32(self.section(kind::DOCUMENT_FREQUENCY), id as usize * 4)
    }

    /// The tokens a query shares with an entry, rarest first.
    pub fn shared_tokens(&self, query: &Query, entry: usize) -> Vec<&str> {
        if entry >= self.len() {
            return Vec::new();
        }
        let bag = self.stored_bag(entry);
        let mut shared: Vec<u32> = query
            .known_tokens
            .iter()
            .copied()
            .filter(|id| bag.binary_search_by_key(id, |&(token, _)| token).is_ok())
            .collect();
        shared.sort_by_key(|&id| (self.id_frequency(id), id));
        shared.into_iter().map(|id| self.token(id)).collect()
    }

    /// The bag the entry at `position` was indexed with, so that a rebuilt index can carry it
    /// over without the test's code.
    pub fn entry_bag(&self, position: usize) -> Option<TokenBag> {
        if position >= self.len() {
            return None;
        }
        let mut tokens: Vec<(Arc<str>, u32)> = self
            .stored_bag(position)
            .into_iter()
            .map(|(id, count)| (Arc::from(self.token(id)), count))
            .collect();
        tokens.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        Some(TokenBag { tokens })
    }

    /// How many entries contain `token`.
    pub fn document_frequency(&self, token: &str) -> u32 {
        self.token_id(token).map_or(0, |id| self.id_frequency(id))
    }

    /// The index in its file format.
    pub fn to_bytes(&self) -> Vec<u8> {
        if self.params_changed {
            writer::relaid(self)
        } else {
            self.bytes().to_vec()
        }
    }

    /// The sections of this index as they are laid out, the params as they are now.
    fn sections(&self) -> Vec<(u32, std::borrow::Cow<'_, [u8]>)> {
        kind::REQUIRED
            .iter()
            .map(|&section_kind| {
                let bytes = if section_kind == kind::PARAMS {
                    std::borrow::Cow::Owned(writer::encode_params(&self.params))
                } else {
                    std::borrow::Cow::Borrowed(self.section(section_kind))
                };
                (section_kind, bytes)
            })
            .collect()
    }

    /// Reads an index from the bytes of its file format, checking its checksum.
    pub fn from_bytes(bytes: &[u8]) -> Result<Index, FormatError> {
        let (version, payload) = file::open(bytes)?;
        match version {
            1 | 2 => Index::from_legacy(version, payload),
            _ => Index::open(Storage::Owned(Arc::from(bytes))),
        }
    }

    /// Reads a model embedded in the binary, in place. Its checksum is not recomputed on every
    /// start (that would read every byte of it): the bytes are the binary's own, and the test
    /// suite checks each embedded model's checksum. Every table is still checked as for a file.
    pub fn from_static(bytes: &'static [u8]) -> Result<Index, FormatError> {
        let (version, payload) = file::open_unverified(bytes)?;
        match version {
            1 | 2 => {
                file::open(bytes)?;
                Index::from_legacy(version, payload)
            }
            _ => Index::open(Storage::Static(bytes)),
        }
    }

    /// Decodes a payload of format 1 or 2 and lays it out anew.
    fn from_legacy(version: u32, payload: &[u8]) -> Result<Index, FormatError> {
        let legacy = match version {
            1 => v1::decode(payload)?,
            _ => v2::decode(payload)?,
        };
        legacy.check(payload.len())?;
        let mut index = legacy.into_index();
        for prior in &mut index.params.priors {
            prior.rename_old_features();
        }
        Ok(index)
    }

    /// Loads an index file: a large one is mapped into memory, a small one read. The checksum
    /// is verified before anything else reads the bytes.
    pub fn load(path: &Path) -> Result<Index, LoadError> {
        let format_error = |source| LoadError::Format {
            path: path.to_path_buf(),
            source,
        };
        match file::map(path)? {
            file::Mapped::Read(bytes) => Index::from_bytes(&bytes).map_err(format_error),
            file::Mapped::Map(map) => {
                let (version, payload) = file::open(&map).map_err(format_error)?;
                match version {
                    1 | 2 => Index::from_legacy(version, payload),
                    _ => Index::open(Storage::Mapped(Arc::new(map))),
                }
                .map_err(format_error)
            }
        }
    }

    /// Loads an index file into memory, never mapping it: for a project index, which people and
    /// tools may rewrite in place (`cp backup .flakesense/index`), where a mapping of the old
    /// file would fault on the pages the rewrite cut off. Project indexes are small.
    pub fn load_unmapped(path: &Path) -> Result<Index, LoadError> {
        Index::from_bytes(&file::read(path)?).map_err(|source| LoadError::Format {
            path: path.to_path_buf(),
            source,
        })
    }

    /// Writes the index atomically (see [`file::write_bytes`]).
    pub fn save(&self, path: &Path) -> anyhow::Result<()> {
        file::write_bytes(path, &self.to_bytes())
    }
}

/// Memory an index may claim besides what its file's size accounts for (see [`check_numbers`]).
const BASE_MEMORY: u64 = 64 << 20;
/// Memory an index may claim per byte of its payload: the projected vectors of a real index take
/// a few times its file's size (940 bytes per test against about 340 in the file).
const MEMORY_PER_PAYLOAD_BYTE: u64 = 64;

/// Checks every number of a file's parameters before it sizes anything or reaches a
/// computation: the checksum only proves that the file is what was written, not that a writer
/// was honest. The projection must be possible; the work of projecting the vocabulary (tokens
/// times non-zeros per token: a format 1 or 2 file builds the whole matrix, a query of format 3
/// projects its known tokens) and the projected vectors (entries times dimensions) must fit in
/// memory proportionate to the payload; the prior's numbers must be finite, its probabilities
/// within 0 and 1.
fn check_numbers(
    params: &ModelParams,
    vocabulary: usize,
    entries: usize,
    payload_len: usize,
) -> Result<(), FormatError> {
    let projection = &params.projection;
    if projection.dims == 0
        || projection.dims > 1 << 16
        || projection.nonzeros_per_token > projection.dims
    {
        return Err(FormatError::Undecodable(
            "impossible projection parameters".to_string(),
        ));
    }
    let budget = BASE_MEMORY + MEMORY_PER_PAYLOAD_BYTE * payload_len as u64;
    // A projection entry costs about 16 bytes while the matrix is built, a vector entry one.
    let matrix = (vocabulary as u64)
        .saturating_mul(u64::from(
            projection.nonzeros_per_token.min(projection.dims),
        ))
        .saturating_mul(16);
    let vectors = (entries as u64).saturating_mul(u64::from(projection.dims));
    if matrix.saturating_add(vectors) > budget {
        return Err(FormatError::Implausible(format!(
            "{vocabulary} tokens, {entries} tests and {} dimensions would take {} MB for a file of {payload_len} bytes",
            projection.dims,
            matrix.saturating_add(vectors) >> 20,
        )));
    }
    for prior in &params.priors {
        let language = prior.language.name();
        let numbers = [
            ("bias", prior.bias),
            ("information probability", prior.information_probability),
            ("warning probability", prior.warning_probability),
        ]
        .into_iter()
        .chain(
            prior
                .weights
                .iter()
                .chain(&prior.share_weights)
                .chain(&prior.typical_shares)
                .map(|(name, value)| (name.as_str(), *value)),
        );
        for (name, value) in numbers {
            if !value.is_finite() {
                return Err(FormatError::InvalidNumber(format!(
                    "{value} as `{name}` of the {language} prior"
                )));
            }
        }
        for (name, probability) in [
            ("information probability", prior.information_probability),
            ("warning probability", prior.warning_probability),
        ] {
            if !(0.0..=1.0).contains(&probability) {
                return Err(FormatError::InvalidNumber(format!(
                    "{probability} as `{name}` of the {language} prior, not a probability"
                )));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
