//! The fixes of waits: a fixed sleep before an assertion (or an assertion right after work is
//! started) becomes a wait, with a deadline, for the assertion to hold; a wait for success with a
//! bound under a second gets 30 seconds, in the unit it was written in.

use regex::Regex;
use std::sync::OnceLock;
use tree_sitter::Node;

use super::syntax::{Site, capture, descendants, is_number, is_string};
use super::{Edit, FixEntry};
use crate::language::Language;
use crate::signals::{MechanismHit, PartHit, Place};

/// How long a fixed wait may take: long enough that only a hang reaches it.
const GENEROUS_MS: f64 = 30_000.0;

pub(super) fn condition_wait(
    site: &Site<'_>,
    entry: &FixEntry,
    mechanism: &MechanismHit,
) -> Option<Vec<Edit>> {
    let check = mechanism.parts.iter().find(|part| part.role == "check")?;
    let statement = site.statement_at(&check.range)?;
    if !is_only(site, statement, check) || has_multiline_string(site, statement) {
        return None;
    }
    // Mockito's `verify` throws an error that is no `AssertionError`; it has its own wait
    // (`timeout(...)`).
    if site.language == Language::Java && site.text(statement).starts_with("verify") {
        return None;
    }
    // After a sleep, an assertion that something has not happened (yet) holds at once when
    // waited for: the test would stop waiting at all.
    if asserts_an_absence(site.text(statement)) {
        return None;
    }
    let mut edits = Vec::new();
    if let Some(wait) = mechanism.parts.iter().find(|part| part.role == "wait") {
        // The sleep goes, and the assertion right after it waits instead: with other code
        // between, the assertion is not what waited.
        if wait.place != Place::Test {
            return None;
        }
        let sleep = site.statement_at(&wait.range)?;
        if !is_only(site, sleep, wait) || next_statement(sleep)? != statement {
            return None;
        }
        edits.push(Edit {
            range: site.whole_lines(sleep)?,
            text: String::new(),
        });
    }
    let (template, imports) = if site.is_async() {
        (entry.async_template.as_deref()?, &entry.async_imports)
    } else {
        (entry.template.as_deref()?, &entry.imports)
    };
    let condition = match site.language {
        Language::Rust => rust_condition(site, statement)?,
        _ => String::new(),
    };
    let deadline = site.fresh_name("deadline");
    let pause = if site.may_be_interrupted() {
        entry.pause.as_deref()
    } else {
        entry.quiet_pause.as_deref()
    };
    let text = site.fill(
        template,
        statement,
        &[
            ("check", site.text(statement)),
            ("condition", &condition),
            ("deadline", &deadline),
            ("pause", pause.unwrap_or("")),
        ],
    )?;
    edits.push(Edit {
        range: statement.byte_range(),
        text,
    });
    edits.extend(missing_imports(site, imports)?);
    Some(edits)
}

