//! The CPU work of a document's analysis, run off the async threads in two halves: reading its
//! tests and their signals, which needs no model, then judging them with the models, through a
//! cache of earlier judgements, into diagnostics.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use tower_lsp_server::ls_types::{Diagnostic, Location, Uri};

use crate::analysis::{self, Models, Severity, Thresholds};
use crate::extract::{self, TestMethod};
use crate::language::Language;
use crate::line_index::LineIndex;
use crate::lsp::diagnostics;
use crate::lsp::neighbors::NeighborLocator;
use crate::lsp::position::{PositionEncoding, TextLines};
use crate::lsp::reread::{self, LastRead};
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
pub struct Snapshot {
    /// The document, which the evidence of its diagnostics points into.
    pub uri: Uri,
    pub version: i32,
    pub language: Language,
    pub relative_path: String,
    pub text: String,
    pub lines: LineIndex,
    pub tree: Option<tree_sitter::Tree>,
    pub cache: Arc<Mutex<PredictionCache>>,
    /// What the last read of the document found, which this one may keep.
    pub last: Option<Arc<LastRead>>,
}

/// Where a document lies: what reading its tests takes from the workspace.
pub struct Workspace {
    pub root: PathBuf,
    pub surroundings: Arc<SurroundingsReader>,
}

/// A snapshot's tests and their signals, read without the models.
pub struct Read {
    snapshot: Snapshot,
    /// The tree of this read, which matches the snapshot's text.
    tree: Option<tree_sitter::Tree>,
    extraction: extract::Extraction,
    signals: Vec<Signals>,
    last: Option<Arc<LastRead>>,
}

/// The models and settings the judging runs with.
pub struct Context {
    pub models: Models,
    pub thresholds: Thresholds,
    pub generation: u64,
    pub encoding: PositionEncoding,
    pub root: Option<PathBuf>,
}

/// The outcome of an analysis run off the async threads.
pub struct Outcome {
    pub analysis: Arc<Analysis>,
    pub tree: Option<tree_sitter::Tree>,
    /// What the next read of the document may keep.
    pub last: Option<Arc<LastRead>>,
}

/// The first half of the CPU work, which needs no model: parse (incrementally from the kept
/// tree), find the tests and the signals of each and of what it runs, keeping what the last read
/// found outside the function an edit changed.
pub fn read(mut snapshot: Snapshot, workspace: Option<&Workspace>) -> Read {
    let language = snapshot.language;
    let tree = extract::parse(language, &snapshot.text, snapshot.tree.take().as_ref());
    let last = snapshot.last.take();
    let (extraction, signals, next) = match &tree {
        Some(tree) => {
            // An open document is judged whatever `python_files` says, as pytest collects a
            // file named on its command line; pytest's class and function rules still apply.
            let surroundings = workspace
                .map(|workspace| {
                    workspace
                        .surroundings
                        .for_file(language, &workspace.root.join(&snapshot.relative_path))
                })
                .unwrap_or_default();
            // Finding the tests and matching the catalogue read the same tree, each on its own
            // core.
            let (extraction, (scan, splice)) = rayon::join(
                || {
                    extract::extract_tests_from_tree_with(
                        language,
                        &snapshot.relative_path,
                        &snapshot.text,
                        tree,
                        &surroundings.discovery,
                    )
                },
                || reread::scan(last.as_deref(), language, &snapshot.text, tree),
            );
            let file = analysis::SourceTree {
                language,
                path: &snapshot.relative_path,
                text: &snapshot.text,
                tree,
                scan,
            };
            let elsewhere =
                surroundings.elsewhere(language, &snapshot.relative_path, &snapshot.text, tree);
            let (signals, next) = reread::signals(
                last.as_deref(),
                splice.as_ref(),
                file,
                &surroundings.conftests,
                &elsewhere,
                &extraction.tests,
            );
            (extraction, signals, Some(Arc::new(next)))
        }
        None => (extract::Extraction::default(), Vec::new(), None),
    };
    Read {
        snapshot,
        tree,
        extraction,
        signals,
        last: next,
    }
}

/// The second half: judge the tests whose code and signals are not cached, and build the
/// diagnostics.
pub fn judge(session: &Session, read: Read, context: &Context) -> Outcome {
    let Read {
        snapshot,
        tree,
        extraction,
        signals,
        last,
    } = read;
    let language = snapshot.language;
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
                &snapshot.uri,
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
        last,
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
    // The cache keys on the test's code and context, so the mechanisms found now are those of
    // the cached judgement at their new lines.
    let mechanisms = if judged.prediction.mechanisms.is_empty() {
        Vec::new()
    } else {
        signals.mechanisms.clone()
    };
    if evidence == judged.prediction.signals && mechanisms == judged.prediction.mechanisms {
        return Arc::clone(judged);
    }
    Arc::new(Judged::new(Prediction {
        signals: evidence,
        mechanisms,
        ..judged.prediction.clone()
    }))
}
