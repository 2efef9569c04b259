//! Speed of the predictor core on FlakeFlagger: training on all 21,802 tests (tokenising
//! included), and one prediction of a test (extract it from its file, embed, search, vote with
//! the signal prior) against the resulting index. Needs `../shared/data` (or the CSV path in
//! `FLAKESENSE_BENCH_DATA`); prints a note and exits when it is absent.
//!
//! Run with `cargo bench --bench core` (one thread: the core never spawns any).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use flakesense::dataset::{LabeledTest, read_csv_file};
use flakesense::embed::{TokenBag, TokenInterner, Tokenizer};
use flakesense::extract::extract_tests;
use flakesense::index::{BuildSettings, Dims, Entry, Index, Label};
use flakesense::language::Language;
use flakesense::predict::{self, predict};
use flakesense::prevalence::Prevalence;
use flakesense::prior::{Example, SignalPrior};
use flakesense::signals;

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
    let files: Vec<String> = tests
        .iter()
        .step_by(tests.len() / 2000)
        .map(as_file)
        .collect();
    for tokenizer in [Tokenizer::Flast, Tokenizer::Code] {
        let mut train_times = Vec::new();
        let mut index = None;
        for _ in 0..5 {
            let started = Instant::now();
            let built = train(&tests, tokenizer);
            train_times.push(started.elapsed());
            index = Some(built);
        }
        let mut index = index.expect("built five times");
        let size = index.to_bytes().len();
        let started = Instant::now();
        index.set_priors(vec![fit_prior(&tests)]);
        let prior_time = started.elapsed();
        let mut predict_times = Vec::new();
        for file in &files {
            let started = Instant::now();
            let extraction = extract_tests(Language::Java, "Bench.java", file);
            // A handful of FlakeFlagger methods are not tests by any rule (no annotation, not
            // `public void test...`); they have nothing to time.
            let Some(test) = extraction.tests.first() else {
                continue;
            };
            let signals = flakesense::signals::detect(Language::Java, &test.code);
            let prediction = predict(
                &[&index],
                Language::Java,
                &test.code,
                &signals,
                predict::Settings::default(),
                &Prevalence::default(),
            );
            predict_times.push(started.elapsed());
            std::hint::black_box(prediction);
        }
        println!(
            "{:<8} train {} tests: median {:>6.1} ms (+{:.0} ms to fit the signal prior) | predict (extract, read signals, embed, search, vote): median {:.3} ms, p90 {:.3} ms over {} | index {:.1} MB, {} dims",
            tokenizer.name(),
            tests.len(),
            median(&mut train_times).as_secs_f64() * 1e3,
            prior_time.as_secs_f64() * 1e3,
            median(&mut predict_times).as_secs_f64() * 1e3,
            percentile(&mut predict_times, 0.9).as_secs_f64() * 1e3,
            predict_times.len(),
            size as f64 / 1e6,
            index.params().projection.dims,
        );
    }
}

fn train(tests: &[LabeledTest], tokenizer: Tokenizer) -> Index {
    let settings = BuildSettings {
        tokenizer,
        dims: Dims::Eps(0.33),
        seed: 42,
        description: String::new(),
    };
    let mut interner = TokenInterner::default();
    Index::build(
        &settings,
        tests.iter().map(|test| {
            let bag =
                TokenBag::from_code_interned(tokenizer, test.language, &test.code, &mut interner);
            (Entry::from_labeled(test, false, Label::Stable), bag)
        }),
    )
}

fn fit_prior(tests: &[LabeledTest]) -> SignalPrior {
    let examples: Vec<Example<'_>> = tests
        .iter()
        .map(|test| Example::new(test, &signals::detect(test.language, &test.code)))
        .collect();
    SignalPrior::fit(Language::Java, &examples).0
}

/// A test method as the file an editor would hold.
fn as_file(test: &LabeledTest) -> String {
    format!(
        "package bench;\n\npublic class BenchTest {{\n{}\n}}\n",
        test.code
    )
}

fn median(times: &mut [Duration]) -> Duration {
    percentile(times, 0.5)
}

fn percentile(times: &mut [Duration], share: f64) -> Duration {
    times.sort();
    times[((times.len() - 1) as f64 * share).round() as usize]
}
