//! The persisted kNN index: labelled tests, their token bags, and the projected vectors searched
//! for nearest neighbours.
//!
//! The file holds the token bags, not the projected vectors: a bag is FLAST's vector before the
//! projection, it is several times smaller, and the projection regenerates bit for bit from the
//! stored seed. Loading recomputes the projected vectors (tens of milliseconds for 20,000 tests).

pub mod file;
mod v1;
mod vectors;

use rustc_hash::FxHashMap as HashMap;
use std::path::Path;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use sprs::CsMat;

use crate::category::Category;
use crate::dataset::LabeledTest;
use crate::embed::{Projection, TokenBag, Tokenizer};
use crate::language::Language;
use crate::prior::SignalPrior;
pub use file::{FormatError, LoadError};
use vectors::{QueryVector, Vectors};

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

/// A labelled test in the index.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    pub id: String,
    pub project: String,
    pub source: String,
    pub language: Language,
    pub flaky: bool,
    pub categories: Vec<Category>,
    pub origin: Origin,
    /// The file the test lives in, relative to the workspace root, for tests of the user's own project.
    pub path: Option<String>,
    /// The test's code, kept for flaky tests so a user can read what a neighbour looks like.
    pub code: Option<String>,
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

impl Entry {
    /// The entry of a test from a labelled dataset; its code is kept only if `code` is given.
    pub fn from_labeled(test: &LabeledTest, code: Option<String>) -> Entry {
        Entry {
            id: test.id.clone(),
            project: test.project.clone(),
            source: test.source.clone(),
            language: test.language,
            flaky: test.flaky,
            categories: test.categories.clone(),
            origin: Origin::Dataset,
            path: None,
            code,
        }
    }
}

/// A test embedded for searching one index.
#[derive(Debug, Clone)]
pub struct Query {
    vector: QueryVector,
    /// The test's tokens that the index knows, by vocabulary id.
    known_tokens: Vec<u32>,
}

impl Query {
    /// True when the test shares no token with the index: it has no meaningful neighbours.
    pub fn is_empty(&self) -> bool {
        self.vector.is_zero()
    }
}

/// The persisted form: see the module documentation.
#[derive(Serialize, Deserialize)]
struct Stored {
    params: ModelParams,
    vocabulary: Vec<String>,
    entries: Vec<Entry>,
    /// Per entry, `(vocabulary id, count)` sorted by id.
    bags: Vec<Vec<(u32, u32)>>,
}

/// A searchable set of labelled tests.
#[derive(Debug, Clone)]
pub struct Index {
    params: ModelParams,
    vocabulary: Vec<Arc<str>>,
    token_ids: HashMap<Arc<str>, u32>,
    /// One row per vocabulary token: its non-zero projection entries.
    projection_rows: CsMat<i32>,
    document_frequency: Vec<u32>,
    entries: Vec<Entry>,
    bags: Vec<Vec<(u32, u32)>>,
    vectors: Vectors,
}

impl Index {
    /// An index with no entries that embeds tests with `params`.
    pub fn empty(params: ModelParams) -> Index {
        let dims = params.projection.dims as usize;
        Index {
            params,
            vocabulary: Vec::new(),
            token_ids: HashMap::default(),
            projection_rows: CsMat::zero((0, dims)),
            document_frequency: Vec::new(),
            entries: Vec::new(),
            bags: Vec::new(),
            vectors: Vectors::new(dims),
        }
    }

    /// Builds an index from labelled tests and their bags. The vocabulary is the tokens of these
    /// tests; the projection's dimension and density follow from their number (see [`Projection`]).
    pub fn build(
        settings: &BuildSettings,
        tests: impl IntoIterator<Item = (Entry, TokenBag)>,
    ) -> Index {
        let mut token_ids: HashMap<Arc<str>, u32> = HashMap::default();
        let mut vocabulary: Vec<Arc<str>> = Vec::new();
        let mut entries = Vec::new();
        let mut bags = Vec::new();
        for (entry, bag) in tests {
            let mut ids: Vec<(u32, u32)> = bag
                .tokens
                .iter()
                .map(|(token, count)| {
                    let id = *token_ids.entry(token.clone()).or_insert_with(|| {
                        vocabulary.push(token.clone());
                        (vocabulary.len() - 1) as u32
                    });
                    (id, *count)
                })
                .collect();
            ids.sort_unstable();
            entries.push(entry);
            bags.push(ids);
        }
        let dims = match settings.dims {
            Dims::Eps(eps) => Projection::johnson_lindenstrauss_dims(entries.len(), eps),
            Dims::Fixed(dims) => dims,
        };
        let params = ModelParams {
            tokenizer: settings.tokenizer,
            projection: Projection::new(dims, vocabulary.len(), settings.seed),
            description: settings.description.clone(),
            priors: Vec::new(),
        };
        Index::assemble(params, vocabulary, entries, bags)
    }

