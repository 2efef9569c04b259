//! The analysis of one document: a debounced task that re-parses incrementally, finds the tests,
//! judges those whose code changed (see [`judging`]) and publishes diagnostics if the document
//! has not moved on.

use std::sync::Arc;
use std::time::Duration;

use tower_lsp_server::ls_types::{MessageType, Uri};

use crate::analysis::MAX_FILE_BYTES;
use crate::language::Language;
use crate::line_index::LineIndex;
use crate::lsp::judging::{self, Analysis, Context, Outcome, Snapshot, Workspace};
use crate::lsp::position::TextLines;
use crate::lsp::session::Session;

/// Replaces the document's pending analysis by one that starts after `delay`; the task ends
/// once it has published, or when an edit replaces it.
pub fn schedule(session: &Arc<Session>, uri: Uri, delay: Duration) -> tokio::task::JoinHandle<()> {
    let task = tokio::spawn({
        let session = session.clone();
        let uri = uri.clone();
        async move { analyse_and_publish(&session, uri, delay).await }
    });
    session.replace_analysis(uri, task.abort_handle());
    task
}

/// Re-judges every open document at once, after the models or the settings changed.
pub fn schedule_all(session: &Arc<Session>) {
    let uris: Vec<Uri> = session.documents.lock().keys().cloned().collect();
    for uri in uris {
        schedule(session, uri, Duration::ZERO);
    }
}

/// How long a command that changed the labels waits for the new diagnostics to be published and
/// relayed before it answers anyway: generous for judging the open documents again (milliseconds
/// to a few hundred), and under the 10 s Emacs's jsonrpc.el waits for a reply. Only a stalled
/// machine, a failed analysis, a client that stopped reading or an edit every few milliseconds
/// comes near it.
const PUBLISHED_BEFORE_REPLY: Duration = Duration::from_secs(5);

/// Re-judges every open document at once and waits until each has published diagnostics judged
/// with the current labels (or changed since), and until the transport has relayed them. A
/// command that changes labels waits for this before it answers, so that its reply is the last
/// message of the burst: the jsonrpc.el of Emacs 28 (eglot's transport; newer versions hand each
/// message to a timer) leaves the messages that follow a reply in the same read unprocessed until
/// the server next writes, which hid a mark's new diagnostics until the next edit in most runs
/// through rassumfrassum.
///
/// Waiting for the analyses scheduled here is not enough: another re-judging (the workspace's
/// tests read at start-up, new settings) may replace them, and the replacement publishes later.
/// Nor is handing the publications to tower-lsp-server, which may write the reply first (see
/// [`crate::lsp::published`]).
pub async fn judge_all_and_publish(session: &Arc<Session>) {
    // The caller changed the labels, then the generation: analyses that begin from now on, and
    // only those, judge with the new labels.
    let generation = session.generation();
    let versions: Vec<(Uri, i32)> = session
        .documents
        .lock()
        .iter()
        .map(|(uri, document)| (uri.clone(), document.version))
        .collect();
    let mut handed = session.publications.subscribe_handed();
    for (uri, _) in &versions {
        schedule(session, uri.clone(), Duration::ZERO);
    }
    let published = async {
        loop {
            {
                // Publishing, recording the generation and counting the publication happen
                // under this lock, so what is recorded has been counted.
                let _in_order = session.publishing.lock().await;
                if all_published_since(session, &versions, generation) {
                    break;
                }
            }
            if handed.changed().await.is_err() {
                break;
            }
        }
        session.publications.wait_until_relayed().await;
    };
    if tokio::time::timeout(PUBLISHED_BEFORE_REPLY, published)
        .await
        .is_err()
    {
        session
            .log(
                MessageType::WARNING,
                format!(
                    "the new diagnostics were not published within {} s; answering anyway, \
                     so the editor may show them only after the next edit",
                    PUBLISHED_BEFORE_REPLY.as_secs()
                ),
            )
            .await;
    }
}

/// True when each document of `versions` has published diagnostics judged in `generation` or
/// later, or was edited or closed since (an edit's own analysis publishes in its time).
fn all_published_since(session: &Session, versions: &[(Uri, i32)], generation: u64) -> bool {
    let documents = session.documents.lock();
    versions.iter().all(|(uri, version)| {
        documents.get(uri).is_none_or(|document| {
            document.version != *version
                || document
                    .published_generation
                    .is_some_and(|published| published >= generation)
        })
    })
}

