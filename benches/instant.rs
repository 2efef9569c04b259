//! Start-up costs, measured on whole processes as a pre-commit hook or an editor meets them
//! (issue 15). Each case prints the median and the 90th percentile of its runs:
//!
//! - `files`: `flakesense check` of one file of each language (the demo's) in an otherwise empty
//!   repository, with its peak resident memory;
//! - `staged`: `flakesense check --staged` with one changed test file in the generated 1,000-file,
//!   10,000-test repository, with the cache of the workspace's signal shares cold (removed before
//!   each run) and warm;
//! - `server`: `flakesense serve` from its start to the first diagnostics of a 200-test file opened
//!   in that repository, and to the diagnostics weighed by the workspace's signal shares;
//! - `whole`: `flakesense check` of the whole repository.
//!
//! Run with `cargo bench --bench instant -- [--runs N] [CASE...]`. `FLAKESENSE_BENCH_BINARY`
//! names another binary to measure (an older build, for the figures before a change).

#[path = "../tests/lsp_client/mod.rs"]
mod lsp_client;

#[path = "common/java_file.rs"]
mod java_file;

#[path = "common/tree.rs"]
mod tree;

#[path = "common/process.rs"]
mod process;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use process::{Run, git, percentile, walk};
use serde_json::{Value, json};

fn binary() -> PathBuf {
    std::env::var_os("FLAKESENSE_BENCH_BINARY").map_or_else(
        || PathBuf::from(env!("CARGO_BIN_EXE_flakesense")),
        PathBuf::from,
    )
}

/// Runs the binary with `arguments` in `directory` and waits for it.
fn run(directory: &Path, arguments: &[&str]) -> Run {
    process::run(&binary(), directory, arguments)
}

fn report(what: &str, runs: &[Run]) {
    let sorted = process::sorted(runs);
    println!(
        "{what}: {} runs, median {:.1} ms, p90 {:.1} ms (processor time median {:.1} ms); peak resident median {:.0} MB",
        runs.len(),
        percentile(&sorted.wall_ms, 0.5),
        percentile(&sorted.wall_ms, 0.9),
        percentile(&sorted.cpu_ms, 0.5),
        percentile(&sorted.rss_mb, 0.5),
    );
}

/// A git repository holding only the demo's three files, one per language.
fn files(runs: usize) {
    let directory = tempfile::tempdir().expect("a temporary directory");
    let root = directory.path();
    git(root, &["init", "--quiet"]);
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/demo");
    // The demo's Java, Python and Rust files; its flakesense.toml makes it a workspace of its own
    // in a flakesense checkout, and is not copied.
    let sources: Vec<PathBuf> = walk(&demo)
        .into_iter()
        .filter(|path| {
            path.extension().is_some_and(|extension| {
                ["java", "py", "rs"].iter().any(|known| extension == *known)
            })
        })
        .collect();
    assert_eq!(sources.len(), 3, "{sources:?}");
    for path in sources {
        let copy = root.join(path.strip_prefix(&demo).expect("below the demo"));
        std::fs::create_dir_all(copy.parent().expect("a directory")).expect("writable");
        std::fs::copy(&path, copy).expect("copied");
    }
    run(root, &["check", "--exit-zero"]);
    let measured: Vec<Run> = (0..runs)
        .map(|_| run(root, &["check", "--exit-zero"]))
        .collect();
    report(
        "check of one Java, one Python and one Rust file in an otherwise empty repository",
        &measured,
    );
}

/// The generated repository, committed, with the file that `staged` changes.
struct Repository {
    _directory: tempfile::TempDir,
    root: PathBuf,
}

fn repository() -> Repository {
    let directory = tempfile::tempdir().expect("a temporary directory");
    let root = directory.path().to_path_buf();
    std::fs::write(root.join("flakesense.toml"), "").expect("writable");
    tree::generate(&root);
    std::fs::write(root.join("GeneratedTest.java"), java_file::generated_file()).expect("writable");
    process::commit_everything(&root, "generated");
    Repository {
        _directory: directory,
        root,
    }
}

/// Stages a new test in one Java file of the repository.
fn stage_a_change(root: &Path) -> PathBuf {
    let changed = walk(&root.join("src/test/java"))
        .into_iter()
        .find(|path| {
            path.extension()
                .is_some_and(|extension| extension == "java")
        })
        .expect("a Java file");
    let text = std::fs::read_to_string(&changed).expect("readable");
    let end = text.rfind('}').expect("a class");
    let added = "\n    @Test\n    void waitsForTheQueue() throws Exception {\n        queue.publish(\"x\");\n        Thread.sleep(200);\n        assertEquals(1, queue.size());\n    }\n";
    std::fs::write(&changed, format!("{}{added}}}\n", &text[..end])).expect("writable");
    git(root, &["add", "."]);
    changed
}

