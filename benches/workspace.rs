//! Speed on a large repository (issue 48): whole processes of the release binary on a real
//! source tree made a git repository, as CI and an editor meet them. Each case prints the median
//! and the 90th percentile of its runs, and one table at the end holds every figure beside its
//! target:
//!
//! - `check`: `flakesense check` of the whole repository with the cache cold (`.git/flakesense/`
//!   removed before each run), then warm;
//! - `staged`: `flakesense check --staged` after a comment is added to one test method of a test
//!   class that extends a base class of the repository (`git add`ed), cache cold and warm;
//! - `server`: `flakesense serve` from its start (spawn, `initialize`, `initialized`, `didOpen`
//!   of that test file) to the file's first `publishDiagnostics`, and to the server's log line
//!   saying it read the workspace's tests (which may finish in the background), cache cold and
//!   warm.
//!
//! Peak resident memory is the kernel's: `wait4`'s `ru_maxrss` for `check` (what `/usr/bin/time
//! -v` prints), and the server's `VmHWM` from `/proc/PID/status` read just before it is asked to
//! shut down. Targets from the issue: `--staged` warm under 60 ms, the server's first diagnostics
//! under 100 ms, resident memory under 200 MB.
//!
//! The repository is not in this one: the figures of the README are of fixbench 2's paimon
//! snapshot (4,730 Java files), which must never be copied here. The benchmark copies the tree it
//! is given to a temporary directory (leaving out any `.git`) and commits it there:
//!
//! `cargo bench --bench workspace -- [--runs N] [--file PATH] [CASE...] DIRECTORY`, or
//! `FLAKESENSE_BENCH_REPO=DIRECTORY cargo bench --bench workspace`. Without a directory it says
//! so and measures nothing. `--runs` sets the warm runs (5 by default; the cold ones are at most
//! 3), `--file` the test file to change and open (relative to the directory; by default the
//! first, in path order, with at least 10 tests of its own whose class extends a `...TestBase`
//! of the repository that has set-up). `FLAKESENSE_BENCH_BINARY` names another binary to measure.

#[path = "../tests/lsp_client/mod.rs"]
mod lsp_client;

#[path = "common/process.rs"]
mod process;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use process::{Run, percentile};
use serde_json::{Value, json};

const MEMORY_TARGET_MB: f64 = 200.0;
const STAGED_TARGET_MS: f64 = 60.0;
const SERVER_TARGET_MS: f64 = 100.0;
/// A test class chosen by default has at least this many tests of its own.
const CHOSEN_FILE_TESTS: usize = 10;
/// Cold runs rebuild the cache of a whole repository each: a few are enough.
const MOST_COLD_RUNS: usize = 3;

fn binary() -> PathBuf {
    std::env::var_os("FLAKESENSE_BENCH_BINARY").map_or_else(
        || PathBuf::from(env!("CARGO_BIN_EXE_flakesense")),
        PathBuf::from,
    )
}

struct Options {
    source: Option<PathBuf>,
    runs: usize,
    file: Option<PathBuf>,
    cases: Vec<String>,
}

fn options() -> Options {
    let mut options = Options {
        source: std::env::var_os("FLAKESENSE_BENCH_REPO").map(PathBuf::from),
        runs: 5,
        file: None,
        cases: Vec::new(),
    };
    let mut arguments = std::env::args().skip(1);
    while let Some(argument) = arguments.next() {
        match argument.as_str() {
            "--runs" => {
                options.runs = arguments
                    .next()
                    .and_then(|runs| runs.parse().ok())
                    .filter(|&runs| runs > 0)
                    .expect("--runs N")
            }
            "--file" => options.file = Some(arguments.next().expect("--file PATH").into()),
            // `cargo bench` passes this to every benchmark.
            "--bench" => {}
            "check" | "staged" | "server" => options.cases.push(argument),
            directory => options.source = Some(directory.into()),
        }
    }
    options
}

/// One line of the closing table.
struct Row {
    case: String,
    runs: usize,
    median_ms: f64,
    p90_ms: f64,
    cpu_ms: Option<f64>,
    peak_mb: f64,
    time_target_ms: Option<f64>,
}

impl Row {
    fn from_runs(case: &str, runs: &[Run], time_target_ms: Option<f64>) -> Row {
        let sorted = process::sorted(runs);
        let row = Row {
            case: case.to_string(),
            runs: runs.len(),
            median_ms: percentile(&sorted.wall_ms, 0.5),
            p90_ms: percentile(&sorted.wall_ms, 0.9),
            cpu_ms: Some(percentile(&sorted.cpu_ms, 0.5)),
            peak_mb: percentile(&sorted.rss_mb, 1.0),
            time_target_ms,
        };
        row.print();
        row
    }

