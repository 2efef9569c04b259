//! The language server's keystroke path and its memory.
//!
//! 1. Keystroke: a client edits one test of a 3,000-line Java file with 200 tests and times each
//!    `didChange` to the `publishDiagnostics` of its version, with the shipped Java model loaded
//!    and the debounce set to 0 (so the figure is the work a keystroke causes, not the wait).
//!    The server runs in this process on two worker threads, over an in-memory pipe.
//! 2. Memory: the release binary serves a workspace whose `.flakesense/index` holds 10,000
//!    tests, with the same file open; its resident set (VmRSS, and the peak VmHWM) is read from
//!    `/proc` once the diagnostics arrived.
//!
//! Run with `cargo bench --bench lsp`.

#[path = "../tests/lsp_client/mod.rs"]
mod lsp_client;

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use flakesense::analysis::{self, Models, Thresholds};
use flakesense::embed::TokenBag;
use flakesense::index::{Entry, Index, IndexWriter, Label, NewEntry, Origin};
use flakesense::language::Language;
use flakesense::workspace;
use lsp_client::{ClientBehaviour, LspClient};

#[path = "common/java_file.rs"]
mod java_file;

use java_file::{TESTS, Words, generated_file, generated_test};

const EDITS: usize = 100;
const WORKSPACE_TESTS: usize = 10_000;

fn main() {
    let text = generated_file();
    println!(
        "test file: {} lines, {} tests, {} KB",
        text.lines().count(),
        TESTS,
        text.len() / 1024
    );
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(keystrokes(&text));
    breakdown(&text);
    runtime.block_on(memory(&text));
}

/// Where a keystroke's time goes, measured without the server: judging the one changed test
/// against the shipped model, and re-parsing and extracting the file.
fn breakdown(text: &str) {
    let models = Models {
        defaults: vec![flakesense::models::embedded(Language::Java).expect("the shipped model")],
        ..Models::default()
    };
    let thresholds = Thresholds::default();
    let tests =
        flakesense::extract::extract_tests(Language::Java, "GeneratedTest.java", text).tests;
    let mut judge_times: Vec<Duration> = tests
        .iter()
        .map(|test| {
            let started = Instant::now();
            std::hint::black_box(analysis::judge_code(
                &models,
                &thresholds,
                Language::Java,
                &test.code,
            ));
            started.elapsed()
        })
        .collect();
    let mut extract_times = Vec::new();
    let tree = flakesense::extract::parse(Language::Java, text, None).expect("parses");
    for _ in 0..30 {
        let started = Instant::now();
        let reparsed =
            flakesense::extract::parse(Language::Java, text, Some(&tree)).expect("parses");
        std::hint::black_box(flakesense::extract::extract_tests_from_tree(
            Language::Java,
            "GeneratedTest.java",
            text,
            &reparsed,
        ));
        extract_times.push(started.elapsed());
    }
    println!(
        "of which: judging one test against the shipped Java model: median {:.2} ms; re-parsing and extracting 200 tests: median {:.2} ms",
        median(&mut judge_times).as_secs_f64() * 1e3,
        median(&mut extract_times).as_secs_f64() * 1e3,
    );
}

fn median(times: &mut [Duration]) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn initialize_params(root: &Path, settings: Value) -> Value {
    let root_uri = format!("file://{}", root.display());
    json!({
        "processId": null,
        "rootUri": root_uri,
        "workspaceFolders": [{"uri": root_uri, "name": "bench"}],
        "capabilities": {},
        "initializationOptions": settings,
    })
}

