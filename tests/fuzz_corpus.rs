//! Replays the fuzzer's corpus (`tests/fuzz-corpus/TARGET/`) and the seeds the targets make:
//! every seed and every input that
//! once crashed, hung or ran slowly must now run to its end without a panic. Files named
//! `open-*` are findings in code owned elsewhere (extraction, signals), kept for their owners and
//! listed here rather than run. `cargo bench --bench fuzz` adds to the corpus.

#[path = "../benches/fuzz/targets.rs"]
#[allow(dead_code)] // the seeds and dictionaries serve the fuzzer, not the replay
mod targets;

use std::path::Path;

#[test]
fn every_input_of_the_corpus_runs_to_its_end() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz-corpus");
    let mut replayed = 0;
    for target in targets::TARGETS {
        for seed in (target.made_seeds)() {
            let outcome = std::panic::catch_unwind(|| (target.run)(&seed));
            assert!(outcome.is_ok(), "{}: a seed it makes panics", target.name);
        }
        let Ok(entries) = std::fs::read_dir(root.join(target.name)) else {
            continue;
        };
        let mut paths: Vec<_> = entries
            .map(|entry| entry.expect("readable").path())
            .collect();
        paths.sort();
        for path in paths {
            let name = path
                .file_name()
                .and_then(|name| name.to_str())
                .unwrap_or("");
            if name.starts_with("open-") {
                eprintln!(
                    "{}: {name} is open (owned elsewhere), not replayed",
                    target.name
                );
                continue;
            }
            let bytes = std::fs::read(&path).expect("readable");
            let outcome = std::panic::catch_unwind(|| (target.run)(&bytes));
            assert!(outcome.is_ok(), "{}: {name} panics", target.name);
            replayed += 1;
        }
    }
    assert!(replayed >= 3, "the corpus holds the committed seeds");
}
