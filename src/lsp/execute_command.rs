//! `workspace/executeCommand`: the commands behind the code actions. Their names and arguments
//! are a contract with the editor extensions.
//!
//! - `flakesense.markFlaky` (document URI, test id, optional category name)
//! - `flakesense.markNotFlaky` (document URI, test id)
//! - `flakesense.showSimilar` (document URI, test id)
//! - `flakesense.showFixHint` (category name)
//! - `flakesense.confirm` (document URI, test id, optional runs): see [`crate::lsp::confirm`]

use std::sync::Arc;

use serde_json::{Value, json};
use tower_lsp_server::jsonrpc::{Error, Result};
use tower_lsp_server::ls_types::{
    ExecuteCommandParams, LSPAny, MessageType, ShowDocumentParams, Uri,
};

use crate::analysis::similarity;
use crate::category::Category;
use crate::index::{Label, Origin};
use crate::labels::{self, TestLabel};
use crate::lsp::analyze::{self, current_analysis, panic_message};
use crate::lsp::judging::JudgedTest;
use crate::lsp::neighbors::NeighborLocator;
use crate::lsp::session::Session;
use crate::lsp::state::ProjectIndexState;
use crate::predict::{Neighbor, flaky_besides};
use crate::workspace;

pub const MARK_FLAKY: &str = "flakesense.markFlaky";
pub const MARK_NOT_FLAKY: &str = "flakesense.markNotFlaky";
pub const SHOW_SIMILAR: &str = "flakesense.showSimilar";
pub const SHOW_FIX_HINT: &str = "flakesense.showFixHint";

pub const COMMANDS: [&str; 6] = [
    MARK_FLAKY,
    MARK_NOT_FLAKY,
    SHOW_SIMILAR,
    SHOW_FIX_HINT,
    crate::lsp::confirm::CONFIRM,
    crate::lsp::fixing::FIX_AND_CONFIRM,
];

pub async fn execute_command(
    session: &Arc<Session>,
    params: ExecuteCommandParams,
) -> Result<Option<LSPAny>> {
    let arguments = params.arguments;
    let text_argument = |position: usize, what: &str| -> Result<String> {
        arguments
            .get(position)
            .and_then(Value::as_str)
            .map(str::to_string)
            .ok_or_else(|| {
                Error::invalid_params(format!(
                    "{}: argument {} must be the {what}",
                    params.command,
                    position + 1
                ))
            })
    };
    let uri = || -> Result<Uri> {
        text_argument(0, "document URI")?
            .parse()
            .map_err(|error| Error::invalid_params(format!("invalid document URI: {error}")))
    };
    match params.command.as_str() {
        MARK_FLAKY => {
            let category =
                match arguments.get(2).and_then(Value::as_str) {
                    Some(name) => Some(Category::from_name(name).ok_or_else(|| {
                        Error::invalid_params(format!("unknown category `{name}`"))
                    })?),
                    None => None,
                };
            mark(
                session,
                uri()?,
                &text_argument(1, "test id")?,
                Some(category),
            )
            .await
        }
        MARK_NOT_FLAKY => mark(session, uri()?, &text_argument(1, "test id")?, None).await,
        SHOW_SIMILAR => show_similar(session, uri()?, &text_argument(1, "test id")?).await,
        SHOW_FIX_HINT => {
            let name = text_argument(0, "category name")?;
            let category = Category::from_name(&name)
                .ok_or_else(|| Error::invalid_params(format!("unknown category `{name}`")))?;
            // The code action words the hint for its test (its strongest signal, its language).
            let hint = match arguments.get(1).and_then(Value::as_str) {
                Some(hint) => hint.to_string(),
                None => category.fix_hint(None).to_string(),
            };
            session
                .show(
                    MessageType::INFO,
                    format!("flakesense ({category}): {hint}"),
                )
                .await;
            Ok(Some(json!({ "category": category, "hint": hint })))
        }
        crate::lsp::confirm::CONFIRM => {
            let runs = arguments
                .get(2)
                .and_then(Value::as_u64)
                .map(|runs| runs.clamp(1, 10_000) as u32);
            crate::lsp::confirm::start(session, uri()?, &text_argument(1, "test id")?, runs).await
        }
        crate::lsp::fixing::FIX_AND_CONFIRM => {
            crate::lsp::fixing::fix_and_confirm(
                session,
                uri()?,
                &text_argument(1, "test id")?,
                &text_argument(2, "fix id")?,
            )
            .await
        }
        other => Err(Error::invalid_params(format!("unknown command `{other}`"))),
    }
}

