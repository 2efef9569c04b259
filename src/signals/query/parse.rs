//! Reads the query text of a catalogue into patterns: the subset of tree-sitter's query language
//! the catalogue uses (nodes, fields, negated fields, anchors, alternations, wildcards, captures
//! and the `#eq?`, `#any-of?`, `#match?` predicates and their negations), with node kinds and
//! fields resolved against the grammar. Anything else is refused with its offset.

use regex::bytes::Regex;
use tree_sitter::Language;

use super::{Child, Kinds, Matcher, NodePattern, Pattern, Predicate, Step, Test};

/// A query the subset cannot read: what is wrong and where, as a byte offset into the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryError {
    pub offset: usize,
    pub message: String,
}

impl std::fmt::Display for QueryError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (at byte {})", self.message, self.offset)
    }
}

pub(super) struct Parser<'a> {
    text: &'a str,
    at: usize,
    language: &'a Language,
    /// Every node kind of the grammar by id: its name, whether it is named, whether it is a
    /// supertype (read once: each read is a call into the grammar).
    kinds: Vec<(&'a str, bool, bool)>,
    pub(super) capture_names: Vec<String>,
}

type Result<T> = std::result::Result<T, QueryError>;

impl<'a> Parser<'a> {
    pub(super) fn new(language: &'a Language, text: &'a str) -> Self {
        let count = u16::try_from(language.node_kind_count()).unwrap_or(u16::MAX);
        let kinds = (0..count)
            .map(|id| {
                (
                    language.node_kind_for_id(id).unwrap_or(""),
                    language.node_kind_is_named(id),
                    language.node_kind_is_supertype(id),
                )
            })
            .collect();
        Parser {
            text,
            at: 0,
            language,
            kinds,
            capture_names: Vec::new(),
        }
    }

    /// Every top-level pattern of the text, in order.
    pub(super) fn patterns(&mut self) -> Result<Vec<Pattern>> {
        let mut patterns = Vec::new();
        loop {
            self.skip_blank();
            if self.at == self.text.len() {
                return Ok(patterns);
            }
            let start = self.at;
            let mut predicates = Vec::new();
            let step = self.step(&mut predicates)?;
            patterns.push(Pattern {
                step,
                predicates,
                start,
                key: None,
            });
        }
    }

    fn error<T>(&self, message: impl Into<String>) -> Result<T> {
        Err(QueryError {
            offset: self.at,
            message: message.into(),
        })
    }

    fn skip_blank(&mut self) {
        loop {
            let rest = &self.text[self.at..];
            let trimmed = rest.trim_start();
            self.at += rest.len() - trimmed.len();
            if trimmed.starts_with(';') {
                self.at += trimmed.find('\n').unwrap_or(trimmed.len());
            } else {
                return;
            }
        }
    }

    fn peek(&mut self) -> Option<char> {
        self.skip_blank();
        self.text[self.at..].chars().next()
    }

