//! A file's definitions, read with the tags query its grammar ships (`queries/tags.scm`): the
//! patterns that capture `@definition.*` with a `@name`; its `@reference.*` patterns are
//! disabled, as the index needs only where names are defined.

use std::sync::OnceLock;

use serde::{Deserialize, Serialize};
use tree_sitter::{Query, QueryCursor, StreamingIterator, Tree};

use crate::language::Language;

/// At most this many definitions are kept per file: a generated file of tables is no helper.
const MAX_DEFINITIONS: usize = 20_000;

/// What a tags query says a definition is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum DefinitionKind {
    /// A class, enum or record (Java), class (Python), struct, enum, union or type alias (Rust).
    Class,
    /// A Java interface, a Rust trait.
    Interface,
    /// A free function: Python's `def` (at any level), Rust's `fn` outside an `impl` or trait.
    Function,
    /// A Java method, a Rust function of an `impl` or trait.
    Method,
    /// A Rust `mod`.
    Module,
    /// A Python module-level assignment.
    Constant,
    /// A Rust `macro_rules!`.
    Macro,
}

impl DefinitionKind {
    fn from_capture(name: &str) -> Option<DefinitionKind> {
        Some(match name.strip_prefix("definition.")? {
            "class" => DefinitionKind::Class,
            "interface" => DefinitionKind::Interface,
            "function" => DefinitionKind::Function,
            "method" => DefinitionKind::Method,
            "module" => DefinitionKind::Module,
            "constant" => DefinitionKind::Constant,
            "macro" => DefinitionKind::Macro,
            _ => return None,
        })
    }
}

/// A name defined in a file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Definition {
    pub name: String,
    pub kind: DefinitionKind,
    /// The line of the name, from 1.
    pub line: u32,
}

/// Java's `tags.scm` knows classes and interfaces; enums and records hold tests' helpers too.
const JAVA_EXTRA: &str = "
(enum_declaration name: (identifier) @name) @definition.class
(record_declaration name: (identifier) @name) @definition.class
";

/// The tags query of `language` with its reference patterns disabled, compiled once.
fn query(language: Language) -> Option<&'static Query> {
    static QUERIES: [OnceLock<Option<Query>>; 3] =
        [OnceLock::new(), OnceLock::new(), OnceLock::new()];
    let (slot, source) = match language {
        Language::Java => (
            &QUERIES[0],
            format!("{}\n{JAVA_EXTRA}", tree_sitter_java::TAGS_QUERY),
        ),
        Language::Python => (&QUERIES[1], tree_sitter_python::TAGS_QUERY.to_string()),
        Language::Rust => (&QUERIES[2], tree_sitter_rust::TAGS_QUERY.to_string()),
    };
    slot.get_or_init(|| {
        let mut query = Query::new(&language.grammar(), &source).ok()?;
        let references: Vec<usize> =
            (0..query.pattern_count())
                .filter(|&pattern| {
                    let captures = query.capture_names();
                    !query.capture_quantifiers(pattern).iter().enumerate().any(
                        |(index, quantifier)| {
                            *quantifier != tree_sitter::CaptureQuantifier::Zero
                                && captures[index].starts_with("definition.")
                        },
                    )
                })
                .collect();
        for pattern in references {
            query.disable_pattern(pattern);
        }
        Some(query)
    })
    .as_ref()
}

/// The definitions of `tree` (a tree of `source` in `language`), in the order of the file.
pub fn definitions(language: Language, source: &str, tree: &Tree) -> Vec<Definition> {
    let Some(query) = query(language) else {
        return Vec::new();
    };
    if *tree.language() != language.grammar() {
        return Vec::new();
    }
    let names = query.capture_names();
    let Some(name_index) = query.capture_index_for_name("name") else {
        return Vec::new();
    };
    let mut cursor = QueryCursor::new();
    let mut matches = cursor.matches(query, tree.root_node(), source.as_bytes());
    let mut found: Vec<Definition> = Vec::new();
    // Where each name's definition at a byte went: Rust's query tags a method both as a method
    // and as a function, and the method wins.
    let mut at: std::collections::HashMap<usize, usize> = std::collections::HashMap::new();
    while let Some(found_match) = matches.next() {
        let kind = found_match
            .captures()
            .iter()
            .find_map(|capture| DefinitionKind::from_capture(names[capture.index as usize]));
        let name = found_match
            .captures()
            .iter()
            .find(|capture| capture.index == name_index);
        if let (Some(kind), Some(name)) = (kind, name) {
            let Some(text) = source.get(name.node.byte_range()) else {
                continue;
            };
            if let Some(&earlier) = at.get(&name.node.start_byte()) {
                if kind == DefinitionKind::Method {
                    found[earlier].kind = kind;
                }
                continue;
            }
            at.insert(name.node.start_byte(), found.len());
            found.push(Definition {
                name: text.to_string(),
                kind,
                line: name.node.start_position().row as u32 + 1,
            });
            if found.len() >= MAX_DEFINITIONS {
                break;
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract::parse;

    fn names(language: Language, source: &str) -> Vec<(String, DefinitionKind, u32)> {
        let tree = parse(language, source, None).unwrap();
        definitions(language, source, &tree)
            .into_iter()
            .map(|d| (d.name, d.kind, d.line))
            .collect()
    }

    #[test]
    fn java_classes_methods_enums_and_interfaces() {
        let source = "package a;\npublic abstract class Base {\n  protected void startCluster() {}\n}\n\
                      interface Api { void call(); }\nenum Mode { FAST }\nrecord Point(int x) {}\n";
        assert_eq!(
            names(Language::Java, source),
            [
                ("Base".into(), DefinitionKind::Class, 2),
                ("startCluster".into(), DefinitionKind::Method, 3),
                ("Api".into(), DefinitionKind::Interface, 5),
                ("call".into(), DefinitionKind::Method, 5),
                ("Mode".into(), DefinitionKind::Class, 6),
                ("Point".into(), DefinitionKind::Class, 7),
            ]
        );
    }

    #[test]
    fn python_functions_classes_and_module_constants() {
        let source = "TIMEOUT = 5\n\ndef wait_for(x):\n    return x\n\nclass Server:\n    def start(self):\n        pass\n";
        assert_eq!(
            names(Language::Python, source),
            [
                ("TIMEOUT".into(), DefinitionKind::Constant, 1),
                ("wait_for".into(), DefinitionKind::Function, 3),
                ("Server".into(), DefinitionKind::Class, 6),
                ("start".into(), DefinitionKind::Function, 7),
            ]
        );
    }

    #[test]
    fn rust_functions_methods_types_and_modules() {
        let source = "mod common;\npub struct Pool;\nimpl Pool {\n    pub fn spawn(&self) {}\n}\npub fn start_server() {}\n";
        assert_eq!(
            names(Language::Rust, source),
            [
                ("common".into(), DefinitionKind::Module, 1),
                ("Pool".into(), DefinitionKind::Class, 2),
                ("spawn".into(), DefinitionKind::Method, 4),
                ("start_server".into(), DefinitionKind::Function, 6),
            ]
        );
    }

    #[test]
    fn references_define_nothing_and_a_foreign_tree_gives_nothing() {
        let source = "class T { void t() { helper(); new Server(); } }";
        let found = names(Language::Java, source);
        assert_eq!(found.len(), 2, "{found:?}");
        let tree = parse(Language::Python, "def f(): pass", None).unwrap();
        assert!(definitions(Language::Java, "def f(): pass", &tree).is_empty());
    }
}
