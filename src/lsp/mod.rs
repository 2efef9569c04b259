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
//! - [`published`]: how a command answers only after the diagnostics it published.
//! - [`diagnostics`]: how a judged test reads as a diagnostic.
//!
//! Ordering (design notes): tower-lsp runs up to four handlers at once. Edits are applied to the
//! document store before a handler first awaits, analysis runs in one debounced task per
//! document, and a result is published only while its version is still the document's. A
//! command that changes labels answers once every open document has published diagnostics
//! judged with the new labels and the transport has relayed them, never before (see
//! [`analyze::judge_all_and_publish`] and [`published`]).
//!
//! Nothing here prints: standard output carries the protocol alone, and messages go to the
//! client through `window/logMessage`. Only [`transport`] writes to standard error, when the
//! client's messages themselves are broken.

mod analyze;
mod code_action;
mod confirm;
mod counting;
mod diagnostics;
mod did_change;
mod did_change_configuration;
mod did_close;
mod did_open;
mod document;
mod execute_command;
mod fixing;
pub mod framing;
mod hover;
mod initialize;
mod judging;
mod loading;
mod neighbors;
mod position;
mod published;
mod reread;
mod session;
mod settings;
mod shares;
mod state;
mod surroundings;
mod symbols;
mod transport;

use std::panic::AssertUnwindSafe;
use std::process::ExitCode;
use std::sync::Arc;

use tokio::io::{AsyncRead, AsyncWrite};
use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::{
    CodeActionParams, CodeActionResponse, DidChangeConfigurationParams,
    DidChangeTextDocumentParams, DidChangeWatchedFilesParams, DidCloseTextDocumentParams,
    DidOpenTextDocumentParams, DidSaveTextDocumentParams, ExecuteCommandParams, Hover, HoverParams,
    InitializeParams, InitializeResult, InitializedParams, LSPAny, MessageType,
};
use tower_lsp_server::{Client, LanguageServer, LspService};

pub use execute_command::{MARK_FLAKY, MARK_NOT_FLAKY, SHOW_FIX_HINT, SHOW_SIMILAR};
pub use transport::{Ending, Outcome};

use published::Publications;
use session::Session;

/// The server behind the protocol: each method hands its parameters to the module named after it.
#[derive(Debug)]
pub struct FlakesenseServer {
    session: Arc<Session>,
}

impl FlakesenseServer {
    fn new(client: Client, publications: Arc<Publications>) -> FlakesenseServer {
        FlakesenseServer {
            session: Arc::new(Session::new(client, publications)),
        }
    }

