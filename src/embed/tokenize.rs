//! Turns a test's code into tokens: scikit-learn's default for reproducing FLAST, and a code-aware
//! lexer that generalises better across projects.

use serde::{Deserialize, Serialize};

use crate::language::Language;

/// Which tokeniser a model uses. Stored in the model so a test is always embedded the way the
/// model's own tests were.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Tokenizer {
    /// scikit-learn `CountVectorizer`'s default: `(?u)\b\w\w+\b` on the lower-cased text.
    /// FLAST uses it; it reproduces the paper's protocol.
    Flast,
    /// The code lexer: identifiers whole and split at camelCase and snake_case, qualified call
    /// paths such as `thread.sleep`, words of string literals, markers for URLs.
    Code,
}

impl Tokenizer {
    pub fn name(self) -> &'static str {
        match self {
            Tokenizer::Flast => "flast",
            Tokenizer::Code => "default",
        }
    }

    pub fn from_name(name: &str) -> Option<Tokenizer> {
        match name {
            "flast" => Some(Tokenizer::Flast),
            "default" | "code" => Some(Tokenizer::Code),
            _ => None,
        }
    }

    /// Calls `emit` once per token occurrence of `code`.
    pub fn tokenize(self, language: Language, code: &str, emit: &mut dyn FnMut(&str)) {
        match self {
            Tokenizer::Flast => flast_words(code, emit),
            Tokenizer::Code => crate::embed::lexer::code_tokens(language, code, emit),
        }
    }
}

/// A word character of Python's `re` in Unicode mode: letters, digits and the underscore.
pub(crate) fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// scikit-learn's `(?u)\b\w\w+\b` after lower-casing: every maximal run of at least two word
/// characters. Written out by hand because it is exactly that and ten times faster than a regex
/// with Unicode word boundaries.
pub(crate) fn flast_words(text: &str, emit: &mut dyn FnMut(&str)) {
    let mut lowered = String::new();
    let mut start = None;
    let mut chars_in_word = 0;
    for (position, c) in text
        .char_indices()
        .chain(std::iter::once((text.len(), ' ')))
    {
        if is_word_char(c) {
            if start.is_none() {
                start = Some(position);
                chars_in_word = 0;
            }
            chars_in_word += 1;
            continue;
        }
        if let Some(word_start) = start.take()
            && chars_in_word >= 2
        {
            let word = &text[word_start..position];
            if word
                .bytes()
                .any(|b| b.is_ascii_uppercase() || !b.is_ascii())
            {
                lowered.clear();
                lowered.extend(word.chars().flat_map(char::to_lowercase));
                emit(&lowered);
            } else {
                emit(word);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(tokenizer: Tokenizer, language: Language, code: &str) -> Vec<String> {
        let mut tokens = Vec::new();
        tokenizer.tokenize(language, code, &mut |token| tokens.push(token.to_string()));
        tokens
    }

    #[test]
    fn flast_matches_scikit_learn_default_pattern() {
        // CountVectorizer().build_analyzer()("Thread.sleep(1000); x = a_b + 7; Ünïcode é1")
        // gives ['thread', 'sleep', '1000', 'a_b', 'ünïcode', 'é1'].
        assert_eq!(
            collect(
                Tokenizer::Flast,
                Language::Java,
                "Thread.sleep(1000); x = a_b + 7; Ünïcode é1"
            ),
            ["thread", "sleep", "1000", "a_b", "ünïcode", "é1"]
        );
        assert_eq!(
            collect(Tokenizer::Flast, Language::Java, ""),
            Vec::<String>::new()
        );
        assert_eq!(collect(Tokenizer::Flast, Language::Java, "ab"), ["ab"]);
    }

    #[test]
    fn tokenizer_names_round_trip() {
        for tokenizer in [Tokenizer::Flast, Tokenizer::Code] {
            assert_eq!(Tokenizer::from_name(tokenizer.name()), Some(tokenizer));
        }
    }
}
