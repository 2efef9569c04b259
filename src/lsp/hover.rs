//! `textDocument/hover` on a test's name: the score, the category, the signals, the known flaky
//! tests with the same risk, the nearest known tests and the tokens shared with the flaky ones, as
//! Markdown.

use std::fmt::Write as _;
use std::sync::Arc;

use tower_lsp_server::ls_types::{Hover, HoverContents, HoverParams, MarkupContent, MarkupKind};

use crate::analysis::{hint, similarity};
use crate::lsp::analyze::current_analysis;
use crate::lsp::judging::JudgedTest;
use crate::lsp::session::Session;

pub async fn hover(session: &Arc<Session>, params: HoverParams) -> Option<Hover> {
    let position = params.text_document_position_params;
    let current = current_analysis(session, &position.text_document.uri).await?;
    let encoding = session.state().encoding;
    let offset = current.text_lines().offset(position.position, encoding);
    // The end is included: a cursor right after the name is still on it.
    let judged_test = current.analysis.tests.iter().find(|judged| {
        judged.test.name_range.start <= offset && offset <= judged.test.name_range.end
    })?;
    Some(Hover {
        contents: HoverContents::Markup(MarkupContent {
            kind: MarkupKind::Markdown,
            value: markdown(judged_test),
        }),
        range: Some(
            current
                .text_lines()
                .range(&judged_test.test.name_range, encoding),
        ),
    })
}

/// The hover's text.
pub fn markdown(judged_test: &JudgedTest) -> String {
    let prediction = &judged_test.judged.prediction;
    let mut text = String::new();
    let verdict = match (judged_test.test.ignored, judged_test.severity.is_some()) {
        (true, _) => "ignored (`flakesense: ignore`)",
        (false, true) => "likely flaky",
        (false, false) => "not flagged",
    };
    let _ = write!(
        text,
        "**flakesense: {verdict}**, score {}",
        crate::analysis::score_text(prediction.score)
    );
    if let Some(category) = prediction.category {
        let _ = write!(text, ", likely category `{category}`");
    }
    text.push_str("\n\n");
    for mechanism in &prediction.mechanisms {
        let _ = writeln!(
            text,
            "How it can fail ({}): it {}.\n",
            mechanism.category,
            mechanism.evidence()
        );
    }
    if !prediction.signals.is_empty() {
        text.push_str("Flakiness signals in this test and what it runs:\n\n");
        for hit in &prediction.signals {
            let _ = writeln!(text, "- {} ({})", hit.evidence(), hit.category);
        }
        text.push('\n');
    }
    if let Some(strongest) = prediction.signals.first()
        && !prediction.examples.is_empty()
    {
        let _ = writeln!(
            text,
            "Known flaky tests whose code has the same risk ({}), nearest first:\n",
            strongest.message
        );
        for example in &prediction.examples {
            let _ = writeln!(
                text,
                "- `{}` ({}), similarity {:.2}",
                example.id.replace('`', "'"),
                example.project,
                similarity(example)
            );
        }
        text.push('\n');
    }
    if prediction.neighbors.is_empty() {
        text.push_str("No known test shares tokens with this one.\n");
        return text;
    }
    text.push_str("| nearest known test | project | label | category | similarity |\n");
    text.push_str("|---|---|---|---|---|\n");
    for neighbor in &prediction.neighbors {
        let categories: Vec<&str> = neighbor.categories.iter().map(|c| c.name()).collect();
        let _ = writeln!(
            text,
            "| `{}` | {} | {} | {} | {:.2} |",
            escape_cell(&neighbor.id),
            escape_cell(&neighbor.project),
            neighbor.label.name(),
            if categories.is_empty() {
                "-".to_string()
            } else {
                categories.join(", ")
            },
            similarity(neighbor),
        );
    }
    if !prediction.shared_tokens.is_empty() {
        let tokens: Vec<String> = prediction
            .shared_tokens
            .iter()
            .map(|token| format!("`{}`", token.replace('`', "'")))
            .collect();
        let _ = write!(
            text,
            "\nShared with the flaky ones: {}\n",
            tokens.join(", ")
        );
    }
    if judged_test.severity.is_some() {
        let hint = hint(judged_test.test.language, prediction);
        let _ = write!(text, "\n{hint}\n");
    }
    text
}

/// A table cell cannot hold a `|` or a line break.
fn escape_cell(text: &str) -> String {
    text.replace('|', "\\|").replace(['\n', '\r'], " ")
}