async fn analyse_and_publish(session: &Arc<Session>, uri: Uri, delay: Duration) {
    session.wait_until_ready().await;
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
    // Read before the analysis reads the labels and the settings, so that it judges with those
    // of this generation or newer ones.
    let generation = session.generation();
    let outcome = analyse(session, &uri).await;
    // Checking the version and sending happen under one lock, so a result whose version has
    // been overtaken is dropped, and publications leave in the order of their versions.
    let in_order = session.publishing.lock().await;
    match outcome {
        Some(Ok(outcome)) => {
            let version = outcome.analysis.version;
            let diagnostics = outcome.analysis.diagnostics.clone();
            if store_if_current(session, &uri, outcome) {
                session
                    .publish_diagnostics(&in_order, uri.clone(), diagnostics, Some(version))
                    .await;
                record_published(session, &uri, generation);
            }
        }
        Some(Err(Skip { version, reason })) => {
            if let Some(reason) = reason {
                session.log(MessageType::INFO, reason).await;
            }
            if is_current(session, &uri, version) {
                session
                    .publish_diagnostics(&in_order, uri.clone(), Vec::new(), Some(version))
                    .await;
                record_published(session, &uri, generation);
            }
        }
        None => {}
    }
}

/// Records that the document's diagnostics of an analysis begun in `generation` are published.
fn record_published(session: &Session, uri: &Uri, generation: u64) {
    if let Some(document) = session.documents.lock().get_mut(uri) {
        document.published_generation = document.published_generation.max(Some(generation));
    }
}

/// The judgement of the document's current version: the stored one when it is current, else a
/// new one (stored, not published: the pending analysis publishes). For hovers and code actions.
pub async fn current_analysis(session: &Arc<Session>, uri: &Uri) -> Option<Current> {
    session.wait_until_ready().await;
    // After another process changed the labels, or flakesense.toml was edited, the stored
    // judgement is stale.
    let reloaded = reload_changed_workspace_files(session, None).await;
    if !reloaded && let Some(current) = stored_current(session, uri) {
        return Some(current);
    }
    if let Ok(outcome) = analyse(session, uri).await? {
        store_if_current(session, uri, outcome);
    }
    stored_current(session, uri)
}

/// A current judgement with the text it was made of.
pub struct Current {
    pub analysis: Arc<Analysis>,
    pub text: String,
    pub lines: LineIndex,
    pub language: Language,
}

impl Current {
    pub fn text_lines(&self) -> TextLines<'_> {
        TextLines {
            text: &self.text,
            lines: &self.lines,
        }
    }
}

fn stored_current(session: &Session, uri: &Uri) -> Option<Current> {
    let documents = session.documents.lock();
    let document = documents.get(uri)?;
    let analysis = document.analysis.clone()?;
    (analysis.version == document.version).then(|| Current {
        analysis,
        text: document.text.clone(),
        lines: document.lines.clone(),
        language: document.language,
    })
}

fn is_current(session: &Session, uri: &Uri, version: i32) -> bool {
    session
        .documents
        .lock()
        .get(uri)
        .is_some_and(|document| document.version == version)
}

/// Keeps an outcome if the document is still at its version; false when it moved on (or was
/// closed) and the outcome must not be published.
fn store_if_current(session: &Session, uri: &Uri, outcome: Outcome) -> bool {
    let mut documents = session.documents.lock();
    let Some(document) = documents.get_mut(uri) else {
        return false;
    };
    if document.version != outcome.analysis.version {
        return false;
    }
    if outcome.tree.is_some() {
        // No edit arrived since the snapshot, so this tree matches the text exactly and is the
        // base of the next incremental parse.
        document.tree = outcome.tree;
    }
    if outcome.last.is_some() {
        document.last_read = outcome.last;
    }
    document.analysis = Some(outcome.analysis);
    true
}

/// Why a document was not analysed: its diagnostics are cleared, and the reason logged if any.
struct Skip {
    version: i32,
    reason: Option<String>,
}

