//! The language server: `flakesense serve` speaks LSP on standard input and output.
//!
//! This module is the only one that knows the protocol's types. It keeps the open documents in
//! step with the editor, asks [`crate::analysis`] for a judgement of their tests and presents it:
//! diagnostics on flagged tests, hovers with the evidence, code actions that label tests in the
//! workspace's own index.
//!
//! One file per LSP method, one dispatch (the [`LanguageServer`] implementation below), and:
//!
//! - [`session`]: the shared state: settings, models, open documents, pending analyses.
//! - [`document`]: a document's text, version and incrementally edited syntax tree.
//! - [`position`]: byte ranges to LSP positions in the negotiated encoding.
//! - [`analyze`]: the debounced analysis of a document and the publication of its diagnostics.
//! - [`diagnostics`]: how a judged test reads as a diagnostic.
//!
//! Ordering (design notes): tower-lsp runs up to four handlers at once. Edits are applied to the
//! document store before a handler first awaits, analysis runs in one debounced task per
//! document, and a result is published only while its version is still the document's.
//!
//! Nothing here prints: standard output carries the protocol alone, and messages go to the
//! client through `window/logMessage`.

mod analyze;
mod code_action;
mod diagnostics;
mod did_change;
mod did_change_configuration;
mod did_close;
mod did_open;
mod document;
mod execute_command;
mod hover;
mod initialize;
mod position;
mod session;
mod settings;

use std::process::ExitCode;
use std::sync::Arc;

use tokio::io::{AsyncRead, AsyncWrite};
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::{
    CodeActionParams, CodeActionResponse, DidChangeConfigurationParams,
    DidChangeTextDocumentParams, DidCloseTextDocumentParams, DidOpenTextDocumentParams,
    ExecuteCommandParams, Hover, HoverParams, InitializeParams, InitializeResult,
    InitializedParams, LSPAny,
};
use tower_lsp_server::{Client, LanguageServer, LspService};

pub use execute_command::{MARK_FLAKY, MARK_NOT_FLAKY, SHOW_FIX_HINT, SHOW_SIMILAR};

use session::Session;

/// The server behind the protocol: each method hands its parameters to the module named after it.
#[derive(Debug)]
pub struct FlakesenseServer {
    session: Arc<Session>,
}

impl FlakesenseServer {
    fn new(client: Client) -> FlakesenseServer {
        FlakesenseServer {
            session: Arc::new(Session::new(client)),
        }
    }
}

impl LanguageServer for FlakesenseServer {
    async fn initialize(&self, params: InitializeParams) -> Result<InitializeResult> {
        Ok(initialize::initialize(&self.session, params))
    }

    async fn initialized(&self, _: InitializedParams) {
        initialize::initialized(&self.session);
    }

    async fn shutdown(&self) -> Result<()> {
        self.session.cancel_all_analyses();
        Ok(())
    }

    async fn did_open(&self, params: DidOpenTextDocumentParams) {
        did_open::did_open(&self.session, params);
    }

    async fn did_change(&self, params: DidChangeTextDocumentParams) {
        did_change::did_change(&self.session, params);
    }

    async fn did_close(&self, params: DidCloseTextDocumentParams) {
        did_close::did_close(&self.session, params).await;
    }

    async fn did_change_configuration(&self, params: DidChangeConfigurationParams) {
        did_change_configuration::did_change_configuration(&self.session, params).await;
    }

    async fn hover(&self, params: HoverParams) -> Result<Option<Hover>> {
        Ok(hover::hover(&self.session, params).await)
    }

    async fn code_action(&self, params: CodeActionParams) -> Result<Option<CodeActionResponse>> {
        Ok(code_action::code_action(&self.session, params).await)
    }

    async fn execute_command(&self, params: ExecuteCommandParams) -> Result<Option<LSPAny>> {
        execute_command::execute_command(&self.session, params).await
    }
}

/// Serves the protocol over any pair of byte streams: standard input and output for editors,
/// an in-memory pipe for tests and benchmarks. Returns when the client sends `exit` or closes
/// the input.
pub async fn serve(input: impl AsyncRead + Unpin, output: impl AsyncWrite) {
    let (service, socket) = LspService::new(FlakesenseServer::new);
    tower_lsp_server::Server::new(input, output, socket)
        .serve(service)
        .await;
}

/// `flakesense serve`: the language server on standard input and output.
pub fn run_stdio() -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("flakesense-lsp")
        .build()
        .map_err(|error| anyhow::anyhow!("cannot start the language server's runtime: {error}"))?;
    runtime.block_on(serve(tokio::io::stdin(), tokio::io::stdout()));
    // Analyses still running in blocking threads are abandoned, not awaited: the client is gone.
    runtime.shutdown_background();
    Ok(ExitCode::SUCCESS)
}
