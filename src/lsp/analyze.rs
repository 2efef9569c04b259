//! The analysis of one document: a debounced task that re-parses incrementally, finds the tests,
//! judges those whose code changed and publishes diagnostics if the document has not moved on.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Duration;

use tower_lsp_server::ls_types::{Diagnostic, Location, MessageType, Uri};

use crate::analysis::{self, MAX_FILE_BYTES, Models, Severity, Thresholds};
use crate::extract::{self, TestMethod};
use crate::language::Language;
use crate::line_index::LineIndex;
use crate::lsp::diagnostics;
use crate::lsp::position::{PositionEncoding, TextLines};
use crate::lsp::session::Session;
use crate::predict::{Neighbor, Prediction};
use crate::signals::{SignalHit, Signals};
use crate::workspace::SurroundingsReader;

/// What the models say about one test's code, and where its workspace neighbours are.
#[derive(Debug)]
pub struct Judged {
    pub prediction: Prediction,
    /// The locations of the neighbours that live in the workspace, found on first need.
    related: OnceLock<Vec<(Location, Neighbor)>>,
}

impl Judged {
    fn new(prediction: Prediction) -> Judged {
        Judged {
            prediction,
            related: OnceLock::new(),
        }
    }
}

/// A test of the analysed text with its judgement.
#[derive(Debug, Clone)]
pub struct JudgedTest {
    pub test: TestMethod,
    pub judged: Arc<Judged>,
    /// `None` when the test is not reported.
    pub severity: Option<Severity>,
}

/// The judgement of one version of a document.
#[derive(Debug)]
pub struct Analysis {
    pub version: i32,
    pub tests: Vec<JudgedTest>,
    pub diagnostics: Vec<Diagnostic>,
}

impl Analysis {
    pub fn test(&self, id: &str) -> Option<&JudgedTest> {
        self.tests.iter().find(|judged| judged.test.id == id)
    }
}

/// Predictions of one document by test code and the signals of the test and what it runs. A
/// keystroke changes one test's code (or the set-up or helper of a few), so every other test is
/// a hit; tests that disappear from the document leave the cache with it.
#[derive(Debug, Default)]
pub struct PredictionCache {
    /// The session generation the predictions were made in; older ones are stale.
    generation: u64,
    by_code: HashMap<CacheKey, Arc<Judged>>,
}

/// A test's code and the prior's features of its signals: what a prediction depends on. Where
/// the signals are (their lines) does not change it, only the evidence shown.
type CacheKey = (String, Vec<&'static str>);

/// A document as it was when its analysis started.
struct Snapshot {
    version: i32,
    language: Language,
    relative_path: String,
    text: String,
    lines: LineIndex,
    tree: Option<tree_sitter::Tree>,
    cache: Arc<Mutex<PredictionCache>>,
}

/// The models and settings an analysis runs with.
struct Context {
    models: Models,
    thresholds: Thresholds,
    generation: u64,
    encoding: PositionEncoding,
    root: Option<PathBuf>,
    surroundings: Option<Arc<SurroundingsReader>>,
}

/// The outcome of an analysis run off the async threads.
struct Outcome {
    analysis: Arc<Analysis>,
    tree: Option<tree_sitter::Tree>,
}

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
    session.shares.wait_briefly().await;
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
    // After another process changed the labels, the stored judgement is stale.
    let reloaded = reload_changed_project_index(session, None).await;
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
    document.analysis = Some(outcome.analysis);
    true
}

/// Why a document was not analysed: its diagnostics are cleared, and the reason logged if any.
struct Skip {
    version: i32,
    reason: Option<String>,
}

