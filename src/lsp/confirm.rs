//! `flakesense.confirm` (document URI, test id, optional runs): the code action "Confirm: run
//! this test N times". The runs go on in a blocking thread of their own, reported as
//! `$/progress`, while the server keeps answering; the verdict is shown to the user
//! (`window/showMessage`, with every condition's counts in the log) and returned to nobody: the
//! command answers as soon as the runs start.
//!
//! The action's title names the command the runs start and where it comes from; a command the
//! repository chose (its `flakesense.toml`, its virtual environment, its Gradle wrapper) runs
//! only after the user answers "Run" to the server's question (`window/showMessageRequest`).
//!
//! One confirmation runs at a time (the noise of one would fall on the other's runs). Shutting
//! the server down ends every run's process group.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde_json::json;
use tower_lsp_server::jsonrpc::{Error, Result};
use tower_lsp_server::ls_types::{LSPAny, MessageActionItem, MessageType, ProgressToken, Uri};

use crate::confirm::choose::ChosenTest;
use crate::confirm::condition::Host;
use crate::confirm::engine::{self, Settings};
use crate::confirm::process::Stop;
use crate::confirm::runner::{self, CommandOrigin};
use crate::confirm::verdict::{self, TestVerdict, Verdict};
use crate::line_index::ColumnUnit;
use crate::lsp::analyze::current_analysis;
use crate::lsp::session::{CLIENT_ANSWER_TIMEOUT, Session};
use crate::lsp::state::file_path;

pub const CONFIRM: &str = "flakesense.confirm";

/// The confirmations under way: the session they belong to (its address), how to stop them, and
/// whether they are done.
struct Running {
    session: usize,
    stop: Stop,
    done: Arc<AtomicBool>,
}

static RUNNING: Mutex<Vec<Running>> = Mutex::new(Vec::new());
/// One confirmation at a time, in the whole process.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
static NEXT_TOKEN: AtomicU64 = AtomicU64::new(0);

/// How long shutting down waits for the runs to end their process groups.
const STOP_WAIT: Duration = Duration::from_secs(3);

fn session_key(session: &Arc<Session>) -> usize {
    Arc::as_ptr(session) as usize
}

/// The runs settings say for the editor: `runs` of `[confirm]`, else 20.
pub fn runs(session: &Session) -> u32 {
    session
        .state()
        .config
        .confirm
        .as_ref()
        .and_then(|confirm| confirm.runs)
        .unwrap_or(engine::DEFAULT_RUNS)
}

/// The command confirming `test` (of the file at `file`) starts, and where it comes from; `None`
/// when no runner can run it (confirming then says why).
pub fn command_of(
    session: &Session,
    file: &std::path::Path,
    relative: &str,
    test: &crate::extract::TestMethod,
) -> Option<(String, CommandOrigin)> {
    let (root, config) = {
        let state = session.state();
        (state.root.clone()?, state.config.confirm.clone())
    };
    let chosen = ChosenTest {
        file: file.to_path_buf(),
        path: relative.to_string(),
        line: 1,
        column: 1,
        score: None,
        predicted: None,
        signals: Vec::new(),
        test: test.clone(),
    };
    runner::detect(&chosen, &root, config.as_ref())
        .ok()
        .map(|runner| runner.command())
}

/// How a command is named to the user: "`cargo test` (flakesense's default)".
pub fn describe_command((command, origin): &(String, CommandOrigin)) -> String {
    format!(
        "`{}` (from {})",
        crate::terminal::escape(command),
        origin.describe()
    )
}

/// A test of an open document, ready to be confirmed.
pub(crate) struct Prepared {
    pub(crate) root: PathBuf,
    pub(crate) test: ChosenTest,
    pub(crate) config: Option<crate::config::ConfirmConfig>,
    pub(crate) settings: Settings,
    /// The editor's text differs from the file on disk, which is what runs.
    pub(crate) unsaved: bool,
    /// The command the runs start and where it comes from.
    pub(crate) command: Option<(String, CommandOrigin)>,
}

