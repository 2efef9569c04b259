//! `macro_rules!` rules that declare several tests per invocation: the test's name is bound
//! inside a repetition of the matcher (`$( $name:ident($value:expr, $expected:expr) )*`, as in
//! dtolnay/itoa's tests), and the expansion repeats `#[test] fn $name()`. Each repeated piece of
//! an invocation is a test, found by matching the invocation's tokens against the repetition.
//!
//! The matching follows `macro_rules!` as far as finding names needs: literal tokens must be
//! there, `ident`, `lifetime`, `literal`, `tt` and `block` fragments take one token or token tree,
//! a delimited group of the matcher takes one token tree with the same delimiter, and the other
//! fragments (`expr`, `ty`, `path`, `pat`, `stmt`, `item`, `meta`, `vis`, a nested repetition) run
//! up to the literal token that follows them, which Rust's follow-set rules require. Matching
//! stops at the first piece that does not fit: the tests before it are kept.

use std::ops::Range;

use tree_sitter::Node;

use super::walk::{children, field_text};

/// One element of a matcher, as the search for names sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Piece {
    /// A token that must be there as written.
    Literal(String),
    /// The metavariable the expansion names its test function with.
    Name,
    /// One token or token tree: `ident`, `lifetime`, `literal`, `tt`, `block`.
    One,
    /// A token tree opened by this delimiter.
    Group(char),
    /// Any tokens up to the next literal one.
    Run,
}

/// A matcher whose repetition binds the test's name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Repeated {
    /// The pieces before the repetition.
    before: Vec<Piece>,
    /// The repetition's pieces, [`Piece::Name`] among them.
    body: Vec<Piece>,
    separator: Option<String>,
}

impl Repeated {
    /// The repetition of `matcher` (a rule's left side) whose top level binds `$name` as an
    /// `ident`, with what comes before it.
    pub(super) fn of(matcher: Node<'_>, name: &str, source: &str) -> Option<Repeated> {
        let mut before = Vec::new();
        for token in children(matcher).skip(1).filter(|token| !token.is_extra()) {
            if token.kind() == "token_repetition_pattern" {
                let (body, separator) = repetition(token, source, Some(name));
                if body.contains(&Piece::Name) {
                    return Some(Repeated {
                        before,
                        body,
                        separator,
                    });
                }
            }
            before.push(piece(token, source, None));
        }
        None
    }

    /// Each repeated piece of an invocation's body (a token tree): the range of its name, and
    /// its own range, the test's code.
    pub(super) fn find_tests(
        &self,
        body: Node<'_>,
        source: &str,
    ) -> Vec<(Range<usize>, Range<usize>)> {
        let tokens = inner_tokens(body, source);
        let text = |token: &Node<'_>| source.get(token.byte_range()).unwrap_or_default();
        let mut found = Vec::new();
        let Some((mut at, _)) = match_pieces(&self.before, &tokens, 0, self.body.first(), source)
        else {
            return found;
        };
        let separator = self.separator.clone().map(Piece::Literal);
        let follow = separator.as_ref().or(self.body.first());
        while at < tokens.len() {
            let Some((next, Some(name))) = match_pieces(&self.body, &tokens, at, follow, source)
            else {
                break;
            };
            if next == at {
                break;
            }
            found.push((name, tokens[at].start_byte()..tokens[next - 1].end_byte()));
            at = next;
            match &self.separator {
                Some(separator) if tokens.get(at).map(text) == Some(separator.as_str()) => at += 1,
                Some(_) => break,
                None => {}
            }
        }
        found
    }
}

/// The pieces of a repetition pattern (`$( ... ) sep? op`) and its separator.
fn repetition(pattern: Node<'_>, source: &str, name: Option<&str>) -> (Vec<Piece>, Option<String>) {
    let parts: Vec<Node<'_>> = children(pattern).filter(|part| !part.is_extra()).collect();
    // `$`, `(`, the pieces, `)`, an optional separator, the operator.
    let close = parts
        .iter()
        .rposition(|part| part.kind() == ")")
        .unwrap_or(parts.len());
    let body = parts
        .get(2..close)
        .unwrap_or_default()
        .iter()
        .map(|part| piece(*part, source, name))
        .collect();
    // The separator is no node of the tree: it is the text between `)` and the operator.
    let separator = parts
        .get(close)
        .zip(parts.last())
        .and_then(|(close, operator)| source.get(close.end_byte()..operator.start_byte()))
        .map(str::trim)
        .filter(|separator| !separator.is_empty())
        .map(str::to_string);
    (body, separator)
}

/// What one element of a matcher is; `name` is the metavariable of the test's name.
fn piece(pattern: Node<'_>, source: &str, name: Option<&str>) -> Piece {
    match pattern.kind() {
        "token_binding_pattern" => {
            let kind = field_text(pattern, "type", source).unwrap_or_default();
            if name.is_some() && field_text(pattern, "name", source) == name && kind == "ident" {
                return Piece::Name;
            }
            match kind {
                "ident" | "lifetime" | "literal" | "tt" | "block" => Piece::One,
                _ => Piece::Run,
            }
        }
        "token_tree_pattern" => source
            .get(pattern.byte_range())
            .and_then(|text| text.chars().next())
            .map_or(Piece::Run, Piece::Group),
        "token_repetition_pattern" => Piece::Run,
        _ => Piece::Literal(
            source
                .get(pattern.byte_range())
                .unwrap_or_default()
                .to_string(),
        ),
    }
}

