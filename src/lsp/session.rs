//! What one server shares between its handlers and analysis tasks: the client, the open
//! documents, the pending analyses, the locks that order writes and publications, and the
//! [`State`] (workspace, settings, models) behind a lock.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use tokio::sync::watch;
use tokio::task::AbortHandle;
use tower_lsp_server::Client;
use tower_lsp_server::ls_types::{Diagnostic, MessageType, ProgressToken, Uri};

use super::shares::SharesGate;
use crate::labels::FileStamp;
use crate::language::Language;
use crate::lsp::document::DocumentStore;
use crate::lsp::published::Publications;
use crate::lsp::state::{ProjectIndexState, State};

/// How long the server waits for the client to answer one of its requests before going on
/// without the answer.
pub const CLIENT_ANSWER_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// The shared state of one server.
#[derive(Debug)]
pub struct Session {
    pub client: Client,
    pub documents: DocumentStore,
    state: RwLock<State>,
    /// Bumped whenever the models or the settings change: cached predictions of an older
    /// generation are stale.
    generation: AtomicU64,
    /// The pending analysis of each document; a newer one replaces (aborts) the older.
    analyses: Mutex<HashMap<Uri, AbortHandle>>,
    /// True once the workspace's settings and models are loaded; analyses wait for it.
    ready: watch::Sender<bool>,
    /// Lets the first analyses wait briefly for the workspace's signal shares.
    pub shares: SharesGate,
    /// The languages whose shipped model has been decoded (it is decoded once per process).
    default_models_loaded: Mutex<[bool; 3]>,
    /// Serialises writes of the project index.
    pub marking: tokio::sync::Mutex<()>,
    /// Serialises counts of the workspace's tests, so the last one started, which read the
    /// newest settings, is the last one kept.
    pub counting: tokio::sync::Mutex<()>,
    /// How many test files were saved: a count after saves waits until they stop.
    pub test_file_saves: AtomicU64,
    /// Serialises publishing diagnostics (see `analyze` and [`Session::publish_diagnostics`]).
    pub publishing: tokio::sync::Mutex<()>,
    /// The publications handed over and relayed to the client (see [`Publications`]).
    pub publications: Arc<Publications>,
    next_progress_token: AtomicU64,
    /// Problems found before the client could be told (during `initialize`).
    pending_messages: Mutex<Vec<String>>,
}

impl Session {
    pub fn new(client: Client, publications: Arc<Publications>) -> Session {
        Session {
            client,
            documents: DocumentStore::default(),
            state: RwLock::default(),
            generation: AtomicU64::new(0),
            analyses: Mutex::default(),
            ready: watch::Sender::new(false),
            shares: SharesGate::default(),
            counting: tokio::sync::Mutex::default(),
            test_file_saves: AtomicU64::new(0),
            default_models_loaded: Mutex::default(),
            marking: tokio::sync::Mutex::new(()),
            publishing: tokio::sync::Mutex::new(()),
            publications,
            next_progress_token: AtomicU64::new(0),
            pending_messages: Mutex::default(),
        }
    }