/// Reads the project index again when another process replaced it since the server read it, and
/// `flakesense.toml` when it was edited, and judges the open documents again with them, except
/// `judging` (whose analysis is under way). True when either was read again.
async fn reload_changed_workspace_files(session: &Arc<Session>, judging: Option<&Uri>) -> bool {
    let index = session.project_index_changed();
    let settings = session.settings_file_changed();
    if !index && !settings {
        return false;
    }
    if index {
        crate::lsp::loading::load_project_index(session).await;
        session.invalidate_predictions();
    }
    if settings {
        crate::lsp::loading::reload_settings_file(session).await;
    }
    let others: Vec<Uri> = session
        .documents
        .lock()
        .keys()
        .filter(|other| Some(*other) != judging)
        .cloned()
        .collect();
    for other in others {
        schedule(session, other, Duration::ZERO);
    }
    true
}

/// Judges the document's current text; `None` when it is closed or the work failed (logged).
async fn analyse(session: &Arc<Session>, uri: &Uri) -> Option<Result<Outcome, Skip>> {
    // Before the snapshot, which applies the settings (`exclude`, the size bound).
    reload_changed_workspace_files(session, Some(uri)).await;
    let snapshot = match take_snapshot(session, uri)? {
        Ok(snapshot) => snapshot,
        Err(skip) => return Some(Err(skip)),
    };
    let (language, version) = (snapshot.language, snapshot.version);
    let workspace = {
        let state = session.state();
        state
            .root
            .clone()
            .zip(state.surroundings.clone())
            .map(|(root, surroundings)| Workspace { root, surroundings })
    };
    // The tests are read while the model and, at start-up, the workspace's signal shares come:
    // only the judging needs them.
    let reading = tokio::task::spawn_blocking(move || judging::read(snapshot, workspace.as_ref()));
    session.ensure_default_model(language).await;
    session.shares.wait_briefly().await;
    let read = off_thread_outcome(session, uri, reading.await).await?;
    let context = {
        let state = session.state();
        let models = match state.models(language) {
            Ok(models) => models,
            Err(reason) => {
                return Some(Err(Skip {
                    version,
                    reason: Some(reason),
                }));
            }
        };
        Context {
            models,
            thresholds: state.thresholds,
            generation: session.generation(),
            encoding: state.encoding,
            root: state.root.clone(),
        }
    };
    let worker = session.clone();
    let judged = tokio::task::spawn_blocking(move || judging::judge(&worker, read, &context)).await;
    off_thread_outcome(session, uri, judged).await.map(Ok)
}

/// The result of work run off the async threads, or `None` when it failed (logged).
async fn off_thread_outcome<T>(
    session: &Session,
    uri: &Uri,
    joined: Result<T, tokio::task::JoinError>,
) -> Option<T> {
    match joined {
        Ok(outcome) => Some(outcome),
        Err(error) => {
            let reason = match error.try_into_panic() {
                Ok(payload) => panic_message(&*payload),
                Err(error) => error.to_string(),
            };
            session
                .log(
                    MessageType::ERROR,
                    format!("analysis of {} failed: {reason}", uri.as_str()),
                )
                .await;
            None
        }
    }
}

/// The text of a caught panic.
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|text| text.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_string())
}

/// Copies what an analysis needs out of the store, or says why the document is skipped.
fn take_snapshot(session: &Session, uri: &Uri) -> Option<Result<Snapshot, Skip>> {
    let excluded = |path: &str| session.state().is_excluded(path);
    let mut documents = session.documents.lock();
    let document = documents.get_mut(uri)?;
    if document.text.len() > MAX_FILE_BYTES {
        let reason = (!document.reported_too_large).then(|| {
            format!(
                "skipped {}: larger than {} MB ({} bytes)",
                document.relative_path,
                MAX_FILE_BYTES / (1024 * 1024),
                document.text.len()
            )
        });
        document.reported_too_large = true;
        return Some(Err(Skip {
            version: document.version,
            reason,
        }));
    }
    document.reported_too_large = false;
    if excluded(&document.relative_path) {
        return Some(Err(Skip {
            version: document.version,
            reason: None,
        }));
    }
    Some(Ok(Snapshot {
        uri: uri.clone(),
        version: document.version,
        language: document.language,
        relative_path: document.relative_path.clone(),
        text: document.text.clone(),
        lines: document.lines.clone(),
        tree: document.tree.clone(),
        cache: document.cache.clone(),
        last: document.last_read.clone(),
    }))
}
