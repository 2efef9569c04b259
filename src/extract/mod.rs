//! Finds test methods in Java, Python and Rust source with tree-sitter.

mod grammar;
mod id;
mod ignore;

use std::borrow::Cow;
use std::cell::RefCell;
use std::ops::Range;

use streaming_iterator::StreamingIterator;
use tree_sitter::{Node, Parser, QueryCursor};

use crate::language::Language;
use grammar::Grammar;

/// One test method or function found in a source file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestMethod {
    pub language: Language,
    /// The bare name: `testFoo`, `test_foo`.
    pub name: String,
    /// The canonical identifier of `../shared/data/README.md`: Java `pkg.Outer$Inner#method`,
    /// Python `path/test_x.py::Class::test_y` or `path/test_x.py::test_y`,
    /// Rust `path/file.rs::module::test_fn`.
    pub id: String,
    /// Byte range of the whole test, annotations, decorators and attributes included.
    pub range: Range<usize>,
    /// Byte range of the test's name.
    pub name_range: Range<usize>,
    /// The source text of `range`.
    pub code: String,
    /// The test carries a `flakesense: ignore` comment and must not be reported.
    pub ignored: bool,
}

/// What extraction found in one file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Extraction {
    pub tests: Vec<TestMethod>,
    /// The file has syntax errors; the tests in its intact parts are still listed.
    pub has_syntax_errors: bool,
}

thread_local! {
    // A parser is not `Sync`; one per thread spares re-allocating its buffers on every keystroke.
    static PARSER: RefCell<Parser> = RefCell::new(Parser::new());
}

/// Parses `source`, reusing `old_tree` for incremental re-parsing when given.
///
/// `old_tree` must already carry the edits that turned its text into `source` (see
/// [`tree_sitter::Tree::edit`]); a tree of another language is ignored. Returns `None` only if
/// tree-sitter refuses the grammar, which the tests of this module rule out.
pub fn parse(
    language: Language,
    source: &str,
    old_tree: Option<&tree_sitter::Tree>,
) -> Option<tree_sitter::Tree> {
    let grammar = language.grammar();
    let old_tree = old_tree.filter(|tree| *tree.language() == grammar);
    PARSER.with_borrow_mut(|parser| {
        parser.set_language(&grammar).ok()?;
        parser.parse(source, old_tree)
    })
}

/// Parses `source` and finds its tests in one call.
pub fn extract_tests(language: Language, path: &str, source: &str) -> Extraction {
    match parse(language, source, None) {
        Some(tree) => extract_tests_from_tree(language, path, source, &tree),
        None => Extraction::default(),
    }
}

/// Finds the tests of an already parsed file; the language server keeps each document's tree and
/// edits it incrementally. `path` is the file's path as ids should show it (repository-relative,
/// `/`-separated). Tests are listed in source order.
pub fn extract_tests_from_tree(
    language: Language,
    path: &str,
    source: &str,
    tree: &tree_sitter::Tree,
) -> Extraction {
    let root = tree.root_node();
    let has_syntax_errors = root.has_error();
    if *tree.language() != language.grammar() {
        // A query runs only on trees of its own grammar.
        return Extraction {
            tests: Vec::new(),
            has_syntax_errors,
        };
    }
    let grammar = Grammar::of(language);
    let (mut candidates, mut comments) = find_candidates_and_comments(language, root, source);
    // Several patterns, or several test attributes of one function, may find the same test.
    candidates.sort_by_key(|candidate| (candidate.test.start_byte(), candidate.test.id()));
    candidates.dedup_by_key(|candidate| candidate.test.id());
    comments.sort_by_key(|comment| comment.start);

    let package = grammar
        .package
        .and_then(|kind| package_name(root, kind, source));
    let mut tests: Vec<TestMethod> = candidates
        .iter()
        .filter_map(|candidate| {
            let range =
                start_with_attached_nodes(grammar, candidate.test)..candidate.test.end_byte();
            let name_range = candidate.name.byte_range();
            let scopes = enclosing_scope_names(grammar, candidate.test, source);
            let name = source.get(name_range.clone())?;
            Some(TestMethod {
                language,
                name: name.to_owned(),
                id: id::test_id(language, path, package.as_deref(), &scopes, name),
                code: source.get(range.clone())?.to_owned(),
                range,
                name_range,
                ignored: false,
            })
        })
        .collect();
    // The ignore pass needs the tests sorted by their widened starts.
    tests.sort_by_key(|test| test.range.start);
    let ranges: Vec<Range<usize>> = tests.iter().map(|test| test.range.clone()).collect();
    for (test, ignored) in tests
        .iter_mut()
        .zip(ignore::ignored_tests(source, &comments, &ranges))
    {
        test.ignored = ignored;
    }
    Extraction {
        tests,
        has_syntax_errors,
    }
}

