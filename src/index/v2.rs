//! Reading index format 2: one bincode value holding the parameters, the vocabulary, the entries
//! with a flaky or not flaky label, and each entry's token bag. A file of format 2 (or 1, see
//! [`super::v1`]) is decoded and laid out as format 3 in memory.
//!
//! Its labels become format 3's: flaky stays flaky; "not flaky" set by hand in the editor is
//! stable; a repository's "not flaky" (no source named the test) is unlabelled; and a dataset's
//! "not flaky" is unlabelled in a model with a signal prior, which never let such a neighbour
//! outvote its evidence, and stable in a plain FLAST model, whose vote counts it.

use serde::Deserialize;

use super::numbers::check_numbers;
use super::{Entry, FormatError, Index, Label, ModelParams, Origin, file, writer};
use crate::category::Category;
use crate::embed::{Projection, Tokenizer};
use crate::language::Language;
use crate::prior::SignalPrior;

/// An entry as formats 1 and 2 stored it.
#[derive(Deserialize)]
#[cfg_attr(test, derive(serde::Serialize))]
pub(super) struct EntryV2 {
    pub id: String,
    pub project: String,
    pub source: String,
    pub language: Language,
    pub flaky: bool,
    pub categories: Vec<Category>,
    pub origin: Origin,
    pub path: Option<String>,
    pub code: Option<String>,
}

impl EntryV2 {
    /// The entry in format 3's terms (see the module documentation); it has no signals.
    fn migrated(self, has_prior: bool) -> Entry {
        let label = match (self.flaky, self.origin) {
            (true, _) => Label::Flaky,
            (false, Origin::Manual) => Label::Stable,
            (false, Origin::History) => Label::Unlabelled,
            (false, Origin::Dataset) if has_prior => Label::Unlabelled,
            (false, Origin::Dataset) => Label::Stable,
        };
        Entry {
            id: self.id,
            project: self.project,
            source: self.source,
            language: self.language,
            label,
            categories: super::normalised_categories(self.categories),
            origin: self.origin,
            path: self.path,
            code: self.code,
            signals: Vec::new(),
        }
    }
}

#[derive(Deserialize)]
#[cfg_attr(test, derive(serde::Serialize))]
struct StoredV2 {
    params: ParamsV2,
    vocabulary: Vec<String>,
    entries: Vec<EntryV2>,
    bags: Vec<Vec<(u32, u32)>>,
}

#[derive(Deserialize)]
#[cfg_attr(test, derive(serde::Serialize))]
struct ParamsV2 {
    tokenizer: Tokenizer,
    projection: Projection,
    description: String,
    priors: Vec<PriorV2>,
}

/// The signal prior as format 2 stored it, with the category evidence it no longer reads.
#[derive(Deserialize)]
#[cfg_attr(test, derive(serde::Serialize))]
#[allow(dead_code)] // `category_evidence` is decoded to be skipped
struct PriorV2 {
    language: Language,
    bias: f64,
    weights: Vec<(String, f64)>,
    share_weights: Vec<(String, f64)>,
    typical_shares: Vec<(String, f64)>,
    information_probability: f64,
    warning_probability: f64,
    category_evidence: Vec<CategoryEvidenceV2>,
}

/// How far the labelled data backed a pattern's category; written empty by the last releases of
/// format 2 and never read since a warning's category is that of its strongest evidence.
#[derive(Deserialize)]
#[cfg_attr(test, derive(serde::Serialize))]
#[allow(dead_code)] // decoded to be skipped: nothing reads it any more
pub(super) struct CategoryEvidenceV2 {
    pattern: String,
    agreeing: u32,
    labelled: u32,
    trusted: bool,
}

/// A decoded file of format 1 or 2, before it is laid out as format 3.
pub(super) struct Legacy {
    pub params: ModelParams,
    pub vocabulary: Vec<String>,
    pub entries: Vec<Entry>,
    pub bags: Vec<Vec<(u32, u32)>>,
}

impl Legacy {
    /// Migrates decoded entries (see the module documentation).
    pub fn new(
        params: ModelParams,
        vocabulary: Vec<String>,
        entries: Vec<EntryV2>,
        bags: Vec<Vec<(u32, u32)>>,
    ) -> Legacy {
        let has_prior = !params.priors.is_empty();
        Legacy {
            entries: entries
                .into_iter()
                .map(|entry| entry.migrated(has_prior))
                .collect(),
            params,
            vocabulary,
            bags,
        }
    }

    /// Checks the invariants and the numbers a decoded payload must hold before it is trusted.
    pub fn check(&self, payload_len: usize) -> Result<(), FormatError> {
        let corrupt = |what: &str| Err(FormatError::Undecodable(what.to_string()));
        check_numbers(
            &self.params,
            self.vocabulary.len(),
            self.entries.len(),
            payload_len,
        )?;
        if self.entries.len() != self.bags.len() {
            return corrupt("entries and bags differ in number");
        }
        let vocabulary_len = self.vocabulary.len() as u32;
        if self
            .bags
            .iter()
            .flatten()
            .any(|&(id, _)| id >= vocabulary_len)
        {
            return corrupt("a bag names a token outside the vocabulary");
        }
        if self
            .bags
            .iter()
            .any(|bag| bag.windows(2).any(|pair| pair[0].0 >= pair[1].0))
        {
            return corrupt("a bag is not sorted");
        }
        Ok(())
    }

    /// The index laid out as format 3.
    pub fn into_index(self) -> Index {
        writer::lay_out(&self.params, &self.vocabulary, &self.entries, &self.bags)
    }
}

