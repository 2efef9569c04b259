//! Stage 2 of learning from history: what each source (a flaky list, the annotations in the code,
//! JUnit reports) says of the repository's tests, with the names that matched nothing or several
//! tests, reported and never guessed.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::Result;
use rustc_hash::FxHashSet as HashSet;

use super::Repository;
use super::names::spelling::Spelling;
use super::names::{Catalogue, Lookup};
use super::{flaky_list, junit};
use crate::category::Category;

/// Where a label came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Source {
    FlakyList,
    Annotations,
    JunitXml,
}

impl Source {
    /// The name stored in an index entry's `source`.
    pub fn name(self) -> &'static str {
        match self {
            Source::FlakyList => "flaky-list",
            Source::Annotations => "annotations",
            Source::JunitXml => "junit-xml",
        }
    }
}

/// A name from a source that matches no test of the repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unmatched {
    pub name: String,
    /// Where the name comes from (`line 7`) or what the source says about it.
    pub context: String,
    /// The ids of the most similar tests, closest first.
    pub closest: Vec<String>,
}

/// A name from a source that matches several tests equally well; none of them is labelled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ambiguous {
    pub name: String,
    pub context: String,
    pub candidates: Vec<String>,
}

/// What one source says about the repository's tests.
#[derive(Debug, Clone)]
pub struct SourceReport {
    pub source: Source,
    /// What was read, for messages: `flaky list known-flaky.txt`.
    pub title: String,
    /// How many tests of the repository the source speaks about.
    pub tests: usize,
    /// The tests it labels flaky (positions in [`Repository::tests`]) with their categories.
    pub flaky: BTreeMap<usize, BTreeSet<Category>>,
    pub unmatched: Vec<Unmatched>,
    pub ambiguous: Vec<Ambiguous>,
    /// Anything else worth telling: unknown categories, files that are not reports.
    pub notes: Vec<String>,
}

