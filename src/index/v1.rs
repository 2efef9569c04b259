//! Reading index format 1, whose signal prior had no project-relative weights. A project's own
//! index has no prior, so its tests and labels read exactly as before; a model trained with
//! format 1 keeps its prior, weighing each signal alike in every project, until it is retrained.

use serde::Deserialize;

use super::{Entry, FormatError, ModelParams, Stored, file};
use crate::embed::{Projection, Tokenizer};
use crate::language::Language;
use crate::prior::{CategoryEvidence, SignalPrior};

#[derive(Deserialize)]
#[cfg_attr(test, derive(serde::Serialize))]
struct StoredV1 {
    params: ParamsV1,
    vocabulary: Vec<String>,
    entries: Vec<Entry>,
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
struct PriorV1 {
    language: Language,
    bias: f64,
    weights: Vec<(String, f64)>,
    information_probability: f64,
    warning_probability: f64,
    category_evidence: Vec<CategoryEvidence>,
}

/// Decodes a format 1 payload into the current form.
pub(super) fn decode(payload: &[u8]) -> Result<Stored, FormatError> {
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
            category_evidence: prior.category_evidence,
        })
        .collect();
    Ok(Stored {
        params: ModelParams {
            tokenizer: old.params.tokenizer,
            projection: old.params.projection,
            description: old.params.description,
            priors,
        },
        vocabulary: old.vocabulary,
        entries: old.entries,
        bags: old.bags,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::Index;
    use crate::prevalence::Prevalence;
    use crate::signals;

    /// `index` as format 1 wrote it, with `priors`.
    fn format_1(index: &Index, priors: Vec<PriorV1>) -> Vec<u8> {
        let stored = index.stored();
        let old = StoredV1 {
            params: ParamsV1 {
                tokenizer: stored.params.tokenizer,
                projection: stored.params.projection,
                description: stored.params.description,
                priors,
            },
            vocabulary: stored.vocabulary,
            entries: stored.entries,
            bags: stored.bags,
        };
        let mut bytes = file::encode(&old).unwrap();
        bytes[8..12].copy_from_slice(&1u32.to_le_bytes());
        bytes
    }

    #[test]
    fn a_project_index_of_format_1_keeps_its_tests_and_labels() {
        let index = super::super::tests::small_index();
        let loaded = Index::from_bytes(&format_1(&index, Vec::new())).unwrap();
        assert_eq!(loaded.entries(), index.entries());
        assert_eq!(loaded.to_bytes().unwrap(), index.to_bytes().unwrap());
    }

    #[test]
    fn a_model_of_format_1_keeps_its_prior() {
        let index = super::super::tests::small_index();
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
    }
}
