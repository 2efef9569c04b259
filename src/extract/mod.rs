//! Finds test methods in Java, Python and Rust source with tree-sitter.

mod id;
mod ignore;
mod layout;
mod query;

use std::borrow::Cow;
use std::cell::RefCell;
use std::ops::Range;

use tree_sitter::Parser;

use crate::language::Language;

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
    let captures = query::run(language, root, source);
    let package = captures
        .package
        .and_then(|range| source.get(range))
        // Java allows spaces and line breaks around the dots of a package name.
        .map(|package| package.split_whitespace().collect::<String>());
    let node_ranges: Vec<Range<usize>> = captures
        .candidates
        .iter()
        .map(|candidate| candidate.range.clone())
        .collect();
    let scope_ranges: Vec<Range<usize>> = captures
        .scopes
        .iter()
        .map(|scope| scope.range.clone())
        .collect();
    let enclosing = layout::enclosing_scopes(&scope_ranges, &node_ranges);

    let mut tests: Vec<TestMethod> = captures
        .candidates
        .iter()
        .zip(&enclosing)
        .filter_map(|(candidate, scope_indices)| {
            let start = layout::start_with_attached(
                source,
                candidate.range.start,
                &captures.attached,
                &captures.comments,
            );
            let range = start..candidate.range.end;
            let name = source.get(candidate.name.clone())?;
            let scopes: Vec<&str> = scope_indices
                .iter()
                .filter_map(|&index| source.get(captures.scopes.get(index)?.name.clone()))
                .collect();
            Some(TestMethod {
                language,
                name: name.to_owned(),
                id: id::test_id(language, path, package.as_deref(), &scopes, name),
                code: source.get(range.clone())?.to_owned(),
                range,
                name_range: candidate.name.clone(),
                ignored: false,
            })
        })
        .collect();
    // The ignore pass needs the tests sorted by their widened starts.
    tests.sort_by_key(|test| test.range.start);
    let ranges: Vec<Range<usize>> = tests.iter().map(|test| test.range.clone()).collect();
    let ignored = ignore::ignored_tests(source, &captures.comments, &ranges);
    for (test, ignored) in tests.iter_mut().zip(ignored) {
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
