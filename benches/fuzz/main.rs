//! A mutation fuzzer that runs on the stable toolchain: each target of `targets.rs` gets its
//! seeds (the fixtures) mutated many times over, in a child process, and every input that
//! panics, aborts, or runs longer than a bound is saved under `tests/fuzz-corpus/TARGET/`, which
//! `tests/fuzz_corpus.rs` replays.
//!
//! ```sh
//! cargo bench --bench fuzz -- --runs 1000000            # every target, one after the other
//! cargo bench --bench fuzz -- --seconds 60 index csv    # some targets, for a set time each
//! ```
//!
//! Options: `--runs N` and `--seconds S` (whichever ends first; default 60 s), `--max-len BYTES`
//! (16,384), `--slow-ms MS` (an input slower than this is saved as `slow-*`, 2,000),
//! `--hang-s S` (an input still running after this is a hang, 60), `--seed N`. Saved files:
//! `crash-*` (a panic or an abort), `hang-*` (killed after `--hang-s`),
//! `slow-*`; a panic inside `src/extract/` or the signal code is saved as `open-*` for its
//! owners. Without coverage feedback, the fuzzer relies on its dictionaries and on mutations
//! that repeat, splice and truncate; a pool of mutated inputs lets mutations stack.

mod mutate;
mod targets;

