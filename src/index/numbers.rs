//! The numbers of an index file's parameters, checked before anything trusts them.

use super::{FormatError, ModelParams};

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
pub(super) fn check_numbers(
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