/// Decodes file bytes as UTF-8, replacing invalid sequences; the flag says whether any were.
pub fn decode_source(bytes: &[u8]) -> (String, bool) {
    match String::from_utf8_lossy(bytes) {
        Cow::Borrowed(valid) => (valid.to_owned(), false),
        Cow::Owned(repaired) => (repaired, true),
    }
}

/// A test the query found: the node whose range is the test's, before widening, and its name.
struct Candidate<'tree> {
    test: Node<'tree>,
    name: Node<'tree>,
}

/// Runs the language's query once over the whole tree.
fn find_candidates_and_comments<'tree>(
    language: Language,
    root: Node<'tree>,
    source: &str,
) -> (Vec<Candidate<'tree>>, Vec<Range<usize>>) {
    let compiled = Grammar::query(language);
    let mut candidates = Vec::new();
    let mut comments = Vec::new();
    let mut cursor = QueryCursor::new();
    let mut matches = cursor.matches(&compiled.query, root, source.as_bytes());
    while let Some(found) = matches.next() {
        let (mut test, mut name, mut acceptable) = (None, None, true);
        for capture in found.captures() {
            let index = Some(capture.index);
            if index == Some(compiled.test) {
                test = Some(capture.node);
            } else if index == Some(compiled.name) {
                name = Some(capture.node);
            } else if index == Some(compiled.comment) {
                comments.push(capture.node.byte_range());
            } else if index == compiled.empty {
                acceptable &= capture.node.named_child_count() == 0;
            }
        }
        if let (Some(test), Some(name), true) = (test, name, acceptable) {
            candidates.push(Candidate { test, name });
        }
    }
    (candidates, comments)
}

/// Where a test starts once the nodes attached before it (Rust attributes and doc comments) are
/// counted in. Plain comments between them are walked over but do not start the test.
fn start_with_attached_nodes(grammar: &Grammar, test: Node) -> usize {
    let mut start = test.start_byte();
    if grammar.attached_before.is_empty() {
        return start;
    }
    let mut sibling = test.prev_sibling();
    while let Some(node) = sibling {
        let is_doc_comment = node.child_by_field_name("outer").is_some();
        if grammar.attached_before.contains(&node.kind()) || is_doc_comment {
            start = node.start_byte();
        } else if !grammar.comments.contains(&node.kind()) {
            break;
        }
        sibling = node.prev_sibling();
    }
    start
}

/// The names of the classes or modules around `node`, outermost first.
fn enclosing_scope_names<'source>(
    grammar: &Grammar,
    node: Node,
    source: &'source str,
) -> Vec<&'source str> {
    let mut names = Vec::new();
    let mut ancestor = node.parent();
    while let Some(scope) = ancestor {
        if grammar.scopes.contains(&scope.kind())
            && let Some(name) = scope.child_by_field_name("name")
            && let Some(text) = source.get(name.byte_range())
        {
            names.push(text);
        }
        ancestor = scope.parent();
    }
    names.reverse();
    names
}

/// The dotted name of the file's package declaration, without the spaces Java allows inside it.
fn package_name(root: Node, kind: &str, source: &str) -> Option<String> {
    let mut cursor = root.walk();
    let declaration = root
        .named_children(&mut cursor)
        .find(|child| child.kind() == kind)?;
    let mut cursor = declaration.walk();
    let name = declaration
        .named_children(&mut cursor)
        .find(|child| matches!(child.kind(), "identifier" | "scoped_identifier"))?;
    let text = source.get(name.byte_range())?;
    Some(
        text.chars()
            .filter(|character| !character.is_whitespace())
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_utf8_decodes_unchanged() {
        assert_eq!(
            decode_source("fn é() {}".as_bytes()),
            ("fn é() {}".to_owned(), false)
        );
        assert_eq!(decode_source(b""), (String::new(), false));
    }

    #[test]
    fn invalid_utf8_is_replaced_and_reported() {
        let (text, replaced) = decode_source(b"def test_a():\xff\xfe pass");
        assert!(replaced);
        assert_eq!(text, "def test_a():\u{fffd}\u{fffd} pass");
    }

    #[test]
    fn a_tree_of_another_language_yields_no_tests() {
        let source = "#[test]\nfn a() {}\n";
        let Some(rust_tree) = parse(Language::Rust, source, None) else {
            panic!("the Rust grammar loads");
        };
        assert_eq!(
            extract_tests_from_tree(Language::Rust, "a.rs", source, &rust_tree)
                .tests
                .len(),
            1
        );
        assert!(
            extract_tests_from_tree(Language::Python, "a.rs", source, &rust_tree)
                .tests
                .is_empty()
        );
        let reparsed = parse(Language::Java, source, Some(&rust_tree));
        assert!(reparsed.is_some_and(|tree| *tree.language() == Language::Java.grammar()));
    }
}
