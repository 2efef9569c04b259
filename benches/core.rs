//! Speed of the predictor core on FlakeFlagger: training on all of it, and one prediction
//! (embed, search, vote) against the resulting index. Needs `../shared/data` (or the CSV path in
//! `FLAKESENSE_BENCH_DATA`); prints a note and exits when it is absent.
//!
//! Run with `cargo bench --bench core` (one thread: the core never spawns any).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use flakesense::dataset::read_csv_file;
use flakesense::embed::{TokenBag, TokenInterner, Tokenizer};
use flakesense::index::{BuildSettings, Dims, Entry, Index, Origin};
use flakesense::predict::{self, predict};

fn main() {
    let path = std::env::var_os("FLAKESENSE_BENCH_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("../shared/data/flakeflagger/labeled.csv"));
    if !path.exists() {
        println!(
            "skipped: {} not found (set FLAKESENSE_BENCH_DATA to a canonical CSV)",
            path.display()
        );
        return;
    }
    let tests = read_csv_file(&path).expect("readable benchmark data").tests;
    for tokenizer in [Tokenizer::Flast, Tokenizer::Code] {
        let settings = BuildSettings {
            tokenizer,
            dims: Dims::Eps(0.33),
            seed: 42,
            description: String::new(),
        };
        let mut train_times = Vec::new();
        let mut index = None;
        for _ in 0..5 {
            let started = Instant::now();
            let mut interner = TokenInterner::default();
            let built = Index::build(
                &settings,
                tests.iter().map(|test| {
                    let bag = TokenBag::from_code_interned(
                        tokenizer,
                        test.language,
                        &test.code,
                        &mut interner,
                    );
                    let entry = Entry {
                        id: test.id.clone(),
                        project: test.project.clone(),
                        source: test.source.clone(),
                        language: test.language,
                        flaky: test.flaky,
                        categories: test.categories.clone(),
                        origin: Origin::Dataset,
                        path: None,
                        code: None,
                    };
                    (entry, bag)
                }),
            );
            train_times.push(started.elapsed());
            index = Some(built);
        }
        let index = index.expect("built five times");
        let size = index.to_bytes().expect("encodable").len();
        let mut predict_times = Vec::new();
        let settings = predict::Settings::default();
        for test in tests.iter().step_by(tests.len() / 2000) {
            let started = Instant::now();
            let prediction = predict(&[&index], test.language, &test.code, settings);
            predict_times.push(started.elapsed());
            std::hint::black_box(prediction);
        }
        println!(
            "{:<8} train {} tests: median {:>7.1} ms | predict: median {:.3} ms, p90 {:.3} ms over {} | index {:.1} MB, {} dims",
            tokenizer.name(),
            tests.len(),
            median(&mut train_times).as_secs_f64() * 1e3,
            median(&mut predict_times).as_secs_f64() * 1e3,
            percentile(&mut predict_times, 0.9).as_secs_f64() * 1e3,
            predict_times.len(),
            size as f64 / 1e6,
            index.params().projection.dims,
        );
    }
}

fn median(times: &mut [Duration]) -> Duration {
    percentile(times, 0.5)
}

fn percentile(times: &mut [Duration], share: f64) -> Duration {
    times.sort();
    times[((times.len() - 1) as f64 * share).round() as usize]
}
