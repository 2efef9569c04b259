//! `textDocument/codeAction` on a test: apply the mechanical fix of its warning (an edit the
//! editor previews), show its similar known flaky tests, label it in the workspace's index,
//! silence it with a `flakesense: ignore` comment, or read the category's fix hint. None of
//! them disables the test.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{Value, json};
use tower_lsp_server::ls_types::{
    CodeAction, CodeActionKind, CodeActionOrCommand, CodeActionParams, CodeActionResponse, Command,
    Diagnostic, Position, TextEdit, Uri, WorkspaceEdit,
};

use crate::analysis::hint;
use crate::autofix::Fix;
use crate::language::Language;
use crate::lsp::analyze::{Current, current_analysis};
use crate::lsp::execute_command::{MARK_FLAKY, MARK_NOT_FLAKY, SHOW_FIX_HINT, SHOW_SIMILAR};
use crate::lsp::judging::JudgedTest;
use crate::lsp::position::PositionEncoding;
use crate::lsp::session::Session;

/// The marker the extractor honours, in a language's line comment.
pub fn ignore_comment(language: Language) -> &'static str {
    match language {
        Language::Java | Language::Rust => "// flakesense: ignore",
        Language::Python => "# flakesense: ignore",
    }
}

pub async fn code_action(
    session: &Arc<Session>,
    params: CodeActionParams,
) -> Option<CodeActionResponse> {
    let uri = params.text_document.uri;
    let current = current_analysis(session, &uri).await?;
    let encoding = session.state().encoding;
    let runs = crate::lsp::confirm::runs(session);
    let file = crate::lsp::state::file_path(&uri);
    let relative = session.state().relative_path(&uri);
    let cursor = current.text_lines().byte_range(params.range, encoding);
    let fixes = crate::lsp::fixing::under_cursor(session, &uri, &current, &cursor).await;
    // Every test the selection touches, or the one the cursor is in.
    let actions: Vec<CodeActionOrCommand> = current
        .analysis
        .tests
        .iter()
        .filter(|judged| {
            judged.test.range.start <= cursor.end && cursor.start <= judged.test.range.end
        })
        .flat_map(|judged| {
            let diagnostics: Vec<Diagnostic> = params
                .context
                .diagnostics
                .iter()
                .filter(|diagnostic| {
                    diagnostic
                        .data
                        .as_ref()
                        .and_then(|data| data.get("testId"))
                        .and_then(Value::as_str)
                        == Some(judged.test.id.as_str())
                })
                .cloned()
                .collect();
            let command = file.as_deref().and_then(|file| {
                crate::lsp::confirm::command_of(session, file, &relative, &judged.test)
            });
            let mut actions: Vec<CodeAction> = fixes
                .iter()
                .filter(|fix| fix.test_id == judged.test.id)
                .flat_map(|fix| {
                    [
                        fix_action(&uri, &current, fix, diagnostics.clone(), encoding),
                        crate::lsp::fixing::fix_and_confirm_action(
                            &uri,
                            fix,
                            runs,
                            command.as_ref(),
                        ),
                    ]
                })
                .collect();
            actions.extend(actions_for_test(
                &uri,
                &current,
                judged,
                diagnostics,
                encoding,
            ));
            actions.push(confirm_action(&uri, judged, runs, command.as_ref()));
            actions
        })
        // The one kind the server advertises (`initialize`): VS Code drops an action without a
        // kind whenever it asks for quick fixes only.
        .map(|action| {
            CodeActionOrCommand::CodeAction(CodeAction {
                kind: Some(CodeActionKind::QUICKFIX),
                ..action
            })
        })
        .collect();
    Some(actions)
}

/// "Fix: wait for the assertion to hold ...": the fix's edits, which the editor previews.
fn fix_action(
    uri: &Uri,
    current: &Current,
    fix: &Fix,
    diagnostics: Vec<Diagnostic>,
    encoding: PositionEncoding,
) -> CodeAction {
    let text_lines = current.text_lines();
    let edits = fix
        .edits
        .iter()
        .map(|edit| TextEdit {
            range: text_lines.range(&edit.range, encoding),
            new_text: edit.text.clone(),
        })
        .collect();
    CodeAction {
        title: format!("Fix: {}", fix.title),
        diagnostics: (!diagnostics.is_empty()).then_some(diagnostics),
        edit: Some(WorkspaceEdit {
            changes: Some(HashMap::from([(uri.clone(), edits)])),
            ..WorkspaceEdit::default()
        }),
        is_preferred: Some(true),
        ..CodeAction::default()
    }
}

