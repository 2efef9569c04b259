//! The workspace's symbols in the language server: read in the background after `initialized`
//! (from the cache, where most files are unchanged), then kept in step one file at a time: when a
//! source file is saved or changes on disk, its definitions are read again, what was read of it
//! is forgotten, and the open documents whose tests reach it (a base class, a helper module) are
//! judged again, off the request path.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tower_lsp_server::ls_types::{MessageType, Uri};

use crate::language::Language;
use crate::lsp::analyze;
use crate::lsp::session::Session;
use crate::lsp::state::file_path;
use crate::workspace::{self, OtherFiles, WorkspaceSources};

/// Where the other files of the session's workspace are found, when it has one.
fn others(session: &Session) -> Option<Arc<OtherFiles>> {
    let state = session.state();
    state.surroundings.as_ref()?.others().cloned()
}

/// Reads the symbols of the workspace's `sources` off the request path, then judges again the
/// open documents judged without them that looked a name up: their tests may reach base classes
/// and helpers only the symbols can find.
pub async fn read_workspace_symbols(session: &Arc<Session>, sources: Arc<WorkspaceSources>) {
    let Some(others) = others(session) else {
        return;
    };
    let started = std::time::Instant::now();
    let read = tokio::task::spawn_blocking(move || OtherFiles::read_symbols(&sources, true)).await;
    match read {
        Ok(symbols) => {
            session
                .log(
                    MessageType::INFO,
                    format!(
                        "indexed the symbols of {} files ({} read anew) in {:.1} s",
                        symbols.len(),
                        symbols.fresh(),
                        started.elapsed().as_secs_f64()
                    ),
                )
                .await;
            if others.set_symbols(Arc::new(symbols)) {
                analyze::schedule_all(session);
            }
        }
        Err(error) => {
            session
                .log(
                    MessageType::ERROR,
                    format!("reading the workspace's symbols failed: {error}"),
                )
                .await;
        }
    }
}

/// Source files of the workspace were saved or changed on disk: their definitions are read again
/// and the open documents that reach one of them are judged again.
pub fn changed(session: &Arc<Session>, uris: impl IntoIterator<Item = Uri>) {
    let Some(others) = others(session) else {
        return;
    };
    let root = others.root().to_path_buf();
    let paths: Vec<PathBuf> = uris
        .into_iter()
        .filter_map(|uri| file_path(&uri))
        .filter(|path| path.starts_with(&root) && Language::from_path(path).is_some())
        .collect();
    if paths.is_empty() {
        return;
    }
    for path in &paths {
        others.forget(path);
    }
    let relatives: Vec<String> = paths
        .iter()
        .map(|path| workspace::relative_path(&root, path))
        .collect();
    let dependants: Vec<Uri> = session
        .documents
        .lock()
        .iter()
        .filter(|(_, document)| {
            document
                .last_read
                .as_ref()
                .is_some_and(|last| relatives.iter().any(|relative| last.reaches(relative)))
        })
        .map(|(uri, _)| uri.clone())
        .collect();
    for uri in dependants {
        analyze::schedule(session, uri, Duration::ZERO);
    }
    // A file's new definitions (a class renamed, a helper added) count from the next read on;
    // reading them parses the file, which is no work for the request path.
    let session = session.clone();
    tokio::spawn(async move {
        let Some(symbols) = others.symbols() else {
            return;
        };
        let updated = tokio::task::spawn_blocking(move || {
            let mut symbols = (*symbols).clone();
            for path in &paths {
                symbols.update(&root, path);
            }
            symbols.save(&root);
            symbols
        })
        .await;
        match updated {
            Ok(symbols) => {
                others.set_symbols(Arc::new(symbols));
            }
            Err(error) => {
                session
                    .log(
                        MessageType::ERROR,
                        format!("reading a changed file's symbols failed: {error}"),
                    )
                    .await;
            }
        }
    });
}