    /// Runs a notification's synchronous part (it must not await: see the ordering notes
    /// above); a panic is logged instead of ending the server.
    fn guarded_now(&self, method: &'static str, work: impl FnOnce(&Arc<Session>)) {
        let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| work(&self.session)));
        if let Err(payload) = outcome {
            let message = analyze::panic_message(&*payload);
            let session = self.session.clone();
            tokio::spawn(async move {
                session
                    .log(MessageType::ERROR, format!("{method} failed: {message}"))
                    .await;
            });
        }
    }

    /// Runs a handler as a task of its own, so that a panic ends that task and is logged; the
    /// client gets an internal error (or nothing, for a notification) instead of a dead server.
    async fn guarded<T: Send + 'static>(
        &self,
        method: &'static str,
        work: impl Future<Output = T> + Send + 'static,
    ) -> Result<T> {
        match tokio::spawn(work).await {
            Ok(value) => Ok(value),
            Err(error) => {
                let message = match error.try_into_panic() {
                    Ok(payload) => analyze::panic_message(&*payload),
                    Err(error) => error.to_string(),
                };
                self.session
                    .log(MessageType::ERROR, format!("{method} failed: {message}"))
                    .await;
                Err(tower_lsp_server::jsonrpc::Error::internal_error())
            }
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
        confirm::stop_all(Some(&self.session)).await;
        Ok(())
    }

    async fn did_open(&self, params: DidOpenTextDocumentParams) {
        self.guarded_now("textDocument/didOpen", |session| {
            did_open::did_open(session, params)
        });
    }

    async fn did_change(&self, params: DidChangeTextDocumentParams) {
        self.guarded_now("textDocument/didChange", |session| {
            did_change::did_change(session, params)
        });
    }

    async fn did_save(&self, params: DidSaveTextDocumentParams) {
        self.guarded_now("textDocument/didSave", |session| {
            counting::did_save(session, &params);
            symbols::changed(session, [params.text_document.uri.clone()]);
            surroundings::did_save(session, params)
        });
    }

    async fn did_change_watched_files(&self, params: DidChangeWatchedFilesParams) {
        self.guarded_now("workspace/didChangeWatchedFiles", |session| {
            let uris = params.changes.iter().map(|change| change.uri.clone());
            symbols::changed(session, uris.collect::<Vec<_>>());
            surroundings::did_change_watched_files(session, params)
        });
    }

    async fn did_close(&self, params: DidCloseTextDocumentParams) {
        // Not a task of its own: the document must leave the store before a following
        // didOpen of the same URI enters it.
        did_close::did_close(&self.session, params).await;
    }

    async fn did_change_configuration(&self, params: DidChangeConfigurationParams) {
        let session = self.session.clone();
        let _ = self
            .guarded("workspace/didChangeConfiguration", async move {
                did_change_configuration::did_change_configuration(&session, params).await
            })
            .await;
    }

    async fn hover(&self, params: HoverParams) -> Result<Option<Hover>> {
        let session = self.session.clone();
        self.guarded("textDocument/hover", async move {
            hover::hover(&session, params).await
        })
        .await
    }

    async fn code_action(&self, params: CodeActionParams) -> Result<Option<CodeActionResponse>> {
        let session = self.session.clone();
        self.guarded("textDocument/codeAction", async move {
            code_action::code_action(&session, params).await
        })
        .await
    }

    async fn execute_command(&self, params: ExecuteCommandParams) -> Result<Option<LSPAny>> {
        let session = self.session.clone();
        self.guarded("workspace/executeCommand", async move {
            execute_command::execute_command(&session, params).await
        })
        .await?
    }
}

/// Serves the protocol over any pair of byte streams: standard input and output for editors,
/// an in-memory pipe for tests and benchmarks. Returns how the session ended: on `exit`, at the
/// end of the input or output, or when the input cannot be followed (see [`transport`]).
pub async fn serve(input: impl AsyncRead + Unpin, output: impl AsyncWrite + Unpin) -> Outcome {
    // The session counts the diagnostics it publishes, the transport those it relays.
    let publications = Arc::new(Publications::default());
    let (service, socket) = LspService::new({
        let publications = publications.clone();
        move |client| FlakesenseServer::new(client, publications)
    });
    // tower-lsp-server reads and writes in-memory pipes; the transport stands between them and
    // the client's streams.
    let (service_input, service_reads) = tokio::io::duplex(1 << 16);
    let (service_writes, service_output) = tokio::io::duplex(1 << 16);
    let server =
        tower_lsp_server::Server::new(service_reads, service_writes, socket).serve(service);
    transport::connect(
        input,
        output,
        service_input,
        service_output,
        server,
        &publications,
    )
    .await
}

/// `flakesense serve`: the language server on standard input and output.
pub fn run_stdio() -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("flakesense-lsp")
        .build()
        .map_err(|error| anyhow::anyhow!("cannot start the language server's runtime: {error}"))?;
    let outcome = runtime.block_on(async {
        let outcome = serve(tokio::io::stdin(), tokio::io::stdout()).await;
        // A client that left without `shutdown` leaves no test process behind either.
        confirm::stop_all(None).await;
        outcome
    });
    // Analyses still running in blocking threads are abandoned, not awaited: the client is gone.
    runtime.shutdown_background();
    Ok(ExitCode::from(outcome.exit_code()))
}
