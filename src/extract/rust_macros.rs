//! What the token trees of Rust macros say about tests: whether a macro's body holds a test
//! attribute, and which `macro_rules!` rules expand to a test named by one of their arguments,
//! once per invocation or once per repeated piece of it ([`super::rust_repetition`]); see
//! `rust`, which walks the items.

use std::ops::Range;

use tree_sitter::Node;

use super::rust::is_test_attribute;
use super::rust_repetition::Repeated;
use super::walk::{children, field_text, leaves};

/// Rules of one macro that declare tests; more are not looked at, so a macro of thousands of
/// rules cannot make every invocation slow.
pub(super) const MAX_TEST_RULES: usize = 16;

/// Literal tokens before a metavariable that locate it in an invocation; a longer run is cut to
/// its last ones.
const MAX_ANCHOR_TOKENS: usize = 8;

/// The text between a token tree's delimiters as a range to parse, or `None` when empty. The
/// closing delimiter is read from the text: finding a node's last child scans all its children.
pub(super) fn inner_range(token_tree: Node<'_>, source: &str) -> Option<tree_sitter::Range> {
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
pub(super) fn holds_test_attribute(body: Node<'_>, source: &str) -> bool {
    let mut attributes = Attributes::default();
    leaves(body).any(|token| attributes.feed(token, source) == Token::AttributeEnd { test: true })
}

/// A `macro_rules!` rule that expands to a test function named by one of its metavariables.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Rule {
    /// One test per invocation, named by the identifier after the literal tokens that come right
    /// before the metavariable in the rule's matcher; the whole invocation is its code.
    Anchored { anchor: Vec<String> },
    /// A test per repeated piece of the invocation, its code.
    Repeated(Repeated),
}

impl Rule {
    pub(super) fn of(rule: Node<'_>, source: &str) -> Option<Rule> {
        let name = test_name_metavariable(rule.child_by_field_name("right")?, source)?;
        let matcher = rule.child_by_field_name("left")?;
        Rule::anchored(matcher, name, source)
            .or_else(|| Repeated::of(matcher, name, source).map(Rule::Repeated))
    }

    /// The tests an invocation declares: the range of each one's name and of its code.
    pub(super) fn find_tests(
        &self,
        invocation: Node<'_>,
        body: Node<'_>,
        source: &str,
    ) -> Vec<(Range<usize>, Range<usize>)> {
        match self {
            Rule::Anchored { anchor } => find_name(anchor, body, source)
                .map(|name| (name, invocation.byte_range()))
                .into_iter()
                .collect(),
            Rule::Repeated(repeated) => repeated.find_tests(body, source),
        }
    }

    /// The rule when its matcher binds the name at its top level.
    fn anchored(matcher: Node<'_>, name: &str, source: &str) -> Option<Rule> {
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
                        return (first || !anchor.is_empty()).then_some(Rule::Anchored { anchor });
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
}

/// The range of the test's name in an invocation's body: the identifier after `anchor`.
fn find_name(anchor: &[String], body: Node<'_>, source: &str) -> Option<Range<usize>> {
    let mut window: Vec<&str> = Vec::with_capacity(anchor.len());
    for token in children(body).skip(1) {
        if token.is_extra() {
            continue;
        }
        if window.len() == anchor.len() && window.iter().eq(anchor.iter()) {
            return (token.kind() == "identifier").then(|| token.byte_range());
        }
        if window.len() == anchor.len() {
            window.remove(0);
        }
        window.push(source.get(token.byte_range()).unwrap_or_default());
    }
    None
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
    use crate::language::Language;

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
            [Rule::Anchored {
                anchor: vec!["name".into(), ":".into()]
            }]
        );
        let first = "macro_rules! t { ($name:ident => $e:expr) => { #[tokio::test] pub(crate) async fn $name() { $e } }; }";
        assert_eq!(rules(first), [Rule::Anchored { anchor: vec![] }]);
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
        // A name bound inside a repetition declares a test per repeated piece.
        assert!(matches!(
            rules(
                "macro_rules! t { ($($name:ident($v:expr))*) => { $( #[test] fn $name() {} )* }; }"
            )[..],
            [Rule::Repeated(_)]
        ));
        assert!(rules("macro_rules! t { ($name:expr) => { #[test] fn $name() {} }; }").is_empty());
        assert!(rules("macro_rules! t { ($name:ident) => { #[test] struct $name; }; }").is_empty());
    }
}
