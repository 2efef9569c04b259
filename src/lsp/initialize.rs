//! `initialize` and `initialized`: the workspace, the position encoding, the settings and the
//! models.

use std::path::PathBuf;
use std::sync::Arc;

use tower_lsp_server::ls_types::{
    CodeActionKind, CodeActionOptions, CodeActionProviderCapability, ConfigurationItem,
    ExecuteCommandOptions, HoverProviderCapability, InitializeParams, InitializeResult,
    MessageType, ServerCapabilities, ServerInfo, TextDocumentSyncCapability, TextDocumentSyncKind,
    TextDocumentSyncOptions,
};

use crate::config::Config;
use crate::index::Index;
use crate::labels::FileStamp;
use crate::language::Language;
use crate::lsp::execute_command::COMMANDS;
use crate::lsp::position::PositionEncoding;
use crate::lsp::session::{
    CLIENT_ANSWER_TIMEOUT, ClientSupport, ProjectIndexState, Session, file_path,
};
use crate::lsp::settings::read_editor_settings;
use crate::workspace::{self, ProjectIndex, SurroundingsReader};

pub fn initialize(session: &Session, params: InitializeParams) -> InitializeResult {
    let capabilities = &params.capabilities;
    let encoding = PositionEncoding::negotiate(
        capabilities
            .general
            .as_ref()
            .and_then(|general| general.position_encodings.as_deref()),
    );
    let window = capabilities.window.as_ref();
    let client_support = ClientSupport {
        work_done_progress: window
            .and_then(|window| window.work_done_progress)
            .unwrap_or(false),
        show_document: window
            .and_then(|window| window.show_document.as_ref())
            .is_some_and(|show| show.support),
        configuration: capabilities
            .workspace
            .as_ref()
            .and_then(|workspace| workspace.configuration)
            .unwrap_or(false),
    };
    let root = workspace_root(&params);
    let initialization = read_editor_settings(params.initialization_options, root.as_deref());
    {
        let mut state = session.state_mut();
        state.encoding = encoding;
        state.client_support = client_support;
        state.surroundings = root
            .as_deref()
            .map(|root| Arc::new(SurroundingsReader::new(root)));
        state.root = root;
        state.layers.initialization = initialization.config;
        // Problems are reported in `initialized`, once the client may receive messages.
        if let Some(error) = initialization.error {
            state.layers.initialization = Config::default();
            session
                .pending_messages()
                .push(format!("initializationOptions: {error}"));
        }
        if let Err(error) = state.apply_settings() {
            session.pending_messages().push(error);
        }
    }
    InitializeResult {
        capabilities: ServerCapabilities {
            position_encoding: Some(encoding.kind()),
            text_document_sync: Some(TextDocumentSyncCapability::Options(
                TextDocumentSyncOptions {
                    open_close: Some(true),
                    change: Some(TextDocumentSyncKind::INCREMENTAL),
                    ..TextDocumentSyncOptions::default()
                },
            )),
            hover_provider: Some(HoverProviderCapability::Simple(true)),
            code_action_provider: Some(CodeActionProviderCapability::Options(CodeActionOptions {
                code_action_kinds: Some(vec![CodeActionKind::QUICKFIX]),
                ..CodeActionOptions::default()
            })),
            execute_command_provider: Some(ExecuteCommandOptions {
                commands: COMMANDS.iter().map(|command| command.to_string()).collect(),
                ..ExecuteCommandOptions::default()
            }),
            ..ServerCapabilities::default()
        },
        server_info: Some(ServerInfo {
            name: "flakesense".to_string(),
            version: Some(env!("CARGO_PKG_VERSION").to_string()),
        }),
        offset_encoding: None,
    }
}

