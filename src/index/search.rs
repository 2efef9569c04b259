//! Searching an index: a test embedded as a query against the index's vocabulary, its nearest
//! neighbours among the stored vectors, and the tokens and bags that show why an entry is near.

use std::collections::HashMap;
use std::sync::Arc;

use super::Index;
use super::layout::reading::table_bytes;
use super::layout::token_bags::decode_bag;
use super::layout::{self, kind};
use super::vectors::{QueryVector, VectorsView};
use crate::embed::TokenBag;
use crate::language::Language;

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

impl Index {
    fn vectors(&self) -> VectorsView<'_> {
        VectorsView::new(
            self.layout.summary.dims,
            self.len(),
            self.section(kind::VECTORS),
            self.section(kind::SQUARED_NORMS),
            self.section(kind::INVERSE_NORMS),
        )
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

    /// The `k` flaky entries of `language` whose own code has the risk `signal` (see
    /// [`super::EntryRef::signals`]) most similar to the query, as `(entry position, cosine
    /// similarity)`, most similar first. Only those entries are compared, not the whole index.
    pub fn nearest_flaky_with(
        &self,
        query: &Query,
        k: usize,
        language: Language,
        signal: &str,
    ) -> Vec<(usize, f64)> {
        let Some(positions) = self.flaky_by_signal().get(signal) else {
            return Vec::new();
        };
        if query.is_empty() {
            return Vec::new();
        }
        let vectors = self.vectors();
        let mut found: Vec<(usize, f64)> = positions
            .iter()
            .filter(|&&position| self.entry_language(position) == Some(language))
            .map(|&position| (position, vectors.similarity(&query.vector, position)))
            .collect();
        found.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        found.truncate(k);
        found
    }

    fn flaky_by_signal(&self) -> &HashMap<String, Vec<usize>> {
        self.flaky_by_signal.get_or_init(|| {
            let mut by_signal: HashMap<String, Vec<usize>> = HashMap::new();
            for entry in self.entries().filter(|entry| entry.is_flaky()) {
                for signal in entry.signals() {
                    by_signal
                        .entry(signal.to_string())
                        .or_default()
                        .push(entry.position());
                }
            }
            by_signal
        })
    }

    /// The bag of the entry at `position`, by vocabulary id.
    pub(super) fn stored_bag(&self, position: usize) -> Vec<(u32, u32)> {
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
}
