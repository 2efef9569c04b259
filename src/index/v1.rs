//! Reading index format 1, whose signal prior had no project-relative weights. A project's own
//! index has no prior, so its tests and labels read as format 2's do (see [`super::v2`]); a
//! model trained with format 1 keeps its prior, weighing each signal alike in every project,
//! until it is retrained.

use serde::Deserialize;

use super::v2::{CategoryEvidenceV2, EntryV2, Legacy};
use super::{FormatError, ModelParams, file};
use crate::embed::{Projection, Tokenizer};
use crate::language::Language;
use crate::prior::SignalPrior;

#[derive(Deserialize)]
#[cfg_attr(test, derive(serde::Serialize))]
struct StoredV1 {
    params: ParamsV1,
    vocabulary: Vec<String>,
    entries: Vec<EntryV2>,
    bags: Vec<Vec<(u32, u32)>>,
}

#[derive(Deserialize)]
#[cfg_attr(test, derive(serde::Serialize))]
struct ParamsV1 {
    tokenizer: Tokenizer,
    projection: Projection,
    description: String,
    priors: Vec<PriorV1>,
}

#[derive(Deserialize)]
#[cfg_attr(test, derive(serde::Serialize))]
#[allow(dead_code)] // `category_evidence` is decoded to be skipped
struct PriorV1 {
    language: Language,
    bias: f64,
    weights: Vec<(String, f64)>,
    information_probability: f64,
    warning_probability: f64,
    category_evidence: Vec<CategoryEvidenceV2>,
}

/// Decodes a format 1 payload.
pub(super) fn decode(payload: &[u8]) -> Result<Legacy, FormatError> {
    let old: StoredV1 = file::decode_payload(payload)?;
    let priors = old
        .params
        .priors
        .into_iter()
        .map(|prior| SignalPrior {
            language: prior.language,
            bias: prior.bias,
            weights: prior.weights,
            share_weights: Vec::new(),
            typical_shares: Vec::new(),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::v2::legacy_parts;
    use crate::index::{Entry, Index, Label};
    use crate::prevalence::Prevalence;
    use crate::signals;

    /// `index` as format 1 wrote it, with `priors`.
    fn format_1(index: &Index, priors: Vec<PriorV1>) -> Vec<u8> {
        let (vocabulary, entries, bags) = legacy_parts(index);
        let params = index.params();
        let old = StoredV1 {
            params: ParamsV1 {
                tokenizer: params.tokenizer,
                projection: params.projection,
                description: params.description.clone(),
                priors,
            },
            vocabulary,
            entries,
            bags,
        };
        file::encode_legacy(&old, 1)
    }

    #[test]
    fn a_project_index_of_format_1_keeps_its_tests_and_labels() {
        let index = crate::index::tests::small_index();
        let loaded = Index::from_bytes(&format_1(&index, Vec::new())).unwrap();
        let labels: Vec<(String, Label)> = loaded
            .entries()
            .map(|entry| (entry.id().to_string(), entry.label()))
            .collect();
        // The small index's tests come from a dataset without a prior: "not flaky" is stable.
        assert_eq!(
            labels,
            [
                ("a#waits".to_string(), Label::Flaky),
                ("a#adds".to_string(), Label::Stable),
                ("a#parses".to_string(), Label::Stable),
            ]
        );
        let codes = |index: &Index| -> Vec<Option<String>> {
            index
                .entries()
                .map(|entry| entry.to_entry())
                .map(|entry: Entry| entry.code)
                .collect()
        };
        assert_eq!(codes(&loaded), codes(&index));
    }

    #[test]
    fn a_model_of_format_1_keeps_its_prior() {
        let index = crate::index::tests::small_index();
        let prior = PriorV1 {
            language: Language::Java,
            bias: -2.0,
            weights: vec![("fixed sleep".to_string(), 3.0)],
            information_probability: 0.5,
            warning_probability: 0.7,
            category_evidence: Vec::new(),
        };
        let loaded = Index::from_bytes(&format_1(&index, vec![prior])).unwrap();
        let prior = loaded.prior(Language::Java).expect("the prior survives");
        let sleeps = signals::detect(Language::Java, "void t() { Thread.sleep(5); }");
        // Without project-relative weights, a signal weighs the same in every project.
        let everywhere: Prevalence = [(Language::Java, &sleeps)].into_iter().collect();
        let sigmoid_1 = 1.0 / (1.0 + (-1.0f64).exp());
        assert!((prior.probability(&sleeps, &Prevalence::default()) - sigmoid_1).abs() < 1e-12);
        assert!((prior.probability(&sleeps, &everywhere) - sigmoid_1).abs() < 1e-12);
        // In a model with a prior, a dataset's "not flaky" is unlabelled.
        assert_eq!(loaded.entry(1).label(), Label::Unlabelled);
    }
}
