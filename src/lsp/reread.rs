//! What a document's next read keeps from its last one. A keystroke changes one function of a
//! file: the catalogue is matched again only there ([`signals::rescan`]), and the tests that
//! neither are nor run that function (every test, when its calls did not change) keep what they
//! run, so a keystroke in a long file costs about what the edited function costs.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

use crate::analysis::{self, ParsedFile, SourceTree};
use crate::context::{self, ContextUnit};
use crate::extract::TestMethod;
use crate::language::Language;
use crate::signals::{self, FileScan, Signals, Splice};

/// What the last read of a document found.
#[derive(Debug)]
pub struct LastRead {
    text: String,
    tree: tree_sitter::Tree,
    scan: FileScan,
    tests: Vec<TestMethod>,
    /// What each test runs besides its own code.
    units: Vec<Vec<ContextUnit>>,
    conftests: Vec<Arc<ParsedFile>>,
    /// The other files its tests reach: the modules they inherit methods from and the files that
    /// define what they use, read and scanned once while they do not change.
    modules: Vec<Arc<ParsedFile>>,
}

impl LastRead {
    /// Whether the tests of the document reached the file at `relative` (workspace-relative):
    /// then a change to it may change their judgement.
    pub fn reaches(&self, relative: &str) -> bool {
        self.modules
            .iter()
            .chain(&self.conftests)
            .any(|file| file.path == relative)
    }
}

/// The catalogue's matches in `text`, and the function an edit since `last` was confined to.
pub fn scan(
    last: Option<&LastRead>,
    language: Language,
    text: &str,
    tree: &tree_sitter::Tree,
) -> (FileScan, Option<Splice>) {
    match last {
        Some(last) => signals::rescan(language, &last.scan, &last.text, text, tree),
        None => (signals::scan(language, text, tree), None),
    }
}

/// The signals of each of the file's `tests` and what this read keeps for the next. What a test
/// runs is the last read's where the splice cannot have changed it, else resolved; every test's
/// signals are read on the new scan. `elsewhere` are the other files the file reaches
/// ([`crate::workspace::OtherFiles`]).
pub fn signals(
    last: Option<&LastRead>,
    splice: Option<&Splice>,
    file: SourceTree<'_>,
    conftests: &[Arc<ParsedFile>],
    elsewhere: &[Arc<ParsedFile>],
    tests: &[TestMethod],
) -> (Vec<Signals>, LastRead) {
    let known = last.map_or(&[][..], |last| &last.modules);
    let modules = analysis::other_files(tests, known, elsewhere);
    let kept = match (last, splice) {
        (Some(last), Some(splice))
            if splice.in_body
                && same(&last.conftests, conftests)
                && same(&last.modules, &modules) =>
        {
            kept_units(last, splice, tests, same_calls(last, splice, &file))
        }
        _ => vec![None; tests.len()],
    };
    let mut resolver = None;
    let mut units = Vec::with_capacity(tests.len());
    let mut signals = Vec::with_capacity(tests.len());
    for (test, kept) in tests.iter().zip(kept) {
        // Kept units are read anew on the new scan, which has the hits' new lines.
        let own_units = kept.unwrap_or_else(|| {
            resolver
                .get_or_insert_with(|| analysis::resolver(&file, conftests, &modules, tests))
                .context(test)
        });
        signals.push(analysis::signals_in_context(
            &file, conftests, &modules, test, &own_units,
        ));
        units.push(own_units);
    }
    drop(resolver);
    let next = LastRead {
        text: file.text.to_string(),
        tree: file.tree.clone(),
        scan: file.scan,
        tests: tests.to_vec(),
        units,
        conftests: conftests.to_vec(),
        modules,
    };
    (signals, next)
}

/// Whether the edited function calls what it called before: then what every test runs is as
/// it was, only moved (see [`crate::context::calls_of`]).
fn same_calls(last: &LastRead, splice: &Splice, file: &SourceTree<'_>) -> bool {
    let language = file.language;
    let before = signals::layout::chunk_at(language, last.tree.root_node(), &splice.before);
    let after = signals::layout::chunk_at(language, file.tree.root_node(), &splice.after);
    match (before, after) {
        (Some(before), Some(after)) => {
            context::calls_of(language, before, &last.text)
                == context::calls_of(language, after, file.text)
        }
        _ => false,
    }
}

