//! The files a Python test's surroundings are read from: a `conftest.py` holds fixtures the test
//! runs, a pytest configuration file says which functions are tests. When one is saved
//! (`textDocument/didSave`) or changes on disk (`workspace/didChangeWatchedFiles`, watched in a
//! workspace with Python tests for clients that let the server watch files: a checkout, another
//! editor), what was read from it is forgotten and every open Python document is judged again,
//! reading the file from disk as pytest does.

use std::sync::Arc;
use std::time::Duration;

use tower_lsp_server::ls_types::{
    DidChangeWatchedFilesParams, DidChangeWatchedFilesRegistrationOptions,
    DidSaveTextDocumentParams, FileSystemWatcher, GlobPattern, MessageType, Registration, Uri,
};

use crate::language::Language;
use crate::lsp::analyze;
use crate::lsp::session::Session;
use crate::lsp::state::file_path;

pub fn did_save(session: &Arc<Session>, params: DidSaveTextDocumentParams) {
    changed(session, [params.text_document.uri]);
}

pub fn did_change_watched_files(session: &Arc<Session>, params: DidChangeWatchedFilesParams) {
    changed(session, params.changes.into_iter().map(|change| change.uri));
}

/// Asks the client to report changes to the surroundings' files anywhere in the workspace.
pub async fn watch(session: &Session) {
    let watchers = crate::workspace::surroundings_file_names()
        .map(|name| FileSystemWatcher {
            glob_pattern: GlobPattern::String(format!("**/{name}")),
            kind: None,
        })
        .collect();
    let options = DidChangeWatchedFilesRegistrationOptions { watchers };
    let registration = Registration {
        id: "flakesense-surroundings".to_string(),
        method: "workspace/didChangeWatchedFiles".to_string(),
        register_options: serde_json::to_value(options).ok(),
    };
    if let Err(error) = session.client.register_capability(vec![registration]).await {
        session
            .log(
                MessageType::WARNING,
                format!(
                    "the client would not watch conftest.py and pytest's settings ({error}): \
                     a change to them counts once a test file is edited or one of them is saved"
                ),
            )
            .await;
    }
}

/// Judges the open Python documents again when any of `uris` is a surroundings file.
fn changed(session: &Arc<Session>, uris: impl IntoIterator<Item = Uri>) {
    let Some(surroundings) = session.state().surroundings.clone() else {
        return;
    };
    let mut any = false;
    for path in uris.into_iter().filter_map(|uri| file_path(&uri)) {
        any |= surroundings.forget(&path);
    }
    if !any {
        return;
    }
    let python: Vec<Uri> = session
        .documents
        .lock()
        .iter()
        .filter(|(_, document)| document.language == Language::Python)
        .map(|(uri, _)| uri.clone())
        .collect();
    for uri in python {
        analyze::schedule(session, uri, Duration::ZERO);
    }
}
