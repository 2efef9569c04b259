//! `initialize` and `initialized`: the workspace, the position encoding and what the client
//! supports; then, in the background, the settings and models ([`crate::lsp::loading`]) and the
//! workspace's tests ([`crate::lsp::counting`]).

use std::path::PathBuf;
use std::sync::Arc;

use tower_lsp_server::ls_types::{
    CodeActionKind, CodeActionOptions, CodeActionProviderCapability, ExecuteCommandOptions,
    HoverProviderCapability, InitializeParams, InitializeResult, MessageType, ServerCapabilities,
    ServerInfo, TextDocumentSyncCapability, TextDocumentSyncKind, TextDocumentSyncOptions,
    TextDocumentSyncSaveOptions,
};

use crate::config::Config;
use crate::language::Language;
use crate::lsp::counting::read_workspace_tests;
use crate::lsp::execute_command::COMMANDS;
use crate::lsp::loading::load_workspace;
use crate::lsp::position::PositionEncoding;
use crate::lsp::session::Session;
use crate::lsp::settings::read_editor_settings;
use crate::lsp::state::{ClientSupport, file_path};
use crate::lsp::surroundings;
use crate::workspace::SurroundingsReader;

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
        watched_files: capabilities
            .workspace
            .as_ref()
            .and_then(|workspace| workspace.did_change_watched_files.as_ref())
            .and_then(|watched| watched.dynamic_registration)
            .unwrap_or(false),
    };
    let root = workspace_root(&params);
    let initialization = read_editor_settings(params.initialization_options, root.as_deref());
    {
        let mut state = session.state_mut();
        state.encoding = encoding;
        state.client_support = client_support;
        // The workspace's symbols are read in the background after `initialized`
        // (`symbols::read_workspace_symbols`): until then only files named by path are reached.
        state.surroundings = root.as_deref().map(|root| {
            let others = Arc::new(crate::workspace::OtherFiles::pending(root));
            Arc::new(SurroundingsReader::with_others(root, others))
        });
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
                    // A saved conftest.py or pytest configuration judges Python tests again.
                    save: Some(TextDocumentSyncSaveOptions::Supported(true)),
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
        // The symbols first: a test opened now is judged with its base classes and helpers as
        // soon as they are known; the counts only weigh its signals.
        // One walk of the workspace for both.
        if let Some(sources) = crate::lsp::counting::workspace_sources(&session) {
            crate::lsp::symbols::read_workspace_symbols(&session, sources.clone()).await;
            read_workspace_tests(&session, sources).await;
        }
        // Only a workspace with Python tests has surroundings to watch: a client may watch every
        // directory of the project for a glob (eglot does), which a Java or Rust project should
        // not pay for.
        let watch = {
            let state = session.state();
            state.client_support.watched_files
                && state.surroundings.is_some()
                && state.prevalence.tests(Language::Python) > 0
        };
        if watch {
            surroundings::watch(&session).await;
        }
    });
}
