//! How many runs `flakesense confirm`'s conditions need to expose the fixtures' timing race
//! (`tests/fixtures/confirm`): runs until the first failure under `noise` and `cpu1` against
//! `plain`, median of 10 trials, for the Rust crate (cargo test), the pytest project and the
//! JUnit 5 project (javac and the console launcher). Shaker reports that noise needs far fewer
//! runs than plain reruns; a trial that sees no failure within the cap counts as more than it.
//!
//! First, though, the wall time of a default confirmation (`flakesense confirm --test ...` with
//! no other flag: 20 runs under each of the five conditions) of one test, the race, for the Rust
//! crate and the pytest project (the JUnit project only when named in `FLAKESENSE_BENCH_ONLY`:
//! a default confirmation starts many JVMs), as the engine the command line calls runs it.
//!
//! Run with `cargo bench --bench confirm`; `FLAKESENSE_BENCH_TRIALS` (default 10) and
//! `FLAKESENSE_BENCH_CAP` (runs per trial, default 30) change the work, `FLAKESENSE_BENCH_ONLY`
//! (`rust`, `pytest` or `junit`) runs one project, `FLAKESENSE_BENCH_SECTION` (`wall` or `runs`)
//! one of the two parts.

use std::path::Path;
use std::time::Instant;

use flakesense::config::Config;
use flakesense::confirm::choose::ChosenTest;
use flakesense::confirm::condition::{Condition, Host};
use flakesense::confirm::engine::{self, Settings};
use flakesense::confirm::process::Stop;
use flakesense::extract;
use flakesense::language::Language;

#[path = "../tests/common/mod.rs"]
mod common;

use common::copy_tree;

const LAUNCHER: &str = "/usr/share/java/junit-platform-console-standalone.jar";

struct Project {
    name: &'static str,
    fixture: &'static str,
    file: &'static str,
    test: &'static str,
}

const PROJECTS: [Project; 3] = [
    Project {
        name: "rust",
        fixture: "rust",
        file: "src/lib.rs",
        test: "refreshes_the_cache_in_the_background",
    },
    Project {
        name: "pytest",
        fixture: "pytest",
        file: "test_shop.py",
        test: "test_refreshes_the_cache_in_the_background",
    },
    Project {
        name: "junit",
        fixture: "junit",
        file: "src/test/java/com/example/shop/ShopTest.java",
        test: "refreshesTheCacheInTheBackground",
    },
];

fn setting(name: &str, default: u32) -> u32 {
    std::env::var(name)
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(default)
}

fn chosen(root: &Path, project: &Project) -> ChosenTest {
    let file = root.join(project.file);
    let text = std::fs::read_to_string(&file).unwrap();
    let language = Language::from_path(&file).unwrap();
    let test = extract::extract_tests(language, project.file, &text)
        .tests
        .into_iter()
        .find(|test| test.name == project.test)
        .unwrap();
    ChosenTest {
        test,
        file,
        path: project.file.to_string(),
        line: 1,
        column: 1,
        score: None,
        predicted: None,
        signals: Vec::new(),
    }
}

fn median(mut values: Vec<u32>) -> f64 {
    values.sort_unstable();
    let middle = values.len() / 2;
    if values.len().is_multiple_of(2) {
        f64::from(values[middle - 1] + values[middle]) / 2.0
    } else {
        f64::from(values[middle])
    }
}

/// A fresh copy of a fixture project, compiled where it needs to be; `None` (said) where a
/// tool it needs is missing.
fn lay_out(fixtures: &Path, project: &Project) -> Option<tempfile::TempDir> {
    let directory = tempfile::tempdir().unwrap();
    let root = directory.path();
    copy_tree(&fixtures.join(project.fixture), root);
    if project.name == "junit" {
        let compiled = std::process::Command::new("javac")
            .args(["-d", "out", "-cp", LAUNCHER, project.file])
            .current_dir(root)
            .status();
        if !compiled.is_ok_and(|status| status.success()) {
            println!(
                "{:<8} skipped: javac or {LAUNCHER} is missing",
                project.name
            );
            return None;
        }
    }
    Some(directory)
}

