//! The XML of one JUnit report file read into its test cases: each `<testcase>`'s names, outcome,
//! failed attempts and failure messages, in any of the dialects of [`super`]. A file whose root
//! element is neither `<testsuites>` nor `<testsuite>` is told apart, and malformed XML is an
//! error that says where.

use anyhow::{Result, bail};
use quick_xml::Reader;
use quick_xml::events::{BytesStart, Event};

use super::{CaseResult, Outcome};

/// The longest part of a failure's text read for category hints; stack traces go on for pages.
const MAX_MESSAGE_CHARS: usize = 4000;

/// What one XML file holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Report {
    Junit(Vec<CaseResult>),
    /// Not a test report: the name of its root element.
    Other(String),
}

/// A `<testcase>` being read.
#[derive(Debug)]
struct OpenCase {
    depth: usize,
    result: CaseResult,
}

/// A failure element whose text is being collected.
#[derive(Debug)]
struct OpenFailure {
    depth: usize,
    text: String,
}

/// Parses the text of one report file. Malformed XML is an error saying where.
pub fn parse_report(text: &str) -> Result<Report> {
    let mut reader = Reader::from_str(text);
    let mut depth = 0usize;
    let mut suites: Vec<(usize, String)> = Vec::new();
    let mut case: Option<OpenCase> = None;
    let mut failure: Option<OpenFailure> = None;
    // Depth of a `<system-out>` or `<system-err>` whose text is not a failure's.
    let mut output: Option<usize> = None;
    let mut results = Vec::new();
    let mut seen_root = false;
    // The reader's own errors know where they start; errors in an attribute or an entity are
    // found after the reader moved past the element, so they point at its end.
    let malformed_at = |position: u64, message: String| {
        let (line, column) = line_and_column(text, position as usize);
        anyhow::anyhow!("malformed XML at line {line}, column {column}: {message}")
    };
    let malformed =
        |reader: &Reader<&[u8]>, message: String| malformed_at(reader.buffer_position(), message);
    loop {
        let event = reader
            .read_event()
            .map_err(|error| malformed_at(reader.error_position(), error.to_string()))?;
        let element = match &event {
            Event::Start(element) | Event::Empty(element) => Some(element),
            _ => None,
        };
        if let Some(element) = element {
            let name = String::from_utf8_lossy(element.local_name().as_ref()).into_owned();
            if !seen_root {
                seen_root = true;
                if name != "testsuites" && name != "testsuite" {
                    return Ok(Report::Other(name));
                }
            }
            depth += 1;
            let read_attribute = |key: &str| -> Result<Option<String>> {
                attribute(element, key).map_err(|error| malformed(&reader, error))
            };
            match name.as_str() {
                "testsuite" => suites.push((depth, read_attribute("name")?.unwrap_or_default())),
                "testcase" => {
                    let suite = suites
                        .last()
                        .map(|(_, name)| name.clone())
                        .unwrap_or_default();
                    case = Some(OpenCase {
                        depth,
                        result: CaseResult {
                            classname: read_attribute("classname")?
                                .filter(|classname| !classname.is_empty())
                                .unwrap_or(suite),
                            name: read_attribute("name")?.unwrap_or_default(),
                            outcome: Outcome::Passed,
                            failed_attempts: 0,
                            messages: Vec::new(),
                        },
                    });
                }
                "failure" | "error" | "flakyFailure" | "flakyError" | "rerunFailure"
                | "rerunError"
                    if case.is_some() && failure.is_none() =>
                {
                    if let Some(open) = case.as_mut() {
                        if name == "failure" || name == "error" {
                            open.result.outcome = Outcome::Failed;
                        } else {
                            open.result.failed_attempts += 1;
                        }
                    }
                    let mut text = String::new();
                    for key in ["type", "message"] {
                        if let Some(value) = read_attribute(key)? {
                            text.push_str(&value);
                            text.push('\n');
                        }
                    }
                    failure = Some(OpenFailure { depth, text });
                }
                "skipped" => {
                    if let Some(open) = case.as_mut()
                        && open.result.outcome == Outcome::Passed
                    {
                        open.result.outcome = Outcome::Skipped;
                    }
                }
                "system-out" | "system-err" if output.is_none() => output = Some(depth),
                _ => {}
            }
        }
        let closing = matches!(event, Event::End(_) | Event::Empty(_));
        match &event {
            Event::Text(content) if output.is_none() => {
                if let Some(open) = failure.as_mut() {
                    let content = content
                        .decode()
                        .map_err(|error| malformed(&reader, error.to_string()))?;
                    push_limited(&mut open.text, &content);
                }
            }
            Event::CData(content) if output.is_none() => {
                if let Some(open) = failure.as_mut() {
                    let content = content
                        .decode()
                        .map_err(|error| malformed(&reader, error.to_string()))?;
                    push_limited(&mut open.text, &content);
                }
            }
            Event::GeneralRef(reference) if output.is_none() => {
                if let Some(open) = failure.as_mut() {
                    let resolved = match reference
                        .resolve_char_ref()
                        .map_err(|error| malformed(&reader, error.to_string()))?
                    {
                        Some(character) => character.to_string(),
                        None => {
                            let name = reference
                                .decode()
                                .map_err(|error| malformed(&reader, error.to_string()))?;
                            quick_xml::escape::resolve_predefined_entity(&name)
                                .ok_or_else(|| {
                                    malformed(&reader, format!("unknown entity &{name};"))
                                })?
                                .to_string()
                        }
                    };
                    push_limited(&mut open.text, &resolved);
                }
            }
            Event::Eof => {
                if depth > 0 {
                    let (line, column) = line_and_column(text, text.len());
                    bail!(
                        "malformed XML at line {line}, column {column}: the file ends inside an element (truncated?)"
                    );
                }
                if !seen_root {
                    bail!("malformed XML: no element at all");
                }
                break;
            }
            _ => {}
        }
        if closing {
            if output == Some(depth) {
                output = None;
            }
            if failure.as_ref().is_some_and(|open| open.depth == depth)
                && let (Some(open), Some(case)) = (failure.take(), case.as_mut())
            {
                case.result.messages.push(open.text);
            }
            if case.as_ref().is_some_and(|open| open.depth == depth)
                && let Some(open) = case.take()
            {
                results.push(open.result);
            }
            if suites
                .last()
                .is_some_and(|(suite_depth, _)| *suite_depth == depth)
            {
                suites.pop();
            }
            depth = depth.saturating_sub(1);
        }
    }
    Ok(Report::Junit(results))
}