/// Labels a test in the workspace's index: flaky (`Some(category)`, the category defaulting to the
/// predicted one) or not flaky (`None`), through the label store ([`labels::record`]), which
/// creates the index on first use and never loses another writer's labels; then every open
/// document is judged again.
async fn mark(
    session: &Arc<Session>,
    uri: Uri,
    test_id: &str,
    flaky: Option<Option<Category>>,
) -> Result<Option<LSPAny>> {
    let judged = judged_test(session, &uri, test_id).await?;
    let _one_mark_at_a_time = session.marking.lock().await;
    let (root, relative_path) = {
        let state = session.state();
        (state.root.clone(), state.relative_path(&uri))
    };
    let Some(root) = root else {
        return Err(refuse(
            session,
            "labelling tests needs a workspace folder to keep the index in".to_string(),
        )
        .await);
    };
    let (label, categories) = match flaky {
        Some(category) => (
            Label::Flaky,
            category
                .or(judged.judged.prediction.category)
                .into_iter()
                .collect(),
        ),
        None => (Label::Stable, Vec::new()),
    };
    let described = describe_label(label, &categories);
    let test_label = TestLabel {
        test: judged.test.clone(),
        path: relative_path,
        label,
        categories,
        origin: Origin::Manual,
        source: "editor".to_string(),
    };
    let path = workspace::index_path(&root);
    let recorded = tokio::task::spawn_blocking(move || labels::record(&root, &[test_label])).await;
    let recorded = match recorded {
        Ok(Ok(recorded)) => recorded,
        Ok(Err(error)) => {
            return Err(refuse(
                session,
                format!("cannot record the label in {}: {error:#}", path.display()),
            )
            .await);
        }
        Err(error) => {
            let reason = match error.try_into_panic() {
                Ok(payload) => panic_message(&*payload),
                Err(error) => error.to_string(),
            };
            return Err(refuse(session, format!("labelling failed: {reason}")).await);
        }
    };
    if let Some((error, moved_to)) = &recorded.moved_aside {
        session
            .show(
                MessageType::WARNING,
                format!(
                    "flakesense: the workspace index was damaged ({error}). It was moved to {} \
                     and a new one holds the tests you mark from now on.",
                    moved_to.display()
                ),
            )
            .await;
    }
    session.set_project_index(
        ProjectIndexState::Loaded(Arc::new(recorded.index)),
        recorded.stamp,
    );
    session.invalidate_predictions();
    session
        .log(
            MessageType::INFO,
            format!("marked {test_id} as {described} in {}", path.display()),
        )
        .await;
    // The new diagnostics go out before the reply: see `judge_all_and_publish`.
    analyze::judge_all_and_publish(session).await;
    Ok(Some(json!({
        "testId": test_id,
        "flaky": flaky.is_some(),
        "index": path.display().to_string(),
    })))
}

fn describe_label(label: Label, categories: &[Category]) -> String {
    match (label, categories.first()) {
        (Label::Flaky, Some(category)) => format!("flaky ({category})"),
        (Label::Flaky, None) => "flaky".to_string(),
        _ => "not flaky".to_string(),
    }
}

/// Tells the user why a command did nothing, and gives the client the same reason.
async fn refuse(session: &Session, reason: String) -> Error {
    session
        .show(MessageType::ERROR, format!("flakesense: {reason}"))
        .await;
    let mut error = Error::internal_error();
    error.message = reason.into();
    error
}

