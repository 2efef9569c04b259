//! What the walks of the three languages share: what they find, how they step through a tree,
//! and why they stop.
//!
//! Tests are found by walking the syntax tree in Rust, not with tree-sitter queries. A query
//! cursor looks at every node of the file, and for each one scans its later siblings
//! (`ts_tree_cursor_current_status`), which makes a long run of unmatched brackets quadratic;
//! a pattern with a quantifier (`(attribute_item)*`) or an unanchored child multiplies its states
//! on repeated attributes and annotations (2,000 `#[test]` lines took 86 s). The walks here enter
//! only the nodes tests can live in (files, classes, modules, macro bodies), each step of a
//! [`tree_sitter::TreeCursor`] costs constant time, and nesting is bounded.

use std::ops::Range;

use tree_sitter::{Node, TreeCursor};

use super::budget::Spent;
use super::markers::Marker;
use crate::language::Language;

/// A test a walk found, before its range is widened over attached attributes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Candidate {
    pub range: Range<usize>,
    pub name: Range<usize>,
    /// The innermost scope around it, an index into [`Found::scopes`].
    pub scope: Option<usize>,
    /// For a test a Python class inherits: where it is collected and defined.
    pub inherited: Option<super::Inherited>,
}

/// A class or module around tests; its own enclosing scope is `parent`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Scope {
    pub name: Range<usize>,
    pub parent: Option<usize>,
}

/// Everything a walk found in one file.
#[derive(Debug, Default)]
pub(super) struct Found {
    pub candidates: Vec<Candidate>,
    pub scopes: Vec<Scope>,
    /// Rust attributes and outer doc comments: siblings of the item they belong to in the tree,
    /// so a test's range is widened over the ones directly before it.
    pub attached: Vec<Range<usize>>,
    /// Java's package name.
    pub package: Option<Range<usize>>,
    /// The markers of the tests (and, in Rust, of every item), in no particular order.
    pub markers: Vec<Marker>,
}

impl Found {
    pub fn add_scope(&mut self, name: Range<usize>, parent: Option<usize>) -> usize {
        self.scopes.push(Scope { name, parent });
        self.scopes.len() - 1
    }

    /// The names of the scopes from the outermost to `innermost`.
    pub fn scope_chain(&self, innermost: Option<usize>) -> Vec<Range<usize>> {
        let mut chain = Vec::new();
        let mut next = innermost;
        while let Some(scope) = next.and_then(|index| self.scopes.get(index)) {
            chain.push(scope.name.clone());
            next = scope.parent;
        }
        chain.reverse();
        chain
    }
}

/// Why a walk gave a file up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Stop {
    /// Scopes nest deeper than the limit.
    TooDeep,
    /// Parsing (a macro body, for a walk) spent the rest of the parse budget.
    Parse(Spent),
}

/// The nesting of the scope a walk is in, checked against the limit on every step inward.
#[derive(Debug, Clone, Copy)]
pub(super) struct Depth {
    pub level: usize,
    pub limit: usize,
}

impl Depth {
    pub fn new(limit: usize) -> Depth {
        Depth { level: 0, limit }
    }

    /// One level further in, or [`Stop::TooDeep`].
    pub fn inner(self) -> Result<Depth, Stop> {
        if self.level >= self.limit {
            return Err(Stop::TooDeep);
        }
        Ok(Depth {
            level: self.level + 1,
            limit: self.limit,
        })
    }
}

/// The children of a node in order, through one cursor: asking a node for its n-th child or
/// its next sibling scans from the start, a cursor steps in constant time.
pub(super) struct Children<'tree> {
    cursor: TreeCursor<'tree>,
    started: bool,
    done: bool,
}

pub(super) fn children(node: Node<'_>) -> Children<'_> {
    Children {
        cursor: node.walk(),
        started: false,
        done: false,
    }
}

impl<'tree> Iterator for Children<'tree> {
    type Item = Node<'tree>;

    fn next(&mut self) -> Option<Node<'tree>> {
        if self.done {
            return None;
        }
        let moved = if self.started {
            self.cursor.goto_next_sibling()
        } else {
            self.started = true;
            self.cursor.goto_first_child()
        };
        self.done = !moved;
        moved.then(|| self.cursor.node())
    }
}

