//! Deliberately bad input that passes the first checks: index files crafted with a valid
//! checksum, a FIFO where settings belong, a name that matches thousands of tests, files that
//! are not UTF-8. Each gets a clear error or a skip, never a panic, an abort or a hang. (The
//! command-line cases of the same kind are data files in `tests/cli/`.)

mod common;

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use serde::Serialize;

use flakesense::category::Category;
use flakesense::index::{FormatError, Index, ModelParams, Origin};
use flakesense::language::Language;

const SEED_MODEL: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fuzz-corpus/index/seed-model-with-prior.idx"
);

/// The payload of an index file of format 2, one bincode value: still read, so still checked.
#[derive(Serialize)]
struct Stored {
    params: ModelParams,
    vocabulary: Vec<String>,
    entries: Vec<EntryV2>,
    bags: Vec<Vec<(u32, u32)>>,
}

/// An entry as format 2 stored it.
#[derive(Clone, Serialize)]
struct EntryV2 {
    id: String,
    project: String,
    source: String,
    language: Language,
    flaky: bool,
    categories: Vec<Category>,
    origin: Origin,
    path: Option<String>,
    code: Option<String>,
}

/// A file of format 2 holding `stored`, with a valid length and checksum.
fn crafted(stored: &Stored) -> Vec<u8> {
    let payload = bincode::serde::encode_to_vec(stored, bincode::config::standard()).unwrap();
    let mut bytes = b"FLKSNSIX".to_vec();
    bytes.extend(2u32.to_le_bytes());
    bytes.extend(0u32.to_le_bytes());
    bytes.extend((payload.len() as u64).to_le_bytes());
    bytes.extend(crc32fast::hash(&payload).to_le_bytes());
    bytes.extend(payload);
    bytes
}

fn seed() -> Index {
    Index::load(Path::new(SEED_MODEL)).expect("the seed model loads")
}

/// A payload like the seed model's, with `tokens` tokens and `entries` copies of its first test,
/// none with a token, and a projection of `dims` dimensions, each token on all of them.
fn stored(dims: u32, tokens: usize, entries: usize) -> Stored {
    let index = seed();
    let mut params = index.params().clone();
    params.projection.dims = dims;
    params.projection.nonzeros_per_token = dims;
    let first = index.entry(0);
    let entry = EntryV2 {
        id: first.id().to_string(),
        project: first.project().to_string(),
        source: first.source().to_string(),
        language: first.language(),
        flaky: first.is_flaky(),
        categories: first.categories(),
        origin: first.origin(),
        path: first.path().map(str::to_string),
        code: first.code().map(str::to_string),
    };
    Stored {
        params,
        vocabulary: (0..tokens).map(|token| format!("t{token}")).collect(),
        entries: (0..entries)
            .map(|number| EntryV2 {
                id: format!("t#{number}"),
                ..entry.clone()
            })
            .collect(),
        bags: vec![Vec::new(); entries],
    }
}

#[test]
fn a_small_file_with_a_large_dense_projection_loads_without_quadratic_work() {
    // 65,536 dimensions, every one taken by each token: 20 such tokens took 90 s once.
    let bytes = crafted(&stored(65_536, 5, 1));
    assert!(bytes.len() < 10_000, "{} bytes", bytes.len());
    let index = Index::from_bytes(&bytes).expect("it fits its memory budget");
    assert_eq!(index.vocabulary_len(), 5);
}

#[test]
fn sizes_out_of_proportion_to_the_file_are_refused() {
    // 8,000 tokens on 65,536 dimensions asked for 4 GB; 20,000 empty tests for 1.5 GB.
    for stored in [stored(65_536, 8_000, 1), stored(65_536, 0, 20_000)] {
        let error = Index::from_bytes(&crafted(&stored)).unwrap_err();
        assert!(matches!(error, FormatError::Implausible(_)), "{error}");
        assert!(error.to_string().contains("would take"), "{error}");
    }
}

#[test]
fn nan_and_infinite_numbers_in_a_prior_are_refused_by_name() {
    let index = seed();
    assert!(!index.params().priors.is_empty(), "the seed has a prior");
    type Spoil = fn(&mut flakesense::prior::SignalPrior);
    let spoilers: [(Spoil, &str); 4] = [
        (|prior| prior.bias = f64::NAN, "bias"),
        (|prior| prior.weights[0].1 = f64::NAN, "weights"),
        (
            |prior| prior.information_probability = f64::INFINITY,
            "information probability",
        ),
        (
            |prior| prior.warning_probability = 1.5,
            "warning probability",
        ),
    ];
    for (spoil, what) in spoilers {
        let mut params = index.params().clone();
        spoil(&mut params.priors[0]);
        let name = if what == "weights" {
            params.priors[0].weights[0].0.clone()
        } else {
            what.to_string()
        };
        let spoilt = Stored {
            params,
            vocabulary: Vec::new(),
            entries: Vec::new(),
            bags: Vec::new(),
        };
        let error = Index::from_bytes(&crafted(&spoilt)).unwrap_err();
        assert!(
            matches!(error, FormatError::InvalidNumber(_)),
            "{what}: {error}"
        );
        assert!(error.to_string().contains(&format!("`{name}`")), "{error}");
    }
}