    fn print(&self) {
        println!(
            "{}: {} runs, median {:.1} ms, p90 {:.1} ms{}; peak resident {:.0} MB",
            self.case,
            self.runs,
            self.median_ms,
            self.p90_ms,
            self.cpu_ms
                .map(|cpu| format!(" (processor time median {cpu:.1} ms)"))
                .unwrap_or_default(),
            self.peak_mb,
        );
    }

    /// The targets and whether the run met them: the time's on the median, the memory's on the
    /// largest peak.
    fn target(&self) -> String {
        let time = self.time_target_ms.map_or_else(
            || "no time target".to_string(),
            |ms| format!("under {ms:.0} ms"),
        );
        let met = self.time_target_ms.is_none_or(|ms| self.median_ms < ms)
            && self.peak_mb < MEMORY_TARGET_MB;
        format!(
            "{time}, under {MEMORY_TARGET_MB:.0} MB: {}",
            if met { "met" } else { "MISSED" }
        )
    }
}

fn main() {
    let options = options();
    let Some(source) = options.source.clone() else {
        println!(
            "skipped: no repository to measure. Pass the directory of a source tree (the unpacked \
             paimon snapshot of fixbench 2 for the README's figures): `cargo bench --bench \
             workspace -- DIRECTORY` or FLAKESENSE_BENCH_REPO=DIRECTORY"
        );
        return;
    };
    if !source.is_dir() {
        println!(
            "skipped: {} is not a directory (the unpacked paimon snapshot of fixbench 2, for the \
             README's figures)",
            source.display()
        );
        return;
    }
    let wanted = |case: &str| options.cases.is_empty() || options.cases.iter().any(|c| c == case);
    println!(
        "binary: {}; load average at the start: {}",
        binary().display(),
        process::load_average()
    );

    let directory = tempfile::tempdir().expect("a temporary directory");
    let root = directory.path().join("repository");
    let started = Instant::now();
    let (copied, skipped_links) = copy_tree(&source, &root).expect("the tree copies");
    process::commit_everything(&root, "snapshot");
    let java = copied.iter().filter(|path| is_java(path)).count();
    println!(
        "repository: {} files ({java} Java) of {}, copied and committed in {:.1} s{}",
        copied.len(),
        source.display(),
        started.elapsed().as_secs_f64(),
        if skipped_links > 0 {
            format!("; {skipped_links} symbolic links left out")
        } else {
            String::new()
        }
    );
    let changed = match &options.file {
        Some(file) => root.join(file),
        None => choose_test_file(&copied).expect(
            "a test class with set-up in a base class of the repository (choose one with --file)",
        ),
    };
    println!(
        "the test file changed and opened: {}",
        changed.strip_prefix(&root).unwrap_or(&changed).display()
    );
    // The files were written moments ago: let their modification times age, as a repository's
    // files have, so that the cache does not count them as possibly still changing.
    std::thread::sleep(Duration::from_secs(3));

    let mut rows = Vec::new();
    if wanted("check") {
        whole(&root, options.runs, &mut rows);
    }
    if wanted("staged") {
        staged(&root, &changed, options.runs, &mut rows);
    }
    if wanted("server") {
        server(&root, &changed, options.runs, &mut rows);
    }

    println!("\nload average at the end: {}\n", process::load_average());
    println!("| case | runs | median | p90 | processor time | peak resident | target |");
    println!("|---|---|---|---|---|---|---|");
    for row in &rows {
        println!(
            "| {} | {} | {:.1} ms | {:.1} ms | {} | {:.0} MB | {} |",
            row.case,
            row.runs,
            row.median_ms,
            row.p90_ms,
            row.cpu_ms
                .map_or_else(|| "-".to_string(), |cpu| format!("{cpu:.1} ms")),
            row.peak_mb,
            row.target()
        );
    }
}

/// Copies the directories and regular files below `from` to `to`, leaving out `.git` and
/// symbolic links; the files copied (under `to`, in path order) and the links left out.
fn copy_tree(from: &Path, to: &Path) -> std::io::Result<(Vec<PathBuf>, usize)> {
    let mut copied = Vec::new();
    let mut links = 0;
    let mut pending = vec![(from.to_path_buf(), to.to_path_buf())];
    while let Some((from, to)) = pending.pop() {
        std::fs::create_dir_all(&to)?;
        for entry in std::fs::read_dir(&from)? {
            let entry = entry?;
            if entry.file_name() == ".git" {
                continue;
            }
            let kind = entry.file_type()?;
            let target = to.join(entry.file_name());
            if kind.is_dir() {
                pending.push((entry.path(), target));
            } else if kind.is_file() {
                std::fs::copy(entry.path(), &target)?;
                copied.push(target);
            } else {
                links += 1;
            }
        }
    }
    copied.sort();
    Ok((copied, links))
}