/// The leaves under a node in source order (tokens, in a macro's token tree), comments and
/// other extras left out. Depth-first through one cursor, so linear however deep the tree.
pub(super) struct Leaves<'tree> {
    cursor: TreeCursor<'tree>,
    started: bool,
    done: bool,
}

pub(super) fn leaves(node: Node<'_>) -> Leaves<'_> {
    Leaves {
        cursor: node.walk(),
        started: false,
        done: false,
    }
}

impl<'tree> Iterator for Leaves<'tree> {
    type Item = Node<'tree>;

    fn next(&mut self) -> Option<Node<'tree>> {
        loop {
            if self.done {
                return None;
            }
            if self.started {
                // Leave the current leaf (or skipped extra) for the next node in source order.
                while !self.cursor.goto_next_sibling() {
                    if !self.cursor.goto_parent() {
                        self.done = true;
                        return None;
                    }
                }
            }
            self.started = true;
            while !self.cursor.node().is_extra() && self.cursor.goto_first_child() {}
            let node = self.cursor.node();
            if !node.is_extra() {
                return Some(node);
            }
        }
    }
}

/// A language's comment node kinds, and the text each comment starts with.
fn comment_syntax(language: Language) -> (&'static [&'static str], &'static [&'static str]) {
    match language {
        Language::Java => (&super::java::COMMENTS, &["//", "/*"]),
        Language::Python => (&super::python::COMMENTS, &["#"]),
        Language::Rust => (&super::rust::COMMENTS, &["//", "/*"]),
    }
}

/// The ranges of the comments of a file (nodes of the language's comment kinds), in source order, found
/// where the text holds one of `markers` (`//`, `/*`, `#`) rather than by visiting every node:
/// on a keystroke in a long file that walk was most of finding its tests. A marker inside a
/// token that is no comment (a URL in a string) rules out the rest of that token at once.
///
/// One cursor moves forward through the tree from marker to marker: it steps over the siblings
/// that end before the marker and enters only the node that holds it, so no node is visited
/// twice. Asking tree-sitter for the node at an offset scans the root's children each time, and
/// walking up from it scans each ancestor's; with many comments in a row, or a string deep in a
/// long expression, either was quadratic.
pub(super) fn comments(root: Node<'_>, source: &str, language: Language) -> Vec<Range<usize>> {
    let (kinds, markers) = comment_syntax(language);
    let bytes = source.as_bytes();
    let firsts: Vec<u8> = markers
        .iter()
        .filter_map(|marker| marker.bytes().next())
        .collect();
    let mut found: Vec<Range<usize>> = Vec::new();
    let mut cursor = root.walk();
    let mut from = 0;
    while let Some(offset) = bytes
        .get(from..)
        .and_then(|rest| rest.iter().position(|byte| firsts.contains(byte)))
    {
        let at = from + offset;
        if !markers
            .iter()
            .any(|marker| bytes[at..].starts_with(marker.as_bytes()))
        {
            from = at + 1;
            continue;
        }
        from = loop {
            let node = cursor.node();
            if node.end_byte() <= at {
                // Forward past a node that ends before the marker: to its next sibling, or
                // its parent's (the rest of the parent holds no token); past the root, none
                // is left.
                while !cursor.goto_next_sibling() {
                    if !cursor.goto_parent() {
                        return found;
                    }
                }
            } else if node.start_byte() > at {
                // Between tokens: no comment starts here.
                break at + 1;
            } else if kinds.contains(&node.kind()) {
                // The outermost comment that holds the marker.
                found.push(node.byte_range());
                break node.end_byte();
            } else if !cursor.goto_first_child() {
                // A token that is no comment.
                break node.end_byte();
            }
        }
        .max(at + 1);
    }
    found
}

