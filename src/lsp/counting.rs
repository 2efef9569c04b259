//! Reading the workspace's tests after `initialized`, again when the settings exclude other
//! files, and again after test files are saved: how common each signal is among them, for the
//! shipped models' priors, counted off the request path.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use tower_lsp_server::ls_types::{DidSaveTextDocumentParams, MessageType};

use crate::language::Language;
use crate::lsp::session::Session;
use crate::lsp::state::file_path;
use crate::workspace::{self, WorkspaceSources};

/// How long the workspace is counted again after the last save of a test file: a "save all", or
/// a formatter saving a whole tree, is counted once.
const RECOUNT_AFTER_SAVES: Duration = Duration::from_secs(1);

/// Counts how common each signal is among the workspace's tests, off the request path, then
/// judges again the open documents judged without the counts. Until then the shipped models'
/// priors assume a typical project.
pub async fn read_workspace_tests(session: &Arc<Session>, sources: Arc<WorkspaceSources>) {
    let changed = count_workspace_tests(session, true, Some(sources)).await;
    if changed {
        session.invalidate_predictions();
    }
    // After the counts are in the state: an analysis that passes the gate from now on has them.
    let judged_without = session.shares.counted();
    if changed && judged_without {
        crate::lsp::analyze::schedule_all(session);
    }
}

/// Counts the workspace's tests again, in the background, after the settings changed which files
/// are excluded, then judges the open documents again with the new shares (as `check` would
/// weigh them).
pub fn recount_workspace_tests(session: &Arc<Session>) {
    let session = session.clone();
    tokio::spawn(async move { recount(&session, true).await });
}

/// Counts the workspace's tests again once test files are saved (`textDocument/didSave` of a
/// Java, Python or Rust file in the workspace) and no other save follows for
/// [`RECOUNT_AFTER_SAVES`], as `check` would count the files now on disk: tests the user added,
/// removed or changed. Quietly, without a progress report: it follows the user's own saves.
pub fn did_save(session: &Arc<Session>, params: &DidSaveTextDocumentParams) {
    let Some(path) = file_path(&params.text_document.uri) else {
        return;
    };
    let in_workspace = session
        .state()
        .root
        .as_deref()
        .is_some_and(|root| path.starts_with(root));
    if !in_workspace || Language::from_path(&path).is_none() {
        return;
    }
    let save = session.test_file_saves.fetch_add(1, Ordering::SeqCst) + 1;
    let session = session.clone();
    tokio::spawn(async move {
        tokio::time::sleep(RECOUNT_AFTER_SAVES).await;
        if session.test_file_saves.load(Ordering::SeqCst) == save {
            recount(&session, false).await;
        }
    });
}

/// Counts the workspace's tests and, where the shares changed, judges the open documents again.
async fn recount(session: &Arc<Session>, report_progress: bool) {
    if count_workspace_tests(session, report_progress, None).await {
        session.invalidate_predictions();
        crate::lsp::analyze::schedule_all(session);
    }
}

/// The source files of the session's workspace, to be walked once by whoever first needs them;
/// `None` without a workspace.
pub fn workspace_sources(session: &Session) -> Option<Arc<WorkspaceSources>> {
    let state = session.state();
    let root = state.root.as_ref()?;
    Some(Arc::new(WorkspaceSources::new(root, state.exclude.clone())))
}

/// Counts the workspace's signal shares into the session's state, from `sources` as walked
/// already or the files on disk now; true when they differ from those counted before, false
/// when they do not, when there is no workspace or when the count failed (logged).
async fn count_workspace_tests(
    session: &Arc<Session>,
    report_progress: bool,
    sources: Option<Arc<WorkspaceSources>>,
) -> bool {
    let _counting = session.counting.lock().await;
    let Some(sources) = sources.or_else(|| workspace_sources(session)) else {
        return false;
    };
    let progress = if report_progress {
        session
            .begin_progress("flakesense: reading the workspace's tests")
            .await
    } else {
        None
    };
    let started = std::time::Instant::now();
    let counted = tokio::task::spawn_blocking(move || {
        // On threads of its own: on rayon's shared pool the count would queue an open
        // document's judging (which runs there too) behind the whole workspace.
        let count = || workspace::prevalence(&sources, true);
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
            let mut state = session.state_mut();
            let changed = *state.prevalence != prevalence;
            state.prevalence = Arc::new(prevalence);
            changed
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