/// The first workspace folder, else the deprecated root URI, else none (single files).
#[allow(deprecated)] // `root_uri` is deprecated in favour of folders, but older clients send only it
fn workspace_root(params: &InitializeParams) -> Option<PathBuf> {
    params
        .workspace_folders
        .as_ref()
        .and_then(|folders| folders.first())
        .and_then(|folder| file_path(&folder.uri))
        .or_else(|| params.root_uri.as_ref().and_then(file_path))
}

/// Loads the settings and the workspace's models in the background, then lets analyses run.
pub fn initialized(session: &Arc<Session>) {
    let session = session.clone();
    tokio::spawn(async move {
        let pending = std::mem::take(&mut *session.pending_messages());
        for message in pending {
            session
                .show(
                    MessageType::WARNING,
                    format!("flakesense: invalid settings, using defaults: {message}"),
                )
                .await;
        }
        load_workspace(&session).await;
        session.shares.started();
        session.set_ready();
        read_workspace_tests(&session).await;
    });
}

/// Counts how common each signal is among the workspace's tests, off the request path, then
/// judges again the open documents judged without the counts. Until then the shipped models'
/// priors assume a typical project.
pub async fn read_workspace_tests(session: &Arc<Session>) {
    let counted = count_workspace_tests(session).await;
    if counted {
        session.invalidate_predictions();
    }
    // After the counts are in the state: an analysis that passes the gate from now on has them.
    let judged_without = session.shares.counted();
    if counted && judged_without {
        crate::lsp::analyze::schedule_all(session);
    }
}

/// Counts the workspace's signal shares into the session's state; false when there is no
/// workspace or the count failed (logged).
async fn count_workspace_tests(session: &Arc<Session>) -> bool {
    let (root, exclude) = {
        let state = session.state();
        (state.root.clone(), state.exclude.clone())
    };
    let Some(root) = root else {
        return false;
    };
    let progress = session
        .begin_progress("flakesense: reading the workspace's tests")
        .await;
    let started = std::time::Instant::now();
    let counted = tokio::task::spawn_blocking(move || {
        // On threads of its own: on rayon's shared pool the count would queue an open
        // document's judging (which runs there too) behind the whole workspace.
        let count = || workspace::prevalence(&root, &exclude, true);
        match rayon::ThreadPoolBuilder::new()
            .thread_name(|n| format!("flakesense-count-{n}"))
            .build()
        {
            Ok(pool) => pool.install(count),
            Err(_) => count(),
        }
    })
    .await;
    let ok = match counted {
        Ok(prevalence) => {
            let tests: u32 = Language::ALL
                .iter()
                .map(|&language| prevalence.tests(language))
                .sum();
            session
                .log(
                    MessageType::INFO,
                    format!(
                        "read the {tests} tests of the workspace in {:.1} s",
                        started.elapsed().as_secs_f64()
                    ),
                )
                .await;
            session.state_mut().prevalence = Arc::new(prevalence);
            true
        }
        Err(error) => {
            session
                .log(
                    MessageType::ERROR,
                    format!("reading the workspace's tests failed: {error}"),
                )
                .await;
            false
        }
    };
    if let Some(progress) = progress {
        progress.finish().await;
    }
    ok
}

/// Reads `flakesense.toml` and the editor's settings, then the project index and the extra
/// models, reporting the work as `$/progress` and every problem as a message.
pub async fn load_workspace(session: &Session) {
    let progress = session.begin_progress("flakesense: loading models").await;
    load_settings(session).await;
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

/// Reads `flakesense.toml` and asks the editor for its settings (`workspace/configuration`).
pub async fn load_settings(session: &Session) {
    let (root, asks_editor) = {
        let state = session.state();
        (state.root.clone(), state.client_support.configuration)
    };
    let file = match &root {
        Some(root) => match Config::load(root) {
            Ok(config) => config,
            Err(error) => {
                session
                    .show(MessageType::WARNING, format!("flakesense: {error:#}"))
                    .await;
                Config::default()
            }
        },
        None => Config::default(),
    };
    session.state_mut().layers.file = file;
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
/// [`crate::lsp::session::State::apply_settings`]).
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
