//! Finds test methods in Java, Python and Rust source with tree-sitter, as each language's test
//! runner finds them, within a bounded time and memory whatever the file holds.

mod budget;
mod discovery;
mod fnmatch;
mod id;
mod ignore;
mod java;
mod layout;
mod markers;
mod parser;
mod pytest_config;
mod python;
mod python_classes;
mod python_inherit;
mod rust;
mod rust_macros;
mod rust_repetition;
mod walk;

pub use discovery::{DEFAULT_NORECURSEDIRS, Discovery, PytestSettings};
pub use markers::Marker;
pub use pytest_config::{CONFIG_FILES as PYTEST_CONFIG_FILES, ConfigError};
pub use python_classes::{ModuleSource, PythonModule, module_paths};
pub use python_inherit::{Elsewhere, Inherited};

use std::borrow::Cow;
use std::ops::Range;
use std::time::Duration;

use crate::language::Language;
use budget::{Budget, Limits, Spent};

pub use budget::count_parser_memory;
use walk::Stop;

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
    /// Byte range of the block of comments directly above the test (no blank line between, each
    /// on its own line), outside `range`; empty, at the test's start, when there is none.
    pub comments_above: Range<usize>,
    /// The annotations, decorators or attributes before the test's name, in source order (the
    /// first 64).
    pub markers: Vec<Marker>,
    /// Byte ranges of the comments before the test's name, within `range`, in source order (the
    /// first 64).
    pub head_comments: Vec<Range<usize>>,
    /// For a test pytest collects in a class from a base class or mixin: that class, and the
    /// module defining the method when it is another file.
    pub inherited: Option<Inherited>,
}

impl TestMethod {
    /// A marker switches the test off wherever it runs ([`markers::switches_off`]): it never
    /// runs, so it can fail no run. `source` is the text of the test's file.
    pub fn switched_off(&self, source: &str) -> bool {
        self.markers.iter().any(|marker| {
            source
                .get(marker.name.clone())
                .is_some_and(|name| markers::switches_off(self.language, name))
        })
    }
}

/// What extraction found in one file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Extraction {
    pub tests: Vec<TestMethod>,
    /// The file has syntax errors; the tests in its intact parts are still listed.
    pub has_syntax_errors: bool,
    /// Why some or all of the file's tests were left out, when a bound was reached.
    pub incomplete: Option<Incomplete>,
}

/// A bound that cut the analysis of a file short (issue 14, "bounded work for any input").
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Incomplete {
    /// The parser spent its budget, as it does on some hostile input: no tests are listed.
    #[error(
        "parsing took more than {:.1} s of processor time; no tests were looked for",
        limit.as_secs_f64()
    )]
    ParseTime { limit: Duration },
    /// The parser's tree outgrew its memory budget, as it does for megabytes of one flat list
    /// or of nested brackets: no tests are listed.
    #[error(
        "its syntax tree would take more than {} MB; no tests were looked for",
        limit / (1024 * 1024)
    )]
    ParseMemory { limit: usize },
    /// Classes or modules nest deeper than real code does: no tests are listed.
    #[error("classes or modules nest more than {limit} deep; no tests were looked for")]
    TooDeep { limit: usize },
    /// The file holds more tests than are judged in one file: the first ones are listed.
    #[error("only the first {listed} of its {found} tests are judged")]
    TooManyTests { listed: usize, found: usize },
}

/// Parses `source`, reusing `old_tree` for incremental re-parsing when given.
///
/// `old_tree` must already carry the edits that turned its text into `source` (see
/// [`tree_sitter::Tree::edit`]); a tree of another language is ignored. Returns `None` when the
/// parser spends its processor-time budget, as it can on hostile input (see [`Incomplete`]), or
/// if tree-sitter refuses the grammar, which the tests of this module rule out.
pub fn parse(
    language: Language,
    source: &str,
    old_tree: Option<&tree_sitter::Tree>,
) -> Option<tree_sitter::Tree> {
    let budget = Budget::start(&Limits::DEFAULT);
    parser::parse_within(language, source, old_tree, None, &budget)
        .ok()
        .flatten()
}

/// Parses `source` and finds its tests in one call, by each runner's default rules.
pub fn extract_tests(language: Language, path: &str, source: &str) -> Extraction {
    extract_tests_with(language, path, source, &Discovery::default())
}

