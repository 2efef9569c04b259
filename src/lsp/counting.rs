//! Reading the workspace's tests after `initialized`, and again when the settings exclude other
//! files: how common each signal is among them, for the shipped models' priors, counted off the
//! request path.

use std::sync::Arc;

use tower_lsp_server::ls_types::MessageType;

use crate::language::Language;
use crate::lsp::session::Session;
use crate::workspace;

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

/// Counts the workspace's tests again, in the background, after the settings changed which files
/// are excluded, then judges the open documents again with the new shares (as `check` would
/// weigh them).
pub fn recount_workspace_tests(session: &Arc<Session>) {
    let session = session.clone();
    tokio::spawn(async move {
        if count_workspace_tests(&session).await {
            session.invalidate_predictions();
            crate::lsp::analyze::schedule_all(&session);
        }
    });
}

/// Counts the workspace's signal shares into the session's state; false when there is no
/// workspace or the count failed (logged).
async fn count_workspace_tests(session: &Arc<Session>) -> bool {
    let _counting = session.counting.lock().await;
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
