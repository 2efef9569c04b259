//! Loading what the workspace configures: `flakesense.toml` and the editor's settings, the
//! project index and the extra models, at `initialized` and when the settings change.

use std::sync::Arc;

use tower_lsp_server::ls_types::{ConfigurationItem, MessageType};

use crate::config::Config;
use crate::index::Index;
use crate::labels::FileStamp;
use crate::lsp::counting::recount_workspace_tests;
use crate::lsp::session::{CLIENT_ANSWER_TIMEOUT, Session};
use crate::lsp::settings::read_editor_settings;
use crate::lsp::state::ProjectIndexState;
use crate::workspace::{self, ProjectIndex};

/// Reads `flakesense.toml` and the editor's settings, then the project index and the extra
/// models, reporting the work as `$/progress` and every problem as a message.
pub async fn load_workspace(session: &Session) {
    let progress = session.begin_progress("flakesense: loading models").await;
    load_settings(session, true).await;
    if let Some(progress) = &progress {
        progress.report("project index").await;
    }
    load_project_index(session).await;
    if let Some(progress) = &progress {
        progress.report("configured models").await;
    }
    load_extra_models(session).await;
    session.invalidate_predictions();
    if let Some(progress) = progress {
        progress.finish().await;
    }
}

/// Reads `flakesense.toml` and asks the editor for its settings (`workspace/configuration`);
/// `starting` at start-up, when there are no previous settings to keep.
pub async fn load_settings(session: &Session, starting: bool) {
    load_settings_file(session, starting).await;
    let (root, asks_editor) = {
        let state = session.state();
        (state.root.clone(), state.client_support.configuration)
    };
    if asks_editor {
        let scope_uri = root
            .as_deref()
            .and_then(tower_lsp_server::ls_types::Uri::from_file_path);
        let answer = tokio::time::timeout(
            CLIENT_ANSWER_TIMEOUT,
            session.client.configuration(vec![ConfigurationItem {
                scope_uri,
                section: Some("flakesense".to_string()),
            }]),
        )
        .await;
        match answer {
            Ok(Ok(mut values)) if !values.is_empty() => {
                apply_editor_settings(session, Some(values.swap_remove(0))).await;
            }
            Ok(Ok(_)) => {}
            Err(_) => {
                session
                    .log(
                        MessageType::WARNING,
                        "workspace/configuration got no answer; going on without the editor's settings",
                    )
                    .await;
            }
            Ok(Err(error)) => {
                session
                    .log(
                        MessageType::WARNING,
                        format!("workspace/configuration failed: {error}"),
                    )
                    .await;
            }
        }
    }
    apply_settings(session).await;
}

/// Reads `flakesense.toml` into its layer of settings, noting which version of the file it was.
/// A file that cannot be read or is invalid is said so; its previous settings are kept (none at
/// start-up), so a half-written save loses nothing.
async fn load_settings_file(session: &Session, starting: bool) {
    let Some(root) = session.state().root.clone() else {
        return;
    };
    // The stamp is taken and kept first: a file replaced while it is read is read again next
    // time, and analyses that start meanwhile do not read it too.
    session.state_mut().settings_stamp = FileStamp::of(&root.join(crate::config::CONFIG_FILE));
    match Config::load(&root) {
        Ok(config) => {
            if let Some(warning) = config.confirm_warning() {
                session
                    .show(MessageType::WARNING, format!("flakesense: {warning}"))
                    .await;
            }
            session.state_mut().layers.file = config;
        }
        Err(error) => {
            let kept = if starting {
                "using the defaults"
            } else {
                "keeping its previous settings"
            };
            session
                .show(
                    MessageType::WARNING,
                    format!("flakesense: {error:#}; {kept}"),
                )
                .await;
        }
    }
}

/// Reads `flakesense.toml` again after it changed on disk, and the models when they changed with
/// it: settings in force at once, without a restart. The caller judges the documents again.
pub async fn reload_settings_file(session: &Arc<Session>) {
    let before = session.state().config.clone();
    load_settings_file(session, false).await;
    apply_settings(session).await;
    settings_changed(session, &before).await;
}