/// Shows the known tests most similar to a test, flaky ones first: those of the workspace open
/// at their location, those of the shipped or configured models in a message (the client also
/// gets all of them, with the code kept for flaky ones, as the command's result).
async fn show_similar(session: &Arc<Session>, uri: Uri, test_id: &str) -> Result<Option<LSPAny>> {
    let judged = judged_test(session, &uri, test_id).await?;
    let (root, encoding, show_document, models) = {
        let state = session.state();
        (
            state.root.clone(),
            state.encoding,
            state.client_support.show_document,
            state.models(judged.test.language).ok(),
        )
    };
    let prediction = &judged.judged.prediction;
    // Known flaky tests with the warning's strongest risk first, then the flaky neighbours.
    let flaky: Vec<Neighbor> = prediction
        .examples
        .iter()
        .chain(flaky_besides(&prediction.neighbors, &prediction.examples))
        .cloned()
        .collect();
    // With no flaky neighbour, the nearest ones are still the answer to "what is this like".
    let shown = if flaky.is_empty() {
        prediction.neighbors.clone()
    } else {
        flaky
    };
    let worker = session.clone();
    let located = tokio::task::spawn_blocking(move || {
        let mut locator = NeighborLocator::new(&worker, root.as_deref(), encoding);
        shown
            .into_iter()
            .map(|neighbor| (locator.locate(&neighbor), neighbor))
            .collect::<Vec<_>>()
    })
    .await
    .map_err(|_| Error::internal_error())?;

    let mut in_workspace = Vec::new();
    let mut known = Vec::new();
    let mut lines = Vec::new();
    for (location, neighbor) in &located {
        let categories: Vec<&str> = neighbor.categories.iter().map(|c| c.name()).collect();
        match location {
            Some(location) => in_workspace.push(json!({
                "id": neighbor.id,
                "flaky": neighbor.flaky,
                "label": neighbor.label.name(),
                "categories": categories,
                "similarity": similarity(neighbor),
                "location": location,
            })),
            None => {
                let code = models.as_ref().and_then(|models| {
                    let indexes = models.for_language(judged.test.language);
                    indexes
                        .get(neighbor.model)?
                        .get(neighbor.entry)?
                        .code()
                        .map(str::to_string)
                });
                lines.push(format!(
                    "{} ({}; {}; {}; similarity {:.2}) shares {}",
                    neighbor.id,
                    neighbor.project,
                    neighbor.label.name(),
                    if categories.is_empty() {
                        "no category".to_string()
                    } else {
                        categories.join(", ")
                    },
                    similarity(neighbor),
                    if neighbor.shared_tokens.is_empty() {
                        "no tokens".to_string()
                    } else {
                        neighbor
                            .shared_tokens
                            .iter()
                            .take(6)
                            .cloned()
                            .collect::<Vec<_>>()
                            .join(", ")
                    },
                ));
                known.push(json!({
                    "id": neighbor.id,
                    "project": neighbor.project,
                    "flaky": neighbor.flaky,
                    "label": neighbor.label.name(),
                "label": neighbor.label.name(),
                    "categories": categories,
                    "similarity": similarity(neighbor),
                    "sharedTokens": neighbor.shared_tokens,
                    "code": code,
                }));
            }
        }
    }
    if let Some((Some(location), _)) = located.iter().find(|(location, _)| location.is_some())
        && show_document
    {
        let shown = session
            .client
            .show_document(ShowDocumentParams {
                uri: location.uri.clone(),
                external: Some(false),
                take_focus: Some(true),
                selection: Some(location.range),
            })
            .await;
        if let Err(error) = shown {
            session
                .log(
                    MessageType::WARNING,
                    format!("window/showDocument failed: {error}"),
                )
                .await;
        }
    }
    if !lines.is_empty() {
        session
            .show(
                MessageType::INFO,
                format!(
                    "Known tests similar to {test_id}:\n{}",
                    lines
                        .iter()
                        .map(|line| format!("- {line}"))
                        .collect::<Vec<_>>()
                        .join("\n")
                ),
            )
            .await;
    }
    Ok(Some(json!({
        "testId": test_id,
        "workspace": in_workspace,
        "known": known,
    })))
}

/// The test with this id in an open document, as last judged; an invalid-params error says
/// which of the two is missing.
async fn judged_test(session: &Arc<Session>, uri: &Uri, test_id: &str) -> Result<JudgedTest> {
    let current = current_analysis(session, uri)
        .await
        .ok_or_else(|| Error::invalid_params(format!("{} is not open", uri.as_str())))?;
    current
        .analysis
        .test(test_id)
        .cloned()
        .ok_or_else(|| Error::invalid_params(format!("no test `{test_id}` in {}", uri.as_str())))
}
