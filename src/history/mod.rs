//! Learning from a repository's own flaky history: every test of the repository, labelled flaky
//! from one or more sources, becomes the project index that the language server and
//! `flakesense check` consult beside the shipped models.
//!
//! The stages, in the order `flakesense train --repo` runs them:
//!
//! 1. [`find_test_files`] and [`read_repository`]: the Java, Python and Rust files of the
//!    repository (`.gitignore` and `flakesense.toml` excludes honoured), their tests, and the
//!    flakiness markers in each test ([`annotations`]), which never reach the tokens.
//! 2. One [`SourceReport`] per source: a [`flaky_list`], the [`annotations`], [`junit`] reports.
//!    Names are matched to the tests by [`names`]; names matching nothing or several tests are
//!    reported, never guessed.
//! 3. [`combine`]: a test is flaky when any source says so, with the union of the categories
//!    the sources give or hint at ([`category_hints`]). Every other test is a negative.
//! 4. [`build_index`]: a new index, or the previous one updated, keeping labels set by hand.

/// The largest flaky list or test report read: far past any real one, short of exhausting memory.
pub const MAX_HISTORY_FILE_BYTES: u64 = 256 << 20;

pub mod annotations;
pub mod category_hints;
pub mod flaky_list;
pub mod junit;
pub mod names;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use rayon::prelude::*;
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use crate::category::Category;
use crate::config::Config;
use crate::embed::{TokenBag, TokenInterner};
use crate::extract::{TestMethod, extract_tests_with};
use crate::index::{self, BuildSettings, Dims, Entry, EntryRef, Index, NewEntry, Origin};
use crate::language::Language;
use crate::workspace::SurroundingsReader;
use annotations::Marks;
use names::{Catalogue, Lookup, Spelling};

/// One test of the repository.
#[derive(Debug, Clone)]
pub struct RepositoryTest {
    pub test: TestMethod,
    /// The file, relative to the repository root, `/`-separated.
    pub path: String,
    /// The flakiness markers found on the test.
    pub marks: Marks,
}

impl RepositoryTest {
    /// The code that is tokenised: see [`tokenised_code`].
    pub fn tokenised_code(&self) -> String {
        annotations::strip(&self.test.code, &self.marks.strip)
    }
}

/// The code of a test as an index tokenises it: without its flakiness markers, which would
/// otherwise leak the label into the tokens. Every writer of an index tokenises this way, so a
/// test marked in the editor has the bag `train --repo` gives it.
pub fn tokenised_code(test: &TestMethod) -> String {
    // The markers stripped lie in the test's own code; the file around it only adds comments
    // above the test to what marks it, never to what is stripped.
    annotations::strip(&test.code, &annotations::inspect("", test).strip)
}

/// The tests of a repository.
#[derive(Debug, Clone, Default)]
pub struct Repository {
    pub root: PathBuf,
    /// The repository directory's name, the `project` of its index entries.
    pub name: String,
    pub tests: Vec<RepositoryTest>,
    /// Source files read, and how many of them hold tests.
    pub files: usize,
    pub files_with_tests: usize,
    /// Files or directories that could not be read, with why.
    pub problems: Vec<String>,
    /// Files with syntax errors; the tests of their intact parts are kept.
    pub files_with_syntax_errors: Vec<String>,
    /// Ids defined more than once; the last definition is kept, as pytest and the compilers do.
    pub duplicate_ids: Vec<String>,
}

impl Repository {
    /// The repository's tests by every name they can be called, in the order of `tests`.
    pub fn catalogue(&self) -> Catalogue {
        Catalogue::new(
            self.tests
                .iter()
                .map(|test| (test.test.language, test.test.id.as_str())),
        )
    }
}

/// The Java, Python and Rust files under `root`, sorted, with `.gitignore`, `.ignore`, git's
/// exclude files and the `exclude` patterns of `root/flakesense.toml` honoured, and Python files
/// pytest would not collect (`python_files`) left out; and the problems met on the way.
pub fn find_test_files(root: &Path) -> Result<(Vec<PathBuf>, Vec<String>)> {
    let config = Config::load(root)?;
    let exclude = config.exclude_matcher()?;
    let (files, problems) = crate::files::walk_sources(&[root.to_path_buf()], root, &exclude);
    let discoveries = SurroundingsReader::new(root);
    let files = files
        .into_iter()
        .filter(|path| {
            Language::from_path(path)
                .is_none_or(|language| discoveries.discovery(path).collects_file(language, path))
        })
        .collect();
    let problems = problems
        .into_iter()
        .map(|problem| match problem.path {
            Some(path) => format!("{}: {}", path.display(), problem.message),
            None => problem.message,
        })
        .collect();
    Ok((files, problems))
}