/// The tokens between a token tree's delimiters, comments left out.
fn inner_tokens<'tree>(body: Node<'tree>, source: &str) -> Vec<Node<'tree>> {
    let mut tokens: Vec<Node<'tree>> = children(body).filter(|token| !token.is_extra()).collect();
    let closes = |open: &str, close: &str| {
        tokens
            .first()
            .is_some_and(|first| source.get(first.byte_range()) == Some(open))
            && tokens
                .last()
                .is_some_and(|last| source.get(last.byte_range()) == Some(close))
    };
    if closes("(", ")") || closes("[", "]") || closes("{", "}") {
        tokens.pop();
    }
    if !tokens.is_empty() {
        tokens.remove(0);
    }
    tokens
}

/// Whether `token` is where `piece` starts, for the pieces that can tell.
fn starts(piece: &Piece, token: &Node<'_>, source: &str) -> bool {
    match piece {
        Piece::Literal(text) => source.get(token.byte_range()) == Some(text.as_str()),
        Piece::Group(open) => {
            token.kind() == "token_tree"
                && source
                    .get(token.byte_range())
                    .is_some_and(|text| text.starts_with(*open))
        }
        Piece::Name | Piece::One | Piece::Run => false,
    }
}

/// Matches `pieces` against `tokens` from `at`: where the match ends and the range of the name
/// it bound, or `None` when a piece does not fit. `follow` is what comes after the pieces, where
/// a trailing run stops.
fn match_pieces(
    pieces: &[Piece],
    tokens: &[Node<'_>],
    mut at: usize,
    follow: Option<&Piece>,
    source: &str,
) -> Option<(usize, Option<Range<usize>>)> {
    let mut name = None;
    for (index, piece) in pieces.iter().enumerate() {
        match piece {
            Piece::Literal(_) | Piece::Group(_) => {
                if !starts(piece, tokens.get(at)?, source) {
                    return None;
                }
                at += 1;
            }
            Piece::Name => {
                let token = tokens.get(at)?;
                if token.kind() != "identifier" {
                    return None;
                }
                name = Some(token.byte_range());
                at += 1;
            }
            Piece::One => {
                tokens.get(at)?;
                at += 1;
            }
            Piece::Run => {
                let stop = pieces.get(index + 1).or(follow);
                match stop {
                    // Before a piece that cannot tell where it starts, a run takes nothing.
                    Some(Piece::Name | Piece::One | Piece::Run) => {}
                    Some(stop) => {
                        while tokens
                            .get(at)
                            .is_some_and(|token| !starts(stop, token, source))
                        {
                            at += 1;
                        }
                    }
                    None => at = tokens.len(),
                }
            }
        }
    }
    Some((at, name))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::language::Language;

    /// The names of the tests an invocation of the first rule of `definition` declares, and the
    /// text of each piece.
    fn tests_of(definition: &str, invocation: &str) -> Vec<(String, String)> {
        let source = format!("{definition}\n{invocation}\n");
        let tree = super::super::parse(Language::Rust, &source, None).expect("the grammar loads");
        let root = tree.root_node();
        let rule = children(root.child(0).expect("a definition"))
            .find(|child| child.kind() == "macro_rule")
            .expect("a rule");
        let matcher = rule.child_by_field_name("left").expect("a matcher");
        let repeated =
            Repeated::of(matcher, "$name", &source).expect("a repetition binds the name");
        let invocation = super::super::walk::leaves(root)
            .find(|leaf| {
                source.get(leaf.byte_range()) == Some("!") && leaf.start_byte() > definition.len()
            })
            .and_then(|bang| bang.next_sibling())
            .expect("an invocation");
        repeated
            .find_tests(invocation, &source)
            .into_iter()
            .map(|(name, range)| (source[name].to_string(), source[range].to_string()))
            .collect()
    }

    #[test]
    fn itoas_table_declares_a_test_per_line() {
        let definition = "macro_rules! test {\n    ($($name:ident($value:expr, $expected:expr))*) => {\n        $(\n            #[test]\n            fn $name() { assert_eq!(f($value), $expected); }\n        )*\n    }\n}";
        let found = tests_of(
            definition,
            "test! {\n    test_u64_0(0u64, \"0\")\n    test_i64_min(i64::MIN, \"-9223372036854775808\")\n\n    test_u128_max(u128::MAX, \"340282366920938463463374607431768211455\")\n}",
        );
        let names: Vec<&str> = found.iter().map(|(name, _)| name.as_str()).collect();
        assert_eq!(names, ["test_u64_0", "test_i64_min", "test_u128_max"]);
        assert_eq!(
            found[1].1,
            "test_i64_min(i64::MIN, \"-9223372036854775808\")"
        );
    }

    #[test]
    fn separators_literals_and_runs_are_matched_as_macro_rules_does() {
        let arrows = "macro_rules! cases { ($($name:ident => $input:expr),* $(,)?) => { $( #[test] fn $name() { check($input) } )* } }";
        let found = tests_of(
            arrows,
            "cases!(adds => 1 + 1, negates => -(2), empty => vec![],);",
        );
        let names: Vec<&str> = found.iter().map(|(name, _)| name.as_str()).collect();
        assert_eq!(names, ["adds", "negates", "empty"]);
        assert_eq!(found[1].1, "negates => -(2)");
        // A prefix before the repetition, and a piece that does not fit, which ends the table.
        let prefixed = "macro_rules! table { (fixture: $f:expr; $($name:ident: $body:block)*) => { $( #[test] fn $name() $body )* } }";
        let found = tests_of(
            prefixed,
            "table! { fixture: make(); first: { a() } second: { b() } 3: { c() } }",
        );
        let names: Vec<&str> = found.iter().map(|(name, _)| name.as_str()).collect();
        assert_eq!(names, ["first", "second"]);
    }
}
