//! Per-language extraction settings: the embedded test queries and what the tree looks like around a test.

use std::sync::OnceLock;

use tree_sitter::Query;

use crate::language::Language;

/// What extraction knows about one grammar, beyond what its query says.
pub(super) struct Grammar {
    /// The query source, from `grammars/`.
    query_source: &'static str,
    /// Nodes whose `name` field joins a test's id: classes for Java and Python, inline modules for Rust.
    pub scopes: &'static [&'static str],
    /// The node holding the file's package, whose name prefixes Java ids.
    pub package: Option<&'static str>,
    /// Sibling nodes before a test that belong to it. Rust attributes are siblings of the function in
    /// the tree, not its children, unlike Java annotations and Python decorators.
    pub attached_before: &'static [&'static str],
    /// Comment nodes, which may sit between a test and the nodes attached before it.
    pub comments: &'static [&'static str],
}

/// The compiled query of a grammar and the indices of the captures extraction reads.
pub(super) struct CompiledQuery {
    pub query: Query,
    pub test: u32,
    pub name: u32,
    pub comment: u32,
    /// A node that must have no named children, such as JUnit 3's empty parameter list.
    pub empty: Option<u32>,
}

impl Grammar {
    pub fn of(language: Language) -> &'static Grammar {
        match language {
            Language::Java => &Grammar {
                query_source: include_str!("../../grammars/java.scm"),
                scopes: &[
                    "class_declaration",
                    "interface_declaration",
                    "enum_declaration",
                    "record_declaration",
                ],
                package: Some("package_declaration"),
                attached_before: &[],
                comments: &["line_comment", "block_comment"],
            },
            Language::Python => &Grammar {
                query_source: include_str!("../../grammars/python.scm"),
                scopes: &["class_definition"],
                package: None,
                attached_before: &[],
                comments: &["comment"],
            },
            Language::Rust => &Grammar {
                query_source: include_str!("../../grammars/rust.scm"),
                scopes: &["mod_item"],
                package: None,
                attached_before: &["attribute_item"],
                comments: &["line_comment", "block_comment"],
            },
        }
    }

    /// Compiles the query of `language` on first use; later calls share it.
    pub fn query(language: Language) -> &'static CompiledQuery {
        static JAVA: OnceLock<CompiledQuery> = OnceLock::new();
        static PYTHON: OnceLock<CompiledQuery> = OnceLock::new();
        static RUST: OnceLock<CompiledQuery> = OnceLock::new();
        let cell = match language {
            Language::Java => &JAVA,
            Language::Python => &PYTHON,
            Language::Rust => &RUST,
        };
        cell.get_or_init(|| {
            // The queries are part of the binary, not input: `every_query_compiles` guards them.
            compile(language).unwrap_or_else(|error| panic!("{error}"))
        })
    }
}

fn compile(language: Language) -> Result<CompiledQuery, String> {
    let query = Query::new(&language.grammar(), Grammar::of(language).query_source)
        .map_err(|error| format!("grammars/{language}.scm does not compile: {error}"))?;
    let index = |name: &str| {
        query
            .capture_index_for_name(name)
            .ok_or_else(|| format!("grammars/{language}.scm has no @{name} capture"))
    };
    Ok(CompiledQuery {
        test: index("test")?,
        name: index("name")?,
        comment: index("comment")?,
        empty: query.capture_index_for_name("empty"),
        query,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_query_compiles() {
        for language in Language::ALL {
            if let Err(error) = compile(language) {
                panic!("{error}");
            }
        }
    }

    #[test]
    fn every_node_kind_named_in_the_settings_exists_in_its_grammar() {
        for language in Language::ALL {
            let grammar = Grammar::of(language);
            let tree_sitter_language = language.grammar();
            let kinds = grammar
                .scopes
                .iter()
                .chain(grammar.package.iter())
                .chain(grammar.attached_before)
                .chain(grammar.comments);
            for kind in kinds {
                let id = tree_sitter_language.id_for_node_kind(kind, true);
                assert_ne!(id, 0, "{language} has no node kind {kind}");
            }
        }
    }
}
