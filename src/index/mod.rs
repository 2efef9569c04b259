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
mod v1;
mod v2;
mod vectors;
mod writer;

use std::path::Path;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::category::Category;
use crate::embed::{Projection, TokenBag, Tokenizer};
use crate::language::Language;
use crate::prior::SignalPrior;
use entry::normalised_categories;
pub use entry::{Entry, EntryRef, Label, MAX_KEPT_CODE, NewEntry, Origin, kept_code};
pub use file::{FormatError, LoadError};
use layout::reading::{Layout, table_bytes, table_string};
use layout::token_bags::decode_bag;
use layout::{EntryRecord, kind};
use numbers::check_numbers;
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

    /// Opens laid-out bytes: the directory is checked, the params decoded and checked, and the
    /// tables checked unless they are the binary's own (`Storage::Static`, which the test suite
    /// checks: reading every table costs a short check a third of its time). The header was
    /// checked by the caller.
    fn open(storage: Storage) -> Result<Index, FormatError> {
        let bytes = storage.bytes();
        let layout = Layout::read(bytes, file::HEADER_LEN)?;
        if !matches!(storage, Storage::Static(_)) {
            layout.check_contents(bytes)?;
        }
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

    /// Tokenises code the way this index's tests were tokenised.
    pub fn bag(&self, language: Language, code: &str) -> TokenBag {
        TokenBag::from_code(self.params.tokenizer, language, code)
    }

    /// The vocabulary id of a token: a binary search of the tokens in text order, comparing
    /// bytes (which order as the text does) so that no token is checked as UTF-8 again.
    fn token_id(&self, token: &str) -> Option<u32> {
        let order = self.section(kind::VOCABULARY_ORDER);
        let offsets = self.section(kind::VOCABULARY_OFFSETS);
        let text = self.section(kind::VOCABULARY_TEXT);
        let (mut low, mut high) = (0, self.vocabulary_len());
        while low < high {
            let middle = (low + high) / 2;
            let id = layout::le_u32(order, middle * 4);
            match table_bytes(offsets, text, id as usize).cmp(token.as_bytes()) {
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
        decode_bag(
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

    /// Reads a model embedded in the binary, in place. Neither its checksum nor its tables are
    /// checked on every start (that would read every byte of it): the bytes are the binary's
    /// own, and the test suite opens each embedded model as a file, checking both.
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

#[cfg(test)]
mod tests;