/// Parses `source` and finds its tests in one call, by the project's rules in `discovery`.
pub fn extract_tests_with(
    language: Language,
    path: &str,
    source: &str,
    discovery: &Discovery,
) -> Extraction {
    extract_within(language, path, source, None, discovery, &Limits::DEFAULT)
}

/// Parses `source` within the bounds on one file and finds its tests by the project's rules;
/// the tree comes back too for whoever reads more of the file (the signals, the context).
pub fn read_file(
    language: Language,
    path: &str,
    source: &str,
    discovery: &Discovery,
) -> (Extraction, Option<tree_sitter::Tree>) {
    let limits = &Limits::DEFAULT;
    let budget = Budget::start(limits);
    match parser::parse_within(language, source, None, None, &budget) {
        Ok(Some(tree)) => {
            let extraction = find_tests(language, path, source, &tree, discovery, limits, &budget);
            (extraction, Some(tree))
        }
        Ok(None) => (Extraction::default(), None),
        Err(stop) => (incomplete(stop, false, limits), None),
    }
}

fn extract_within(
    language: Language,
    path: &str,
    source: &str,
    tree: Option<&tree_sitter::Tree>,
    discovery: &Discovery,
    limits: &Limits,
) -> Extraction {
    let budget = Budget::start(limits);
    let parsed;
    let tree = match tree {
        Some(tree) => tree,
        None => match parser::parse_within(language, source, None, None, &budget) {
            Ok(Some(tree)) => {
                parsed = tree;
                &parsed
            }
            Ok(None) => return Extraction::default(),
            Err(stop) => return incomplete(stop, false, limits),
        },
    };
    find_tests(language, path, source, tree, discovery, limits, &budget)
}

/// Finds the tests of an already parsed file, by each runner's default rules.
pub fn extract_tests_from_tree(
    language: Language,
    path: &str,
    source: &str,
    tree: &tree_sitter::Tree,
) -> Extraction {
    extract_tests_from_tree_with(language, path, source, tree, &Discovery::default())
}

/// Finds the tests of an already parsed file; the language server keeps each document's tree and
/// edits it incrementally. `path` is the file's path as ids should show it (repository-relative,
/// `/`-separated). Tests are listed in source order.
pub fn extract_tests_from_tree_with(
    language: Language,
    path: &str,
    source: &str,
    tree: &tree_sitter::Tree,
    discovery: &Discovery,
) -> Extraction {
    extract_within(
        language,
        path,
        source,
        Some(tree),
        discovery,
        &Limits::DEFAULT,
    )
}

fn incomplete(stop: Stop, has_syntax_errors: bool, limits: &Limits) -> Extraction {
    Extraction {
        tests: Vec::new(),
        has_syntax_errors,
        incomplete: Some(match stop {
            Stop::Parse(Spent::Time) => Incomplete::ParseTime {
                limit: limits.parse_time,
            },
            Stop::Parse(Spent::Memory) => Incomplete::ParseMemory {
                limit: limits.parse_memory,
            },
            Stop::TooDeep => Incomplete::TooDeep {
                limit: limits.max_nesting,
            },
        }),
    }
}

