//! Making an index: from labelled tests, or from an index with some entries added, relabelled or
//! removed. The result is laid out as format 3 ([`super::layout`]) in memory, ready to search
//! and to save.

use std::borrow::Cow;
use std::sync::Arc;

use rayon::prelude::*;
use rustc_hash::FxHashMap as HashMap;

use super::layout::token_bags::encode_bag;
use super::layout::writing::{Strings, payload, string_table, summary_bytes};
use super::layout::{self, EntryRecord, Summary, kind};
use super::storage::Storage;
use super::{
    BuildSettings, Category, Dims, Entry, Index, Label, ModelParams, Origin, Projection, file,
    normalised_categories, vectors,
};
use crate::embed::TokenBag;

/// Entries and their bags, to be laid out as an index.
#[derive(Debug, Clone)]
pub struct IndexWriter {
    params: ModelParams,
    vocabulary: Vec<Arc<str>>,
    token_ids: HashMap<Arc<str>, u32>,
    entries: Vec<Entry>,
    /// Per entry, `(vocabulary id, count)` sorted by id.
    bags: Vec<Vec<(u32, u32)>>,
    positions: HashMap<String, usize>,
}

impl IndexWriter {
    /// A writer of an index with no entries yet that embeds tests with `params`.
    pub fn new(params: ModelParams) -> IndexWriter {
        IndexWriter {
            params,
            vocabulary: Vec::new(),
            token_ids: HashMap::default(),
            entries: Vec::new(),
            bags: Vec::new(),
            positions: HashMap::default(),
        }
    }

    /// A writer holding every entry of `index`, with its parameters and vocabulary, so that
    /// the entries keep their vectors exactly.
    pub fn from_index(index: &Index) -> IndexWriter {
        let vocabulary: Vec<Arc<str>> = (0..index.vocabulary_len() as u32)
            .map(|id| Arc::from(index.token(id)))
            .collect();
        let token_ids = vocabulary
            .iter()
            .enumerate()
            .map(|(id, token)| (token.clone(), id as u32))
            .collect();
        let entries: Vec<Entry> = index.entries().map(|entry| entry.to_entry()).collect();
        let bags = (0..index.len())
            .map(|position| index.stored_bag(position))
            .collect();
        let positions = positions(&entries);
        IndexWriter {
            params: index.params().clone(),
            vocabulary,
            token_ids,
            entries,
            bags,
            positions,
        }
    }

    pub fn params(&self) -> &ModelParams {
        &self.params
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

    /// The entry with this id.
    pub fn position(&self, id: &str) -> Option<usize> {
        self.positions.get(id).copied()
    }

    /// Adds a test, or replaces the entry with the same id in its place. New tokens join the
    /// vocabulary; the projection needs no change because each token's row derives from the
    /// seed and its text.
    pub fn upsert(&mut self, entry: Entry, bag: &TokenBag) -> usize {
        let mut ids: Vec<(u32, u32)> = bag
            .tokens
            .iter()
            .map(|(token, count)| {
                let id = match self.token_ids.get(&**token) {
                    Some(&id) => id,
                    None => {
                        let id = self.vocabulary.len() as u32;
                        self.vocabulary.push(token.clone());
                        self.token_ids.insert(token.clone(), id);
                        id
                    }
                };
                (id, *count)
            })
            .collect();
        ids.sort_unstable();
        match self.position(&entry.id) {
            Some(position) => {
                self.entries[position] = entry;
                self.bags[position] = ids;
                position
            }
            None => {
                self.positions.insert(entry.id.clone(), self.entries.len());
                self.entries.push(entry);
                self.bags.push(ids);
                self.entries.len() - 1
            }
        }
    }

    /// Changes the label of the entry with this id; false when there is none. A flaky entry
    /// keeps the code and signals it has; an entry that stops being flaky drops them.
    pub fn relabel(
        &mut self,
        id: &str,
        label: Label,
        categories: Vec<Category>,
        origin: Origin,
    ) -> bool {
        let Some(position) = self.position(id) else {
            return false;
        };
        let entry = &mut self.entries[position];
        entry.label = label;
        entry.categories = normalised_categories(categories);
        entry.origin = origin;
        if !label.is_flaky() {
            entry.code = None;
            entry.signals.clear();
        }
        true
    }

    /// Removes the entry with this id; false when there is none.
    pub fn remove(&mut self, id: &str) -> bool {
        let Some(position) = self.position(id) else {
            return false;
        };
        self.entries.remove(position);
        self.bags.remove(position);
        self.positions = positions(&self.entries);
        true
    }

    /// Gives the model its signal priors (see [`ModelParams::priors`]).
    pub fn set_priors(&mut self, priors: Vec<crate::prior::SignalPrior>) {
        self.params.priors = priors;
    }

    /// The index of these entries, laid out in memory.
    pub fn finish(self) -> Index {
        lay_out(&self.params, &self.vocabulary, &self.entries, &self.bags)
    }
}

fn positions(entries: &[Entry]) -> HashMap<String, usize> {
    entries
        .iter()
        .enumerate()
        .map(|(position, entry)| (entry.id.clone(), position))
        .collect()
}

/// See [`Index::build`].
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
    lay_out(&params, &vocabulary, &entries, &bags)
}