#[test]
fn a_fifo_as_settings_or_index_is_an_error_not_a_hang() {
    let directory = tempfile::tempdir().unwrap();
    let root = directory.path();
    std::fs::write(root.join("test_a.py"), "def test_a():\n    assert True\n").unwrap();
    std::fs::create_dir(root.join(".flakesense")).unwrap();
    for fifo in ["flakesense.toml", ".flakesense/index"] {
        let made = std::process::Command::new("mkfifo")
            .arg(root.join(fifo))
            .status();
        if !made.is_ok_and(|status| status.success()) {
            eprintln!("mkfifo is missing: skipping the FIFO case");
            return;
        }
        let mut child = common::command("flakesense", root)
            .args(["check", "."])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // A guard against a hang only: the command answers at once.
        let deadline = std::time::Instant::now() + Duration::from_secs(120);
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            if std::time::Instant::now() > deadline {
                child.kill().unwrap();
                panic!("check hangs on a FIFO at {fifo}");
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        let mut stderr = String::new();
        std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
        assert_eq!(status.code(), Some(2), "{fifo}: {stderr}");
        assert!(stderr.contains("not a regular file"), "{fifo}: {stderr}");
        std::fs::remove_file(root.join(fifo)).unwrap();
    }
}

/// Runs `flakesense` with `arguments` in `root`, failing the test when it has not finished
/// within two minutes (a guard against a hang only: each command answers at once).
fn run_guarded(root: &Path, arguments: &[&str]) -> (Option<i32>, String) {
    let mut child = common::command("flakesense", root)
        .args(arguments)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if std::time::Instant::now() > deadline {
            child.kill().unwrap();
            panic!("flakesense {arguments:?} hangs");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    (status.code(), stderr)
}

#[test]
fn a_fifo_as_gitignore_is_named_not_waited_for() {
    let directory = tempfile::tempdir().unwrap();
    let root = directory.path();
    std::fs::write(root.join("test_a.py"), "def test_a():\n    assert True\n").unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(root.join(".gitignore"))
        .status();
    if !made.is_ok_and(|status| status.success()) {
        eprintln!("mkfifo is missing: skipping the FIFO case");
        return;
    }
    let (status, stderr) = run_guarded(root, &["check", "."]);
    assert_eq!(status, Some(2), "{stderr}");
    assert!(
        stderr.contains(".gitignore: ignore file not read: not a regular file"),
        "{stderr}"
    );
    let (status, stderr) = run_guarded(root, &["predict", "test_a.py"]);
    assert_eq!(status, Some(0), "{stderr}");
    // The guard fails the test if the walk waits for a writer.
    run_guarded(
        root,
        &[
            "train",
            "--repo",
            ".",
            "--from-annotations",
            "--out",
            "index",
        ],
    );
}

#[test]
fn a_name_matching_thousands_of_tests_lists_a_few_and_files_not_utf8_are_skipped() {
    let directory = tempfile::tempdir().unwrap();
    let root = directory.path();
    for file in 0..300 {
        std::fs::write(
            root.join(format!("test_m{file}.py")),
            "def test_same():\n    assert True\n",
        )
        .unwrap();
    }
    std::fs::write(
        root.join("test_latin.py"),
        b"def test_latin():\n    s = '\xe9'\n",
    )
    .unwrap();
    // One name matching all 300 tests, and near misses of names that do not exist.
    let mut list = String::from("test_same\n");
    for miss in 0..200 {
        list.push_str(&format!("tests/test_m{miss}.py::test_sane{miss}\n"));
    }
    std::fs::write(root.join("flaky.txt"), list).unwrap();
    let output = common::command("flakesense", root)
        .args(["train", "--repo", ".", "--flaky-list", "flaky.txt"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    // No test labelled flaky: the command refuses to write an index without one.
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("test_latin.py: not valid UTF-8"),
        "{stderr}"
    );
    let ambiguous = stderr
        .lines()
        .find(|line| line.contains("`test_same`"))
        .unwrap_or_else(|| panic!("the ambiguous name is listed: {stderr}"));
    assert!(ambiguous.contains("and 295 more"), "{ambiguous}");
    assert!(ambiguous.len() < 1_000, "{ambiguous}");
    let suggestion = stderr
        .lines()
        .find(|line| line.contains("test_sane7`"))
        .unwrap_or_else(|| panic!("the near miss is listed: {stderr}"));
    assert!(
        suggestion.contains("closest: test_m7.py::test_same"),
        "{suggestion}"
    );
}
