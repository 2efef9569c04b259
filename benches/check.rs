//! Speed of `flakesense check` end to end: a generated tree of 1,000 test files holding 10,000
//! tests (Java, Python and Rust; sleeps, threads, clocks, sockets and plain assertions) judged
//! with the shipped default models, as CI would run it. The target is under 2 s on a 2-core
//! machine, both cores used (rayon uses every core unless `RAYON_NUM_THREADS` says otherwise).
//!
//! Run with `cargo bench --bench check`; `FLAKESENSE_BENCH_RUNS` sets the number of timed runs,
//! `FLAKESENSE_BENCH_TREE` a directory to write the tree to and keep.

use std::path::Path;

#[path = "common/tree.rs"]
mod tree;

use std::process::Command;
use std::time::{Duration, Instant};
use tree::{FILES, TESTS_PER_FILE, generate};

/// CPU time (user and system) of the children this process has waited for, from Linux's
/// `/proc/self/stat` in clock ticks of 1/100 s; `None` elsewhere. Shows how much of a run's
/// wall time was work when other processes share the cores.
fn children_cpu() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name (which may hold spaces) start at the state, field 3;
    // cutime and cstime are fields 16 and 17.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks: u64 = fields.get(13)?.parse::<u64>().ok()? + fields.get(14)?.parse::<u64>().ok()?;
    Some(Duration::from_millis(ticks * 10))
}

fn check(root: &Path) -> (Duration, serde_json::Value) {
    let started = Instant::now();
    let output = Command::new(env!("CARGO_BIN_EXE_flakesense"))
        .args(["check", "--format", "json", "--exit-zero"])
        .current_dir(root)
        .output()
        .expect("flakesense runs");
    let elapsed = started.elapsed();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    (
        elapsed,
        serde_json::from_slice(&output.stdout).expect("JSON output"),
    )
}

fn main() {
    let runs: usize = std::env::var("FLAKESENSE_BENCH_RUNS")
        .ok()
        .and_then(|runs| runs.parse().ok())
        .unwrap_or(5);
    let directory = tempfile::tempdir().expect("a temporary directory");
    // `FLAKESENSE_BENCH_TREE=DIR` writes the tree there and keeps it, for profiling.
    let root = std::env::var_os("FLAKESENSE_BENCH_TREE")
        .map_or_else(|| directory.path().to_path_buf(), std::path::PathBuf::from);
    // A marker makes the directory a workspace root of its own.
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("flakesense.toml"), "").unwrap();
    generate(&root);
    let (_, report) = check(&root); // warms the page cache
    let summary = &report["summary"];
    println!(
        "tree: {} files, {} tests ({} flagged at the default sigma {})",
        summary["files"], summary["tests"], summary["flagged"], report["settings"]["sigma"]
    );
    assert_eq!(summary["files"], FILES);
    assert_eq!(summary["tests"], FILES * TESTS_PER_FILE);
    let cpu_before = children_cpu();
    let mut times: Vec<Duration> = (0..runs).map(|_| check(&root).0).collect();
    let cpu = children_cpu()
        .zip(cpu_before)
        .map(|(after, before)| (after - before) / runs as u32);
    times.sort();
    let seconds = |duration: Duration| duration.as_secs_f64();
    println!(
        "flakesense check, {} runs on {} cores: median {:.2} s, min {:.2} s, max {:.2} s ({:.0} tests/s)",
        runs,
        std::thread::available_parallelism().map_or(1, |cores| cores.get()),
        seconds(times[times.len() / 2]),
        seconds(times[0]),
        seconds(times[times.len() - 1]),
        (FILES * TESTS_PER_FILE) as f64 / seconds(times[times.len() / 2])
    );
    if let Some(cpu) = cpu {
        println!(
            "CPU time per run (user + system): {:.2} s; load average when done: {}",
            seconds(cpu),
            std::fs::read_to_string("/proc/loadavg")
                .ok()
                .and_then(|load| load.split_whitespace().next().map(str::to_string))
                .unwrap_or_else(|| "unknown".to_string())
        );
    }
}