/// The test `test_id` of the open document `uri`, with the settings to confirm it with.
pub(crate) async fn prepare(
    session: &Arc<Session>,
    uri: &Uri,
    test_id: &str,
    runs: Option<u32>,
) -> Result<Prepared> {
    let current = current_analysis(session, uri)
        .await
        .ok_or_else(|| Error::invalid_params(format!("{} is not open", uri.as_str())))?;
    let judged =
        current.analysis.test(test_id).cloned().ok_or_else(|| {
            Error::invalid_params(format!("no test `{test_id}` in {}", uri.as_str()))
        })?;
    let (root, relative, config) = {
        let state = session.state();
        (
            state.root.clone(),
            state.relative_path(uri),
            state.config.confirm.clone(),
        )
    };
    let (Some(root), Some(file)) = (root, file_path(uri)) else {
        return Err(Error::invalid_params(
            "confirming a test needs a workspace folder and a file on disk",
        ));
    };
    let mut settings = Settings::from_config(config.as_ref())
        .map_err(|error| Error::invalid_params(format!("{error:#}")))?;
    settings.runs = runs.unwrap_or(settings.runs).max(1);
    // Read off the server's threads: a file on a slow disk must not hold up typing.
    let saved_path = file.clone();
    let unsaved = tokio::task::spawn_blocking(move || {
        crate::files::read_regular(&saved_path, crate::analysis::MAX_FILE_BYTES as u64)
    })
    .await
    .ok()
    .and_then(|read| read.ok())
    .is_some_and(|saved| saved != current.text.as_bytes());
    let (line, column) = current.lines.position(
        &current.text,
        judged.test.name_range.start,
        ColumnUnit::Char,
    );
    let prediction = &judged.judged.prediction;
    let test = ChosenTest {
        file,
        path: relative,
        line: line + 1,
        column: column + 1,
        score: Some(prediction.score),
        predicted: prediction.category,
        signals: prediction.signals.iter().map(|hit| hit.category).collect(),
        test: judged.test.clone(),
    };
    let command = command_of(session, &test.file, &test.path, &test.test);
    Ok(Prepared {
        root,
        test,
        config,
        settings,
        unsaved,
        command,
    })
}

/// Starts confirming a test of an open document; answers once the runs have started.
pub async fn start(
    session: &Arc<Session>,
    uri: Uri,
    test_id: &str,
    runs: Option<u32>,
) -> Result<Option<LSPAny>> {
    let Prepared {
        root,
        test,
        config,
        settings,
        unsaved,
        command,
    } = prepare(session, &uri, test_id, runs).await?;
    let (stop, done) = register(session);
    let answer = json!({
        "testId": test_id,
        "runs": settings.runs,
        "conditions": settings.conditions,
        "unsaved": unsaved,
        "command": command.as_ref().map(|(command, _)| command),
        "commandFrom": command.as_ref().map(|(_, origin)| origin),
    });
    let session = session.clone();
    tokio::spawn(async move {
        if asked_to_run(&session, &test.test.id, command.as_ref()).await {
            confirm(&session, root, test, config, settings, unsaved, stop).await;
        }
        unregister(&done);
    });
    Ok(Some(answer))
}

/// A confirmation under way, which shutting the server down stops: how to stop it, and the flag
/// it sets when done (see [`unregister`]).
pub(crate) fn register(session: &Arc<Session>) -> (Stop, Arc<AtomicBool>) {
    let stop = Stop::new();
    let done = Arc::new(AtomicBool::new(false));
    RUNNING
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(Running {
            session: session_key(session),
            stop: stop.clone(),
            done: done.clone(),
        });
    (stop, done)
}