/// Takes in what changed from the settings `before`: the models, and the workspace's tests when
/// other files are excluded; the open documents' predictions are dropped.
pub async fn settings_changed(session: &Arc<Session>, before: &Config) {
    let (models, exclude) = {
        let state = session.state();
        (
            state.config.models != before.models,
            state.config.exclude != before.exclude,
        )
    };
    if models {
        load_extra_models(session).await;
    }
    if exclude {
        recount_workspace_tests(session);
    }
    session.invalidate_predictions();
}

/// Merges the layers of settings into the ones in force; invalid ones are refused with a message
/// and the previous ones kept.
pub async fn apply_settings(session: &Session) {
    let problem = session.state_mut().apply_settings().err();
    if let Some(error) = problem {
        session
            .show(
                MessageType::WARNING,
                format!("flakesense: invalid settings, keeping the previous ones: {error}"),
            )
            .await;
    }
}

/// Replaces the editor's layer of settings; does not merge them (see
/// [`crate::lsp::state::State::apply_settings`]).
pub async fn apply_editor_settings(session: &Session, value: Option<serde_json::Value>) {
    let root = session.state().root.clone();
    let settings = read_editor_settings(value, root.as_deref());
    if !settings.ignored.is_empty() {
        session
            .log(
                MessageType::INFO,
                format!(
                    "ignored settings that are not flakesense's: {}",
                    settings.ignored.join(", ")
                ),
            )
            .await;
    }
    match settings.error {
        Some(error) => {
            session
                .show(
                    MessageType::WARNING,
                    format!("flakesense: invalid editor settings, ignoring them: {error}"),
                )
                .await;
        }
        None => session.state_mut().layers.editor = settings.config,
    }
}

/// Loads `.flakesense/index`; a damaged file is moved aside (and said so), a file that is not
/// ours to replace is left alone and marks are refused until it is dealt with.
pub async fn load_project_index(session: &Session) {
    let Some(root) = session.state().root.clone() else {
        return;
    };
    // The stamp is taken first: a file replaced while it is read is read again next time.
    let loaded = tokio::task::spawn_blocking(move || {
        let stamp = FileStamp::of(&workspace::index_path(&root));
        (workspace::load_project_index(&root), stamp)
    })
    .await;
    let (loaded, stamp) = match loaded {
        Ok((loaded, stamp)) => (Ok(loaded), stamp),
        Err(error) => (Err(error), None),
    };
    let state = match loaded {
        Ok(ProjectIndex::Missing) => ProjectIndexState::Missing,
        Ok(ProjectIndex::Loaded(index)) => {
            session
                .log(
                    MessageType::INFO,
                    format!("loaded the workspace index: {} labelled tests", index.len()),
                )
                .await;
            ProjectIndexState::Loaded(Arc::new(*index))
        }
        Ok(ProjectIndex::Corrupt { error, moved_to }) => {
            session
                .show(
                    MessageType::WARNING,
                    format!(
                        "flakesense: the workspace index was damaged ({error}). It was moved to {} \
                         and a new one is built from the tests you mark from now on.",
                        moved_to.display()
                    ),
                )
                .await;
            ProjectIndexState::Missing
        }
        Ok(ProjectIndex::Unusable(error)) => {
            let message = format!(
                "the workspace index cannot be used ({error}); it is left untouched, and marking \
                 tests is disabled until it is fixed or removed"
            );
            session
                .show(MessageType::ERROR, format!("flakesense: {message}"))
                .await;
            ProjectIndexState::Unusable
        }
        Err(error) => {
            let message = format!("loading the workspace index failed: {error}");
            session.log(MessageType::ERROR, &message).await;
            ProjectIndexState::Unusable
        }
    };
    session.set_project_index(state, stamp);
}

/// Loads the models named in the settings; one that cannot be read is reported and skipped.
pub async fn load_extra_models(session: &Session) {
    let paths = session.state().config.models.clone();
    let mut extra = Vec::new();
    for path in paths {
        let shown = path.display().to_string();
        match tokio::task::spawn_blocking(move || Index::load(&path)).await {
            Ok(Ok(index)) => extra.push(Arc::new(index)),
            Ok(Err(error)) => {
                session
                    .show(
                        MessageType::WARNING,
                        format!("flakesense: skipped the model {shown}: {error}"),
                    )
                    .await;
            }
            Err(error) => {
                session
                    .log(
                        MessageType::ERROR,
                        format!("loading {shown} failed: {error}"),
                    )
                    .await;
            }
        }
    }
    session.state_mut().extra = extra;
}
