//! The mechanical fixes in the editor: those of the warned tests under the cursor, worked out
//! off the editor's thread, and `flakesense.fixAndConfirm` (document URI, test id, fix id): the
//! code action "Fix and confirm", which runs the test as saved, applies the fix (to the editor's
//! text and to the file), runs it again, and shows both verdicts: "failed 7 of 20 under noise
//! before the fix; 0 of 20 after".

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use serde_json::json;
use tower_lsp_server::jsonrpc::{Error, Result};
use tower_lsp_server::ls_types::{
    CodeAction, Command, LSPAny, MessageType, TextEdit, Uri, WorkspaceEdit,
};

use crate::analysis::Severity;
use crate::autofix::{self, Fix};
use crate::confirm::verdict::{TestVerdict, Verdict};
use crate::lsp::analyze::{Current, current_analysis};
use crate::lsp::confirm::{self, Prepared};
use crate::lsp::session::{CLIENT_ANSWER_TIMEOUT, Session};

pub const FIX_AND_CONFIRM: &str = "flakesense.fixAndConfirm";

/// The mechanical fixes ([`crate::autofix`]) of the warned tests the cursor touches.
pub async fn under_cursor(
    session: &Arc<Session>,
    uri: &Uri,
    current: &Current,
    cursor: &std::ops::Range<usize>,
) -> Vec<Fix> {
    let warned: HashSet<String> = current
        .analysis
        .tests
        .iter()
        .filter(|judged| {
            judged.test.range.start <= cursor.end && cursor.start <= judged.test.range.end
        })
        .filter(|judged| {
            judged.severity == Some(Severity::Warning)
                && !judged.judged.prediction.mechanisms.is_empty()
        })
        .map(|judged| judged.test.id.clone())
        .collect();
    offered(session, uri, current, warned).await
}

/// The fixes of the tests `warned` names in the document, worked out off the editor's thread:
/// each reads the file again to check itself.
async fn offered(
    session: &Arc<Session>,
    uri: &Uri,
    current: &Current,
    warned: HashSet<String>,
) -> Vec<Fix> {
    if warned.is_empty() {
        return Vec::new();
    }
    let Some(relative_path) = session
        .documents
        .lock()
        .get(uri)
        .map(|document| document.relative_path.clone())
    else {
        return Vec::new();
    };
    let (root, reader) = {
        let state = session.state();
        (state.root.clone(), state.surroundings.clone())
    };
    let (language, text) = (current.language, current.text.clone());
    let work = tokio::task::spawn_blocking(move || {
        let surroundings = match (root, reader) {
            (Some(root), Some(reader)) => reader.for_file(language, &root.join(&relative_path)),
            _ => Default::default(),
        };
        autofix::offer(language, &relative_path, &text, &surroundings, &|id| {
            warned.contains(id)
        })
    });
    match work.await {
        Ok(fixes) => fixes,
        Err(error) => {
            session
                .log(
                    tower_lsp_server::ls_types::MessageType::WARNING,
                    format!("working out the fixes failed: {error}"),
                )
                .await;
            Vec::new()
        }
    }
}

/// "Fix and confirm": the fix applied between two confirmations of the test.
pub fn fix_and_confirm_action(
    uri: &Uri,
    fix: &Fix,
    runs: u32,
    command: Option<&(String, crate::confirm::runner::CommandOrigin)>,
) -> CodeAction {
    let title = format!(
        "Fix and confirm: run the test {runs} times before and after the fix{}",
        command
            .map(|command| format!(" with {}", confirm::describe_command(command)))
            .unwrap_or_default()
    );
    CodeAction {
        title: title.clone(),
        command: Some(Command {
            title,
            command: FIX_AND_CONFIRM.to_string(),
            arguments: Some(vec![json!(uri.as_str()), json!(fix.test_id), json!(fix.id)]),
        }),
        ..CodeAction::default()
    }
}