/// Lays entries out as format 3: projects each bag (the rows of its tokens, weighted by their
/// counts), quantises the vectors and writes every section.
pub(super) fn lay_out<T: AsRef<str> + Sync>(
    params: &ModelParams,
    vocabulary: &[T],
    entries: &[Entry],
    bags: &[Vec<(u32, u32)>],
) -> Index {
    let dims = params.projection.dims as usize;
    let projection_rows = params
        .projection
        .matrix(vocabulary.iter().map(|token| token.as_ref()));
    let rows: Vec<i8> = bags
        .par_iter()
        .flat_map_iter(|bag| {
            let mut projected = vec![0i32; dims];
            for &(id, count) in bag {
                if let Some(row) = projection_rows.outer_view(id as usize) {
                    // Saturating: a count read from a file can be any u32.
                    let count = i32::try_from(count).unwrap_or(i32::MAX);
                    for (column, &sign) in row.iter() {
                        projected[column] =
                            projected[column].saturating_add(sign.saturating_mul(count));
                    }
                }
            }
            vectors::quantize(&projected)
        })
        .collect();
    let (squared_norms, inverse_norms) = vectors::norms(&rows, dims);
    let values = vectors::lay_out(&rows, dims);

    let mut document_frequency = vec![0u32; vocabulary.len()];
    let mut bag_offsets = 0u32.to_le_bytes().to_vec();
    let mut bag_bytes = Vec::new();
    for bag in bags {
        for &(id, _) in bag {
            document_frequency[id as usize] += 1;
        }
        encode_bag(bag, &mut bag_bytes);
        bag_offsets.extend_from_slice(&(bag_bytes.len() as u32).to_le_bytes());
    }
    let document_frequency: Vec<u8> = document_frequency
        .iter()
        .flat_map(|count| count.to_le_bytes())
        .collect();
    let (vocabulary_offsets, vocabulary_text) =
        string_table(vocabulary.iter().map(|token| token.as_ref()));
    let mut order: Vec<u32> = (0..vocabulary.len() as u32).collect();
    order.sort_unstable_by(|&a, &b| {
        vocabulary[a as usize]
            .as_ref()
            .cmp(vocabulary[b as usize].as_ref())
    });
    let order: Vec<u8> = order.iter().flat_map(|id| id.to_le_bytes()).collect();

    let mut signal_ids: Vec<&str> = entries
        .iter()
        .flat_map(|entry| entry.signals.iter().map(String::as_str))
        .collect();
    signal_ids.sort_unstable();
    signal_ids.dedup();
    let (signal_offsets, signal_text) = string_table(signal_ids.iter().copied());
    let mut strings = Strings::default();
    let mut records = Vec::with_capacity(entries.len() * layout::ENTRY_LEN);
    let mut entry_signals: Vec<u8> = Vec::new();
    let mut languages = 0u32;
    for entry in entries {
        languages |= 1 << entry.language as u32;
        let signals_start = (entry_signals.len() / 2) as u32;
        for signal in entry.signals.iter().take(u16::MAX as usize) {
            let index = signal_ids.binary_search(&signal.as_str()).unwrap_or(0) as u16;
            entry_signals.extend_from_slice(&index.to_le_bytes());
        }
        let record = EntryRecord {
            id: strings.add(&entry.id),
            project: strings.add_shared(&entry.project),
            source: strings.add_shared(&entry.source),
            path: strings.add_optional(entry.path.as_deref(), true),
            code: strings.add_optional(entry.code.as_deref(), false),
            signals: (
                signals_start,
                entry.signals.len().min(u16::MAX as usize) as u16,
            ),
            categories: entry
                .categories
                .iter()
                .fold(0u16, |mask, &category| mask | 1 << category as u16),
            language: entry.language as u8,
            label: entry.label.code(),
            origin: entry.origin.code(),
        };
        record.write(&mut records);
    }
    let summary = summary_bytes(&Summary {
        entries: entries.len(),
        vocabulary: vocabulary.len(),
        signal_ids: signal_ids.len(),
        dims,
        languages,
    });
    let params_bytes = encode_params(params);
    let sections: Vec<(u32, Cow<'_, [u8]>)> = vec![
        (kind::SUMMARY, Cow::Owned(summary)),
        (kind::PARAMS, Cow::Owned(params_bytes)),
        (kind::VOCABULARY_OFFSETS, Cow::Owned(vocabulary_offsets)),
        (kind::VOCABULARY_TEXT, Cow::Owned(vocabulary_text)),
        (kind::VOCABULARY_ORDER, Cow::Owned(order)),
        (kind::DOCUMENT_FREQUENCY, Cow::Owned(document_frequency)),
        (kind::ENTRIES, Cow::Owned(records)),
        (kind::STRINGS, Cow::Owned(strings.bytes)),
        (kind::SIGNAL_OFFSETS, Cow::Owned(signal_offsets)),
        (kind::SIGNAL_TEXT, Cow::Owned(signal_text)),
        (kind::ENTRY_SIGNALS, Cow::Owned(entry_signals)),
        (kind::BAG_OFFSETS, Cow::Owned(bag_offsets)),
        (kind::BAG_BYTES, Cow::Owned(bag_bytes)),
        (kind::SQUARED_NORMS, Cow::Owned(squared_norms)),
        (kind::INVERSE_NORMS, Cow::Owned(inverse_norms)),
        (kind::VECTORS, Cow::Owned(values)),
    ];
    Index::laid_out(Storage::Owned(Arc::from(framed(&sections))), params.clone())
}

/// The parameters as their section holds them.
pub(super) fn encode_params(params: &ModelParams) -> Vec<u8> {
    // Plain data (strings, numbers, vectors of them) always encodes.
    bincode::serde::encode_to_vec(params, bincode::config::standard()).unwrap_or_default()
}

/// The sections behind a header.
fn framed(sections: &[(u32, Cow<'_, [u8]>)]) -> Vec<u8> {
    let borrowed: Vec<(u32, &[u8])> = sections
        .iter()
        .map(|(section_kind, bytes)| (*section_kind, &**bytes))
        .collect();
    file::frame(&payload(file::HEADER_LEN, &borrowed))
}

/// An index's bytes with its params laid out again (see [`Index::set_priors`]).
pub(super) fn relaid(index: &Index) -> Vec<u8> {
    framed(&index.sections())
}
