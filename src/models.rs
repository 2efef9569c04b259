//! The default models shipped inside the binary, one per language, so flakesense is useful on a
//! project that has no labels of its own. How each was built is in `models/README.md`.

use std::sync::{Arc, OnceLock};

use crate::index::{FormatError, Index};
use crate::language::Language;

static JAVA: &[u8] = include_bytes!("../models/java.idx");
static PYTHON: &[u8] = include_bytes!("../models/python.idx");
static RUST: &[u8] = include_bytes!("../models/rust.idx");

/// The file bytes of a language's shipped model.
pub fn embedded_bytes(language: Language) -> &'static [u8] {
    match language {
        Language::Java => JAVA,
        Language::Python => PYTHON,
        Language::Rust => RUST,
    }
}

/// The shipped model of a language, opened once per process and shared.
///
/// A model of format 3 is read where it lies in the binary; one of an older format is decoded,
/// which takes tens of milliseconds, so callers that serve an editor do it off the request
/// path. A failure means a broken build and is returned, never a panic.
pub fn embedded(language: Language) -> Result<Arc<Index>, Arc<FormatError>> {
    static LOADED: [OnceLock<Result<Arc<Index>, Arc<FormatError>>>; 3] =
        [OnceLock::new(), OnceLock::new(), OnceLock::new()];
    let slot = &LOADED[language as usize];
    slot.get_or_init(|| {
        Index::from_static(embedded_bytes(language))
            .map(Arc::new)
            .map_err(Arc::new)
    })
    .clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`Index::from_static`] trusts the binary's own bytes without reading them all on every
    /// start: this is where their checksum and their tables are verified, as for a file.
    #[test]
    fn every_embedded_model_opens_as_a_checked_file() {
        for language in Language::ALL {
            Index::from_bytes(embedded_bytes(language))
                .unwrap_or_else(|error| panic!("the {language} model: {error}"));
        }
    }
}