    /// Derives the searchable state from the stored parts.
    fn assemble(
        params: ModelParams,
        vocabulary: Vec<Arc<str>>,
        entries: Vec<Entry>,
        bags: Vec<Vec<(u32, u32)>>,
    ) -> Index {
        let token_ids = vocabulary
            .iter()
            .enumerate()
            .map(|(id, token)| (token.clone(), id as u32))
            .collect();
        let projection_rows = params
            .projection
            .matrix(vocabulary.iter().map(|token| &**token));
        let mut document_frequency = vec![0u32; vocabulary.len()];
        for bag in &bags {
            for &(id, _) in bag {
                document_frequency[id as usize] += 1;
            }
        }
        let dims = params.projection.dims as usize;
        let mut index = Index {
            params,
            vocabulary,
            token_ids,
            projection_rows,
            document_frequency,
            entries,
            bags: Vec::new(),
            vectors: Vectors::new(dims),
        };
        let mut vectors = Vectors::new(dims);
        vectors.extend(bags.iter().map(|bag| {
            let mut projected = vec![0i32; dims];
            index.project(bag, &mut projected);
            projected
        }));
        index.vectors = vectors;
        index.bags = bags;
        index
    }

    /// Sums the projection rows of a bag's tokens, weighted by their counts.
    fn project(&self, bag: &[(u32, u32)], projected: &mut [i32]) {
        projected.fill(0);
        for &(id, count) in bag {
            if let Some(row) = self.projection_rows.outer_view(id as usize) {
                for (column, &sign) in row.iter() {
                    // Saturating: a count read from a file can be any u32.
                    let count = i32::try_from(count).unwrap_or(i32::MAX);
                    projected[column] =
                        projected[column].saturating_add(sign.saturating_mul(count));
                }
            }
        }
    }

    pub fn params(&self) -> &ModelParams {
        &self.params
    }

    /// Gives the model its signal priors (see [`ModelParams::priors`]).
    pub fn set_priors(&mut self, priors: Vec<SignalPrior>) {
        self.params.priors = priors;
    }

    /// The signal prior for tests of a language, if the model has one.
    pub fn prior(&self, language: Language) -> Option<&SignalPrior> {
        self.params
            .priors
            .iter()
            .find(|prior| prior.language == language)
    }

    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn vocabulary_len(&self) -> usize {
        self.vocabulary.len()
    }

    /// The entry with this id.
    pub fn position(&self, id: &str) -> Option<usize> {
        self.entries.iter().position(|entry| entry.id == id)
    }

    /// Tokenises code the way this index's tests were tokenised.
    pub fn bag(&self, language: Language, code: &str) -> TokenBag {
        TokenBag::from_code(self.params.tokenizer, language, code)
    }