/// For each test, the units of its twin in the last read moved by the splice: when neither the
/// test nor what it runs overlaps the edited function, or, when that function calls what it
/// called before (`same_calls`), whatever they overlap.
fn kept_units(
    last: &LastRead,
    splice: &Splice,
    tests: &[TestMethod],
    same_calls: bool,
) -> Vec<Option<Vec<ContextUnit>>> {
    let moved = |range: &Range<usize>| match same_calls {
        true => splice.around(range),
        false => splice.moved(range),
    };
    let by_id: HashMap<&str, usize> = last
        .tests
        .iter()
        .enumerate()
        .map(|(at, test)| (test.id.as_str(), at))
        .collect();
    tests
        .iter()
        .map(|test| {
            let &at = by_id.get(test.id.as_str())?;
            if moved(&last.tests[at].range).as_ref() != Some(&test.range) {
                return None;
            }
            last.units[at]
                .iter()
                .map(|unit| {
                    let range = match unit.file {
                        Some(_) => unit.range.clone(),
                        None => moved(&unit.range)?,
                    };
                    Some(ContextUnit {
                        range,
                        ..unit.clone()
                    })
                })
                .collect()
        })
        .collect()
}

/// Whether two lists hold the same extra files (the same reads of them).
fn same(a: &[Arc<ParsedFile>], b: &[Arc<ParsedFile>]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(a, b)| Arc::ptr_eq(a, b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract::{extract_tests_from_tree, parse};
    use crate::random_edits::RandomEdits;

    /// Reads `source` after seeded random edits (see [`RandomEdits`]) as the server does,
    /// keeping the last read, and checks every test's signals against a read of the whole file.
    fn kept_reads_find_what_whole_reads_find(language: Language, source: &str, pieces: &[&str]) {
        let mut last: Option<LastRead> = None;
        let mut kept = 0;
        let mut unresolved = 0;
        let steps = 120;
        for (step, text) in RandomEdits::new(source, pieces, 2).take(steps).enumerate() {
            let tree = parse(language, &text, None).expect("the grammars load");
            let tests = extract_tests_from_tree(language, "T", &text, &tree).tests;
            let whole = analysis::signals_of(
                &SourceTree::new(language, "T", &text, &tree),
                &[],
                &[],
                &tests,
            );
            let (scan, splice) = scan(last.as_ref(), language, &text, &tree);
            kept += usize::from(splice.as_ref().is_some_and(|splice| splice.in_body));
            let file = SourceTree {
                language,
                path: "T",
                text: &text,
                tree: &tree,
                scan,
            };
            unresolved += usize::from(
                last.as_ref()
                    .zip(splice.as_ref())
                    .is_some_and(|(last, splice)| {
                        splice.in_body && same_calls(last, splice, &file)
                    }),
            );
            let (signals, next_read) =
                signals(last.as_ref(), splice.as_ref(), file, &[], &[], &tests);
            assert_eq!(
                signals, whole,
                "{language}, step {step}: {splice:?}\n{text}"
            );
            last = Some(next_read);
        }
        assert!(
            kept >= steps / 8,
            "{language}: only {kept} of {steps} reads kept the last one"
        );
        assert!(
            unresolved >= 1,
            "{language}: only {unresolved} of {steps} reads kept what every test runs"
        );
    }

    #[test]
    fn a_read_that_keeps_the_last_finds_what_a_whole_read_finds() {
        kept_reads_find_what_whole_reads_find(
            Language::Java,
            include_str!("../../tests/fixtures/context/java/AccountServiceTest.java"),
            &[
                "Thread.sleep(100);",
                "level1();",
                "ping(2);",
                "fetchRates();",
                "new Socket(\"example.com\", 80);",
                "x",
                "\n",
                "}",
                "@Test ",
            ],
        );
        kept_reads_find_what_whole_reads_find(
            Language::Python,
            include_str!("../../tests/fixtures/context/python/api/test_orders.py"),
            &[
                "time.sleep(0.5)",
                "\n    remote_cases()",
                "\n    fetch('http://x.example.com')",
                "requests.get('http://example.com')",
                "x",
                "\n",
                ":",
                "test_",
            ],
        );
        kept_reads_find_what_whole_reads_find(
            Language::Rust,
            include_str!("../../tests/fixtures/context/rust/server_tests.rs"),
            &[
                "std::thread::sleep(Duration::from_millis(100));",
                "start_server();",
                "x",
                "\n",
                "}",
                "#[test]",
            ],
        );
    }
}
