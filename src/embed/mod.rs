//! From a test's code to a vector: token bags and the sparse random projection.

mod lexer;
pub mod projection;
pub mod tokenize;

use rustc_hash::FxHashMap as HashMap;
use std::sync::Arc;

pub use projection::Projection;
pub use tokenize::Tokenizer;

use crate::language::Language;

/// A test as FLAST sees it: each distinct token with its number of occurrences.
/// Sorted by token, so two bags compare and merge in one pass.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TokenBag {
    pub tokens: Vec<(Arc<str>, u32)>,
}

impl TokenBag {
    /// Tokenises `code` into a bag.
    pub fn from_code(tokenizer: Tokenizer, language: Language, code: &str) -> TokenBag {
        TokenBag::from_code_interned(tokenizer, language, code, &mut TokenInterner::default())
    }

    /// Tokenises `code`, sharing token strings through `interner` (many bags, one copy of each token).
    pub fn from_code_interned(
        tokenizer: Tokenizer,
        language: Language,
        code: &str,
        interner: &mut TokenInterner,
    ) -> TokenBag {
        let mut counts: HashMap<Arc<str>, u32> = HashMap::default();
        tokenizer.tokenize(language, code, &mut |token| {
            *counts.entry(interner.intern(token)).or_insert(0) += 1;
        });
        let mut tokens: Vec<(Arc<str>, u32)> = counts.into_iter().collect();
        tokens.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        TokenBag { tokens }
    }

    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }

    pub fn contains(&self, token: &str) -> bool {
        self.tokens
            .binary_search_by(|(candidate, _)| (**candidate).cmp(token))
            .is_ok()
    }
}

/// Keeps one shared copy of each token string.
#[derive(Debug, Default)]
pub struct TokenInterner {
    tokens: HashMap<Arc<str>, ()>,
}

impl TokenInterner {
    pub fn intern(&mut self, token: &str) -> Arc<str> {
        if let Some((shared, ())) = self.tokens.get_key_value(token) {
            return shared.clone();
        }
        let shared: Arc<str> = Arc::from(token);
        self.tokens.insert(shared.clone(), ());
        shared
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bags_count_occurrences_and_sort_tokens() {
        let bag = TokenBag::from_code(
            Tokenizer::Flast,
            Language::Java,
            "sleep(); Sleep(); assert x",
        );
        let tokens: Vec<(&str, u32)> = bag.tokens.iter().map(|(t, c)| (&**t, *c)).collect();
        assert_eq!(tokens, [("assert", 1), ("sleep", 2)]);
        assert!(bag.contains("sleep"));
        assert!(!bag.contains("x"));
    }

    #[test]
    fn interned_bags_share_token_strings() {
        let mut interner = TokenInterner::default();
        let a = TokenBag::from_code_interned(
            Tokenizer::Flast,
            Language::Java,
            "wait wait",
            &mut interner,
        );
        let b =
            TokenBag::from_code_interned(Tokenizer::Flast, Language::Java, "wait", &mut interner);
        assert!(Arc::ptr_eq(&a.tokens[0].0, &b.tokens[0].0));
    }
}
