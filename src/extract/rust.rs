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
//!   The whole invocation is the test's code. Macros defined in other files are not followed.

use std::collections::HashMap;
use std::ops::Range;

use tree_sitter::Node;

use super::budget::Budget;
use super::walk::{Candidate, Depth, Found, Stop, children, field_text, leaves};
use crate::language::Language;

/// The comment kinds, for ignore markers.
pub(super) const COMMENTS: [&str; 2] = ["line_comment", "block_comment"];

/// Rules of one macro that declare tests; more are not looked at, so a macro of thousands of
/// rules cannot make every invocation slow.
const MAX_TEST_RULES: usize = 16;

/// Literal tokens before a metavariable that locate it in an invocation; a longer run is cut to
/// its last ones.
const MAX_ANCHOR_TOKENS: usize = 8;

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
        for node in children(container) {
            match node.kind() {
                "attribute_item" => {
                    self.found.attached.push(node.byte_range());
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
                let tree = super::parse_range(Language::Rust, self.source, inner, self.budget)?;
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
        let test_name = name
            .and_then(|name| self.macros.get(name))
            .and_then(|rules| {
                rules
                    .iter()
                    .find_map(|rule| rule.find_name(body, self.source))
            });
        if let Some(test_name) = test_name {
            self.found.candidates.push(Candidate {
                range: invocation.byte_range(),
                name: test_name,
                scope,
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

/// The text between a token tree's delimiters as a range to parse, or `None` when empty. The
/// closing delimiter is read from the text: finding a node's last child scans all its children.
fn inner_range(token_tree: Node<'_>, source: &str) -> Option<tree_sitter::Range> {
    let open = token_tree.child(0)?;
    let close = match open.kind() {
        "(" => b')',
        "[" => b']',
        "{" => b'}',
        _ => return None,
    };
    let mut end_byte = token_tree.end_byte();
    let mut end_point = token_tree.end_position();
    // A missing delimiter, after a syntax error, takes no room.
    if end_byte > open.end_byte() && source.as_bytes().get(end_byte - 1) == Some(&close) {
        end_byte -= 1;
        end_point.column = end_point.column.saturating_sub(1);
    }
    (open.end_byte() < end_byte).then_some(tree_sitter::Range {
        start_byte: open.end_byte(),
        end_byte,
        start_point: open.end_position(),
        end_point,
    })
}

/// Reads `#[...]` attributes from a stream of tokens: feed it every token, and it tells when one
/// closes and whether it was a test attribute.
#[derive(Debug, Default)]
struct Attributes {
    /// After a `#`.
    hash: bool,
    /// Inside the brackets: where the attribute's text starts, and the bracket depth.
    open: Option<(usize, usize)>,
}

#[derive(Debug, PartialEq, Eq)]
enum Token {
    /// Part of an attribute.
    InAttribute,
    /// The attribute closed, a test attribute or not.
    AttributeEnd {
        test: bool,
    },
    Other,
}

impl Attributes {
    fn feed(&mut self, token: Node<'_>, source: &str) -> Token {
        let kind = token.kind();
        if let Some((start, depth)) = self.open.as_mut() {
            match kind {
                "[" => *depth += 1,
                "]" => *depth -= 1,
                _ => {}
            }
            if *depth > 0 {
                return Token::InAttribute;
            }
            let text = source.get(*start..token.start_byte()).unwrap_or_default();
            self.open = None;
            return Token::AttributeEnd {
                test: is_test_attribute(text),
            };
        }
        if self.hash && kind == "[" {
            self.hash = false;
            self.open = Some((token.end_byte(), 1));
            return Token::InAttribute;
        }
        self.hash = kind == "#";
        if self.hash {
            Token::InAttribute
        } else {
            Token::Other
        }
    }
}

/// Whether a macro's body holds a test attribute, at any depth of its token trees.
fn holds_test_attribute(body: Node<'_>, source: &str) -> bool {
    let mut attributes = Attributes::default();
    leaves(body).any(|token| attributes.feed(token, source) == Token::AttributeEnd { test: true })
}

/// A `macro_rules!` rule that expands to a test function named by one of its metavariables.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Rule {
    /// The literal tokens right before the metavariable in the rule's matcher.
    anchor: Vec<String>,
}

impl Rule {
    fn of(rule: Node<'_>, source: &str) -> Option<Rule> {
        let name = test_name_metavariable(rule.child_by_field_name("right")?, source)?;
        let matcher = rule.child_by_field_name("left")?;
        let mut anchor: Vec<String> = Vec::new();
        let mut first = true;
        for token in children(matcher).skip(1) {
            if token.is_extra() {
                continue;
            }
            match token.kind() {
                "token_binding_pattern" => {
                    let is_name = field_text(token, "name", source) == Some(name)
                        && field_text(token, "type", source) == Some("ident");
                    if is_name {
                        // Nothing before it but other metavariables leaves nothing to find it by.
                        return (first || !anchor.is_empty()).then_some(Rule { anchor });
                    }
                    anchor.clear();
                }
                "token_tree_pattern" | "token_repetition_pattern" | "metavariable" => {
                    anchor.clear()
                }
                _ => {
                    anchor.push(source.get(token.byte_range())?.to_string());
                    if anchor.len() > MAX_ANCHOR_TOKENS {
                        anchor.remove(0);
                    }
                }
            }
            first = false;
        }
        None
    }

    /// The range of the test's name in an invocation's body.
    fn find_name(&self, body: Node<'_>, source: &str) -> Option<Range<usize>> {
        let mut window: Vec<&str> = Vec::with_capacity(self.anchor.len());
        for token in children(body).skip(1) {
            if token.is_extra() {
                continue;
            }
            if window.len() == self.anchor.len() && window.iter().eq(self.anchor.iter()) {
                return (token.kind() == "identifier").then(|| token.byte_range());
            }
            if window.len() == self.anchor.len() {
                window.remove(0);
            }
            window.push(source.get(token.byte_range()).unwrap_or_default());
        }
        None
    }
}

/// The metavariable (`$name`) a rule's expansion names a test function with: `fn $name` after a
/// test attribute, with other attributes and qualifiers (`pub(crate) async`) between.
fn test_name_metavariable<'s>(expansion: Node<'_>, source: &'s str) -> Option<&'s str> {
    let mut attributes = Attributes::default();
    let mut after_test_attribute = false;
    let mut after_fn = false;
    for token in leaves(expansion) {
        match attributes.feed(token, source) {
            Token::InAttribute => continue,
            Token::AttributeEnd { test } => {
                after_test_attribute |= test;
                continue;
            }
            Token::Other => {}
        }
        let text = source.get(token.byte_range()).unwrap_or_default();
        if after_fn && token.kind() == "metavariable" {
            return Some(text);
        }
        after_fn = after_test_attribute && text == "fn";
        let qualifier = matches!(
            text,
            "pub"
                | "crate"
                | "super"
                | "self"
                | "in"
                | "("
                | ")"
                | "async"
                | "unsafe"
                | "const"
                | "extern"
        );
        if !after_fn && !qualifier {
            after_test_attribute = false;
        }
    }
    None
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

    fn rules(source: &str) -> Vec<Rule> {
        let tree = super::super::parse(Language::Rust, source, None).expect("the grammar loads");
        let definition = tree.root_node().child(0).expect("a definition");
        children(definition)
            .filter(|child| child.kind() == "macro_rule")
            .filter_map(|rule| Rule::of(rule, source))
            .collect()
    }

    #[test]
    fn rules_expanding_to_named_tests_are_kept_with_their_anchor() {
        let hyper_like = "macro_rules! test { (name: $name:ident, body: $body:block) => { #[test] fn $name() $body }; (INNER; $e:expr) => { $e }; }";
        assert_eq!(
            rules(hyper_like),
            [Rule {
                anchor: vec!["name".into(), ":".into()]
            }]
        );
        let first = "macro_rules! t { ($name:ident => $e:expr) => { #[tokio::test] pub(crate) async fn $name() { $e } }; }";
        assert_eq!(rules(first), [Rule { anchor: vec![] }]);
        // A function without a test attribute, or a name found only after other metavariables,
        // declares nothing that can be found.
        assert!(rules("macro_rules! t { ($name:ident) => { fn $name() {} }; }").is_empty());
        assert!(
            rules("macro_rules! t { ($a:expr, $name:ident) => { #[test] fn $name() {} }; }").len()
                == 1
        );
        assert!(
            rules("macro_rules! t { ($a:expr $name:ident) => { #[test] fn $name() {} }; }")
                .is_empty()
        );
        assert!(rules("macro_rules! t { ($name:expr) => { #[test] fn $name() {} }; }").is_empty());
        assert!(rules("macro_rules! t { ($name:ident) => { #[test] struct $name; }; }").is_empty());
    }
}