    fn eat(&mut self, expected: char) -> bool {
        if self.peek() == Some(expected) {
            self.at += expected.len_utf8();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, expected: char) -> Result<()> {
        if self.eat(expected) {
            Ok(())
        } else {
            self.error(format!("expected `{expected}`"))
        }
    }

    /// A name: a node kind, a field, a capture or a predicate.
    fn name(&mut self) -> Result<&'a str> {
        self.skip_blank();
        let rest = &self.text[self.at..];
        let length = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '?')))
            .unwrap_or(rest.len());
        // A dot after a name is an anchor, not part of it.
        let length = rest[..length].trim_end_matches('.').len();
        if length == 0 {
            return self.error("expected a name");
        }
        self.at += length;
        Ok(&rest[..length])
    }

    fn string(&mut self) -> Result<String> {
        self.expect('"')?;
        let mut value = String::new();
        let mut chars = self.text[self.at..].char_indices();
        while let Some((offset, c)) = chars.next() {
            match c {
                '"' => {
                    self.at += offset + 1;
                    return Ok(value);
                }
                '\\' => match chars.next() {
                    Some((_, 'n')) => value.push('\n'),
                    Some((_, 't')) => value.push('\t'),
                    Some((_, escaped)) => value.push(escaped),
                    None => break,
                },
                c => value.push(c),
            }
        }
        self.error("unterminated string")
    }

    fn capture_index(&mut self, name: &str) -> u32 {
        let index = match self.capture_names.iter().position(|known| known == name) {
            Some(index) => index,
            None => {
                self.capture_names.push(name.to_string());
                self.capture_names.len() - 1
            }
        };
        u32::try_from(index).unwrap_or(u32::MAX)
    }

    /// The captures after a pattern, and a refusal of quantifiers, which the subset lacks.
    fn captures(&mut self) -> Result<Vec<u32>> {
        let mut captures = Vec::new();
        loop {
            match self.peek() {
                Some('@') => {
                    self.at += 1;
                    let name = self.name()?;
                    captures.push(self.capture_index(name));
                }
                Some('*' | '+' | '?') => return self.error("quantifiers are not supported"),
                _ => return Ok(captures),
            }
        }
    }

    /// One pattern: a node, an anonymous node, a wildcard, an alternation or a group; the
    /// predicates met inside it are added to the pattern's.
    fn step(&mut self, predicates: &mut Vec<Predicate>) -> Result<Step> {
        let matcher = match self.peek() {
            Some('[') => {
                self.at += 1;
                let mut alternatives = Vec::new();
                while !self.eat(']') {
                    if self.peek().is_none() {
                        return self.error("unclosed `[`");
                    }
                    if self.text[self.at..].starts_with("(#") {
                        self.predicate(predicates)?;
                    } else {
                        alternatives.push(self.step(predicates)?);
                    }
                }
                Matcher::Alternatives(alternatives)
            }
            Some('"') => {
                let start = self.at;
                let kind = self.string()?;
                Matcher::Node(NodePattern::leaf(self.kinds(&kind, false, start)?))
            }
            Some('_') if !self.text[self.at + 1..].starts_with(|c: char| c.is_alphanumeric()) => {
                self.at += 1;
                Matcher::Node(NodePattern::leaf(Kinds::AnyNode))
            }
            Some('(') => {
                self.at += 1;
                if matches!(self.peek(), Some('(' | '[' | '"')) {
                    // A group: one pattern with predicates around it.
                    let step = self.step(predicates)?;
                    while !self.eat(')') {
                        if self.text[self.at..].starts_with("(#") {
                            self.predicate(predicates)?;
                        } else {
                            return self.error("a group of sibling patterns is not supported");
                        }
                    }
                    let mut captures = self.captures()?;
                    let mut step = step;
                    step.captures.append(&mut captures);
                    return Ok(step);
                }
                Matcher::Node(self.node(predicates)?)
            }
            _ => return self.error("expected a pattern"),
        };
        let captures = self.captures()?;
        Ok(Step { matcher, captures })
    }

    /// A node pattern's kind and children, after its `(` and up to its `)`.
    fn node(&mut self, predicates: &mut Vec<Predicate>) -> Result<NodePattern> {
        self.skip_blank();
        let start = self.at;
        let kind = self.name()?;
        let kinds = if kind == "_" {
            Kinds::AnyNamed
        } else {
            self.kinds(kind, true, start)?
        };
        let mut node = NodePattern::leaf(kinds);
        let mut anchored = false;
        loop {
            match self.peek() {
                None => return self.error("unclosed `(`"),
                Some(')') => {
                    self.at += 1;
                    node.anchored_end = anchored;
                    return Ok(node);
                }
                Some('.') => {
                    self.at += 1;
                    anchored = true;
                }
                Some('!') => {
                    self.at += 1;
                    self.skip_blank();
                    let at = self.at;
                    let field = self.name()?;
                    let id = self.field(field, at)?;
                    node.absent_fields.push(id);
                }
                Some('(') if self.text[self.at..].starts_with("(#") => {
                    self.predicate(predicates)?;
                }
                Some(c) => {
                    let field = if c.is_ascii_alphabetic() {
                        let at = self.at;
                        let field = self.name()?;
                        self.expect(':')?;
                        Some(self.field(field, at)?)
                    } else {
                        None
                    };
                    let step = self.step(predicates)?;
                    node.children.push(Child {
                        field,
                        anchored,
                        step,
                    });
                    anchored = false;
                }
            }
        }
    }

    /// Every id of the node kind named `kind`, which starts at `at` in the text.
    fn kinds(&self, kind: &str, named: bool, at: usize) -> Result<Kinds> {
        let refused = |message: String| {
            Err(QueryError {
                offset: at,
                message,
            })
        };
        let called = || {
            (0u16..)
                .zip(&self.kinds)
                .filter(move |(_, (name, ..))| *name == kind)
        };
        if called().any(|(_, &(_, _, supertype))| supertype) {
            return refused(format!("{kind:?} is a supertype, which is not supported"));
        }
        let ids: Vec<u16> = called()
            .filter(|(_, (_, is_named, _))| *is_named == named)
            .map(|(id, _)| id)
            .collect();
        if ids.is_empty() {
            return refused(format!("the grammar has no node kind {kind:?}"));
        }
        Ok(Kinds::Of { ids, named })
    }

    /// The id of a field whose name starts at `at`.
    fn field(&self, name: &str, at: usize) -> Result<u16> {
        match self.language.field_id_for_name(name) {
            Some(id) => Ok(id.get()),
            None => Err(QueryError {
                offset: at,
                message: format!("the grammar has no field {name:?}"),
            }),
        }
    }

    /// `(#eq? @capture "text")`, `(#eq? @a @b)`, `(#any-of? @capture "a" "b")`,
    /// `(#match? @capture "regex")`, and the same with `not-`.
    fn predicate(&mut self, predicates: &mut Vec<Predicate>) -> Result<()> {
        self.expect('(')?;
        self.expect('#')?;
        let start = self.at - 1;
        let operator = self.name()?;
        let (positive, operator) = match operator.strip_prefix("not-") {
            Some(operator) => (false, operator),
            None => (true, operator),
        };
        self.expect('@')?;
        let name = self.name()?;
        let capture = self.capture_index(name);
        let mut literals = Vec::new();
        let mut other_capture = None;
        loop {
            match self.peek() {
                Some(')') => {
                    self.at += 1;
                    break;
                }
                Some('"') => literals.push(self.string()?),
                Some('@') => {
                    self.at += 1;
                    let name = self.name()?;
                    other_capture = Some(self.capture_index(name));
                }
                _ => return self.error("expected a string, a capture or `)`"),
            }
        }
        let refused = |message: String| {
            Err(QueryError {
                offset: start,
                message,
            })
        };
        let test = match (operator, other_capture, literals.as_slice()) {
            ("eq?", Some(other), []) => Test::EqCapture(other),
            ("eq?", None, [value]) => Test::Eq(value.clone()),
            ("any-of?", None, values) if !values.is_empty() => Test::AnyOf(values.to_vec()),
            ("match?", None, [pattern]) => match compile(pattern) {
                Ok(regex) => Test::Match(regex),
                Err(error) => return refused(format!("bad regular expression: {error}")),
            },
            _ => return refused(format!("unsupported predicate #{operator}")),
        };
        predicates.push(Predicate {
            capture,
            test,
            positive,
        });
        Ok(())
    }
}

/// A predicate's regular expression. Code is matched by ASCII classes (`\w`, `(?i)`): compiled
/// without Unicode, over bytes, it is a fraction of the automaton and of the start-up time and
/// never touches the Unicode tables. The same pattern recurs across entries and is compiled once
/// per thread.
fn compile(pattern: &str) -> std::result::Result<Regex, regex::Error> {
    thread_local! {
        static COMPILED: std::cell::RefCell<std::collections::HashMap<String, Regex>> =
            std::cell::RefCell::new(std::collections::HashMap::new());
    }
    if let Some(regex) = COMPILED.with(|compiled| compiled.borrow().get(pattern).cloned()) {
        return Ok(regex);
    }
    let regex = regex::bytes::RegexBuilder::new(pattern)
        .unicode(false)
        .build()?;
    COMPILED.with(|compiled| {
        compiled
            .borrow_mut()
            .insert(pattern.to_string(), regex.clone())
    });
    Ok(regex)
}
