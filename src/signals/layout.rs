//! A file's functions as an edit sees them: the outermost functions and methods that sit directly
//! in the file, a class or a module ("chunks"), and whether the code between them (the
//! skeleton) parsed cleanly. A keystroke inside one chunk leaves every other chunk and the
//! skeleton as they were, so what was found there can be kept ([`rescan`](mod@super::rescan)).

use std::ops::Range;
use std::sync::OnceLock;

use tree_sitter::Node;

use super::catalogue::catalogue;
use crate::language::Language;

/// The chunks of a parsed file, in source order, and whether its skeleton is clean.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Layout {
    pub chunks: Vec<Range<usize>>,
    /// An error or a missing node outside every chunk: where tree-sitter recovered, an edit
    /// elsewhere may change how the rest parses.
    pub skeleton_errors: bool,
}

/// Node kinds that hold chunks and nothing a catalogue pattern starts at: the file, classes and
/// their bodies, modules.
fn containers(language: Language) -> &'static [&'static str] {
    match language {
        Language::Java => &[
            "program",
            "class_declaration",
            "class_body",
            "interface_declaration",
            "interface_body",
            "enum_declaration",
            "enum_body",
            "enum_body_declarations",
            "record_declaration",
        ],
        // A `block` is a container only as a class's body, a `decorated_definition` only
        // around a class (see `is_container`).
        Language::Python => &[
            "module",
            "class_definition",
            "block",
            "decorated_definition",
        ],
        Language::Rust => &[
            "source_file",
            "mod_item",
            "declaration_list",
            "impl_item",
            "trait_item",
        ],
    }
}

/// Whether `node` is a function or method an edit can be confined to.
fn is_chunk(language: Language, node: Node<'_>) -> bool {
    match (language, node.kind()) {
        (Language::Java, "method_declaration" | "constructor_declaration") => true,
        (Language::Python, "function_definition") => true,
        (Language::Python, "decorated_definition") => node
            .child_by_field_name("definition")
            .is_some_and(|definition| definition.kind() == "function_definition"),
        (Language::Rust, "function_item") => true,
        _ => false,
    }
}

fn is_container(language: Language, node: Node<'_>) -> bool {
    let kind = node.kind();
    if !containers(language).contains(&kind) {
        return false;
    }
    match (language, kind) {
        (Language::Python, "block") => node
            .parent()
            .is_some_and(|parent| parent.kind() == "class_definition"),
        (Language::Python, "decorated_definition") => node
            .child_by_field_name("definition")
            .is_some_and(|definition| definition.kind() == "class_definition"),
        _ => true,
    }
}

/// The chunks under `root` and the state of the skeleton.
pub fn layout(language: Language, root: Node<'_>) -> Layout {
    let mut layout = Layout::default();
    let mut cursor = root.walk();
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        if is_chunk(language, node) && node != root {
            layout.chunks.push(node.byte_range());
        } else if is_container(language, node) && !node.is_error() && !node.is_missing() {
            cursor.reset(node);
            let children: Vec<Node> = node.children(&mut cursor).collect();
            stack.extend(children.into_iter().rev());
        } else if node.has_error() || node.is_missing() {
            layout.skeleton_errors = true;
        }
    }
    layout
}

/// The chunk that spans exactly `range`.
pub fn chunk_at<'tree>(
    language: Language,
    root: Node<'tree>,
    range: &Range<usize>,
) -> Option<Node<'tree>> {
    spanning(root, range, |node| is_chunk(language, node))
}

/// The node under `root` that spans exactly `range` and is `wanted`: among nodes of the same
/// extent, the innermost such one.
pub(super) fn spanning<'tree>(
    root: Node<'tree>,
    range: &Range<usize>,
    wanted: impl Fn(Node<'tree>) -> bool,
) -> Option<Node<'tree>> {
    let mut node = root.descendant_for_byte_range(range.start, range.end)?;
    loop {
        if node.byte_range() == *range && wanted(node) {
            return Some(node);
        }
        node = node
            .parent()
            .filter(|parent| parent.byte_range() == *range)?;
    }
}

/// The body of a chunk: an edit that starts inside it leaves the chunk's name, parameters,
/// annotations and decorators as they were.
pub fn body_start(node: Node<'_>) -> Option<usize> {
    let function = match node.kind() {
        "decorated_definition" => node.child_by_field_name("definition")?,
        _ => node,
    };
    Some(function.child_by_field_name("body")?.start_byte())
}

/// Whether no pattern of the language's catalogue (its facts and its signals) starts at a
/// container: then a match is inside one chunk or inside the skeleton, never across them, and
/// keeping what was found outside an edited chunk is sound.
pub fn catalogue_allows_splicing(language: Language) -> bool {
    static ALLOWED: [OnceLock<bool>; 3] = [OnceLock::new(), OnceLock::new(), OnceLock::new()];
    *ALLOWED[language as usize].get_or_init(|| {
        let catalogue = catalogue(language);
        let grammar = language.grammar();
        containers(language).iter().all(|kind| {
            let id = grammar.id_for_node_kind(kind, true);
            !catalogue.query.may_start_at(id) && !catalogue.facts.may_start_at(id)
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunks_of(language: Language, source: &str) -> (Vec<&str>, bool) {
        let tree = crate::extract::parse(language, source, None).expect("the grammars load");
        let layout = layout(language, tree.root_node());
        let texts = layout
            .chunks
            .iter()
            .map(|range| source[range.clone()].lines().next().unwrap_or(""))
            .collect();
        (texts, layout.skeleton_errors)
    }

    #[test]
    fn chunks_are_the_outermost_methods_and_functions_of_files_classes_and_modules() {
        let java = "class T {\n  int f = 1;\n  @Test void a() { Runnable r = new Runnable() { \
                    public void run() {} }; }\n  T() {}\n  static class In { void b() {} }\n}\n";
        assert_eq!(
            chunks_of(Language::Java, java),
            (
                vec![
                    "@Test void a() { Runnable r = new Runnable() { public void run() {} }; }",
                    "T() {}",
                    "void b() {}"
                ],
                false
            )
        );
        let python = "import os\n\n@fixture\ndef f():\n    def inner():\n        pass\n\n\
                      class TestX:\n    def test_a(self):\n        pass\n\nif os.name:\n    \
                      def test_b():\n        pass\n";
        assert_eq!(
            chunks_of(Language::Python, python),
            (vec!["@fixture", "def test_a(self):"], false)
        );
        let rust = "#[test]\nfn a() {}\nmod tests {\n    fn b() { fn c() {} }\n}\n";
        assert_eq!(
            chunks_of(Language::Rust, rust),
            (vec!["fn a() {}", "fn b() { fn c() {} }"], false)
        );
    }

    #[test]
    fn an_error_between_chunks_is_reported_and_one_inside_a_chunk_is_not() {
        let (_, inside) = chunks_of(Language::Java, "class T {\n  void a() { int x = ; }\n}\n");
        assert!(!inside);
        let (_, outside) = chunks_of(Language::Java, "class T {\n  int x = ;\n  void a() {}\n}\n");
        assert!(outside);
    }

    #[test]
    fn no_catalogue_pattern_starts_at_a_container() {
        for language in Language::ALL {
            assert!(catalogue_allows_splicing(language), "{language}");
        }
    }
}