/// Whether an assertion says that something is not there or did not happen: `assertFalse`,
/// `assert not`, `assert!(!done)`, `assertNull`, `isEmpty()`, a count of 0, `None`.
fn asserts_an_absence(assertion: &str) -> bool {
    static ABSENCE: OnceLock<Regex> = OnceLock::new();
    let absence = ABSENCE.get_or_init(|| {
        Regex::new(
            r#"(?x)
            \b(assertFalse|assertNull|assertIsNone|assertNotIn|assertNotEqual|assertNotEquals
               |isFalse|isNull|isEmpty|isZero|is_none|is_empty|never|verifyNoInteractions
               |verifyNoMoreInteractions|assert_not_called)\b
            | \bnot\b
            | ![^=]
            | (==|,|\()\s*(0|0L|None|null|false|False|\[\]|\{\}|\(\)|""|Vec::new\(\))\s*(\)|,|;|$)
            "#,
        )
        .expect("a valid pattern")
    });
    static STRING: OnceLock<Regex> = OnceLock::new();
    let string = STRING.get_or_init(|| {
        Regex::new(r#""(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'"#).expect("a valid pattern")
    });
    // What a message says is not what is asserted.
    let assertion = string.replace_all(assertion, "\"text\"");
    // A Rust macro's own `!` is no negation.
    let assertion = assertion.trim_start();
    let assertion = match assertion.split_once("!(") {
        Some((name, rest)) if name.chars().all(|c| c.is_alphanumeric() || c == '_') => rest,
        _ => assertion,
    };
    absence.is_match(assertion)
}

/// Whether `statement` is `part` alone: nothing but an `await`, a `.await` and a semicolon
/// around it.
fn is_only(site: &Site<'_>, statement: Node<'_>, part: &PartHit) -> bool {
    let own = site.text(statement).trim().trim_end_matches(';').trim_end();
    let own = own.strip_suffix(".await").unwrap_or(own);
    let own = own.strip_prefix("await ").unwrap_or(own).trim();
    own == &site.source[part.range.clone()]
}

/// The statement after `node` in its block, comments passed over.
fn next_statement(node: Node<'_>) -> Option<Node<'_>> {
    let mut next = node.next_named_sibling()?;
    while next.kind().contains("comment") {
        next = next.next_named_sibling()?;
    }
    Some(next)
}

/// A string of several lines would change if the code around it were indented.
fn has_multiline_string(site: &Site<'_>, statement: Node<'_>) -> bool {
    descendants(statement)
        .into_iter()
        .any(|node| is_string(node) && site.text(node).contains('\n'))
}

/// What a Rust assertion asserts, as an expression: `assert!(c)` gives `c`, `assert_eq!(a, b)`
/// gives `(a) == (b)`. None where evaluating it twice could change what it reads (a receive, a
/// pop, an iterator's next).
fn rust_condition(site: &Site<'_>, statement: Node<'_>) -> Option<String> {
    static CONSUMES: OnceLock<Regex> = OnceLock::new();
    let consumes = CONSUMES.get_or_init(|| {
        Regex::new(r"\.(try_)?(recv|pop|pop_front|pop_back|take|next|poll|read|read_line|drain|remove|send|write|swap|fetch_\w+|replace)\s*\(")
            .expect("a valid pattern")
    });
    let invocation = statement.named_child(0)?;
    if invocation.kind() != "macro_invocation" {
        return None;
    }
    let name = site.text(invocation.child_by_field_name("macro")?);
    let tree = invocation.named_child((invocation.named_child_count().checked_sub(1)?) as u32)?;
    if tree.kind() != "token_tree" {
        return None;
    }
    let mut arguments = Vec::new();
    let mut start = tree.start_byte() + 1;
    let count = tree.child_count();
    for index in 1..count.saturating_sub(1) {
        let child = tree.child(index)?;
        if child.kind() == "," {
            arguments.push(site.source[start..child.start_byte()].trim());
            start = child.end_byte();
        }
    }
    arguments.push(site.source[start..tree.end_byte() - 1].trim());
    let condition = match (name.trim_start_matches("debug_"), arguments.as_slice()) {
        ("assert", [condition, ..]) if !condition.is_empty() => condition.to_string(),
        ("assert_eq", [left, right, ..]) => format!("({left}) == ({right})"),
        ("assert_ne", [left, right, ..]) => format!("({left}) != ({right})"),
        _ => return None,
    };
    (!consumes.is_match(&condition)).then_some(condition)
}

/// Imports of `modules` (Python) that the file lacks, each put before its first import.
fn missing_imports(site: &Site<'_>, modules: &[String]) -> Option<Vec<Edit>> {
    if modules.is_empty() || site.language != Language::Python {
        return Some(Vec::new());
    }
    let root = site.tree.root_node();
    let mut cursor = root.walk();
    let imports: Vec<Node<'_>> = root
        .named_children(&mut cursor)
        .filter(|node| matches!(node.kind(), "import_statement" | "import_from_statement"))
        .collect();
    let imported = |module: &str| {
        imports.iter().any(|node| {
            node.kind() == "import_statement"
                && site.text(*node)["import".len()..]
                    .split(',')
                    .any(|name| name.trim() == module)
        })
    };
    let missing: Vec<&String> = modules.iter().filter(|module| !imported(module)).collect();
    if missing.is_empty() {
        return Some(Vec::new());
    }
    // Before the first import that is not `from __future__`, which must come first.
    let first = imports
        .iter()
        .find(|node| !site.text(**node).starts_with("from __future__"))?;
    let at = site.line_start(first.start_byte());
    Some(
        missing
            .into_iter()
            .map(|module| Edit {
                range: at..at,
                text: format!("import {module}\n"),
            })
            .collect(),
    )
}

pub(super) fn generous_wait(site: &Site<'_>, part: &PartHit) -> Option<Vec<Edit>> {
    let Some(captures) = site.captures(part.id, &part.range) else {
        return in_macro(site, part);
    };
    let duration = capture(&captures, "duration")?;
    let numbers: Vec<Node<'_>> = descendants(duration)
        .into_iter()
        .filter(|node| is_number(*node))
        .collect();
    let [number] = numbers[..] else {
        return None;
    };
    // The number alone, or in one call that names its unit (`Duration.ofMillis(500)`).
    let shape = format!(
        "{}N{}",
        &site.source[duration.start_byte()..number.start_byte()],
        &site.source[number.end_byte()..duration.end_byte()]
    );
    let wrapped = if shape == "N" {
        None
    } else {
        static WRAPPER: OnceLock<Regex> = OnceLock::new();
        let wrapper =
            WRAPPER.get_or_init(|| Regex::new(r"^[\w:.]+\(N\)$").expect("a valid pattern"));
        if !wrapper.is_match(&shape) {
            return None;
        }
        Some(unit_named(&shape)?)
    };
    let unit_ms = match capture(&captures, "unit") {
        Some(unit) => unit_named(site.text(unit))?,
        None => wrapped.or_else(|| site.unit_ms(part.id))?,
    };
    let float = matches!(
        number.kind(),
        "float" | "float_literal" | "decimal_floating_point_literal"
    );
    let literal = literal(site.language, GENEROUS_MS / unit_ms, float)?;
    Some(vec![Edit {
        range: number.byte_range(),
        text: literal,
    }])
}

/// A Rust wait inside a macro's arguments (`assert_eq!(rx.recv_timeout(...), ...)`), which the
/// syntax tree holds as tokens: its one `Duration::from_...(N)`, read from the text.
fn in_macro(site: &Site<'_>, part: &PartHit) -> Option<Vec<Edit>> {
    static DURATION: OnceLock<Regex> = OnceLock::new();
    let duration = DURATION.get_or_init(|| {
        Regex::new(r"\bDuration::from_(millis|secs|micros|nanos)\(\s*(\d[\d_]*)\s*\)")
            .expect("a valid pattern")
    });
    if site.language != Language::Rust {
        return None;
    }
    let text = &site.source[part.range.clone()];
    let mut found = duration.captures_iter(text);
    let only = found.next()?;
    if found.next().is_some() {
        return None;
    }
    let number = only.get(2)?;
    let unit = unit_named(only.get(1)?.as_str())?;
    let start = part.range.start + number.start();
    Some(vec![Edit {
        range: start..start + number.len(),
        text: literal(site.language, GENEROUS_MS / unit, false)?,
    }])
}

/// The unit a name gives a duration, in milliseconds: `MILLISECONDS`, `ofSeconds`,
/// `from_micros`.
fn unit_named(name: &str) -> Option<f64> {
    let name = name.to_lowercase();
    [
        ("nano", 1e-6),
        ("micro", 1e-3),
        ("milli", 1.0),
        ("sec", 1000.0),
        ("minute", 60_000.0),
    ]
    .into_iter()
    .find(|(word, _)| name.contains(word))
    .map(|(_, ms)| ms)
}

/// A number as the language writes it: `30_000`, `30_000_000_000L`, `30.0`.
fn literal(language: Language, value: f64, float: bool) -> Option<String> {
    if value < 1.0 || value.fract() != 0.0 || value > 1e15 {
        return None;
    }
    let whole = value as u64;
    if language == Language::Python {
        return Some(if float {
            format!("{whole}.0")
        } else {
            whole.to_string()
        });
    }
    let digits = whole.to_string();
    let mut grouped = String::new();
    for (at, digit) in digits.chars().enumerate() {
        if at > 0 && (digits.len() - at).is_multiple_of(3) && digits.len() > 4 {
            grouped.push('_');
        }
        grouped.push(digit);
    }
    Some(match (language, float) {
        (Language::Rust, true) => format!("{grouped}.0"),
        (Language::Java, true) => format!("{grouped}.0"),
        (Language::Java, false) if whole > i32::MAX as u64 => format!("{grouped}L"),
        _ => grouped,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_assertion_that_something_did_not_happen_is_no_condition_to_wait_for() {
        for absent in [
            "assertFalse(called.get());",
            "assertEquals(0, counter.get());",
            "assertThat(received).isEmpty();",
            "assert not done.is_set()",
            "assert calls == []",
            "self.assertIsNone(result)",
            "assert!(!passed.load(Ordering::SeqCst));",
            "assert_eq!(ctx.tasks(), 0);",
            "assert!(queue.is_empty());",
        ] {
            assert!(asserts_an_absence(absent), "{absent}");
        }
        for present in [
            "assertEquals(1, received.size());",
            "assertTrue(refreshed.get(), \"not refreshed\");",
            "assert received == [1]",
            "assert!(done.load(Ordering::SeqCst));",
            "assert_eq!(ctx.tasks(), 10);",
            "assert count != 3",
        ] {
            assert!(!asserts_an_absence(present), "{present}");
        }
    }

    #[test]
    fn thirty_seconds_are_written_in_the_unit_and_type_of_the_wait() {
        // `latch.await(500, TimeUnit.NANOSECONDS)` takes a long: an int literal would not compile.
        let nanos = GENEROUS_MS / unit_named("TimeUnit.NANOSECONDS").unwrap();
        assert_eq!(
            literal(Language::Java, nanos, false).as_deref(),
            Some("30_000_000_000L")
        );
        let millis = GENEROUS_MS / unit_named("Duration.ofMillis(N)").unwrap();
        assert_eq!(
            literal(Language::Java, millis, false).as_deref(),
            Some("30_000")
        );
        let seconds = GENEROUS_MS / unit_named("std::time::Duration::from_secs(N)").unwrap();
        assert_eq!(
            literal(Language::Rust, seconds, false).as_deref(),
            Some("30")
        );
        assert_eq!(
            literal(Language::Rust, seconds, true).as_deref(),
            Some("30.0")
        );
        assert_eq!(
            literal(Language::Python, seconds, true).as_deref(),
            Some("30.0")
        );
        // `MILLISECONDS` holds "SECONDS": the finer unit is read first.
        assert_eq!(unit_named("MILLISECONDS"), Some(1.0));
        assert_eq!(unit_named("from_micros"), Some(1e-3));
        // Less than one of the unit cannot be written as a whole number.
        assert_eq!(literal(Language::Java, 0.5, false), None);
    }
}