fn actions_for_test(
    uri: &Uri,
    current: &Current,
    judged: &JudgedTest,
    diagnostics: Vec<Diagnostic>,
    encoding: PositionEncoding,
) -> Vec<CodeAction> {
    let id = judged.test.id.as_str();
    let prediction = &judged.judged.prediction;
    let arguments = || vec![json!(uri.as_str()), json!(id)];
    let action = |title: String, command: &str, arguments: Vec<Value>| CodeAction {
        title: title.clone(),
        diagnostics: (!diagnostics.is_empty()).then(|| diagnostics.clone()),
        command: Some(Command {
            title,
            command: command.to_string(),
            arguments: Some(arguments),
        }),
        ..CodeAction::default()
    };
    let flagged = judged.severity.is_some();
    let mut actions = Vec::new();
    if flagged {
        actions.push(action(
            "Show similar known flaky tests".to_string(),
            SHOW_SIMILAR,
            arguments(),
        ));
    }
    let mark_flaky = match prediction.category {
        Some(category) => {
            let mut with_category = arguments();
            with_category.push(json!(category.name()));
            action(
                format!("Mark as flaky (category {category})"),
                MARK_FLAKY,
                with_category,
            )
        }
        None => action("Mark as flaky".to_string(), MARK_FLAKY, arguments()),
    };
    actions.push(mark_flaky);
    if flagged {
        actions.push(action(
            "Mark as not flaky".to_string(),
            MARK_NOT_FLAKY,
            arguments(),
        ));
        // A test inherited from another module is silenced there, where its code is.
        let defined_elsewhere = judged
            .test
            .inherited
            .as_ref()
            .is_some_and(|inherited| inherited.elsewhere.is_some());
        if !defined_elsewhere {
            actions.push(ignore_action(
                uri,
                current,
                judged,
                diagnostics.clone(),
                encoding,
            ));
        }
        if let Some(category) = prediction.category {
            actions.push(action(
                format!("How to fix {category} flakiness"),
                SHOW_FIX_HINT,
                vec![
                    json!(category.name()),
                    json!(hint(current.language, prediction)),
                ],
            ));
        }
    }
    actions
}

/// "Confirm: run this test N times with `COMMAND` (from ORIGIN)": runs in the background (see
/// `lsp::confirm`).
fn confirm_action(
    uri: &Uri,
    judged: &JudgedTest,
    runs: u32,
    command: Option<&(String, crate::confirm::runner::CommandOrigin)>,
) -> CodeAction {
    let title = format!(
        "Confirm: run this test {runs} time{}{}",
        if runs == 1 { "" } else { "s" },
        command
            .map(|command| format!(" with {}", crate::lsp::confirm::describe_command(command)))
            .unwrap_or_default()
    );
    CodeAction {
        title: title.clone(),
        command: Some(Command {
            title,
            command: crate::lsp::confirm::CONFIRM.to_string(),
            arguments: Some(vec![
                json!(uri.as_str()),
                json!(judged.test.id),
                json!(runs),
            ]),
        }),
        ..CodeAction::default()
    }
}

/// Inserts the ignore marker on its own line above the test (above its annotations), indented
/// like the line it precedes.
fn ignore_action(
    uri: &Uri,
    current: &Current,
    judged: &JudgedTest,
    diagnostics: Vec<Diagnostic>,
    encoding: PositionEncoding,
) -> CodeAction {
    let text_lines = current.text_lines();
    let start = text_lines.position(judged.test.range.start, encoding);
    let line_start = text_lines.offset(Position::new(start.line, 0), encoding);
    let indent: String = current.text[line_start..]
        .chars()
        .take_while(|character| *character == ' ' || *character == '\t')
        .collect();
    let line_break = if current.text.contains("\r\n") {
        "\r\n"
    } else {
        "\n"
    };
    let edit = TextEdit {
        range: tower_lsp_server::ls_types::Range::new(
            Position::new(start.line, 0),
            Position::new(start.line, 0),
        ),
        new_text: format!("{indent}{}{line_break}", ignore_comment(current.language)),
    };
    CodeAction {
        title: "Ignore this test (flakesense: ignore)".to_string(),
        diagnostics: (!diagnostics.is_empty()).then_some(diagnostics),
        edit: Some(WorkspaceEdit {
            changes: Some(HashMap::from([(uri.clone(), vec![edit])])),
            ..WorkspaceEdit::default()
        }),
        ..CodeAction::default()
    }
}
