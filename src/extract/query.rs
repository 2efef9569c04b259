//! Runs the embedded test query of a language and collects its captures as sorted byte ranges.

use std::ops::Range;
use std::sync::OnceLock;

use streaming_iterator::StreamingIterator;
use tree_sitter::{Node, Query, QueryCursor};

use crate::language::Language;

/// The capture names the queries in `grammars/` may use; the header of each `.scm` file says what
/// they mean. Captures starting with an underscore only feed predicates.
const CAPTURE_NAMES: [&str; 8] = [
    "test",
    "name",
    "empty",
    "scope",
    "scope.name",
    "package",
    "attached",
    "comment",
];

/// A test the query found, before its range is widened over attached attributes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Candidate {
    pub range: Range<usize>,
    pub name: Range<usize>,
}

/// A class or module that may enclose tests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Scope {
    pub range: Range<usize>,
    pub name: Range<usize>,
}

/// Everything one run of a query found in a file, each list sorted by start.
#[derive(Debug, Default)]
pub(super) struct Captures {
    pub candidates: Vec<Candidate>,
    pub scopes: Vec<Scope>,
    pub attached: Vec<Range<usize>>,
    pub comments: Vec<Range<usize>>,
    pub package: Option<Range<usize>>,
}

/// The query of `language`, compiled on first use and shared afterwards.
fn query(language: Language) -> &'static Query {
    static JAVA: OnceLock<Query> = OnceLock::new();
    static PYTHON: OnceLock<Query> = OnceLock::new();
    static RUST: OnceLock<Query> = OnceLock::new();
    let cell = match language {
        Language::Java => &JAVA,
        Language::Python => &PYTHON,
        Language::Rust => &RUST,
    };
    cell.get_or_init(|| {
        // The queries are part of the binary, not input; `every_query_compiles` guards them.
        compile(language).unwrap_or_else(|error| panic!("{error}"))
    })
}

fn source_of(language: Language) -> &'static str {
    match language {
        Language::Java => include_str!("../../grammars/java.scm"),
        Language::Python => include_str!("../../grammars/python.scm"),
        Language::Rust => include_str!("../../grammars/rust.scm"),
    }
}

fn compile(language: Language) -> Result<Query, String> {
    let query = Query::new(&language.grammar(), source_of(language))
        .map_err(|error| format!("grammars/{language}.scm does not compile: {error}"))?;
    let unknown = query
        .capture_names()
        .iter()
        .find(|name| !name.starts_with('_') && !CAPTURE_NAMES.contains(name));
    match unknown {
        Some(name) => Err(format!(
            "grammars/{language}.scm uses an unknown capture @{name}"
        )),
        None => Ok(query),
    }
}

/// Runs the query of `language` once over the tree under `root`.
pub(super) fn run(language: Language, root: Node, source: &str) -> Captures {
    let query = query(language);
    let names = query.capture_names();
    let mut captures = Captures::default();
    let mut cursor = QueryCursor::new();
    let mut matches = cursor.matches(query, root, source.as_bytes());
    while let Some(found) = matches.next() {
        let (mut test, mut name, mut scope, mut scope_name) = (None, None, None, None);
        let mut acceptable = true;
        for capture in found.captures() {
            let range = capture.node.byte_range();
            match names.get(capture.index as usize).copied().unwrap_or("_") {
                "test" => test = Some(range),
                "name" => name = Some(range),
                "empty" => acceptable &= capture.node.named_child_count() == 0,
                "scope" => scope = Some(range),
                "scope.name" => scope_name = Some(range),
                "package" => captures.package = captures.package.take().or(Some(range)),
                "attached" => captures.attached.push(range),
                "comment" => captures.comments.push(range),
                _ => {}
            }
        }
        if let (Some(range), Some(name), true) = (test, name, acceptable) {
            captures.candidates.push(Candidate { range, name });
        }
        if let (Some(range), Some(name)) = (scope, scope_name) {
            captures.scopes.push(Scope { range, name });
        }
    }
    // Several patterns, or several test attributes on one function, find the same test.
    captures
        .candidates
        .sort_by_key(|candidate| (candidate.range.start, candidate.range.end));
    captures.candidates.dedup();
    // An outer scope sorts before an inner one starting at the same byte.
    captures
        .scopes
        .sort_by_key(|scope| (scope.range.start, usize::MAX - scope.range.end));
    // A Rust doc comment is both attached and a comment, from two patterns.
    for ranges in [&mut captures.attached, &mut captures.comments] {
        ranges.sort_by_key(|range| range.start);
        ranges.dedup();
    }
    captures
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
    fn candidates_found_by_two_patterns_are_listed_once() {
        let source = "class TestA(unittest.TestCase):\n    def test_b(self):\n        pass\n";
        let Some(tree) = super::super::parse(Language::Python, source, None) else {
            panic!("the Python grammar loads");
        };
        let captures = run(Language::Python, tree.root_node(), source);
        assert_eq!(captures.candidates.len(), 1);
        assert_eq!(captures.scopes.len(), 1);
    }
}