    pub fn state(&self) -> RwLockReadGuard<'_, State> {
        self.state.read().unwrap_or_else(PoisonError::into_inner)
    }

    pub fn state_mut(&self) -> RwLockWriteGuard<'_, State> {
        self.state.write().unwrap_or_else(PoisonError::into_inner)
    }

    /// Replaces the project index, read from a file with this stamp.
    pub fn set_project_index(&self, project: ProjectIndexState, stamp: Option<FileStamp>) {
        let mut state = self.state_mut();
        state.project = project;
        state.project_stamp = stamp;
    }

    /// True when the project index's file is no longer the one the server read: another server,
    /// or `flakesense train --repo`, wrote it.
    pub fn project_index_changed(&self) -> bool {
        let state = self.state();
        let Some(root) = &state.root else {
            return false;
        };
        FileStamp::of(&crate::workspace::index_path(root)) != state.project_stamp
    }

    /// True when `flakesense.toml` is no longer the file the server read.
    pub fn settings_file_changed(&self) -> bool {
        let state = self.state();
        let Some(root) = &state.root else {
            return false;
        };
        FileStamp::of(&root.join(crate::config::CONFIG_FILE)) != state.settings_stamp
    }

    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::SeqCst)
    }

    /// Marks every cached prediction stale, after the models or the settings changed.
    pub fn invalidate_predictions(&self) {
        self.generation.fetch_add(1, Ordering::SeqCst);
    }

    pub fn set_ready(&self) {
        self.ready.send_replace(true);
    }

    pub async fn wait_until_ready(&self) {
        let mut ready = self.ready.subscribe();
        // The sender lives as long as the session, so waiting cannot fail while anyone waits.
        let _ = ready.wait_for(|ready| *ready).await;
    }

    pub fn pending_messages(&self) -> MutexGuard<'_, Vec<String>> {
        self.pending_messages
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn analyses(&self) -> MutexGuard<'_, HashMap<Uri, AbortHandle>> {
        self.analyses.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Records a document's new pending analysis, aborting the one it replaces.
    pub fn replace_analysis(&self, uri: Uri, handle: AbortHandle) {
        if let Some(previous) = self.analyses().insert(uri, handle) {
            previous.abort();
        }
    }

    pub fn cancel_analysis(&self, uri: &Uri) {
        if let Some(previous) = self.analyses().remove(uri) {
            previous.abort();
        }
    }

    pub fn cancel_all_analyses(&self) {
        for (_, handle) in self.analyses().drain() {
            handle.abort();
        }
    }

    /// Decodes the shipped model of a language off the request path, the first time a document
    /// of that language needs it, reporting the wait as progress.
    pub async fn ensure_default_model(&self, language: Language) {
        if !self.state().config.uses_default_models() {
            return;
        }
        let slot = language as usize;
        let loaded = self
            .default_models_loaded
            .lock()
            .unwrap_or_else(PoisonError::into_inner)[slot];
        if loaded {
            return;
        }
        let progress = self
            .begin_progress(&format!("Loading the shipped {language} model"))
            .await;
        let decoded =
            tokio::task::spawn_blocking(move || crate::models::embedded(language).map(|_| ()))
                .await;
        match decoded {
            Ok(Ok(())) => {}
            Ok(Err(error)) => {
                self.show(
                    MessageType::ERROR,
                    format!("flakesense: the shipped {language} model cannot be read: {error}"),
                )
                .await;
            }
            Err(error) => {
                self.log(
                    MessageType::ERROR,
                    format!("loading the shipped {language} model failed: {error}"),
                )
                .await;
            }
        }
        self.default_models_loaded
            .lock()
            .unwrap_or_else(PoisonError::into_inner)[slot] = true;
        if let Some(progress) = progress {
            progress.finish().await;
        }
    }

    /// Starts a `$/progress` report when the client supports them.
    pub async fn begin_progress(
        &self,
        title: &str,
    ) -> Option<
        tower_lsp_server::OngoingProgress<
            tower_lsp_server::Unbounded,
            tower_lsp_server::NotCancellable,
        >,
    > {
        if !self.state().client_support.work_done_progress {
            return None;
        }
        let token = ProgressToken::String(format!(
            "flakesense/{}",
            self.next_progress_token.fetch_add(1, Ordering::SeqCst)
        ));
        // The client must accept the token before any report uses it; a client that never
        // answers must not hold the loading up.
        tokio::time::timeout(
            CLIENT_ANSWER_TIMEOUT,
            self.client.create_work_done_progress(token.clone()),
        )
        .await
        .ok()?
        .ok()?;
        Some(self.client.progress(token, title).begin().await)
    }

    /// Publishes a document's diagnostics and counts the publication; `_in_order` is the
    /// guard of [`Session::publishing`], so that publications are handed over and counted one at
    /// a time, as [`Publications`] needs.
    pub async fn publish_diagnostics(
        &self,
        _in_order: &tokio::sync::MutexGuard<'_, ()>,
        uri: Uri,
        diagnostics: Vec<Diagnostic>,
        version: Option<i32>,
    ) {
        #[allow(clippy::disallowed_methods)] // the one place that publishes, and counts
        self.client
            .publish_diagnostics(uri, diagnostics, version)
            .await;
        // No await between the hand-over and the count: a task aborted by an edit either
        // handed the publication over and counted it, or neither.
        self.publications.count_handed();
    }

    pub async fn log(&self, level: MessageType, message: impl std::fmt::Display) {
        self.client.log_message(level, message).await;
    }

    pub async fn show(&self, level: MessageType, message: impl std::fmt::Display) {
        self.client.show_message(level, message).await;
    }
}