/// Starts "Fix and confirm"; answers once the first runs have started.
pub async fn fix_and_confirm(
    session: &Arc<Session>,
    uri: Uri,
    test_id: &str,
    fix_id: &str,
) -> Result<Option<LSPAny>> {
    let prepared = confirm::prepare(session, &uri, test_id, None).await?;
    if prepared.unsaved {
        return Err(Error::invalid_params(format!(
            "save {} first: the test runs as saved, before and after the fix",
            prepared.test.path
        )));
    }
    let current = current_analysis(session, &uri)
        .await
        .ok_or_else(|| Error::invalid_params(format!("{} is not open", uri.as_str())))?;
    let fix = offered(
        session,
        &uri,
        &current,
        HashSet::from([test_id.to_string()]),
    )
    .await
    .into_iter()
    .find(|fix| fix.id == fix_id)
    .ok_or_else(|| {
        Error::invalid_params(format!("the fix `{fix_id}` no longer applies to {test_id}"))
    })?;
    let (stop, done) = confirm::register(session);
    let answer = json!({"testId": test_id, "fix": fix_id, "runs": prepared.settings.runs});
    let session = session.clone();
    tokio::spawn(async move {
        run(&session, &uri, &current, prepared, &fix, &stop).await;
        confirm::unregister(&done);
    });
    Ok(Some(answer))
}

async fn run(
    session: &Arc<Session>,
    uri: &Uri,
    current: &Current,
    prepared: Prepared,
    fix: &Fix,
    stop: &crate::confirm::process::Stop,
) {
    let Prepared {
        root,
        test,
        config,
        settings,
        command: prepared_command,
        ..
    } = prepared;
    let id = test.test.id.clone();
    if !confirm::asked_to_run(session, &id, prepared_command.as_ref()).await {
        return;
    }
    let title = format!("flakesense: confirming {id} before the fix");
    let Some(before) = confirm::run(
        session,
        &root,
        &test,
        config.clone(),
        &settings,
        stop,
        &title,
    )
    .await
    else {
        return;
    };
    // The file must still be the text the fix was worked out on.
    let saved = tokio::fs::read_to_string(&test.file).await.ok();
    if saved.as_deref() != Some(current.text.as_str()) {
        session
            .show(
                MessageType::WARNING,
                format!(
                    "flakesense: {} changed during the runs; the fix was not applied",
                    test.path
                ),
            )
            .await;
        return;
    }
    let fixed = fix.apply(&current.text);
    let text_lines = current.text_lines();
    let encoding = session.state().encoding;
    let edits: Vec<TextEdit> = fix
        .edits
        .iter()
        .map(|edit| TextEdit {
            range: text_lines.range(&edit.range, encoding),
            new_text: edit.text.clone(),
        })
        .collect();
    let edit = WorkspaceEdit {
        changes: Some(HashMap::from([(uri.clone(), edits)])),
        ..WorkspaceEdit::default()
    };
    let applied =
        tokio::time::timeout(CLIENT_ANSWER_TIMEOUT, session.client.apply_edit(edit)).await;
    if !matches!(&applied, Ok(Ok(response)) if response.applied) {
        session
            .show(
                MessageType::WARNING,
                format!(
                    "flakesense: the editor did not apply the fix of {id}; nothing was changed"
                ),
            )
            .await;
        return;
    }
    let (path, expected) = (test.file.clone(), current.text.clone());
    let written =
        tokio::task::spawn_blocking(move || autofix::write_file(&path, &expected, &fixed)).await;
    if !matches!(written, Ok(Ok(()))) {
        session
            .show(
                MessageType::ERROR,
                format!(
                    "flakesense: cannot save the fix of {id} to {}; the editor holds it unsaved",
                    test.path
                ),
            )
            .await;
        return;
    }
    let title = format!("flakesense: confirming {id} after the fix");
    let Some(after) = confirm::run(session, &root, &test, config, &settings, stop, &title).await
    else {
        return;
    };
    let level = if after.verdict == Verdict::NoFlakinessSeen {
        MessageType::INFO
    } else {
        MessageType::WARNING
    };
    session
        .show(
            level,
            format!(
                "flakesense: {id}: before the fix {}; after it {}",
                counts(&before),
                counts(&after)
            ),
        )
        .await;
}

/// "failed 7 of 20 runs under noise, 0 of 20 under cpu1 (flaky)".
fn counts(verdict: &TestVerdict) -> String {
    let tallies: Vec<String> = verdict
        .tallies
        .iter()
        .filter(|tally| tally.unavailable.is_none() && tally.runs > 0)
        .map(|tally| {
            format!(
                "{} of {} under {}",
                tally.failed, tally.runs, tally.condition
            )
        })
        .collect();
    let word = match verdict.verdict {
        Verdict::Flaky => "flaky",
        Verdict::Broken => "broken",
        Verdict::NoFlakinessSeen => "no flakiness seen",
        Verdict::NotRun => "not run",
    };
    format!("failed {} ({word})", tallies.join(", "))
}