/// Reads the project index again when another process replaced it since the server read it,
/// and judges the open documents again with it, except `judging` (whose analysis is under way).
/// True when it was read again.
async fn reload_changed_project_index(session: &Arc<Session>, judging: Option<&Uri>) -> bool {
    if !session.project_index_changed() {
        return false;
    }
    crate::lsp::initialize::load_project_index(session).await;
    session.invalidate_predictions();
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
    let snapshot = match take_snapshot(session, uri)? {
        Ok(snapshot) => snapshot,
        Err(skip) => return Some(Err(skip)),
    };
    session.ensure_default_model(snapshot.language).await;
    reload_changed_project_index(session, Some(uri)).await;
    let context = {
        let state = session.state();
        let models = match state.models(snapshot.language) {
            Ok(models) => models,
            Err(reason) => {
                return Some(Err(Skip {
                    version: snapshot.version,
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
            surroundings: state.surroundings.clone(),
        }
    };
    let worker = session.clone();
    let joined =
        tokio::task::spawn_blocking(move || judge_snapshot(&worker, snapshot, &context)).await;
    match joined {
        Ok(outcome) => Some(Ok(outcome)),
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
        version: document.version,
        language: document.language,
        relative_path: document.relative_path.clone(),
        text: document.text.clone(),
        lines: document.lines.clone(),
        tree: document.tree.clone(),
        cache: document.cache.clone(),
    }))
}

/// The CPU work: parse (incrementally from the kept tree), extract, judge the tests whose code
/// is not cached, and build the diagnostics.
fn judge_snapshot(session: &Session, snapshot: Snapshot, context: &Context) -> Outcome {
    let language = snapshot.language;
    let tree = extract::parse(language, &snapshot.text, snapshot.tree.as_ref());
    let (extraction, signals) = match &tree {
        Some(tree) => {
            // An open document is judged whatever `python_files` says, as pytest collects a
            // file named on its command line; pytest's class and function rules still apply.
            let surroundings = context
                .surroundings
                .as_ref()
                .zip(context.root.as_deref())
                .map(|(reader, root)| {
                    reader.for_file(language, &root.join(&snapshot.relative_path))
                })
                .unwrap_or_default();
            let extraction = extract::extract_tests_from_tree_with(
                language,
                &snapshot.relative_path,
                &snapshot.text,
                tree,
                &surroundings.discovery,
            );
            let file =
                analysis::SourceTree::new(language, &snapshot.relative_path, &snapshot.text, tree);
            let signals = analysis::signals_of(&file, &surroundings.conftests, &extraction.tests);
            (extraction, signals)
        }
        None => (extract::Extraction::default(), Vec::new()),
    };
    let mut cache = snapshot
        .cache
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    if cache.generation != context.generation {
        cache.by_code.clear();
        cache.generation = context.generation;
    }
    let keys: Vec<CacheKey> = extraction
        .tests
        .iter()
        .zip(&signals)
        .map(|(test, signals)| (test.code.clone(), signals.features()))
        .collect();
    // The tests whose code and features no cached judgement has, each key once, are judged
    // together (on every core when there are many: a newly opened file).
    let mut unjudged: Vec<usize> = Vec::new();
    let found: Vec<Found> = {
        let mut fresh: HashMap<&CacheKey, usize> = HashMap::new();
        keys.iter()
            .enumerate()
            .map(|(at, key)| match cache.by_code.get(key) {
                Some(judged) => Found::Cached(judged.clone()),
                None => Found::Fresh(*fresh.entry(key).or_insert_with(|| {
                    unjudged.push(at);
                    unjudged.len() - 1
                })),
            })
            .collect()
    };
    let codes: Vec<(Language, &str)> = unjudged
        .iter()
        .map(|&at| (language, keys[at].0.as_str()))
        .collect();
    let unjudged_signals: Vec<&Signals> = unjudged.iter().map(|&at| &signals[at]).collect();
    let fresh: Vec<Arc<Judged>> = analysis::judge_all(
        &context.models,
        &context.thresholds,
        &codes,
        &unjudged_signals,
    )
    .into_iter()
    .map(|prediction| Arc::new(Judged::new(prediction)))
    .collect();
    let mut kept = HashMap::with_capacity(keys.len());
    let tests: Vec<JudgedTest> = extraction
        .tests
        .into_iter()
        .zip(signals)
        .zip(keys.into_iter().zip(found))
        .map(|((test, signals), (key, found))| {
            let judged = match found {
                Found::Cached(judged) => moved(&judged, &signals),
                Found::Fresh(at) => moved(&fresh[at], &signals),
            };
            kept.insert(key, judged.clone());
            let severity = if test.ignored {
                None
            } else {
                context.thresholds.severity(judged.prediction.score)
            };
            JudgedTest {
                test,
                judged,
                severity,
            }
        })
        .collect();
    cache.by_code = kept;
    drop(cache);

    let text_lines = TextLines {
        text: &snapshot.text,
        lines: &snapshot.lines,
    };
    let mut locator = NeighborLocator::new(session, context.root.as_deref(), context.encoding);
    let diagnostics = tests
        .iter()
        .filter_map(|judged_test| {
            let severity = judged_test.severity?;
            let related = judged_test
                .judged
                .related
                .get_or_init(|| locator.locate_all(&judged_test.judged.prediction.neighbors));
            Some(diagnostics::diagnostic(
                judged_test,
                severity,
                text_lines,
                context.encoding,
                related,
            ))
        })
        .collect();
    Outcome {
        analysis: Arc::new(Analysis {
            version: snapshot.version,
            tests,
            diagnostics,
        }),
        tree,
    }
}

/// Where a test's judgement comes from: the cache, or the judgements made in this analysis.
enum Found {
    Cached(Arc<Judged>),
    Fresh(usize),
}

/// A cached judgement with its evidence at the lines where the signals are now: a line added
/// above a test moves its signals without changing its prediction.
fn moved(judged: &Arc<Judged>, signals: &Signals) -> Arc<Judged> {
    let evidence: Vec<SignalHit> = judged
        .prediction
        .signals
        .iter()
        .filter_map(|old| signals.risks.iter().find(|hit| hit.id == old.id).cloned())
        .collect();
    if evidence == judged.prediction.signals {
        return Arc::clone(judged);
    }
    Arc::new(Judged::new(Prediction {
        signals: evidence,
        ..judged.prediction.clone()
    }))
}

/// Finds where workspace neighbours live: in an open document when there is one, else on disk.
/// Each file is read and parsed at most once per locator.
pub struct NeighborLocator<'a> {
    session: &'a Session,
    root: Option<&'a Path>,
    encoding: PositionEncoding,
    files: HashMap<String, Option<LocatedFile>>,
}

/// A file's tests' name positions.
struct LocatedFile {
    uri: Uri,
    names: HashMap<String, tower_lsp_server::ls_types::Range>,
}

impl<'a> NeighborLocator<'a> {
    pub fn new(
        session: &'a Session,
        root: Option<&'a Path>,
        encoding: PositionEncoding,
    ) -> NeighborLocator<'a> {
        NeighborLocator {
            session,
            root,
            encoding,
            files: HashMap::new(),
        }
    }

    /// The workspace neighbours among `neighbors`, with their locations.
    pub fn locate_all(&mut self, neighbors: &[Neighbor]) -> Vec<(Location, Neighbor)> {
        neighbors
            .iter()
            .filter_map(|neighbor| Some((self.locate(neighbor)?, neighbor.clone())))
            .collect()
    }

    /// Where a neighbour's name is, when it lives in the workspace.
    pub fn locate(&mut self, neighbor: &Neighbor) -> Option<Location> {
        let path = neighbor.path.as_deref()?;
        let root = self.root?;
        if !self.files.contains_key(path) {
            let located = self.read(root, path);
            self.files.insert(path.to_string(), located);
        }
        let file = self.files.get(path)?.as_ref()?;
        let range = file.names.get(&neighbor.id).copied().unwrap_or_default();
        Some(Location::new(file.uri.clone(), range))
    }

    fn read(&self, root: &Path, relative: &str) -> Option<LocatedFile> {
        let path = root.join(relative);
        let uri = Uri::from_file_path(&path)?;
        let open = self.session.documents.lock().get(&uri).map(|document| {
            (
                document.language,
                document.relative_path.clone(),
                document.text.clone(),
            )
        });
        let (language, relative_path, text) = match open {
            Some(open) => open,
            None => {
                let file = crate::files::read_source(&path).ok()?;
                (file.language, relative.to_string(), file.text)
            }
        };
        let lines = LineIndex::new(&text);
        let text_lines = TextLines {
            text: &text,
            lines: &lines,
        };
        let discovery = crate::workspace::discovery(root, &path);
        let names = extract::extract_tests_with(language, &relative_path, &text, &discovery)
            .tests
            .into_iter()
            .map(|test| (test.id, text_lines.range(&test.name_range, self.encoding)))
            .collect();
        Some(LocatedFile { uri, names })
    }
}
