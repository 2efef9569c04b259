//! Finds the test functions of a Rust file, those declared inside macro invocations included.
//!
//! A test is a function in a module (the file or an inline `mod`) preceded by a test attribute,
//! possibly with other attributes and comments between. `#[test]` on a function inside another
//! function is never run (rustc's `unnameable_test_items` lint), so function bodies are not
//! entered.
//!
//! Macro invocations: tree-sitter leaves a macro's body as a token tree, so
//! - a body that holds a test attribute (`rt_test! { #[test] fn a() {} }`, tokio's style) is
//!   parsed again as Rust items, and its tests get ids as if they were written where the
//!   invocation is;
//! - a body without one can still declare a test through a `macro_rules!` defined earlier in the
//!   same file whose rule expands to a test function named by one of its `ident` metavariables
//!   (hyper's `test! { name: client_get, ... }` expands to `#[test] fn $name()`). The name is the
//!   identifier the invocation puts where the rule's matcher puts that metavariable, found after
//!   the literal tokens that precede it in the matcher (`name :`), or first when nothing does.
//!   The whole invocation is the test's code. A name bound inside a repetition of the matcher
//!   (dtolnay/itoa's `test! { a(..) b(..) }`) declares a test per repeated piece, each piece its
//!   code ([`super::rust_repetition`]). Macros defined in other files are not followed.

use std::collections::HashMap;

use tree_sitter::Node;

use super::budget::Budget;
use super::markers;
use super::rust_macros::{MAX_TEST_RULES, Rule, holds_test_attribute, inner_range};
use super::walk::{Candidate, Depth, Found, Stop, children, field_text};
use crate::language::Language;

/// The comment kinds, for ignore markers.
pub(super) const COMMENTS: [&str; 2] = ["line_comment", "block_comment"];

/// Whether the text inside `#[...]` is a test attribute: `#[test]`, `#[rstest]`,
/// `#[test_case(...)]`, and any attribute whose path ends in `test` (`#[tokio::test]`,
/// `#[sqlx::test]`, `#[test_log::test]`, `#[wasm_bindgen_test]`).
pub(super) fn is_test_attribute(attribute: &str) -> bool {
    let path = attribute
        .split(['(', '=', '[', '{'])
        .next()
        .unwrap_or_default();
    let path: String = path.split_whitespace().collect();
    let last = path.rsplit("::").next().unwrap_or_default();
    matches!(last, "test" | "rstest" | "test_case") || last.ends_with("_test")
}

pub(super) fn walk(
    root: Node<'_>,
    source: &str,
    max_nesting: usize,
    budget: &Budget,
) -> Result<Found, Stop> {
    let mut walk = Walk {
        source,
        budget,
        found: Found::default(),
        macros: HashMap::new(),
    };
    walk.items(root, None, Depth::new(max_nesting))?;
    Ok(walk.found)
}

struct Walk<'a> {
    source: &'a str,
    budget: &'a Budget,
    found: Found,
    /// The rules that declare tests of each `macro_rules!` met so far, by macro name.
    macros: HashMap<String, Vec<Rule>>,
}