/// The wall time of a default confirmation of the project's race, from the start of the runs
/// (building cargo's test binaries included) to the verdict.
fn default_confirmation(fixtures: &Path, project: &Project, host: &Host, stop: &Stop) {
    let Some(directory) = lay_out(fixtures, project) else {
        return;
    };
    let root = directory.path();
    let config = Config::load(root).unwrap();
    let settings = Settings::from_config(config.confirm.as_ref()).unwrap();
    let test = chosen(root, project);
    let started = Instant::now();
    let confirmation = engine::confirm(
        root,
        std::slice::from_ref(&test),
        config.confirm.as_ref(),
        &settings,
        host,
        stop,
        &mut |_| {},
    )
    .expect("the runs start")
    .expect("not interrupted");
    let elapsed = started.elapsed().as_secs_f64();
    let verdict = &confirmation.verdicts[0];
    println!(
        "{:<8} {:>9.1}s  {:?} ({:?}), {} runs with a result",
        project.name,
        elapsed,
        verdict.verdict,
        verdict.category,
        verdict.passed + verdict.failed
    );
}

fn main() {
    let trials = setting("FLAKESENSE_BENCH_TRIALS", 10);
    let cap = setting("FLAKESENSE_BENCH_CAP", 30);
    let only = std::env::var("FLAKESENSE_BENCH_ONLY").ok();
    let section = std::env::var("FLAKESENSE_BENCH_SECTION").ok();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/confirm");
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).join("confirm-fixture-target");
    // SAFETY: set before any thread starts; the runs inherit it.
    unsafe { std::env::set_var("CARGO_TARGET_DIR", &target) };
    let host = Host::probe();
    let stop = Stop::on_ctrl_c();
    if section.as_deref().is_none_or(|section| section == "wall") {
        println!(
            "wall time of a default confirmation of the race (runs and conditions of `flakesense confirm --test ID`)"
        );
        for project in PROJECTS.iter().filter(|project| match only.as_deref() {
            Some(only) => only == project.name,
            None => project.name != "junit",
        }) {
            default_confirmation(&fixtures, project, &host, &stop);
        }
        print_load();
        if section.is_some() {
            return;
        }
    }
    println!(
        "runs until the first failure of the timing race, median of {trials} trials (cap {cap} runs per trial; \">{cap}\": no failure within the cap)"
    );
    println!(
        "{:<8} {:<8} {:>8} {:>14} {:>10}",
        "project", "condition", "median", "failed trials", "time/run"
    );
    for project in PROJECTS
        .iter()
        .filter(|project| only.as_deref().is_none_or(|only| only == project.name))
    {
        let Some(directory) = lay_out(&fixtures, project) else {
            continue;
        };
        let root = directory.path();
        let config = Config::load(root).unwrap();
        let test = chosen(root, project);
        for condition in [Condition::Plain, Condition::Noise, Condition::Cpu1] {
            let mut counts = Vec::new();
            let mut exposed = 0;
            let mut runs = 0u32;
            let started = Instant::now();
            for _ in 0..trials {
                let found = engine::runs_until_failure(
                    root,
                    &test,
                    config.confirm.as_ref(),
                    condition,
                    cap,
                    &host,
                    &stop,
                )
                .expect("the runs start")
                .expect("not interrupted");
                match found {
                    Some(run) => {
                        exposed += 1;
                        runs += run;
                        counts.push(run);
                    }
                    None => {
                        runs += cap;
                        counts.push(cap + 1);
                    }
                }
            }
            let middle = median(counts);
            let shown = if middle > f64::from(cap) {
                format!(">{cap}")
            } else {
                format!("{middle}")
            };
            println!(
                "{:<8} {:<8} {:>8} {:>14} {:>9.2}s",
                project.name,
                condition.name(),
                shown,
                format!("{exposed}/{trials}"),
                started.elapsed().as_secs_f64() / f64::from(runs.max(1))
            );
        }
    }
    print_load();
}

fn print_load() {
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "load average during the run (1, 5, 15 min): {}",
        load.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
}