/// The first test file, in path order, with at least [`CHOSEN_FILE_TESTS`] tests of its own
/// whose class extends a `...TestBase` class of the repository that has set-up: the kind of test
/// whose context is in other files.
fn choose_test_file(files: &[PathBuf]) -> Option<PathBuf> {
    let extends = regex::Regex::new(r"\bclass\s+\w+(?:<[^>{]*>)?\s+extends\s+(\w+TestBase)\b")
        .expect("a valid pattern");
    let by_class: HashMap<&str, &PathBuf> = files
        .iter()
        .filter(|path| is_java(path))
        .filter_map(|path| Some((path.file_stem()?.to_str()?, path)))
        .collect();
    files
        .iter()
        .find(|path| {
            let in_tests = path.to_string_lossy().contains("/src/test/");
            if !in_tests || !is_java(path) {
                return false;
            }
            let Ok(text) = std::fs::read_to_string(path) else {
                return false;
            };
            let Some(base) = extends
                .captures(&text)
                .map(|captures| captures[1].to_string())
            else {
                return false;
            };
            let base_has_set_up = by_class
                .get(base.as_str())
                .and_then(|base| std::fs::read_to_string(base).ok())
                .is_some_and(|base| base.contains("@BeforeEach") || base.contains("@Before\n"));
            base_has_set_up && own_tests(&text) >= CHOSEN_FILE_TESTS
        })
        .cloned()
}

fn is_java(path: &Path) -> bool {
    path.extension()
        .is_some_and(|extension| extension == "java")
}

fn own_tests(text: &str) -> usize {
    text.lines().filter(|line| line.trim() == "@Test").count()
}

/// The text with a comment as the first line of the first `@Test` method's body.
fn comment_in_first_test(text: &str) -> Option<String> {
    let mut offset = 0;
    let annotation = text.split_inclusive('\n').find_map(|line| {
        let found = (line.trim() == "@Test").then_some(offset);
        offset += line.len();
        found
    })?;
    // The body's brace: the first at depth 0 of parentheses (an annotation's arguments may hold
    // braces).
    let mut depth = 0_i32;
    let brace = text[annotation..].char_indices().find_map(|(at, c)| {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            '{' if depth == 0 => return Some(annotation + at),
            _ => {}
        }
        None
    })?;
    Some(format!(
        "{}\n        // changed by the workspace benchmark{}",
        &text[..=brace],
        &text[brace + 1..]
    ))
}

fn remove_cache(root: &Path) {
    let _ = std::fs::remove_dir_all(root.join(".git/flakesense"));
}

