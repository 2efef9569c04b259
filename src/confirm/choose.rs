//! Which tests to confirm: those a change adds or modifies whose score is above the information
//! threshold (chosen by `flakesense check`'s own selection and judging), those of some paths, or
//! any test named with `--test`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use crate::category::Category;
use crate::check::{self, Changes, CheckArgs};
use crate::config::Config;
use crate::extract::{self, TestMethod};
use crate::history::{self, names};
use crate::line_index::{ColumnUnit, LineIndex};
use crate::workspace;

/// What the user asked for.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    pub paths: Vec<PathBuf>,
    pub staged: bool,
    pub diff_base: Option<String>,
    /// Tests named in any spelling `train --flaky-list` reads.
    pub tests: Vec<String>,
}

/// A test to run, as the working tree holds it.
#[derive(Debug, Clone)]
pub struct ChosenTest {
    pub test: TestMethod,
    /// The file, absolute.
    pub file: PathBuf,
    /// The file as the test's id spells it: relative to the repository, `/`-separated.
    pub path: String,
    /// Where the test's name is, 1-based, the column in characters.
    pub line: u32,
    pub column: u32,
    /// What the models say, when the test was judged.
    pub score: Option<f64>,
    pub predicted: Option<Category>,
    /// The categories of the flakiness signals found in the test and what it runs, strongest
    /// first.
    pub signals: Vec<Category>,
}

impl ChosenTest {
    /// What the code says the cause may be: its signals' categories, then the prediction's.
    pub fn suspected_causes(&self) -> Vec<Category> {
        let mut causes = self.signals.clone();
        causes.extend(self.predicted);
        causes.dedup();
        causes
    }
}

/// The tests chosen and where they were found.
#[derive(Debug, Clone)]
pub struct Chosen {
    pub root: PathBuf,
    pub tests: Vec<ChosenTest>,
    pub changes: Changes,
    /// Tests of a change that the working tree no longer holds, and similar remarks.
    pub notes: Vec<String>,
    /// The judging met files it could not read.
    pub errors: usize,
}

pub fn choose(selection: &Selection, config: &Config, current: &Path) -> Result<Chosen> {
    let named: Vec<PathBuf> = selection
        .paths
        .iter()
        .map(|path| current.join(path))
        .collect();
    let root = workspace::find_root(named.first().map_or(current, PathBuf::as_path));
    if !selection.tests.is_empty() {
        return choose_named(selection, &named, &root);
    }
    let whole_change = named.is_empty() && !selection.staged && selection.diff_base.is_none();
    if whole_change
        && !root
            .ancestors()
            .any(|directory| directory.join(".git").exists())
    {
        bail!(
            "{} is not in a git repository, so it has no change to take suspects from: name PATHS or --test",
            root.display()
        );
    }
    // With nothing named, the change is the working tree's since the last commit.
    let diff_base = if whole_change {
        Some("HEAD".to_string())
    } else {
        selection.diff_base.clone()
    };
    let report = check::judge(&CheckArgs::selection(
        selection.paths.clone(),
        selection.staged,
        diff_base,
        Some(config.thresholds().information),
    ))?;
    let mut notes = Vec::new();
    let mut tests = Vec::new();
    let mut by_file: HashMap<PathBuf, Vec<check::Finding>> = HashMap::new();
    for finding in report.findings {
        by_file
            .entry(current.join(&finding.display_path))
            .or_default()
            .push(finding);
    }
    let mut files: Vec<_> = by_file.into_iter().collect();
    files.sort_by(|a, b| a.0.cmp(&b.0));
    for (file, findings) in files {
        let relative = findings[0].path.clone();
        let found = working_tree_tests(&root, &file, &relative);
        for finding in findings {
            match found.iter().find(|test| test.id == finding.id) {
                Some(test) => tests.push(chosen(
                    test.clone(),
                    &file,
                    &relative,
                    &found_text(&file),
                    Some(&finding),
                )),
                None => notes.push(format!(
                    "{} is not in the working tree as the change has it; not run",
                    finding.id
                )),
            }
        }
    }
    Ok(Chosen {
        root,
        tests,
        changes: report.settings.changes,
        notes,
        errors: report.summary.errors(),
    })
}