fn find_tests(
    language: Language,
    path: &str,
    source: &str,
    tree: &tree_sitter::Tree,
    discovery: &Discovery,
    limits: &Limits,
    budget: &Budget,
) -> Extraction {
    let root = tree.root_node();
    let has_syntax_errors = root.has_error();
    if *tree.language() != language.grammar() {
        // A walk knows the node kinds of its own grammar only.
        return Extraction {
            has_syntax_errors,
            ..Extraction::default()
        };
    }
    let found = match language {
        Language::Java => java::walk(root, source, limits.max_nesting),
        Language::Python => python::walk(
            root,
            source,
            path,
            &discovery.pytest,
            discovery.modules.as_deref(),
            limits.max_nesting,
        ),
        Language::Rust => rust::walk(root, source, limits.max_nesting, budget),
    };
    let mut found = match found {
        Ok(found) => found,
        Err(stop) => return incomplete(stop, has_syntax_errors, limits),
    };
    let comments = walk::comments(root, source, language);
    found.attached.sort_by_key(|range| range.start);
    found.attached.dedup();
    // Inherited tests share their method's range with the base class's own test, and a test
    // defined elsewhere shares its class's name with the others: each is told by its scope and
    // where it is defined.
    let key = |candidate: &walk::Candidate| {
        let elsewhere = candidate
            .inherited
            .as_ref()
            .and_then(|inherited| inherited.elsewhere.as_ref())
            .map(|elsewhere| (elsewhere.module.path.clone(), elsewhere.range.start));
        (
            candidate.range.start,
            candidate.range.end,
            candidate.scope,
            elsewhere,
        )
    };
    found.candidates.sort_by_key(key);
    found.candidates.dedup_by_key(|candidate| key(candidate));
    found.markers.sort_by_key(|marker| marker.range.start);
    found.markers.dedup_by_key(|marker| marker.range.start);
    let package = found
        .package
        .clone()
        .and_then(|range| source.get(range))
        // Java allows spaces and line breaks around the dots of a package name.
        .map(|package| package.split_whitespace().collect::<String>());

    let mut tests = Vec::new();
    let mut id_bytes = 0;
    for candidate in &found.candidates {
        if tests.len() >= limits.max_tests || id_bytes > limits.max_id_bytes {
            break;
        }
        let start =
            layout::start_with_attached(source, candidate.range.start, &found.attached, &comments);
        let range = start..candidate.range.end;
        let elsewhere = candidate
            .inherited
            .as_ref()
            .and_then(|inherited| inherited.elsewhere.as_ref());
        let (name, code) = match elsewhere {
            Some(elsewhere) => (
                elsewhere.module.text.get(elsewhere.name_range.clone()),
                elsewhere.module.text.get(elsewhere.range.clone()),
            ),
            None => (
                source.get(candidate.name.clone()),
                source.get(range.clone()),
            ),
        };
        let (Some(name), Some(code)) = (name, code) else {
            continue;
        };
        let scopes: Vec<&str> = found
            .scope_chain(candidate.scope)
            .into_iter()
            .filter_map(|scope| source.get(scope))
            .collect();
        let id = id::test_id(language, path, package.as_deref(), &scopes, name);
        id_bytes += id.len();
        let head = start..candidate.name.start;
        let markers = within(&found.markers, &head, |marker| &marker.range).to_vec();
        let head_comments = within(&comments, &head, |comment| comment)
            .iter()
            .take(markers::MAX_PER_TEST)
            .cloned()
            .collect();
        tests.push(TestMethod {
            language,
            name: name.to_owned(),
            id,
            code: code.to_owned(),
            range,
            name_range: candidate.name.clone(),
            ignored: false,
            comments_above: start..start,
            markers,
            head_comments,
            inherited: candidate.inherited.clone(),
        });
    }
    let incomplete = (tests.len() < found.candidates.len()).then_some(Incomplete::TooManyTests {
        listed: tests.len(),
        found: found.candidates.len(),
    });
    // The ignore pass needs the tests sorted by their widened starts.
    tests.sort_by_key(|test| test.range.start);
    let ranges: Vec<Range<usize>> = tests.iter().map(|test| test.range.clone()).collect();
    let above: Vec<Range<usize>> = ranges
        .iter()
        .map(|test| layout::comments_directly_above(source, &comments, test.start))
        .collect();
    let ignored = ignore::ignored_tests(source, &comments, &ranges, &above);
    for ((test, ignored), block) in tests.iter_mut().zip(ignored).zip(above) {
        test.ignored = ignored;
        // `block` lies within `comments`: the indices of comments before the test's start.
        if !block.is_empty() {
            test.comments_above = comments[block.start].start..comments[block.end - 1].end;
        }
    }
    // A test defined in another module is silenced there, where its code is.
    for test in &mut tests {
        if let Some(elsewhere) = test
            .inherited
            .as_ref()
            .and_then(|inherited| inherited.elsewhere.as_ref())
        {
            test.ignored = python_inherit::ignored_in_module(elsewhere);
        }
    }
    Extraction {
        tests,
        has_syntax_errors,
        incomplete,
    }
}

/// The run of `items` (sorted by start, not overlapping) that lies within `span`.
fn within<'a, T>(
    items: &'a [T],
    span: &Range<usize>,
    range: impl Fn(&T) -> &Range<usize>,
) -> &'a [T] {
    let first = items.partition_point(|item| range(item).start < span.start);
    let count = items[first..].partition_point(|item| range(item).end <= span.end);
    &items[first..first + count]
}

/// Decodes file bytes as UTF-8, replacing invalid sequences; the flag says whether any were.
pub fn decode_source(bytes: &[u8]) -> (String, bool) {
    match String::from_utf8_lossy(bytes) {
        Cow::Borrowed(valid) => (valid.to_owned(), false),
        Cow::Owned(repaired) => (repaired, true),
    }
}

#[cfg(test)]
mod tests;