    /// Embeds a bag for searching. Tokens that no indexed test has are left out: they cannot
    /// bring the test closer to any neighbour, only add noise (the FLAST paper's footnote 4).
    pub fn embed(&self, bag: &TokenBag) -> Query {
        let known: Vec<(u32, u32)> = bag
            .tokens
            .iter()
            .filter_map(|(token, count)| self.token_ids.get(&**token).map(|&id| (id, *count)))
            .collect();
        let mut projected = vec![0i32; self.params.projection.dims as usize];
        self.project(&known, &mut projected);
        Query {
            vector: QueryVector::new(&projected),
            known_tokens: known.iter().map(|&(id, _)| id).collect(),
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
        if query.is_empty() {
            return Vec::new();
        }
        self.vectors.nearest(&query.vector, k, include)
    }

    /// The tokens a query shares with an entry, rarest first.
    pub fn shared_tokens(&self, query: &Query, entry: usize) -> Vec<&str> {
        let bag = &self.bags[entry];
        let mut shared: Vec<u32> = query
            .known_tokens
            .iter()
            .copied()
            .filter(|id| bag.binary_search_by_key(id, |&(token, _)| token).is_ok())
            .collect();
        shared.sort_by_key(|&id| (self.document_frequency[id as usize], id));
        shared
            .into_iter()
            .map(|id| &*self.vocabulary[id as usize])
            .collect()
    }

    /// The bag the entry at `position` was indexed with, so that a rebuilt index can carry it
    /// over without the test's code.
    pub fn entry_bag(&self, position: usize) -> Option<TokenBag> {
        let bag = self.bags.get(position)?;
        let mut tokens: Vec<(Arc<str>, u32)> = bag
            .iter()
            .map(|&(id, count)| (self.vocabulary[id as usize].clone(), count))
            .collect();
        tokens.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        Some(TokenBag { tokens })
    }

    /// How many entries contain `token`.
    pub fn document_frequency(&self, token: &str) -> u32 {
        self.token_ids
            .get(token)
            .map_or(0, |&id| self.document_frequency[id as usize])
    }

    /// Adds a test, or replaces the entry with the same id. New tokens join the vocabulary; the
    /// projection needs no rebuild because each token's row derives from the seed and its text.
    pub fn upsert(&mut self, entry: Entry, bag: &TokenBag) -> usize {
        if let Some(existing) = self.position(&entry.id) {
            self.remove_at(existing);
        }
        let mut ids: Vec<(u32, u32)> = Vec::with_capacity(bag.tokens.len());
        for (token, count) in &bag.tokens {
            let id = match self.token_ids.get(&**token) {
                Some(&id) => id,
                None => self.add_token(token.clone()),
            };
            ids.push((id, *count));
        }
        ids.sort_unstable();
        for &(id, _) in &ids {
            self.document_frequency[id as usize] += 1;
        }
        let mut projected = vec![0i32; self.params.projection.dims as usize];
        self.project(&ids, &mut projected);
        self.vectors.push(&projected);
        self.entries.push(entry);
        self.bags.push(ids);
        self.entries.len() - 1
    }

    fn add_token(&mut self, token: Arc<str>) -> u32 {
        let id = self.vocabulary.len() as u32;
        let row = self.params.projection.row(&token);
        let (columns, values): (Vec<usize>, Vec<i32>) = row
            .into_iter()
            .map(|(column, sign)| (column as usize, i32::from(sign)))
            .unzip();
        let row = sprs::CsVec::new(self.params.projection.dims as usize, columns, values);
        self.projection_rows = std::mem::replace(&mut self.projection_rows, CsMat::zero((0, 0)))
            .append_outer_csvec(row.view());
        self.vocabulary.push(token.clone());
        self.token_ids.insert(token, id);
        self.document_frequency.push(0);
        id
    }

    /// Changes the label of the entry with this id; false when there is none.
    pub fn relabel(
        &mut self,
        id: &str,
        flaky: bool,
        categories: Vec<Category>,
        origin: Origin,
    ) -> bool {
        let Some(position) = self.position(id) else {
            return false;
        };
        let entry = &mut self.entries[position];
        entry.flaky = flaky;
        entry.categories = categories;
        entry.origin = origin;
        true
    }

    /// Removes the entry with this id; false when there is none.
    pub fn remove(&mut self, id: &str) -> bool {
        let Some(position) = self.position(id) else {
            return false;
        };
        self.remove_at(position);
        true
    }

    fn remove_at(&mut self, position: usize) {
        for &(id, _) in &self.bags[position] {
            self.document_frequency[id as usize] -= 1;
        }
        self.entries.remove(position);
        self.bags.remove(position);
        self.vectors.remove(position);
    }

    /// The index in its file format.
    pub fn to_bytes(&self) -> Result<Vec<u8>, FormatError> {
        file::encode(&self.stored())
    }

    /// Reads an index from the bytes of its file format.
    pub fn from_bytes(bytes: &[u8]) -> Result<Index, FormatError> {
        let (version, payload) = file::open(bytes)?;
        let mut stored = match version {
            1 => v1::decode(payload)?,
            _ => file::decode_payload(payload)?,
        };
        check_numbers(&stored, payload.len())?;
        for prior in &mut stored.params.priors {
            prior.rename_old_features();
        }
        Index::from_stored(stored)
    }

    pub fn load(path: &Path) -> Result<Index, LoadError> {
        Index::from_bytes(&file::read(path)?).map_err(|source| LoadError::Format {
            path: path.to_path_buf(),
            source,
        })
    }

    /// Writes the index atomically (see [`file::write`]).
    pub fn save(&self, path: &Path) -> anyhow::Result<()> {
        file::write(path, &self.stored())
    }

    fn stored(&self) -> Stored {
        Stored {
            params: self.params.clone(),
            vocabulary: self
                .vocabulary
                .iter()
                .map(|token| token.to_string())
                .collect(),
            entries: self.entries.clone(),
            bags: self.bags.clone(),
        }
    }

    /// Checks the invariants a decoded payload must hold before it is trusted.
    fn from_stored(stored: Stored) -> Result<Index, FormatError> {
        let corrupt = |what: &str| Err(FormatError::Undecodable(what.to_string()));
        let projection = stored.params.projection;
        if projection.dims == 0
            || projection.dims > 1 << 16
            || projection.nonzeros_per_token > projection.dims
        {
            return corrupt("impossible projection parameters");
        }
        if stored.entries.len() != stored.bags.len() {
            return corrupt("entries and bags differ in number");
        }
        let vocabulary_len = stored.vocabulary.len() as u32;
        if stored
            .bags
            .iter()
            .flatten()
            .any(|&(id, _)| id >= vocabulary_len)
        {
            return corrupt("a bag names a token outside the vocabulary");
        }
        if stored
            .bags
            .iter()
            .any(|bag| bag.windows(2).any(|pair| pair[0].0 >= pair[1].0))
        {
            return corrupt("a bag is not sorted");
        }
        let vocabulary: Vec<Arc<str>> = stored.vocabulary.into_iter().map(Arc::from).collect();
        Ok(Index::assemble(
            stored.params,
            vocabulary,
            stored.entries,
            stored.bags,
        ))
    }
}

/// Memory an index may claim besides what its file's size accounts for (see [`check_numbers`]).
const BASE_MEMORY: u64 = 64 << 20;
/// Memory an index may claim per byte of its payload: the projected vectors of a real index take
/// a few times its file's size (940 bytes per test against about 340 in the file).
const MEMORY_PER_PAYLOAD_BYTE: u64 = 64;

/// Checks every number of a decoded payload before it sizes anything or reaches a computation:
/// the checksum only proves that the file is what was written, not that a writer was honest.
/// The projection matrix (vocabulary times non-zeros per token) and the projected vectors
/// (entries times dimensions) must fit in memory proportionate to the payload; the prior's
/// numbers must be finite, its probabilities within 0 and 1.
fn check_numbers(stored: &Stored, payload_len: usize) -> Result<(), FormatError> {
    let projection = &stored.params.projection;
    let budget = BASE_MEMORY + MEMORY_PER_PAYLOAD_BYTE * payload_len as u64;
    // A projection entry costs about 16 bytes while the matrix is built, a vector entry one.
    let matrix = (stored.vocabulary.len() as u64)
        .saturating_mul(u64::from(
            projection.nonzeros_per_token.min(projection.dims),
        ))
        .saturating_mul(16);
    let vectors = (stored.entries.len() as u64).saturating_mul(u64::from(projection.dims));
    if matrix.saturating_add(vectors) > budget {
        return Err(FormatError::Implausible(format!(
            "{} tokens, {} tests and {} dimensions would take {} MB for a file of {} bytes",
            stored.vocabulary.len(),
            stored.entries.len(),
            projection.dims,
            matrix.saturating_add(vectors) >> 20,
            payload_len
        )));
    }
    for prior in &stored.params.priors {
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