/// The text of a node's field child.
pub(super) fn field_text<'s>(node: Node<'_>, field: &str, source: &'s str) -> Option<&'s str> {
    source.get(node.child_by_field_name(field)?.byte_range())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::language::Language;

    fn tree(language: Language, source: &str) -> tree_sitter::Tree {
        super::super::parse(language, source, None).expect("the grammar loads")
    }

    /// Every comment node, outermost only, found by visiting every node: what [`comments`]
    /// must find.
    fn comments_by_walking(root: Node<'_>, kinds: &[&str]) -> Vec<Range<usize>> {
        let mut found = Vec::new();
        let mut cursor = root.walk();
        loop {
            let node = cursor.node();
            let wanted = kinds.contains(&node.kind());
            if wanted {
                found.push(node.byte_range());
            }
            if !wanted && cursor.goto_first_child() {
                continue;
            }
            while !cursor.goto_next_sibling() {
                if !cursor.goto_parent() {
                    return found;
                }
            }
        }
    }

    #[test]
    fn comments_found_from_their_markers_are_those_a_walk_finds() {
        let cases = [
            (
                Language::Java,
                concat!(
                    "// head\nclass T { /* a // b */ String u = \"http://x/*y*/\"; int d = 4 / 2;\n",
                    "  /** doc */ @Test void t() { x(); // tail\n } /* open",
                ),
            ),
            (
                Language::Java,
                include_str!("../../tests/fixtures/context/java/AccountServiceTest.java"),
            ),
            (
                Language::Python,
                "# head\ndef test_a():\n    s = '#no' + f\"{x} # no\"  # yes\n    '''# doc'''\n#",
            ),
            (
                Language::Python,
                include_str!("../../tests/fixtures/context/python/api/test_orders.py"),
            ),
            (
                Language::Rust,
                "//! inner\n/// outer\nfn f() { m!(a // in macro\n); let s = \"//\"; /* /* nested */ */ }\n",
            ),
            (
                Language::Rust,
                include_str!("../../tests/fixtures/extract/rust/macro_tests.rs"),
            ),
        ];
        for (language, source) in cases {
            let (kinds, _) = comment_syntax(language);
            let tree = tree(language, source);
            assert_eq!(
                comments(tree.root_node(), source, language),
                comments_by_walking(tree.root_node(), kinds),
                "{language}: {source}"
            );
        }
    }

    #[test]
    fn leaves_skip_comments_and_come_in_source_order() {
        let source = "m! { #[test] /* c */ fn a() { b(1) } // d\n }";
        let tree = tree(Language::Rust, source);
        let Some(token_tree) = tree
            .root_node()
            .child(0)
            .and_then(|invocation| invocation.child_by_field_name("macro"))
            .and_then(|name| name.next_sibling())
            .and_then(|bang| bang.next_sibling())
        else {
            panic!("a macro invocation with a token tree");
        };
        let texts: Vec<&str> = leaves(token_tree)
            .map(|leaf| &source[leaf.byte_range()])
            .collect();
        assert_eq!(
            texts,
            [
                "{", "#", "[", "test", "]", "fn", "a", "(", ")", "{", "b", "(", "1", ")", "}", "}"
            ]
        );
    }

    #[test]
    fn comments_are_found_at_every_depth_without_entering_them() {
        let source = "// a\nfn f() { if x { /* b */ } }\n/// c\nfn g() {}\n";
        let tree = tree(Language::Rust, source);
        let comments = comments(tree.root_node(), source, Language::Rust);
        let texts: Vec<&str> = comments
            .iter()
            .map(|range| &source[range.clone()])
            .collect();
        // A doc comment's node holds its line break, a plain one's does not.
        assert_eq!(texts, ["// a", "/* b */", "/// c\n"]);
    }

    #[test]
    fn depth_stops_past_its_limit() {
        let depth = Depth::new(2);
        let second = depth.inner().and_then(Depth::inner);
        assert!(second.is_ok());
        assert_eq!(second.and_then(Depth::inner).err(), Some(Stop::TooDeep));
    }

    #[test]
    fn scope_chains_run_outermost_first() {
        let mut found = Found::default();
        let outer = found.add_scope(0..1, None);
        let inner = found.add_scope(2..3, Some(outer));
        found.add_scope(4..5, None);
        assert_eq!(found.scope_chain(Some(inner)), [0..1, 2..3]);
        assert!(found.scope_chain(None).is_empty());
    }
}