/// Reads the files and finds their tests and markers, calling `on_file` after each file (from
/// several threads). Unreadable files are listed in `problems`, not fatal.
pub fn read_repository(
    root: &Path,
    files: &[PathBuf],
    on_file: &(dyn Fn() + Sync),
) -> Result<Repository> {
    // The files are under `root` as given (`.` included), so paths are made relative to it; the
    // canonical path only names the project.
    let canonical = root
        .canonicalize()
        .with_context(|| format!("cannot open repository {}", root.display()))?;
    let name = canonical.file_name().map_or_else(
        || "repository".to_string(),
        |name| name.to_string_lossy().into_owned(),
    );
    let discoveries = SurroundingsReader::new(root);
    let read: Vec<FileTests> = files
        .par_iter()
        .map(|path| {
            let read = read_file(root, path, &discoveries);
            on_file();
            read
        })
        .collect();
    let mut repository = Repository {
        root: canonical,
        name,
        files: files.len(),
        ..Repository::default()
    };
    let mut position_of: HashMap<String, usize> = HashMap::default();
    for file in read {
        match file {
            FileTests::Problem(problem) => repository.problems.push(problem),
            FileTests::Read {
                path,
                tests,
                has_syntax_errors,
            } => {
                if has_syntax_errors {
                    repository.files_with_syntax_errors.push(path);
                }
                if !tests.is_empty() {
                    repository.files_with_tests += 1;
                }
                for test in tests {
                    match position_of.get(&test.test.id) {
                        Some(&position) => {
                            repository.duplicate_ids.push(test.test.id.clone());
                            repository.tests[position] = test;
                        }
                        None => {
                            position_of.insert(test.test.id.clone(), repository.tests.len());
                            repository.tests.push(test);
                        }
                    }
                }
            }
        }
    }
    Ok(repository)
}

enum FileTests {
    Read {
        path: String,
        tests: Vec<RepositoryTest>,
        has_syntax_errors: bool,
    },
    Problem(String),
}

fn read_file(root: &Path, path: &Path, discoveries: &SurroundingsReader) -> FileTests {
    let relative = path
        .strip_prefix(root)
        .unwrap_or(path)
        .to_string_lossy()
        .replace('\\', "/");
    let file = match crate::files::read_source(path) {
        Ok(file) => file,
        Err(reason) => return FileTests::Problem(format!("{relative}: {reason}")),
    };
    // One rule for every command: a file that is not UTF-8 is skipped with a report, as
    // `check` and `predict` do, rather than learnt from with its bytes replaced.
    if file.lossy {
        return FileTests::Problem(format!("{relative}: not valid UTF-8"));
    }
    let discovery = discoveries.discovery(path);
    let extraction = extract_tests_with(file.language, &relative, &file.text, &discovery);
    let tests = extraction
        .tests
        .into_iter()
        .map(|test| {
            let marks = annotations::inspect(&file.text, &test);
            RepositoryTest {
                test,
                path: relative.clone(),
                marks,
            }
        })
        .collect();
    FileTests::Read {
        path: relative,
        tests,
        has_syntax_errors: extraction.has_syntax_errors,
    }
}

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

fn count_categories<'a>(
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

/// What the sources say of one flaky test, combined.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FlakyReport {
    pub categories: BTreeSet<Category>,
    pub sources: BTreeSet<Source>,
}

/// A test is flaky when any source says so; its categories are the union of theirs. A test both
/// annotated and listed is one flaky test.
pub fn combine(reports: &[SourceReport]) -> BTreeMap<usize, FlakyReport> {
    let mut labels: BTreeMap<usize, FlakyReport> = BTreeMap::new();
    for report in reports {
        for (&test, categories) in &report.flaky {
            let label = labels.entry(test).or_default();
            label.categories.extend(categories);
            label.sources.insert(report.source);
        }
    }
    labels
}

/// How the index is written.
#[derive(Debug, Clone)]
pub struct IndexPlan<'a> {
    /// The settings of a new index. An update keeps the tokenizer, dimension and seed of the
    /// previous index, so that its entries stay comparable, and takes only the description.
    pub settings: BuildSettings,
    /// The index already at the output path, if it could be read.
    pub previous: Option<&'a Index>,
    /// Merge into `previous` instead of rebuilding: its entries for tests no longer in the
    /// repository stay, and a test it knew as flaky stays flaky.
    pub update: bool,
    /// Keep the labels users set by hand in the editor (`Origin::Manual`), in both modes.
    pub keep_manual: bool,
}

/// What went into the written index.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IndexSummary {
    pub entries: usize,
    pub flaky: usize,
    /// Entries known not to be flaky (marked so by hand); the others are unlabelled.
    pub stable: usize,
    pub categories: BTreeMap<Category, usize>,
    /// Tests of the repository in the index.
    pub repository_tests: usize,
    /// Labels set by hand that were kept, and those replaced by the sources' labels.
    pub manual_kept: usize,
    pub manual_overridden: usize,
    /// Entries of the previous index kept although their test is not in the repository.
    pub carried_over: usize,
    /// Tests of the repository that an update keeps flaky because the previous index said so.
    pub flaky_from_previous: usize,
    /// Entries of the previous index that could not be carried over: hand labels of deleted
    /// tests whose tokens the new tokenizer cannot reproduce.
    pub dropped: usize,
}