impl SourceReport {
    fn new(source: Source, title: String) -> SourceReport {
        SourceReport {
            source,
            title,
            tests: 0,
            flaky: BTreeMap::new(),
            unmatched: Vec::new(),
            ambiguous: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// How many of the flaky tests have each category.
    pub fn categories(&self) -> BTreeMap<Category, usize> {
        count_categories(self.flaky.values().flatten())
    }

    fn label(&mut self, test: usize, categories: impl IntoIterator<Item = Category>) {
        self.flaky.entry(test).or_default().extend(categories);
    }
}

pub(super) fn count_categories<'a>(
    categories: impl Iterator<Item = &'a Category>,
) -> BTreeMap<Category, usize> {
    let mut counts = BTreeMap::new();
    for category in categories {
        *counts.entry(*category).or_insert(0) += 1;
    }
    counts
}

/// How many similar names an unmatched one lists.
const CLOSEST: usize = 3;

/// The result of looking a name up, recorded in the report; the test when exactly one matched.
fn resolve(
    report: &mut SourceReport,
    repository: &Repository,
    catalogue: &Catalogue,
    name: &str,
    spelling: Option<&Spelling>,
    context: String,
) -> Option<usize> {
    let lookup = spelling.map_or(Lookup::Missing, |spelling| catalogue.lookup(spelling));
    match lookup {
        Lookup::Found(test) => Some(test),
        Lookup::Ambiguous(tests) => {
            report.ambiguous.push(Ambiguous {
                name: name.to_string(),
                context,
                candidates: tests
                    .into_iter()
                    .map(|test| repository.tests[test].test.id.clone())
                    .collect(),
            });
            None
        }
        Lookup::Missing => {
            let closest = spelling.map_or_else(Vec::new, |spelling| {
                catalogue
                    .closest(spelling, CLOSEST)
                    .into_iter()
                    .map(|test| catalogue.id(test).to_string())
                    .collect()
            });
            report.unmatched.push(Unmatched {
                name: name.to_string(),
                context,
                closest,
            });
            None
        }
    }
}

/// Labels the tests a flaky list names.
pub fn label_from_flaky_list(
    repository: &Repository,
    catalogue: &Catalogue,
    path: &Path,
) -> Result<SourceReport> {
    let lines = flaky_list::read(path)?;
    let mut report = SourceReport::new(Source::FlakyList, format!("flaky list {}", path.display()));
    let mut named: HashSet<usize> = HashSet::default();
    for line in lines {
        if !line.unknown_categories.is_empty() {
            report.notes.push(format!(
                "line {}: unknown categor{} {} (known: {})",
                line.number,
                if line.unknown_categories.len() == 1 {
                    "y"
                } else {
                    "ies"
                },
                line.unknown_categories
                    .iter()
                    .map(|name| format!("`{name}`"))
                    .collect::<Vec<_>>()
                    .join(", "),
                Category::ALL.map(Category::name).join(", ")
            ));
        }
        let spelling = Spelling::parse(&line.name);
        let context = format!("line {}", line.number);
        if let Some(test) = resolve(
            &mut report,
            repository,
            catalogue,
            &line.name,
            spelling.as_ref(),
            context,
        ) {
            named.insert(test);
            report.label(test, line.categories);
        }
    }
    report.tests = named.len();
    Ok(report)
}

/// Labels the tests that carry a flakiness marker.
pub fn label_from_annotations(repository: &Repository) -> SourceReport {
    let mut report = SourceReport::new(Source::Annotations, "annotations".to_string());
    report.tests = repository.tests.len();
    for (position, test) in repository.tests.iter().enumerate() {
        if test.marks.is_flaky() {
            report.label(position, test.marks.categories.iter().copied());
        }
    }
    report
}

/// How many tests carry flakiness markers: said when `--from-annotations` was not given.
pub fn marked_tests(repository: &Repository) -> usize {
    repository
        .tests
        .iter()
        .filter(|test| test.marks.is_flaky())
        .count()
}

/// Labels the tests that JUnit XML reports of several runs show flaky; each path is one run
/// (a report file or a directory of them).
pub fn label_from_junit(
    repository: &Repository,
    catalogue: &Catalogue,
    runs: &[PathBuf],
) -> Result<SourceReport> {
    let runs: Vec<junit::Run> = runs
        .iter()
        .map(|path| junit::read_run(path))
        .collect::<Result<_>>()?;
    let files: usize = runs.iter().map(|run| run.files).sum();
    let results: usize = runs.iter().map(|run| run.results.len()).sum();
    let mut report = SourceReport::new(
        Source::JunitXml,
        format!(
            "JUnit XML ({} run{}, {files} report file{}, {results} results)",
            runs.len(),
            plural(runs.len()),
            plural(files)
        ),
    );
    for run in &runs {
        for (file, root) in &run.other_files {
            report.notes.push(format!(
                "skipped {}: not a JUnit report (root element <{root}>)",
                file.display()
            ));
        }
    }
    if runs.len() == 1 {
        report.notes.push(
            "with one run, only tests retried within it can show as flaky; give the reports of several runs of the same commit"
                .to_string(),
        );
    }
    let histories = junit::histories(&runs);
    let mut matched: HashSet<usize> = HashSet::default();
    let mut not_in_repository = 0;
    let mut ambiguous_passing = 0;
    for history in &histories {
        let name = display_junit_name(&history.classname, &history.name);
        let spelling = Spelling::junit(&history.classname, &history.name);
        if !history.is_flaky() {
            // Only flaky tests need their misses explained; the others are counted.
            match spelling.as_ref().map(|spelling| catalogue.lookup(spelling)) {
                Some(Lookup::Found(test)) => {
                    matched.insert(test);
                }
                Some(Lookup::Ambiguous(_)) => ambiguous_passing += 1,
                Some(Lookup::Missing) | None => not_in_repository += 1,
            }
            continue;
        }
        let context = describe_history(history);
        if let Some(test) = resolve(
            &mut report,
            repository,
            catalogue,
            &name,
            spelling.as_ref(),
            context,
        ) {
            matched.insert(test);
            report.label(test, history.categories.iter().copied());
        }
    }
    if not_in_repository > 0 {
        report.notes.push(format!(
            "{not_in_repository} reported test{} that never showed flaky {} not in the repository (deleted or renamed since?)",
            plural(not_in_repository),
            if not_in_repository == 1 { "is" } else { "are" }
        ));
    }
    if ambiguous_passing > 0 {
        report.notes.push(format!(
            "{ambiguous_passing} reported test{} that never showed flaky match{} several tests",
            plural(ambiguous_passing),
            if ambiguous_passing == 1 { "es" } else { "" }
        ));
    }
    report.tests = matched.len();
    Ok(report)
}

fn plural(count: usize) -> &'static str {
    if count == 1 { "" } else { "s" }
}

/// A JUnit test case as its dialect would print it: nextest's `binary::path`, else dotted.
fn display_junit_name(classname: &str, name: &str) -> String {
    match (
        classname.is_empty(),
        classname.contains("::") || name.contains("::"),
    ) {
        (true, _) => name.to_string(),
        (false, true) => format!("{classname}::{name}"),
        (false, false) => format!("{classname}.{name}"),
    }
}

fn describe_history(history: &junit::CaseHistory) -> String {
    let mut parts = Vec::new();
    if history.retried_and_passed_runs > 0 {
        parts.push(format!(
            "retried and passed in {} run{}",
            history.retried_and_passed_runs,
            plural(history.retried_and_passed_runs as usize)
        ));
    }
    if history.passed_runs > 0 && history.failed_runs > 0 {
        parts.push(format!(
            "passed in {} run{}, failed in {}",
            history.passed_runs,
            plural(history.passed_runs as usize),
            history.failed_runs
        ));
    }
    format!("flaky in the reports: {}", parts.join("; "))
}