impl Walk<'_> {
    /// The items of a file, module or macro body. Syntax errors are looked through, so the tests
    /// of a file's intact parts are still found.
    fn items(
        &mut self,
        container: Node<'_>,
        scope: Option<usize>,
        depth: Depth,
    ) -> Result<(), Stop> {
        // Whether a test attribute precedes the next item, through other attributes and comments.
        let mut test_attribute = false;
        // The attributes before the next item so far.
        let mut attributes = 0;
        for node in children(container) {
            match node.kind() {
                "attribute_item" => {
                    self.found.attached.push(node.byte_range());
                    if attributes < markers::MAX_PER_TEST {
                        self.found.markers.extend(markers::rust(node));
                    }
                    attributes += 1;
                    test_attribute |= children(node)
                        .find(|child| child.kind() == "attribute")
                        .and_then(|attribute| self.source.get(attribute.byte_range()))
                        .is_some_and(is_test_attribute);
                    continue;
                }
                "line_comment" | "block_comment" => {
                    if node.child_by_field_name("outer").is_some() {
                        self.found.attached.push(node.byte_range());
                    }
                    continue;
                }
                "function_item" if test_attribute => {
                    if let Some(name) = node.child_by_field_name("name") {
                        self.found.candidates.push(Candidate {
                            range: node.byte_range(),
                            name: name.byte_range(),
                            scope,
                            inherited: None,
                        });
                    }
                }
                "mod_item" => {
                    if let (Some(name), Some(body)) = (
                        node.child_by_field_name("name"),
                        node.child_by_field_name("body"),
                    ) {
                        let inner = self.found.add_scope(name.byte_range(), scope);
                        self.items(body, Some(inner), depth.inner()?)?;
                    }
                }
                "macro_definition" => self.define(node),
                "macro_invocation" => self.invocation(node, scope, depth)?,
                "expression_statement" => {
                    if let Some(invocation) =
                        children(node).find(|child| child.kind() == "macro_invocation")
                    {
                        self.invocation(invocation, scope, depth)?;
                    }
                }
                "ERROR" => self.items(node, scope, depth.inner()?)?,
                _ => {}
            }
            test_attribute = false;
            attributes = 0;
        }
        Ok(())
    }

    fn invocation(
        &mut self,
        invocation: Node<'_>,
        scope: Option<usize>,
        depth: Depth,
    ) -> Result<(), Stop> {
        let Some(body) = children(invocation)
            .filter(|child| child.kind() == "token_tree")
            .last()
        else {
            return Ok(());
        };
        if holds_test_attribute(body, self.source) {
            let before = self.found.candidates.len();
            if let Some(inner) = inner_range(body, self.source) {
                let tree =
                    super::parser::parse_range(Language::Rust, self.source, inner, self.budget)?;
                if let Some(tree) = tree {
                    self.items(tree.root_node(), scope, depth.inner()?)?;
                }
            }
            if self.found.candidates.len() > before {
                return Ok(());
            }
        }
        let name = invocation
            .child_by_field_name("macro")
            .and_then(|path| self.source.get(path.byte_range()))
            .and_then(|path| path.rsplit("::").next())
            .map(str::trim);
        let tests = name
            .and_then(|name| self.macros.get(name))
            .and_then(|rules| {
                rules
                    .iter()
                    .map(|rule| rule.find_tests(invocation, body, self.source))
                    .find(|tests| !tests.is_empty())
            })
            .unwrap_or_default();
        for (name, range) in tests {
            self.found.candidates.push(Candidate {
                range,
                name,
                scope,
                inherited: None,
            });
        }
        Ok(())
    }

    /// Keeps the rules of a `macro_rules!` that expand to a test named by a metavariable.
    fn define(&mut self, definition: Node<'_>) {
        let Some(name) = field_text(definition, "name", self.source) else {
            return;
        };
        let rules: Vec<Rule> = children(definition)
            .filter(|child| child.kind() == "macro_rule")
            .filter_map(|rule| Rule::of(rule, self.source))
            .take(MAX_TEST_RULES)
            .collect();
        if rules.is_empty() {
            // A later definition of the same name shadows the earlier one, as in Rust.
            self.macros.remove(name);
        } else {
            self.macros.insert(name.to_string(), rules);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_attributes_are_recognised_by_the_last_segment_of_their_path() {
        for attribute in [
            "test",
            "tokio::test",
            "tokio :: test(flavor = \"multi_thread\")",
            "rstest",
            "test_case(1 ; \"one\")",
            "wasm_bindgen_test",
            "sqlx::test(migrations = \"x\")",
        ] {
            assert!(is_test_attribute(attribute), "{attribute}");
        }
        for attribute in [
            "cfg(test)",
            "ignore",
            "should_panic(expected = \"test\")",
            "tested",
            "doc = \"test\"",
        ] {
            assert!(!is_test_attribute(attribute), "{attribute}");
        }
    }
}