/// Builds the index from the repository's tests and their labels, keeping what the plan says to
/// keep from the previous index.
///
/// The index is assembled anew with [`Index::build`] even for an update: replacing entries one
/// by one re-packs every vector per replacement, which is quadratic in the repository's size.
pub fn build_index(
    repository: &Repository,
    labels: &BTreeMap<usize, FlakyReport>,
    plan: &IndexPlan,
) -> (Index, IndexSummary) {
    let previous = plan.previous;
    let settings = match previous {
        Some(previous) if plan.update => BuildSettings {
            tokenizer: previous.params().tokenizer,
            dims: Dims::Fixed(previous.params().projection.dims),
            seed: previous.params().projection.seed,
            description: plan.settings.description.clone(),
        },
        _ => plan.settings.clone(),
    };
    let tokenizer = settings.tokenizer;
    let mut summary = IndexSummary::default();
    let mut interner = TokenInterner::default();
    let mut tests: Vec<(Entry, TokenBag)> = Vec::new();
    let repository_ids: HashSet<&str> = repository
        .tests
        .iter()
        .map(|test| test.test.id.as_str())
        .collect();
    let mut previous_entries: HashMap<&str, EntryRef<'_>> = HashMap::default();

    if let Some(previous) = previous {
        for entry in previous.entries() {
            if repository_ids.contains(entry.id()) {
                previous_entries.insert(entry.id(), entry);
                continue;
            }
            let manual = entry.origin() == Origin::Manual;
            if !(plan.update || (manual && plan.keep_manual)) {
                summary.manual_overridden += usize::from(manual);
                continue;
            }
            let bag = if previous.params().tokenizer == tokenizer {
                previous.entry_bag(entry.position())
            } else {
                entry.code().map(|code| {
                    TokenBag::from_code_interned(tokenizer, entry.language(), code, &mut interner)
                })
            };
            let Some(bag) = bag else {
                summary.dropped += 1;
                continue;
            };
            summary.manual_kept += usize::from(manual);
            summary.carried_over += 1;
            tests.push((entry.to_entry(), bag));
        }
    }

    for (position, test) in repository.tests.iter().enumerate() {
        let label = labels.get(&position);
        let known = previous_entries.get(test.test.id.as_str()).copied();
        let mut verdict = if label.is_some() {
            index::Label::Flaky
        } else {
            index::Label::Unlabelled
        };
        let mut categories: BTreeSet<Category> = label
            .map(|label| label.categories.clone())
            .unwrap_or_default();
        let mut origin = Origin::History;
        let mut source = match label {
            Some(label) => label
                .sources
                .iter()
                .map(|source| source.name())
                .collect::<Vec<_>>()
                .join("+"),
            None => "repository".to_string(),
        };
        match known {
            Some(entry) if entry.origin() == Origin::Manual => {
                if plan.keep_manual {
                    summary.manual_kept += 1;
                    verdict = entry.label();
                    categories = entry.categories().into_iter().collect();
                    origin = Origin::Manual;
                    source = entry.source().to_string();
                } else {
                    summary.manual_overridden += 1;
                }
            }
            Some(entry) if plan.update && entry.is_flaky() => {
                if verdict != index::Label::Flaky {
                    summary.flaky_from_previous += 1;
                    source = entry.source().to_string();
                }
                verdict = index::Label::Flaky;
                categories.extend(entry.categories());
            }
            _ => {}
        }
        let categories: Vec<Category> = categories.into_iter().collect();
        let entry = Entry::new(NewEntry {
            id: &test.test.id,
            project: &repository.name,
            source: &source,
            language: test.test.language,
            label: verdict,
            categories: &categories,
            origin,
            path: Some(&test.path),
            code: Some(&test.test.code),
        });
        let bag = TokenBag::from_code_interned(
            tokenizer,
            test.test.language,
            &test.tokenised_code(),
            &mut interner,
        );
        tests.push((entry, bag));
        summary.repository_tests += 1;
    }

    let index = Index::build(&settings, tests);
    summary.entries = index.len();
    summary.flaky = index.entries().filter(|entry| entry.is_flaky()).count();
    summary.stable = index
        .entries()
        .filter(|entry| entry.label() == index::Label::Stable)
        .count();
    let categories: Vec<Category> = index
        .entries()
        .filter(|entry| entry.is_flaky())
        .flat_map(|entry| entry.categories())
        .collect();
    summary.categories = count_categories(categories.iter());
    (index, summary)
}