/// `check` with JSON output, for what it judged; not timed.
fn summary(root: &Path, arguments: &[&str]) -> Value {
    let output = std::process::Command::new(binary())
        .args(arguments)
        .args(["--format", "json", "--exit-zero"])
        .current_dir(root)
        .output()
        .expect("the binary runs");
    assert!(
        output.status.success(),
        "{arguments:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: Value = serde_json::from_slice(&output.stdout).expect("JSON output");
    report["summary"].clone()
}

fn whole(root: &Path, runs: usize, rows: &mut Vec<Row>) {
    let arguments = ["check"];
    // Reads every file once into the page cache, and says what a check finds.
    let summary = summary(root, &arguments);
    println!(
        "check of the whole repository: {} files, {} tests, {} flagged, {} skipped",
        summary["files"],
        summary["tests"],
        summary["flagged"],
        summary["skipped"].as_array().map_or(0, Vec::len)
    );
    let cold: Vec<Run> = (0..runs.min(MOST_COLD_RUNS))
        .map(|_| {
            remove_cache(root);
            process::run(&binary(), root, &arguments)
        })
        .collect();
    rows.push(Row::from_runs("`check`, cache cold", &cold, None));
    // A whole check may count everything from the files it reads and keep no cache.
    println!(
        "cache after a whole check: {}",
        if root.join(".git/flakesense").exists() {
            "kept in .git/flakesense"
        } else {
            "none kept"
        }
    );
    let warm: Vec<Run> = (0..runs)
        .map(|_| process::run(&binary(), root, &arguments))
        .collect();
    rows.push(Row::from_runs("`check`, cache warm", &warm, None));
}

fn staged(root: &Path, changed: &Path, runs: usize, rows: &mut Vec<Row>) {
    let text = std::fs::read_to_string(changed).expect("the test file reads");
    let edited = comment_in_first_test(&text).expect("a @Test method with a body");
    std::fs::write(changed, edited).expect("writable");
    process::git(root, &["add", "--", &changed.to_string_lossy()]);
    std::thread::sleep(Duration::from_secs(3));
    let arguments = ["check", "--staged"];
    let summary = summary(root, &arguments);
    println!(
        "check --staged: {} files, {} tests judged, {} flagged",
        summary["files"], summary["tests"], summary["flagged"]
    );
    assert!(
        summary["tests"].as_u64().is_some_and(|tests| tests >= 1),
        "--staged judged no test: {summary}"
    );
    let cold: Vec<Run> = (0..runs.min(MOST_COLD_RUNS))
        .map(|_| {
            remove_cache(root);
            process::run(&binary(), root, &arguments)
        })
        .collect();
    rows.push(Row::from_runs(
        "`check --staged`, one changed test, cache cold",
        &cold,
        None,
    ));
    let warm: Vec<Run> = (0..runs.max(5))
        .map(|_| process::run(&binary(), root, &arguments))
        .collect();
    rows.push(Row::from_runs(
        "`check --staged`, one changed test, cache warm",
        &warm,
        Some(STAGED_TARGET_MS),
    ));
}

/// One start of the server: the times to the opened file's first diagnostics and to its log line
/// saying it read the workspace's tests, with the resident peak (`VmHWM`) at each.
struct ServerRun {
    first: Duration,
    first_peak_mb: f64,
    read: Duration,
    read_peak_mb: f64,
    log: String,
}

/// `VmHWM` of a running process in megabytes, from Linux's `/proc`; NaN elsewhere.
fn peak_resident_mb(pid: Option<u32>) -> f64 {
    let status = pid
        .and_then(|pid| std::fs::read_to_string(format!("/proc/{pid}/status")).ok())
        .unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|value| value.split_whitespace().next()?.parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

async fn server_once(root: &Path, uri: &str, text: &str) -> ServerRun {
    let started = Instant::now();
    let (mut client, mut child) = lsp_client::spawn_server(binary(), root);
    let pid = child.id();
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
    client.open(uri, "java", 1, text).await;
    client
        .wait_for(
            "the first diagnostics",
            |message: &Value| {
                message["method"] == "textDocument/publishDiagnostics"
                    && message["params"]["uri"] == uri
            },
            Duration::from_secs(120),
        )
        .await;
    let first = started.elapsed();
    let first_peak_mb = peak_resident_mb(pid);
    let log = client
        .wait_for(
            "the workspace's tests read",
            lsp_client::read_the_workspace,
            Duration::from_secs(600),
        )
        .await;
    let read = started.elapsed();
    let read_peak_mb = peak_resident_mb(pid);
    client.shutdown_and_exit().await;
    let _ = tokio::time::timeout(Duration::from_secs(10), child.wait()).await;
    ServerRun {
        first,
        first_peak_mb,
        read,
        read_peak_mb,
        log: log["params"]["message"].as_str().unwrap_or("").to_string(),
    }
}

fn server(root: &Path, changed: &Path, runs: usize, rows: &mut Vec<Row>) {
    let text = std::fs::read_to_string(changed).expect("the test file reads");
    let uri = format!("file://{}", changed.display());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("a runtime");
    let cold: Vec<ServerRun> = (0..runs.min(MOST_COLD_RUNS))
        .map(|_| {
            remove_cache(root);
            runtime.block_on(server_once(root, &uri, &text))
        })
        .collect();
    println!("server, cache cold: {}", cold[0].log);
    server_rows("cache cold", &cold, rows);
    let warm: Vec<ServerRun> = (0..runs)
        .map(|_| runtime.block_on(server_once(root, &uri, &text)))
        .collect();
    println!("server, cache warm: {}", warm[0].log);
    server_rows("cache warm", &warm, rows);
}

fn server_rows(cache: &str, runs: &[ServerRun], rows: &mut Vec<Row>) {
    let row = |case: String, times: Vec<Duration>, peaks: Vec<f64>, target: Option<f64>| {
        let mut millis: Vec<f64> = times.iter().map(|d| d.as_secs_f64() * 1e3).collect();
        millis.sort_by(f64::total_cmp);
        let row = Row {
            case,
            runs: runs.len(),
            median_ms: percentile(&millis, 0.5),
            p90_ms: percentile(&millis, 0.9),
            cpu_ms: None,
            peak_mb: peaks.into_iter().fold(0.0, f64::max),
            time_target_ms: target,
        };
        row.print();
        row
    };
    rows.push(row(
        format!("`serve`: start to the file's first diagnostics, {cache}"),
        runs.iter().map(|run| run.first).collect(),
        runs.iter().map(|run| run.first_peak_mb).collect(),
        Some(SERVER_TARGET_MS),
    ));
    rows.push(row(
        format!("`serve`: start to the workspace's tests read (in the background), {cache}"),
        runs.iter().map(|run| run.read).collect(),
        runs.iter().map(|run| run.read_peak_mb).collect(),
        None,
    ));
}