/// The confirmation that `done` belongs to has ended.
pub(crate) fn unregister(done: &Arc<AtomicBool>) {
    done.store(true, Ordering::SeqCst);
    RUNNING
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .retain(|running| !Arc::ptr_eq(&running.done, done));
}

/// Whether the runs may start: a command the repository chose runs only when the user says so
/// ("Run"); no answer, "Cancel" or a client that cannot ask is a no.
pub(crate) async fn asked_to_run(
    session: &Session,
    id: &str,
    command: Option<&(String, CommandOrigin)>,
) -> bool {
    let Some(command) = command.filter(|(_, origin)| origin.from_repository()) else {
        return true;
    };
    let question = format!(
        "flakesense: confirming {id} runs {}. Run it?",
        describe_command(command)
    );
    let actions = ["Run", "Cancel"]
        .map(|title| MessageActionItem {
            title: title.to_string(),
            properties: Default::default(),
        })
        .to_vec();
    let answer = session
        .client
        .show_message_request(MessageType::WARNING, question, Some(actions))
        .await;
    let run = matches!(&answer, Ok(Some(item)) if item.title == "Run");
    if !run {
        session
            .log(
                MessageType::INFO,
                format!(
                    "confirming {id}: not run ({} was not accepted)",
                    describe_command(command)
                ),
            )
            .await;
    }
    run
}

/// Runs a confirmation, one at a time, with its progress shown under `title`; the test's
/// verdict, or `None` when it was stopped or failed (which the user is told).
pub(crate) async fn run(
    session: &Arc<Session>,
    root: &std::path::Path,
    test: &ChosenTest,
    config: Option<crate::config::ConfirmConfig>,
    settings: &Settings,
    stop: &Stop,
    title: &str,
) -> Option<TestVerdict> {
    let _one_at_a_time = ONE_AT_A_TIME.lock().await;
    let id = test.test.id.clone();
    if stop.is_requested() {
        return None;
    }
    let progress = begin_progress(session, title).await;
    let (sender, mut receiver) = tokio::sync::mpsc::unbounded_channel();
    let worker = {
        let (root, test, stop) = (root.to_path_buf(), test.clone(), stop.clone());
        let settings = settings.clone();
        tokio::task::spawn_blocking(move || {
            let host = Host::probe_for(&settings.conditions);
            engine::confirm(
                &root,
                std::slice::from_ref(&test),
                config.as_ref(),
                &settings,
                &host,
                &stop,
                &mut |progress| {
                    let _ = sender.send(progress.clone());
                },
            )
        })
    };
    let mut last_report = Instant::now() - Duration::from_secs(1);
    while let Some(update) = receiver.recv().await {
        // A report per run is plenty; a client need not redraw more than a few times a second.
        if let Some(progress) = &progress
            && (last_report.elapsed() >= Duration::from_millis(200) || update.done == update.total)
        {
            let percentage = (update.done * 100 / update.total.max(1)) as u32;
            progress
                .report_with_message(
                    format!(
                        "{} run {} ({}/{})",
                        update.condition, update.run, update.done, update.total
                    ),
                    percentage,
                )
                .await;
            last_report = Instant::now();
        }
    }
    let outcome = worker.await;
    if let Some(progress) = progress {
        progress.finish().await;
    }
    match outcome {
        Ok(Ok(Ok(confirmation))) => confirmation.verdicts.into_iter().next(),
        Ok(Ok(Err(_))) => {
            session
                .log(MessageType::INFO, format!("confirming {id} was stopped"))
                .await;
            None
        }
        Ok(Err(error)) => {
            session
                .show(
                    MessageType::ERROR,
                    format!("flakesense: confirming {id} failed: {error:#}"),
                )
                .await;
            None
        }
        Err(error) => {
            session
                .log(
                    MessageType::ERROR,
                    format!("confirming {id} failed: {error}"),
                )
                .await;
            None
        }
    }
}