fn staged(repository: &Repository, runs: usize) {
    let root = &repository.root;
    stage_a_change(root);
    // The repository's git directory keeps the cache (outside the working tree); binaries before
    // commit 1a43bc6 (`FLAKESENSE_BENCH_BINARY`) kept it in `.flakesense/cache`.
    let caches = [root.join(".git/flakesense"), root.join(".flakesense/cache")];
    // The files were written moments ago: let their modification times age, as a repository's
    // files have, so that the cache does not count them as possibly still changing.
    std::thread::sleep(Duration::from_secs(3));
    let arguments = ["check", "--staged", "--exit-zero"];
    let cold: Vec<Run> = (0..runs)
        .map(|_| {
            for cache in &caches {
                let _ = std::fs::remove_dir_all(cache);
            }
            run(root, &arguments)
        })
        .collect();
    report(
        "check --staged, one changed file of 1,000, cache cold",
        &cold,
    );
    run(root, &arguments);
    let warm: Vec<Run> = (0..runs).map(|_| run(root, &arguments)).collect();
    report(
        "check --staged, one changed file of 1,000, cache warm",
        &warm,
    );
}

fn whole(repository: &Repository, runs: usize) {
    let arguments = ["check", "--exit-zero"];
    run(&repository.root, &arguments);
    let measured: Vec<Run> = (0..runs)
        .map(|_| run(&repository.root, &arguments))
        .collect();
    report("check of the whole 1,000-file repository", &measured);
}

/// The server's start: spawn, initialize, open the 200-test file; the time to its first
/// diagnostics and to those after the workspace's tests were counted.
async fn server_once(root: &Path, text: &str) -> (Duration, Duration) {
    let started = Instant::now();
    let (mut client, mut child) = lsp_client::spawn_server(binary(), root);
    let root_uri = format!("file://{}", root.display());
    client
        .initialize(json!({
            "processId": null,
            "rootUri": root_uri,
            "workspaceFolders": [{"uri": root_uri, "name": "bench"}],
            "capabilities": {},
            "initializationOptions": {"debounceMs": 0},
        }))
        .await;
    let uri = format!("{root_uri}/GeneratedTest.java");
    client.open(&uri, "java", 1, text).await;
    let is_diagnostics = |message: &Value| {
        message["method"] == "textDocument/publishDiagnostics"
            && message["params"]["uri"] == uri.as_str()
            && message["params"]["version"] == 1
    };
    let is_counted = |message: &Value| {
        message["method"] == "window/logMessage"
            && message["params"]["message"]
                .as_str()
                .is_some_and(|text| text.contains("tests of the workspace"))
    };
    // The workspace's shares can be counted (or read from the cache) before the file is first
    // judged, and then its first diagnostics are already weighed by them; otherwise the server
    // judges it again once they are counted.
    let first_message = client
        .wait_for(
            "the first diagnostics or the workspace's tests counted",
            |message: &Value| is_diagnostics(message) || is_counted(message),
            Duration::from_secs(60),
        )
        .await;
    let (first, counted) = if is_counted(&first_message) {
        client.diagnostics(&uri, Some(1)).await;
        let first = started.elapsed();
        (first, first)
    } else {
        let first = started.elapsed();
        client
            .wait_for(
                "the workspace's tests counted",
                is_counted,
                Duration::from_secs(60),
            )
            .await;
        client.diagnostics(&uri, Some(1)).await;
        (first, started.elapsed())
    };
    client.shutdown_and_exit().await;
    let _ = tokio::time::timeout(Duration::from_secs(10), child.wait()).await;
    (first, counted)
}

fn server(repository: &Repository, runs: usize) {
    let text = java_file::generated_file();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(server_once(&repository.root, &text));
    let times: Vec<(Duration, Duration)> = (0..runs)
        .map(|_| runtime.block_on(server_once(&repository.root, &text)))
        .collect();
    let summary = |values: Vec<Duration>| {
        let mut millis: Vec<f64> = values.iter().map(|d| d.as_secs_f64() * 1e3).collect();
        millis.sort_by(f64::total_cmp);
        (percentile(&millis, 0.5), percentile(&millis, 0.9))
    };
    let (first_median, first_p90) = summary(times.iter().map(|t| t.0).collect());
    let (counted_median, counted_p90) = summary(times.iter().map(|t| t.1).collect());
    println!(
        "server start to the first diagnostics of a 200-test file: {runs} runs, median {first_median:.1} ms, p90 {first_p90:.1} ms; to the diagnostics weighed by the workspace's signal shares: median {counted_median:.1} ms, p90 {counted_p90:.1} ms"
    );
}

fn main() {
    let mut runs = 10;
    let mut cases: Vec<String> = Vec::new();
    let mut arguments = std::env::args().skip(1);
    while let Some(argument) = arguments.next() {
        match argument.as_str() {
            "--runs" => {
                runs = arguments
                    .next()
                    .and_then(|runs| runs.parse().ok())
                    .expect("--runs N")
            }
            // `cargo bench` passes this to every benchmark.
            "--bench" => {}
            case => cases.push(case.to_string()),
        }
    }
    let wanted = |case: &str| cases.is_empty() || cases.iter().any(|wanted| wanted == case);
    println!(
        "binary: {}; load average at the start: {}",
        binary().display(),
        process::load_average()
    );
    if wanted("files") {
        files(runs);
    }
    if wanted("staged") || wanted("server") || wanted("whole") {
        let repository = repository();
        if wanted("whole") {
            whole(&repository, runs.min(5));
        }
        if wanted("server") {
            server(&repository, runs);
        }
        if wanted("staged") {
            staged(&repository, runs);
        }
    }
}
