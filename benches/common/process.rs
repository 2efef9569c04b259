//! Whole runs of the binary as a pre-commit hook or CI meets them: wall time, processor time and
//! peak resident set of each, the percentiles the benchmarks print, and the git and directory
//! helpers that lay out the repositories they run in.

#![allow(dead_code)] // each benchmark uses its own part of this module

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// One finished run of the binary: its wall time, processor time and peak resident set.
pub struct Run {
    pub wall: Duration,
    pub cpu: Duration,
    pub max_rss_mb: f64,
}

/// Runs `binary` with `arguments` in `directory` and waits for it, reading its peak resident
/// set from `wait4` (Linux and other Unixes; 0 elsewhere). `check` exits with 1 when it flags a
/// test, which is no failure here; 2 (an error) is.
pub fn run(binary: &Path, directory: &Path, arguments: &[&str]) -> Run {
    let started = Instant::now();
    let child = Command::new(binary)
        .args(arguments)
        .current_dir(directory)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("the binary starts");
    let (status, cpu, max_rss_mb) = wait(child);
    let wall = started.elapsed();
    assert!(
        status == 0 || status == 1,
        "{arguments:?} exited with {status}"
    );
    Run {
        wall,
        cpu,
        max_rss_mb,
    }
}

#[cfg(unix)]
fn wait(child: std::process::Child) -> (i32, Duration, f64) {
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: `rusage` is plain data that `wait4` fills in; the pid is our own child's.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: both pointers are to live locals of the right types.
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(waited, pid, "wait4 failed");
    std::mem::forget(child);
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        -1
    };
    let seconds = |time: libc::timeval| {
        Duration::from_secs(time.tv_sec as u64) + Duration::from_micros(time.tv_usec as u64)
    };
    let cpu = seconds(usage.ru_utime) + seconds(usage.ru_stime);
    // Kilobytes on Linux.
    (code, cpu, usage.ru_maxrss as f64 / 1024.0)
}

#[cfg(not(unix))]
fn wait(mut child: std::process::Child) -> (i32, Duration, f64) {
    let status = child.wait().expect("the child ends");
    (status.code().unwrap_or(-1), Duration::ZERO, 0.0)
}

/// The value below which `share` of the sorted values lie (nearest rank).
pub fn percentile(sorted: &[f64], share: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * share).round() as usize]
}

/// The runs' wall times, processor times and peak resident sets in milliseconds and megabytes,
/// each sorted.
pub struct Sorted {
    pub wall_ms: Vec<f64>,
    pub cpu_ms: Vec<f64>,
    pub rss_mb: Vec<f64>,
}

pub fn sorted(runs: &[Run]) -> Sorted {
    let sort = |mut values: Vec<f64>| {
        values.sort_by(f64::total_cmp);
        values
    };
    Sorted {
        wall_ms: sort(
            runs.iter()
                .map(|run| run.wall.as_secs_f64() * 1e3)
                .collect(),
        ),
        cpu_ms: sort(runs.iter().map(|run| run.cpu.as_secs_f64() * 1e3).collect()),
        rss_mb: sort(runs.iter().map(|run| run.max_rss_mb).collect()),
    }
}

/// The first figure of `/proc/loadavg`, "unknown" elsewhere.
pub fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|load| load.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "unknown".to_string())
}

/// Runs git quietly in `directory`; panics when it fails.
pub fn git(directory: &Path, arguments: &[&str]) {
    let status = Command::new("git")
        .args(arguments)
        .current_dir(directory)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("git runs");
    assert!(status.success(), "git {arguments:?}");
}

/// Makes `directory` a git repository whose one commit, by a fixed identity, holds all its files.
pub fn commit_everything(directory: &Path, message: &str) {
    git(directory, &["init", "--quiet"]);
    git(directory, &["add", "."]);
    git(
        directory,
        &[
            "-c",
            "user.name=bench",
            "-c",
            "user.email=bench@example.com",
            "-c",
            "commit.gpgsign=false",
            "commit",
            "--quiet",
            "--no-verify",
            "-m",
            message,
        ],
    );
}

/// The files below `directory`, in path order.
pub fn walk(directory: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![directory.to_path_buf()];
    while let Some(directory) = pending.pop() {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(&directory)
            .map(|entries| {
                entries
                    .filter_map(|entry| Some(entry.ok()?.path()))
                    .collect()
            })
            .unwrap_or_default();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                pending.push(path);
            } else {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}