/// Runs the confirmation and tells the user what it showed.
async fn confirm(
    session: &Arc<Session>,
    root: PathBuf,
    test: ChosenTest,
    config: Option<crate::config::ConfirmConfig>,
    settings: Settings,
    unsaved: bool,
    stop: Stop,
) {
    let id = test.test.id.clone();
    if unsaved {
        session
            .show(
                MessageType::WARNING,
                format!("flakesense: {id} has unsaved changes; the saved file is run"),
            )
            .await;
    }
    let title = format!("flakesense: confirming {id}");
    let Some(verdict) = run(session, &root, &test, config, &settings, &stop, &title).await else {
        return;
    };
    let level = match verdict.verdict {
        Verdict::Flaky => MessageType::WARNING,
        Verdict::Broken | Verdict::NotRun => MessageType::ERROR,
        Verdict::NoFlakinessSeen => MessageType::INFO,
    };
    session
        .show(level, format!("flakesense: {id} {}", headline(&verdict)))
        .await;
    session.log(MessageType::INFO, details(&id, &verdict)).await;
}

/// The verdict in one sentence, as the user sees it.
fn headline(verdict: &TestVerdict) -> String {
    match verdict.verdict {
        Verdict::Flaky => format!(
            "is {}{}",
            crate::confirm::output::headline(verdict),
            verdict::hint(verdict, None)
                .map(|hint| format!(". {hint}"))
                .unwrap_or_default()
        ),
        Verdict::Broken => format!(
            "is broken, not flaky: it failed all {} runs",
            verdict.failed
        ),
        Verdict::NoFlakinessSeen => format!("showed no flakiness in {} runs", verdict.passed),
        Verdict::NotRun => format!(
            "was not run: {}",
            verdict.error.as_deref().unwrap_or("no result")
        ),
    }
}

/// Each condition's counts and first failure message, for the log.
fn details(id: &str, verdict: &TestVerdict) -> String {
    let mut lines = vec![format!("confirmed {id}:")];
    for tally in &verdict.tallies {
        match &tally.unavailable {
            Some(reason) => lines.push(format!("  {}: unavailable: {reason}", tally.condition)),
            None => lines.push(format!(
                "  {}: {} runs, {} passed, {} failed{}",
                tally.condition,
                tally.runs,
                tally.passed,
                tally.failed,
                tally
                    .failures
                    .first()
                    .map(|failure| format!(" ({})", failure.message))
                    .unwrap_or_default()
            )),
        }
    }
    lines.join("\n")
}

/// A bounded `$/progress` report, when the client supports them.
async fn begin_progress(
    session: &Session,
    title: &str,
) -> Option<
    tower_lsp_server::OngoingProgress<tower_lsp_server::Bounded, tower_lsp_server::NotCancellable>,
> {
    if !session.state().client_support.work_done_progress {
        return None;
    }
    let token = ProgressToken::String(format!(
        "flakesense/confirm/{}",
        NEXT_TOKEN.fetch_add(1, Ordering::SeqCst)
    ));
    tokio::time::timeout(
        CLIENT_ANSWER_TIMEOUT,
        session.client.create_work_done_progress(token.clone()),
    )
    .await
    .ok()?
    .ok()?;
    Some(
        session
            .client
            .progress(token, title)
            .with_percentage(0)
            .begin()
            .await,
    )
}

/// Ends the runs of a session (of every session with `None`) and waits a little for their
/// process groups to be gone.
pub async fn stop_all(session: Option<&Arc<Session>>) {
    let waiting: Vec<Arc<AtomicBool>> = {
        let running = RUNNING.lock().unwrap_or_else(PoisonError::into_inner);
        running
            .iter()
            .filter(|running| session.is_none_or(|session| session_key(session) == running.session))
            .map(|running| {
                running.stop.request();
                running.done.clone()
            })
            .collect()
    };
    let started = Instant::now();
    while started.elapsed() < STOP_WAIT && waiting.iter().any(|done| !done.load(Ordering::SeqCst)) {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