async fn keystrokes(text: &str) {
    let root = tempfile::tempdir().expect("a temporary directory");
    let (client_end, server_end) = tokio::io::duplex(1 << 20);
    let (server_input, server_output) = tokio::io::split(server_end);
    tokio::spawn(flakesense::lsp::serve(server_input, server_output));
    let (client_input, client_output) = tokio::io::split(client_end);
    let mut client = LspClient::new(client_input, client_output, ClientBehaviour::default());
    client
        .initialize(initialize_params(root.path(), json!({"debounceMs": 0})))
        .await;
    let uri = format!("file://{}/GeneratedTest.java", root.path().display());
    let started = Instant::now();
    client.open(&uri, "java", 1, text).await;
    let first = client.diagnostics(&uri, Some(1)).await;
    println!(
        "open (decoding the shipped Java model, judging 200 tests): {:.0} ms, {} diagnostics",
        started.elapsed().as_secs_f64() * 1e3,
        first["diagnostics"].as_array().map_or(0, Vec::len)
    );

    // Each keystroke types a digit into the `int x = i;` line of one test, so that test's code,
    // and only that test's, changes and is judged again.
    let lines: Vec<&str> = text.lines().collect();
    let targets: Vec<(usize, usize)> = lines
        .iter()
        .enumerate()
        .filter_map(|(number, line)| {
            let trimmed = line.trim_start();
            (trimmed.starts_with("int ") && trimmed.ends_with(';'))
                .then(|| (number, line.len() - 1))
        })
        .collect();
    assert_eq!(targets.len(), TESTS);
    let mut times = Vec::new();
    for edit in 0..EDITS + 10 {
        let (line, column) = targets[(edit * 37) % targets.len()];
        let version = edit as i64 + 2;
        let sent = Instant::now();
        client
            .notify(
                "textDocument/didChange",
                json!({
                    "textDocument": {"uri": uri, "version": version},
                    "contentChanges": [{
                        "range": {"start": {"line": line, "character": column}, "end": {"line": line, "character": column}},
                        "text": "1",
                    }],
                }),
            )
            .await;
        client.diagnostics(&uri, Some(version)).await;
        if edit >= 10 {
            times.push(sent.elapsed());
        }
        client.received.clear();
    }
    times.sort();
    let at = |share: f64| times[((times.len() - 1) as f64 * share).round() as usize];
    println!(
        "keystroke: didChange -> publishDiagnostics, debounce 0, over {EDITS} edits: median {:.2} ms, p90 {:.2} ms, max {:.2} ms",
        at(0.5).as_secs_f64() * 1e3,
        at(0.9).as_secs_f64() * 1e3,
        at(1.0).as_secs_f64() * 1e3
    );
    client.shutdown_and_exit().await;
}

/// A workspace index of `WORKSPACE_TESTS` generated tests, a tenth of them flaky with their code
/// kept, as labels given in the editor or imported from a project's history would be.
fn workspace_index() -> Index {
    let mut words = Words(0xfeed);
    let mut index = IndexWriter::new(workspace::new_index_params());
    for i in 0..WORKSPACE_TESTS {
        let code = generated_test(&mut words, i);
        let flaky = i.is_multiple_of(10);
        let bag = TokenBag::from_code(index.params().tokenizer, Language::Java, &code);
        let id = format!("org.example.w{}.Generated{}Test#case{i}", i % 50, i % 400);
        let path = format!(
            "src/test/java/org/example/w{}/Generated{}Test.java",
            i % 50,
            i % 400
        );
        let entry = Entry::new(NewEntry {
            id: &id,
            project: "bench",
            source: "editor",
            language: Language::Java,
            label: if flaky {
                Label::Flaky
            } else {
                Label::Unlabelled
            },
            categories: &[],
            origin: Origin::History,
            path: Some(&path),
            code: Some(&code),
        });
        index.upsert(entry, &bag);
    }
    index.finish()
}

async fn memory(text: &str) {
    let root = tempfile::tempdir().expect("a temporary directory");
    let started = Instant::now();
    let index = workspace_index();
    index
        .save(
            flakesense::files::write::Place::Named,
            &workspace::index_path(root.path()),
        )
        .expect("the workspace index saves");
    println!(
        "workspace index: {} tests, {:.1} MB on disk, built in {:.1} s",
        index.len(),
        std::fs::metadata(workspace::index_path(root.path())).map_or(0, |metadata| metadata.len())
            as f64
            / 1e6,
        started.elapsed().as_secs_f64()
    );
    drop(index);
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_flakesense"))
        .arg("serve")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("the binary starts");
    let pid = child.id().expect("running");
    let stdin = child.stdin.take().expect("piped");
    let stdout = child.stdout.take().expect("piped");
    let mut client = LspClient::new(stdout, stdin, ClientBehaviour::default());
    client
        .initialize(initialize_params(root.path(), json!({})))
        .await;
    let uri = format!("file://{}/GeneratedTest.java", root.path().display());
    client.open(&uri, "java", 1, text).await;
    let published = client.diagnostics(&uri, Some(1)).await;
    // Let the allocator settle after the first analysis.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|line| line.starts_with(name))
            .and_then(|line| line.split_whitespace().nth(1))
            .and_then(|kb| kb.parse::<f64>().ok())
            .map_or(f64::NAN, |kb| kb / 1024.0)
    };
    println!(
        "memory: server with the shipped Java model and a {WORKSPACE_TESTS}-test workspace index, 200-test file open ({} diagnostics): VmRSS {:.0} MB, peak VmHWM {:.0} MB",
        published["diagnostics"].as_array().map_or(0, Vec::len),
        field("VmRSS:"),
        field("VmHWM:")
    );
    client.shutdown_and_exit().await;
    let _ = tokio::time::timeout(Duration::from_secs(10), child.wait()).await;
}
