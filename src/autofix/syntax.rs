//! What the fixes read of a test's syntax tree: the statement a part is in, its lines and
//! indentation, the captures of the catalogue pattern that matched a part, and templates filled
//! in at a statement's indentation.

use std::cell::Cell;
use std::ops::Range;

use tree_sitter::{Node, Tree};

use crate::extract::TestMethod;
use crate::language::Language;
use crate::signals::catalogue::Catalogue;

/// A test of a file, as the fixes read it.
pub(super) struct Site<'a> {
    pub(super) language: Language,
    pub(super) source: &'a str,
    pub(super) tree: &'a Tree,
    pub(super) test: &'a TestMethod,
    catalogue: &'static Catalogue,
}

/// The kinds that start code running at another time or place: an assertion inside one is not
/// the test's own statement.
const NESTED_CODE: [&str; 9] = [
    "lambda_expression",
    "method_declaration",
    "class_body",
    "lambda",
    "function_definition",
    "class_definition",
    "closure_expression",
    "function_item",
    "async_block",
];

impl<'a> Site<'a> {
    pub(super) fn new(
        language: Language,
        source: &'a str,
        tree: &'a Tree,
        test: &'a TestMethod,
        catalogue: &'static Catalogue,
    ) -> Site<'a> {
        Site {
            language,
            source,
            tree,
            test,
            catalogue,
        }
    }

    pub(super) fn text(&self, node: Node<'_>) -> &'a str {
        &self.source[node.byte_range()]
    }

    /// The smallest node that spans `range`.
    pub(super) fn node_at(&self, range: &Range<usize>) -> Option<Node<'a>> {
        self.tree
            .root_node()
            .descendant_for_byte_range(range.start, range.end)
    }

    /// The test's function (or method) node.
    pub(super) fn function(&self) -> Option<Node<'a>> {
        let mut node = self.node_at(&self.test.name_range)?;
        while !matches!(
            node.kind(),
            "method_declaration" | "function_definition" | "function_item"
        ) {
            node = node.parent()?;
        }
        Some(node)
    }

    /// The statement of the test's own body that holds `range`: a statement of a block that no
    /// lambda, closure or nested function stands between.
    pub(super) fn statement_at(&self, range: &Range<usize>) -> Option<Node<'a>> {
        let function = self.function()?;
        let mut node = self.node_at(range)?;
        loop {
            let parent = node.parent()?;
            if parent.kind() == "block" {
                break;
            }
            if NESTED_CODE.contains(&parent.kind()) || parent == function {
                return None;
            }
            node = parent;
        }
        // The block must be the function's body or a block inside it (an `if`, a loop, a
        // `try`), with no nested function between.
        let mut above = node.parent()?;
        while above != function {
            above = above.parent()?;
            if above != function && NESTED_CODE.contains(&above.kind()) {
                return None;
            }
        }
        Some(node)
    }

    /// Whether the test's method declares that it may be interrupted (Java: `throws
    /// InterruptedException`, `Exception` or `Throwable`).
    pub(super) fn may_be_interrupted(&self) -> bool {
        let Some(function) = self.function() else {
            return false;
        };
        let mut cursor = function.walk();
        let throws = function
            .children(&mut cursor)
            .find(|child| child.kind() == "throws");
        throws.is_some_and(|throws| {
            self.text(throws)
                .split(|c: char| !c.is_alphanumeric() && c != '_')
                .any(|name| matches!(name, "InterruptedException" | "Exception" | "Throwable"))
        })
    }

    /// Whether the test is a coroutine (`async def`, `async fn`).
    pub(super) fn is_async(&self) -> bool {
        let head = &self.source[self.test.range.start..self.test.name_range.start];
        head.split(|c: char| !c.is_alphanumeric() && c != '_')
            .any(|word| word == "async")
    }

    /// The byte where the line of `at` starts.
    pub(super) fn line_start(&self, at: usize) -> usize {
        self.source[..at]
            .rfind('\n')
            .map_or(0, |newline| newline + 1)
    }

    /// The byte after the newline ending the line of `at` (the file's end on its last line).
    pub(super) fn line_end(&self, at: usize) -> usize {
        self.source[at..]
            .find('\n')
            .map_or(self.source.len(), |newline| at + newline + 1)
    }

    /// The whitespace before `node` on its line, if only whitespace is there.
    pub(super) fn indent(&self, node: Node<'_>) -> Option<&'a str> {
        let start = self.line_start(node.start_byte());
        let before = &self.source[start..node.start_byte()];
        before
            .chars()
            .all(|c| c == ' ' || c == '\t')
            .then_some(before)
    }

    /// The lines `node` alone fills, newline included: what deleting it removes.
    pub(super) fn whole_lines(&self, node: Node<'_>) -> Option<Range<usize>> {
        self.indent(node)?;
        let end = self.line_end(node.end_byte().saturating_sub(1).max(node.start_byte()));
        let after = &self.source[node.end_byte()..end];
        after
            .trim()
            .is_empty()
            .then(|| self.line_start(node.start_byte())..end)
    }

    /// One level of the file's indentation: the test body's indentation less its function's.
    pub(super) fn indent_unit(&self, statement: Node<'_>) -> String {
        let inner = self.indent(statement).unwrap_or("");
        let outer = self
            .function()
            .map(|function| {
                let start = self.line_start(function.start_byte());
                let line = &self.source[start..];
                &line[..line.len() - line.trim_start_matches([' ', '\t']).len()]
            })
            .unwrap_or("");
        if inner.starts_with('\t') {
            return "\t".to_string();
        }
        let unit = inner.len().saturating_sub(outer.len());
        // A statement nested deeper than one level from the function's line says nothing exact.
        if (2..=4).contains(&unit) && outer.len() + unit == inner.len() {
            " ".repeat(unit)
        } else {
            "    ".to_string()
        }
    }

    /// `template` written where `statement` starts: its four-space indentation turned into the
    /// file's, every line after the first indented like the statement, each `{name}` replaced by
    /// its value (a value of several lines keeps its own lines' indentation, shifted with the
    /// template line it sits on).
    pub(super) fn fill(
        &self,
        template: &str,
        statement: Node<'_>,
        values: &[(&str, &str)],
    ) -> Option<String> {
        let indent = self.indent(statement)?;
        let unit = self.indent_unit(statement);
        let mut out = String::new();
        for (number, line) in template.trim_matches('\n').lines().enumerate() {
            let body = line.trim_start_matches(' ');
            let levels = (line.len() - body.len()) / 4;
            let shift = unit.repeat(levels);
            if number > 0 {
                out.push('\n');
                out.push_str(indent);
            }
            out.push_str(&shift);
            let mut body = body.to_string();
            for (name, value) in values {
                let shifted = value.replace('\n', &format!("\n{shift}"));
                body = body.replace(&format!("{{{name}}}"), &shifted);
            }
            out.push_str(&body);
        }
        Some(out)
    }

    /// A name for a new variable that the test's code does not use yet.
    pub(super) fn fresh_name(&self, base: &str) -> String {
        let code = &self.source[self.test.range.clone()];
        let used = |name: &str| {
            code.match_indices(name).any(|(at, _)| {
                let before = code[..at].chars().next_back();
                let after = code[at + name.len()..].chars().next();
                !before.is_some_and(|c| c.is_alphanumeric() || c == '_')
                    && !after.is_some_and(|c| c.is_alphanumeric() || c == '_')
            })
        };
        (1..)
            .map(|n| {
                if n == 1 {
                    base.to_string()
                } else {
                    format!("{base}{n}")
                }
            })
            .find(|name| !used(name))
            .unwrap_or_else(|| base.to_string())
    }

    /// The captures of the catalogue pattern of entry `id` that matched exactly `range`, by
    /// name.
    pub(super) fn captures(
        &self,
        id: &str,
        range: &Range<usize>,
    ) -> Option<Vec<(String, Node<'a>)>> {
        let entry = self
            .catalogue
            .entries
            .iter()
            .position(|entry| entry.id == id)?;
        let mut node = self.node_at(range)?;
        while node.byte_range() != *range {
            node = node.parent()?;
            if node.start_byte() < range.start {
                return None;
            }
        }
        let names = self.catalogue.query.capture_names();
        let hit = self.catalogue.query.capture_index_for_name("hit")?;
        let work = Cell::new(100_000);
        let mut found = None;
        self.catalogue
            .query
            .matches(node, self.source, &work, &mut |pattern, captures| {
                if found.is_some() || self.catalogue.pattern_entry[pattern] != entry {
                    return;
                }
                if captures
                    .iter()
                    .any(|(index, captured)| *index == hit && captured.byte_range() == *range)
                {
                    found = Some(
                        captures
                            .iter()
                            .map(|(index, captured)| (names[*index as usize].clone(), *captured))
                            .collect::<Vec<_>>(),
                    );
                }
            });
        found
    }

    /// Every node of the test's function, in document order.
    pub(super) fn nodes_of_test(&self) -> Vec<Node<'a>> {
        self.function().map(descendants).unwrap_or_default()
    }

    /// The default unit, in milliseconds, of a catalogue entry's durations.
    pub(super) fn unit_ms(&self, id: &str) -> Option<f64> {
        let entry = self.catalogue.entries.iter().find(|entry| entry.id == id)?;
        crate::signals::values::default_unit_ms(entry.unit.as_deref()?)
    }
}

/// `node` and every node below it, in document order.
pub(super) fn descendants(node: Node<'_>) -> Vec<Node<'_>> {
    let mut nodes = Vec::new();
    let mut cursor = node.walk();
    'next: loop {
        nodes.push(cursor.node());
        if cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.node() == node {
                break 'next;
            }
            if cursor.goto_next_sibling() {
                continue 'next;
            }
            if !cursor.goto_parent() {
                break 'next;
            }
        }
    }
    nodes
}

/// The capture called `name`.
pub(super) fn capture<'t>(captures: &[(String, Node<'t>)], name: &str) -> Option<Node<'t>> {
    captures
        .iter()
        .find(|(captured, _)| captured == name)
        .map(|(_, node)| *node)
}

/// Kinds of number literals.
pub(super) fn is_number(node: Node<'_>) -> bool {
    matches!(
        node.kind(),
        "decimal_integer_literal"
            | "decimal_floating_point_literal"
            | "integer"
            | "float"
            | "integer_literal"
            | "float_literal"
    )
}

/// Kinds of string literals.
pub(super) fn is_string(node: Node<'_>) -> bool {
    matches!(
        node.kind(),
        "string_literal" | "string" | "text_block" | "raw_string_literal"
    )
}
