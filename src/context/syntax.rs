//! Small tree-sitter helpers shared by the languages: an iterative walk and text access.
//!
//! Nothing here asks a node for its parent or previous sibling: tree-sitter finds those by
//! scanning siblings, which turns large flat files quadratic. Walks go top-down with a cursor.

use std::ops::Range;

use tree_sitter::Node;

/// The named node kinds a walk stops at, by id: comparing ids spares reading every node's kind
/// name, which tree-sitter hands out as a C string to measure and check.
pub(super) struct Kinds {
    wanted: Vec<bool>,
}

impl Kinds {
    /// Every named kind of `grammar` called one of `names` (a name may have several ids).
    pub(super) fn new(grammar: &tree_sitter::Language, names: &[&str]) -> Kinds {
        let ids = 0..u16::try_from(grammar.node_kind_count()).unwrap_or(u16::MAX);
        let wanted = ids
            .map(|id| {
                grammar.node_kind_is_named(id)
                    && grammar
                        .node_kind_for_id(id)
                        .is_some_and(|kind| names.contains(&kind))
            })
            .collect();
        Kinds { wanted }
    }

    fn contains(&self, node: Node) -> bool {
        let id = usize::from(node.kind_id());
        self.wanted.get(id).copied().unwrap_or(false)
    }
}

/// Calls `visit` on every node under `root` (`root` included) of one of `kinds`, in source
/// order, with whether the node is clean-up code of the function it is in: inside a `finally`
/// block (Java, Python), which runs whether the code before it failed or not. Iterative, so that
/// deeply nested code cannot overflow the stack, and linear: whether a node is clean-up code is
/// carried down the walk, not found by asking each node for its ancestors.
pub(super) fn preorder<'tree>(
    root: Node<'tree>,
    kinds: &Kinds,
    mut visit: impl FnMut(Node<'tree>, bool),
) {
    let mut cursor = root.walk();
    // Per level of the cursor, from the root: whether the node there is in clean-up code.
    let mut cleanup = vec![false];
    loop {
        let node = cursor.node();
        let in_cleanup = cleanup.last().copied().unwrap_or(false);
        if kinds.contains(node) {
            visit(node, in_cleanup);
        }
        if cursor.goto_first_child() {
            cleanup.push(match node.kind() {
                "finally_clause" => true,
                "method_declaration" | "constructor_declaration" | "function_definition" => false,
                _ => in_cleanup,
            });
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return;
            }
            cleanup.pop();
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
    fn a_walk_stops_at_the_kinds_asked_for_in_source_order() {
        let source = "def a():\n    b(c(1))\n\nclass D:\n    e()\n";
        let tree = crate::extract::parse(crate::language::Language::Python, source, None)
            .expect("the Python grammar loads");
        let kinds = Kinds::new(&tree.language(), &["call", "class_definition"]);
        let mut found = Vec::new();
        preorder(tree.root_node(), &kinds, |node, _| {
            found.push(text(source, node))
        });
        assert_eq!(found, ["b(c(1))", "c(1)", "class D:\n    e()", "e()"]);
    }

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