/// Decodes a format 2 payload.
pub(super) fn decode(payload: &[u8]) -> Result<Legacy, FormatError> {
    let old: StoredV2 = file::decode_payload(payload)?;
    let priors = old
        .params
        .priors
        .into_iter()
        .map(|prior| SignalPrior {
            language: prior.language,
            bias: prior.bias,
            weights: prior.weights,
            share_weights: prior.share_weights,
            typical_shares: prior.typical_shares,
            information_probability: prior.information_probability,
            warning_probability: prior.warning_probability,
            category_evidence: Vec::new(),
        })
        .collect();
    let params = ModelParams {
        tokenizer: old.params.tokenizer,
        projection: old.params.projection,
        description: old.params.description,
        priors,
    };
    Ok(Legacy::new(params, old.vocabulary, old.entries, old.bags))
}

/// Vocabulary, entries and bags, as formats 1 and 2 stored them.
#[cfg(test)]
pub(super) type LegacyParts = (Vec<String>, Vec<EntryV2>, Vec<Vec<(u32, u32)>>);

/// The parts of a format 1 or 2 file that hold `index`'s entries: what those formats wrote.
#[cfg(test)]
pub(super) fn legacy_parts(index: &Index) -> LegacyParts {
    let vocabulary = (0..index.vocabulary_len() as u32)
        .map(|id| index.token(id).to_string())
        .collect();
    let entries = index
        .entries()
        .map(|entry| EntryV2 {
            id: entry.id().to_string(),
            project: entry.project().to_string(),
            source: entry.source().to_string(),
            language: entry.language(),
            flaky: entry.is_flaky(),
            categories: entry.categories(),
            origin: entry.origin(),
            path: entry.path().map(str::to_string),
            code: entry.code().map(str::to_string),
        })
        .collect();
    let bags = (0..index.len())
        .map(|position| index.stored_bag(position))
        .collect();
    (vocabulary, entries, bags)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::tests::small_index;

    /// `index` as format 2 wrote it, with `priors`.
    fn format_2(index: &Index, priors: Vec<PriorV2>) -> Vec<u8> {
        let (vocabulary, entries, bags) = legacy_parts(index);
        let params = index.params();
        let old = StoredV2 {
            params: ParamsV2 {
                tokenizer: params.tokenizer,
                projection: params.projection,
                description: params.description.clone(),
                priors,
            },
            vocabulary,
            entries,
            bags,
        };
        file::encode_legacy(&old, 2)
    }

    #[test]
    fn a_format_2_file_loads_with_the_same_searches() {
        let index = small_index();
        let loaded = Index::from_bytes(&format_2(&index, Vec::new())).unwrap();
        let entries: Vec<Entry> = loaded.entries().map(|entry| entry.to_entry()).collect();
        let expected: Vec<Entry> = index.entries().map(|entry| entry.to_entry()).collect();
        // The signals of flaky entries are what format 2 did not keep.
        let without_signals: Vec<Entry> = expected
            .into_iter()
            .map(|entry| Entry {
                signals: Vec::new(),
                ..entry
            })
            .collect();
        assert_eq!(entries, without_signals);
        let query = index.embed(&index.bag(Language::Java, crate::index::tests::SLEEPY));
        let again = loaded.embed(&loaded.bag(Language::Java, crate::index::tests::SLEEPY));
        assert_eq!(
            index.nearest(&query, 3, |_| true),
            loaded.nearest(&again, 3, |_| true)
        );
    }

    #[test]
    fn labels_are_migrated_by_who_gave_them() {
        let entry = |flaky: bool, origin: Origin| EntryV2 {
            id: "t".to_string(),
            project: "p".to_string(),
            source: "s".to_string(),
            language: Language::Java,
            flaky,
            categories: vec![Category::Time, Category::AsyncWait],
            origin,
            path: None,
            code: None,
        };
        let label = |flaky, origin, has_prior| entry(flaky, origin).migrated(has_prior).label;
        assert_eq!(label(true, Origin::History, false), Label::Flaky);
        assert_eq!(label(false, Origin::Manual, true), Label::Stable);
        assert_eq!(label(false, Origin::History, false), Label::Unlabelled);
        assert_eq!(label(false, Origin::Dataset, true), Label::Unlabelled);
        assert_eq!(label(false, Origin::Dataset, false), Label::Stable);
        assert_eq!(
            entry(true, Origin::Dataset).migrated(false).categories,
            [Category::AsyncWait, Category::Time]
        );
    }

    #[test]
    fn a_model_of_format_2_keeps_its_prior_without_the_category_evidence() {
        let index = small_index();
        let prior = PriorV2 {
            language: Language::Java,
            bias: -2.0,
            weights: vec![("fixed-sleep".to_string(), 3.0)],
            share_weights: vec![("fixed-sleep".to_string(), -1.0)],
            typical_shares: vec![("fixed-sleep".to_string(), 0.1)],
            information_probability: 0.5,
            warning_probability: 0.7,
            category_evidence: vec![CategoryEvidenceV2 {
                pattern: "fixed sleep".to_string(),
                agreeing: 3,
                labelled: 4,
                trusted: true,
            }],
        };
        let loaded = Index::from_bytes(&format_2(&index, vec![prior])).unwrap();
        let prior = loaded.prior(Language::Java).expect("the prior survives");
        assert_eq!(prior.share_weights, [("fixed-sleep".to_string(), -1.0)]);
        // Saved again, it is a file of format 3 that reads back the same.
        let bytes = loaded.to_bytes();
        assert_eq!(&bytes[8..12], &file::FORMAT_VERSION.to_le_bytes());
        assert_eq!(Index::from_bytes(&bytes).unwrap().params(), loaded.params());
    }
}
