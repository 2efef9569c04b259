//! Rust macro bodies, which tree-sitter leaves as token trees, parsed again as code so that the
//! catalogue reads `assert!(start.elapsed() < ...)` and the code of tests declared inside
//! `rt_test! { ... }`.

use std::cell::Cell;

use tree_sitter::Node;

use super::Hit;
use super::part::{Part, matches};
use super::traits::flags_of;
use crate::language::Language;
use crate::signals::catalogue::Catalogue;
use crate::signals::placement::call_name;
use crate::signals::values::{Facts, text_of};

/// How deep macros inside macros are followed.
const MAX_MACRO_DEPTH: u8 = 3;
/// A macro body longer than this is left as tokens (generated tables, embedded data).
const MAX_MACRO_BYTES: usize = 64 * 1024;

/// Parses the bodies of Rust macro invocations as code and runs the catalogue over them.
pub(super) fn expand_macros(
    catalogue: &Catalogue,
    part: &Part<'_>,
    facts: &Facts<'_>,
    work: &Cell<u64>,
    depth: u8,
    budget: &mut usize,
    hits: &mut Vec<Hit>,
) {
    if depth >= MAX_MACRO_DEPTH {
        return;
    }
    let mut invocations = Vec::new();
    collect_macro_invocations(part.root, &mut invocations);
    for invocation in invocations {
        if *budget == 0 || work.get() == 0 {
            return;
        }
        *budget -= 1;
        let Some(body) = invocation
            .named_children(&mut invocation.walk())
            .find(|child| child.kind() == "token_tree")
        else {
            continue;
        };
        let range = body.byte_range();
        if range.len() < 2 || range.len() > MAX_MACRO_BYTES {
            continue;
        }
        let Some(inner) = part.text.get(range.start + 1..range.end - 1) else {
            continue;
        };
        let name = call_name(invocation, part.text).unwrap_or("m");
        // A braced body holds statements or items; a parenthesised or bracketed one holds
        // arguments, parsed as those of a call named after the macro, so that a hit inside
        // `assert!(...)` knows it is inside an assertion.
        let braced = part.text.as_bytes()[range.start] == b'{';
        let prefix = if braced {
            "fn flakesense_macro_body() {\n".to_string()
        } else {
            format!("fn flakesense_macro_body() {{\n{name}(")
        };
        let wrapped = format!("{prefix}{inner}{}", if braced { "\n}" } else { ");\n}" });
        let Some(tree) = crate::extract::parse(Language::Rust, &wrapped, None) else {
            continue;
        };
        let Some(start_in_file) = part.in_file(range.start + 1..range.start + 1) else {
            continue;
        };
        let Some(invocation_range) = part.in_file(invocation.byte_range()).or_else(|| {
            // An invocation inside another's wrapping stands for that one.
            part.invocation.as_ref().map(|(range, _, _)| range.clone())
        }) else {
            continue;
        };
        let invocation_line = part.line(invocation);
        let expanded = Part {
            // Where the invocation sits (in a loop, in a thread's closure) holds for its body.
            outer_flags: part.outer_flags | flags_of(invocation, part.text),
            invocation: Some((
                invocation_range,
                invocation_line,
                text_of(invocation, part.text),
            )),
            text: &wrapped,
            root: tree.root_node(),
            prefix: prefix.len(),
            start_in_file: start_in_file.start,
            first_row_in_file: usize::try_from(part.line(body)).unwrap_or(1) - 1,
        };
        matches(catalogue, &expanded, facts, work, hits);
        expand_macros(catalogue, &expanded, facts, work, depth + 1, budget, hits);
    }
}

/// The macro invocations under a node, outermost only (inner ones are found when the outer
/// body is parsed), `macro_rules!` definitions excluded.
fn collect_macro_invocations<'tree>(root: Node<'tree>, found: &mut Vec<Node<'tree>>) {
    let mut cursor = root.walk();
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        if node.kind() == "macro_invocation" {
            found.push(node);
            continue;
        }
        if node.kind() == "macro_definition" {
            continue;
        }
        cursor.reset(node);
        let children: Vec<Node> = node.named_children(&mut cursor).collect();
        stack.extend(children.into_iter().rev());
    }
    found.sort_by_key(|node| node.start_byte());
}
