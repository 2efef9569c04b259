//! Small tree-sitter helpers shared by the languages: an iterative walk and text access.
//!
//! Nothing here asks a node for its parent or previous sibling: tree-sitter finds those by
//! scanning siblings, which turns large flat files quadratic. Walks go top-down with a cursor.

use std::ops::Range;

use tree_sitter::Node;

/// Calls `visit` on every node under `root`, `root` included, in source order. Iterative, so
/// that deeply nested code cannot overflow the stack.
pub(super) fn preorder<'tree>(root: Node<'tree>, mut visit: impl FnMut(Node<'tree>)) {
    let mut cursor = root.walk();
    loop {
        visit(cursor.node());
        if cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return;
            }
        }
    }
}

/// The children of `node`, named and anonymous, in order.
pub(super) fn children<'tree>(node: Node<'tree>) -> Vec<Node<'tree>> {
    let mut cursor = node.walk();
    node.children(&mut cursor).collect()
}

/// The named children of `node`, in order.
pub(super) fn named_children<'tree>(node: Node<'tree>) -> Vec<Node<'tree>> {
    let mut cursor = node.walk();
    node.named_children(&mut cursor).collect()
}

/// The first child of `node` of the given kind.
pub(super) fn child_of_kind<'tree>(node: Node<'tree>, kind: &str) -> Option<Node<'tree>> {
    let mut cursor = node.walk();
    node.children(&mut cursor)
        .find(|child| child.kind() == kind)
}

/// The source text of `node`; empty when its range does not fall on character boundaries, which
/// a tree of another text could give.
pub(super) fn text<'source>(source: &'source str, node: Node) -> &'source str {
    source.get(node.byte_range()).unwrap_or_default()
}

/// The text of a string literal without its quotes and prefixes (`"a"`, `'a'`, `r"a"`, `f"a"`).
pub(super) fn unquote(literal: &str) -> &str {
    let body = literal.trim_start_matches(|c: char| c.is_ascii_alphabetic());
    let quote = ["\"\"\"", "'''", "\"", "'"]
        .into_iter()
        .find(|quote| body.len() >= 2 * quote.len() && body.starts_with(quote));
    match quote {
        Some(quote) if body.ends_with(quote) => &body[quote.len()..body.len() - quote.len()],
        _ => body,
    }
}

/// The last segment of a dotted or path name: `org.junit.Before` gives `Before`.
pub(super) fn last_segment(name: &str) -> &str {
    name.rsplit(['.', ':']).next().unwrap_or(name).trim()
}

/// Whether `outer` contains `inner`.
pub(super) fn contains(outer: &Range<usize>, inner: &Range<usize>) -> bool {
    outer.start <= inner.start && inner.end <= outer.end
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_and_prefixes_are_removed() {
        assert_eq!(unquote("\"cases\""), "cases");
        assert_eq!(unquote("'a, b'"), "a, b");
        assert_eq!(unquote("r\"raw\""), "raw");
        assert_eq!(unquote("\"\"\"doc\"\"\""), "doc");
        assert_eq!(unquote("\"unterminated"), "\"unterminated");
        assert_eq!(unquote("\""), "\"");
    }

    #[test]
    fn the_last_segment_of_a_name() {
        assert_eq!(last_segment("org.junit.Before"), "Before");
        assert_eq!(last_segment("rstest::fixture"), "fixture");
        assert_eq!(last_segment("Before"), "Before");
    }
}