use std::collections::hash_map::DefaultHasher;
use std::fs::{self, File};
use std::hash::{Hash, Hasher};
use std::os::unix::fs::FileExt;
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rand::{RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use mutate::mutate;
use targets::{TARGETS, Target};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
/// Exit code of a child whose watchdog found a hang.
const HANG_EXIT: i32 = 3;

#[derive(Debug, Clone)]
struct Options {
    runs: u64,
    seconds: u64,
    max_len: usize,
    slow_ms: u64,
    hang_s: u64,
    seed: u64,
    targets: Vec<String>,
    child: bool,
}

fn options() -> Options {
    let mut options = Options {
        runs: u64::MAX,
        seconds: 60,
        max_len: 16 << 10,
        slow_ms: 2_000,
        hang_s: 60,
        seed: 1,
        targets: Vec::new(),
        child: false,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut number = |what: &str| -> u64 {
            args.next()
                .and_then(|value| value.replace('_', "").parse().ok())
                .unwrap_or_else(|| panic!("{what} takes a number"))
        };
        match arg.as_str() {
            "--runs" => options.runs = number("--runs"),
            "--seconds" => options.seconds = number("--seconds"),
            "--max-len" => options.max_len = number("--max-len") as usize,
            "--slow-ms" => options.slow_ms = number("--slow-ms"),
            "--hang-s" => options.hang_s = number("--hang-s"),
            "--seed" => options.seed = number("--seed"),
            "--child" => options.child = true,
            // cargo bench passes this to every bench binary.
            "--bench" => {}
            name => options.targets.push(name.to_string()),
        }
    }
    if options.runs != u64::MAX && !std::env::args().any(|arg| arg == "--seconds") {
        options.seconds = 365 * 24 * 3600;
    }
    options
}

fn main() {
    let options = options();
    let chosen: Vec<&Target> = TARGETS
        .iter()
        .filter(|target| {
            options.targets.is_empty() || options.targets.iter().any(|name| name == target.name)
        })
        .collect();
    if chosen.is_empty() {
        let names: Vec<&str> = TARGETS.iter().map(|target| target.name).collect();
        eprintln!("no such target; the targets: {}", names.join(", "));
        std::process::exit(2);
    }
    if options.child {
        child(chosen[0], &options);
        return;
    }
    println!("| target | executions | seconds | crashes | hangs | slow inputs |");
    println!("|---|---|---|---|---|---|");
    for target in chosen {
        parent(target, &options);
    }
}

fn work_dir() -> PathBuf {
    let directory = Path::new(ROOT).join("target").join("fuzz");
    fs::create_dir_all(&directory).expect("target/fuzz is writable");
    directory
}

fn corpus_dir(target: &Target) -> PathBuf {
    Path::new(ROOT)
        .join("tests")
        .join("fuzz-corpus")
        .join(target.name)
}

/// Runs a target's children until its budget is spent, restarting after each abort or hang.
fn parent(target: &Target, options: &Options) {
    let started = Instant::now();
    let deadline = started + Duration::from_secs(options.seconds);
    let count_file = work_dir().join(format!("{}.count", target.name));
    let current_file = work_dir().join(format!("{}.current", target.name));
    let (mut executions, mut crashes, mut hangs, mut slow) = (0u64, 0u64, 0u64, 0u64);
    let mut round = 0;
    while executions < options.runs && Instant::now() < deadline {
        let _ = fs::remove_file(&count_file);
        let left = deadline
            .saturating_duration_since(Instant::now())
            .as_secs()
            .max(1);
        let status = Command::new(std::env::current_exe().expect("the fuzzer's path"))
            .args([
                "--child",
                target.name,
                "--runs",
                &(options.runs - executions).to_string(),
                "--seconds",
                &left.to_string(),
                "--max-len",
                &options.max_len.to_string(),
                "--slow-ms",
                &options.slow_ms.to_string(),
                "--hang-s",
                &options.hang_s.to_string(),
                "--seed",
                &(options.seed + round).to_string(),
            ])
            .status()
            .expect("the fuzzer starts itself");
        round += 1;
        let report = fs::read_to_string(&count_file).unwrap_or_default();
        let mut fields = report
            .split_whitespace()
            .map(|field| field.parse::<u64>().unwrap_or(0));
        executions += fields.next().unwrap_or(0);
        crashes += fields.next().unwrap_or(0);
        slow += fields.next().unwrap_or(0);
        if status.success() {
            continue;
        }
        let kind = if status.code() == Some(HANG_EXIT) {
            hangs += 1;
            "hang"
        } else {
            crashes += 1;
            "crash"
        };
        // The child died on the input it was running, which it wrote down first.
        let input = fs::read(&current_file).unwrap_or_default();
        let saved = save(target, kind, &input);
        eprintln!(
            "{}: {kind} ({status}), input saved as {}",
            target.name,
            saved.display()
        );
    }
    println!(
        "| {} | {executions} | {:.0} | {crashes} | {hangs} | {slow} |",
        target.name,
        started.elapsed().as_secs_f64()
    );
}

fn save(target: &Target, kind: &str, input: &[u8]) -> PathBuf {
    let mut hasher = DefaultHasher::new();
    input.hash(&mut hasher);
    let directory = corpus_dir(target);
    fs::create_dir_all(&directory).expect("the corpus folder is writable");
    let path = directory.join(format!("{kind}-{:016x}", hasher.finish()));
    fs::write(&path, input).expect("the corpus folder is writable");
    path
}

/// Seeds: the target's fixture files and folders, the `seed-*` files of its corpus folder and
/// the seeds it makes, each cut to `max_len` bytes.
fn seeds(target: &Target, max_len: usize) -> Vec<Vec<u8>> {
    fn collect(path: &Path, max_len: usize, found: &mut Vec<Vec<u8>>) {
        if path.is_dir() {
            let mut entries: Vec<PathBuf> = fs::read_dir(path)
                .map(|entries| {
                    entries
                        .filter_map(|entry| Some(entry.ok()?.path()))
                        .collect()
                })
                .unwrap_or_default();
            entries.sort();
            for entry in entries {
                let name = entry
                    .file_name()
                    .and_then(|name| name.to_str())
                    .unwrap_or("");
                // A corpus folder's findings are replayed by the tests, not mutated again.
                if entry.is_file()
                    && path.ends_with(entry.parent().unwrap_or(path))
                    && ["crash-", "hang-", "slow-", "open-"]
                        .iter()
                        .any(|kind| name.starts_with(kind))
                {
                    continue;
                }
                collect(&entry, max_len, found);
            }
        } else if let Ok(mut bytes) = fs::read(path) {
            // A long fixture still seeds a short run: its start is a file of the language.
            bytes.truncate(max_len);
            found.push(bytes);
        }
    }
    let mut found = Vec::new();
    for seed in target.seeds {
        collect(&Path::new(ROOT).join(seed), max_len, &mut found);
    }
    for mut seed in (target.made_seeds)() {
        seed.truncate(max_len);
        found.push(seed);
    }
    if found.is_empty() {
        found.push(Vec::new());
    }
    found
}

fn child(target: &Target, options: &Options) {
    let last_panic: Arc<Mutex<String>> = Arc::default();
    let recorded = last_panic.clone();
    panic::set_hook(Box::new(move |info| {
        let location = info
            .location()
            .map(|location| location.file().to_string())
            .unwrap_or_default();
        let message = info
            .payload()
            .downcast_ref::<&str>()
            .map(|text| text.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_default();
        *recorded
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = format!("{location}: {message}");
    }));

    let current = File::create(work_dir().join(format!("{}.current", target.name)))
        .expect("target/fuzz is writable");
    let count_file = work_dir().join(format!("{}.count", target.name));
    // The watchdog: an input running past `--hang-s` ends the child with `HANG_EXIT`.
    let hang_ms = options.hang_s.saturating_mul(1000);
    let started_ms = Arc::new(AtomicU64::new(0));
    let epoch = Instant::now();
    {
        let started_ms = started_ms.clone();
        std::thread::spawn(move || {
            loop {
                std::thread::sleep(Duration::from_secs(1));
                let started = started_ms.load(Ordering::Relaxed);
                let now = epoch.elapsed().as_millis() as u64;
                if started > 0 && now.saturating_sub(started) > hang_ms {
                    std::process::exit(HANG_EXIT);
                }
            }
        });
    }

    let mut rng = Xoshiro256PlusPlus::seed_from_u64(options.seed);
    let seeds = seeds(target, options.max_len);
    let mut pool: Vec<Vec<u8>> = seeds.clone();
    let deadline = Instant::now() + Duration::from_secs(options.seconds);
    let (mut executions, mut crashes, mut slow) = (0u64, 0u64, 0u64);
    let report = |executions: u64, crashes: u64, slow: u64| {
        let _ = fs::write(&count_file, format!("{executions} {crashes} {slow}\n"));
    };
    // Every seed as it is first, then mutations.
    let mut queue: Vec<Vec<u8>> = seeds.clone();
    while executions < options.runs {
        if executions % 1024 == 0 {
            report(executions, crashes, slow);
            if Instant::now() >= deadline {
                break;
            }
        }
        let input = queue.pop().unwrap_or_else(|| {
            let base = &pool[rng.random_range(0..pool.len())];
            mutate(base, &pool, target.dictionary, options.max_len, &mut rng)
        });
        let _ = current.set_len(0);
        let _ = current.write_all_at(&input, 0);
        started_ms.store(epoch.elapsed().as_millis() as u64 + 1, Ordering::Relaxed);
        let began = Instant::now();
        let outcome = panic::catch_unwind(AssertUnwindSafe(|| (target.run)(&input)));
        let took = began.elapsed();
        started_ms.store(0, Ordering::Relaxed);
        executions += 1;
        if outcome.is_err() {
            crashes += 1;
            let message = last_panic
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .clone();
            let owned_elsewhere = message.contains("src/extract/")
                || message.contains("src/signals")
                || message.contains("tree-sitter");
            let saved = save(
                target,
                if owned_elsewhere { "open" } else { "crash" },
                &input,
            );
            eprintln!(
                "{}: panic {message}; input saved as {}",
                target.name,
                saved.display()
            );
        } else if took > Duration::from_millis(options.slow_ms) {
            slow += 1;
            let saved = save(target, "slow", &input);
            eprintln!(
                "{}: {:.1} s; input saved as {}",
                target.name,
                took.as_secs_f64(),
                saved.display()
            );
        }
        // Some mutated inputs join the pool, so that mutations stack over generations.
        if rng.random_ratio(1, 64) {
            if pool.len() < 4096 {
                pool.push(input);
            } else {
                let replaced = rng.random_range(seeds.len()..pool.len());
                pool[replaced] = input;
            }
        }
    }
    report(executions, crashes, slow);
}
