//! The languages flakesense understands and how each one is recognised.

use std::fmt;
use std::path::Path;

use serde::{Deserialize, Serialize};

/// A programming language whose test methods flakesense can extract and judge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Language {
    Java,
    Python,
    Rust,
}

impl Language {
    pub const ALL: [Language; 3] = [Language::Java, Language::Python, Language::Rust];

    /// The lower-case name used in the canonical CSV, in models and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Language::Java => "java",
            Language::Python => "python",
            Language::Rust => "rust",
        }
    }

    /// Parses the lower-case name written by [`Language::name`].
    pub fn from_name(name: &str) -> Option<Language> {
        match name.trim().to_ascii_lowercase().as_str() {
            "java" => Some(Language::Java),
            "python" | "py" => Some(Language::Python),
            "rust" | "rs" => Some(Language::Rust),
            _ => None,
        }
    }

    /// Recognises a source file by its extension.
    pub fn from_path(path: &Path) -> Option<Language> {
        match path.extension()?.to_str()? {
            "java" => Some(Language::Java),
            "py" => Some(Language::Python),
            "rs" => Some(Language::Rust),
            _ => None,
        }
    }

    /// Recognises an extension-less file by its first line (a `#!` interpreter line).
    pub fn from_shebang(first_line: &str) -> Option<Language> {
        let line = first_line.strip_prefix("#!")?;
        line.contains("python").then_some(Language::Python)
    }

    /// The LSP language identifier an editor sends for files of this language.
    pub fn lsp_id(self) -> &'static str {
        self.name()
    }

    /// The tree-sitter grammar of this language.
    pub fn grammar(self) -> tree_sitter::Language {
        match self {
            Language::Java => tree_sitter_java::LANGUAGE.into(),
            Language::Python => tree_sitter_python::LANGUAGE.into(),
            Language::Rust => tree_sitter_rust::LANGUAGE.into(),
        }
    }
}

impl fmt::Display for Language {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_files_by_extension() {
        assert_eq!(
            Language::from_path(Path::new("a/FooTest.java")),
            Some(Language::Java)
        );
        assert_eq!(
            Language::from_path(Path::new("tests/test_x.py")),
            Some(Language::Python)
        );
        assert_eq!(
            Language::from_path(Path::new("src/lib.rs")),
            Some(Language::Rust)
        );
        assert_eq!(Language::from_path(Path::new("stubs/x.pyi")), None);
        assert_eq!(Language::from_path(Path::new("README.md")), None);
        assert_eq!(Language::from_path(Path::new("Makefile")), None);
    }

    #[test]
    fn names_round_trip() {
        for language in Language::ALL {
            assert_eq!(Language::from_name(language.name()), Some(language));
        }
        assert_eq!(Language::from_name("cobol"), None);
    }
}