/// `--test`: each name must match one test of the workspace (or of the named paths).
fn choose_named(selection: &Selection, named: &[PathBuf], root: &Path) -> Result<Chosen> {
    let (mut files, _) = history::find_test_files(root)?;
    if !named.is_empty() {
        files.retain(|file| named.iter().any(|path| file.starts_with(path)));
    }
    let repository = history::read_repository(root, &files, &|| {})?;
    let catalogue = repository.catalogue();
    let mut positions = Vec::new();
    for name in &selection.tests {
        let spelling = names::spelling::Spelling::parse(name)
            .with_context(|| format!("`{name}` does not name a test"))?;
        match catalogue.lookup(&spelling) {
            names::Lookup::Found(position) => {
                if !positions.contains(&position) {
                    positions.push(position);
                }
            }
            names::Lookup::Ambiguous(candidates) => bail!(
                "`{name}` names several tests; spell one out: {}",
                candidates
                    .iter()
                    .take(5)
                    .map(|&position| catalogue.id(position))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            names::Lookup::Missing => {
                let closest: Vec<&str> = catalogue
                    .closest(&spelling, 3)
                    .into_iter()
                    .map(|position| catalogue.id(position))
                    .collect();
                if closest.is_empty() {
                    bail!("no test `{name}` in {}", root.display());
                }
                bail!(
                    "no test `{name}` in {}; did you mean {}?",
                    root.display(),
                    closest.join(" or ")
                );
            }
        }
    }
    // The scores of the named tests, judged as `check` judges their files.
    let chosen_files: Vec<PathBuf> = {
        let mut files: Vec<PathBuf> = positions
            .iter()
            .map(|&position| repository.root.join(&repository.tests[position].path))
            .collect();
        files.sort();
        files.dedup();
        files
    };
    let report = check::judge(&CheckArgs::selection(
        chosen_files.clone(),
        false,
        None,
        Some(0.0),
    ))?;
    let judged: HashMap<&str, &check::Finding> = report
        .findings
        .iter()
        .map(|finding| (finding.id.as_str(), finding))
        .collect();
    let tests = positions
        .into_iter()
        .map(|position| {
            let test = &repository.tests[position];
            let file = root.join(&test.path);
            let finding = judged.get(test.test.id.as_str());
            chosen(
                test.test.clone(),
                &file,
                &test.path,
                &found_text(&file),
                finding.copied(),
            )
        })
        .collect();
    Ok(Chosen {
        root: root.to_path_buf(),
        tests,
        changes: Changes::All,
        notes: Vec::new(),
        errors: report.summary.errors(),
    })
}

/// The tests of a file as the working tree holds it, with ids built from `relative`.
pub(super) fn working_tree_tests(root: &Path, file: &Path, relative: &str) -> Vec<TestMethod> {
    let Ok(source) = crate::files::read_source(file) else {
        return Vec::new();
    };
    let discovery = workspace::discovery(root, source.language, file);
    extract::extract_tests_with(source.language, relative, &source.text, &discovery).tests
}

pub(super) fn found_text(file: &Path) -> String {
    crate::files::read_source(file)
        .map(|source| source.text)
        .unwrap_or_default()
}

pub(super) fn chosen(
    test: TestMethod,
    file: &Path,
    relative: &str,
    text: &str,
    judged: Option<&check::Finding>,
) -> ChosenTest {
    let lines = LineIndex::new(text);
    let (line, column) = if test.name_range.end <= text.len() {
        lines.position(text, test.name_range.start, ColumnUnit::Char)
    } else {
        (0, 0)
    };
    ChosenTest {
        test,
        file: file.to_path_buf(),
        path: relative.to_string(),
        line: line + 1,
        column: column + 1,
        score: judged.map(|finding| finding.score),
        predicted: judged.and_then(|finding| finding.category),
        signals: judged
            .map(|finding| finding.signals.iter().map(|hit| hit.category).collect())
            .unwrap_or_default(),
    }
}