fn attribute(element: &BytesStart, key: &str) -> std::result::Result<Option<String>, String> {
    for attribute in element.attributes() {
        let attribute = attribute.map_err(|error| error.to_string())?;
        if attribute.key.local_name().as_ref() == key.as_bytes() {
            let value = attribute
                .unescape_value()
                .map_err(|error| error.to_string())?;
            return Ok(Some(value.into_owned()));
        }
    }
    Ok(None)
}

fn push_limited(text: &mut String, more: &str) {
    let room = MAX_MESSAGE_CHARS.saturating_sub(text.len());
    if room == 0 {
        return;
    }
    let mut end = more.len().min(room);
    while !more.is_char_boundary(end) {
        end -= 1;
    }
    text.push_str(&more[..end]);
}

/// 1-based line and column (in characters) of a byte offset.
fn line_and_column(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let column = before
        .rsplit('\n')
        .next()
        .map_or(0, |line| line.chars().count())
        + 1;
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::junit::tests::results;

    #[test]
    fn nextest_reports_keep_binary_and_module_path() {
        let text = r#"<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="nextest-run" tests="1" failures="0" errors="0">
    <testsuite name="shop" tests="1" disabled="0" errors="0" failures="0">
        <testcase name="cache::tests::evicts" classname="shop" timestamp="2024-01-09T07:50:12.665+00:00" time="0.004">
            <flakyFailure timestamp="2024-01-09T07:50:12.670+00:00" time="0.004" type="test failure">thread &apos;cache::tests::evicts&apos; panicked: Address already in use (os error 98)</flakyFailure>
        </testcase>
    </testsuite>
</testsuites>"#;
        let results = results(text);
        assert_eq!(results[0].classname, "shop");
        assert_eq!(results[0].name, "cache::tests::evicts");
        assert!(results[0].messages[0].contains("thread 'cache::tests::evicts' panicked"));
    }

    #[test]
    fn a_missing_classname_falls_back_to_the_suite() {
        let text = r#"<testsuite name="suite"><testcase name="t"/></testsuite>"#;
        assert_eq!(results(text)[0].classname, "suite");
    }

    #[test]
    fn malformed_xml_says_where() {
        for (text, expected) in [
            (
                "<testsuite>\n  <testcase name=\"a\">\n</testsuite>",
                "line 3",
            ),
            (
                "<testsuite>\n  <testcase name=\"a\"/>\n",
                "ends inside an element",
            ),
            (
                "<testsuite>\n  <testcase name=\"a\" name=\"b\"/></testsuite>",
                "line 2",
            ),
            (
                "<testsuite><testcase name='a'><failure>&bogus;</failure></testcase></testsuite>",
                "bogus",
            ),
            ("", "no element"),
        ] {
            let error = parse_report(text).expect_err(text);
            assert!(format!("{error:#}").contains(expected), "{text}: {error:#}");
        }
    }

    #[test]
    fn other_xml_files_are_recognised() {
        assert_eq!(
            parse_report("<?xml version=\"1.0\"?><project><modelVersion/></project>").ok(),
            Some(Report::Other("project".to_string()))
        );
    }
}
