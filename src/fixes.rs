//! Whole repositories with the tests their maintainers fixed for flakiness (the layout of
//! `../shared/data/fixtrain` and `../shared/bench`): labelled tests with their context, which the
//! method-only CSVs lack. Each repository is read as a project: every test of its snapshot, not
//! known to be flaky, and each fixed test as it was before its fix, flaky; the signals of each
//! come from its whole file, set-up, fixtures and helpers included.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use rayon::prelude::*;

use crate::analysis::{self, Surroundings};
use crate::dataset::LabeledTest;
use crate::files;
use crate::language::Language;
use crate::signals::Signals;
use crate::workspace;

/// A test of a repository with the signals of what it runs.
#[derive(Debug, Clone)]
pub struct RepositoryTest {
    pub test: LabeledTest,
    pub signals: Signals,
    /// The line, from 1, of the test's name in its file.
    pub line: usize,
}

/// One repository's tests.
#[derive(Debug, Clone)]
pub struct Repository {
    pub language: Language,
    /// `owner+name`, lower-cased: the project name of its tests.
    pub project: String,
    pub tests: Vec<RepositoryTest>,
    /// Rows of `fixes.csv` whose test was not found in its file before the fix.
    pub missing: usize,
}

/// One row of `fixes.csv`.
#[derive(Debug, Clone, serde::Deserialize)]
struct FixRow {
    fix_commit: String,
    path: String,
    test_name: String,
    line_before: String,
}

/// Reads every repository of a folder laid out as `<language>/<owner>+<name>/` (or one language
/// folder, or one repository), each with `snapshot/`, `fixes/<commit>/before/` and `fixes.csv`.
pub fn read(root: &Path, languages: &[Language]) -> Result<Vec<Repository>> {
    let folders = repository_folders(root)?;
    if folders.is_empty() {
        bail!(
            "{} holds no repository (a folder with fixes.csv and snapshot/)",
            root.display()
        );
    }
    folders
        .into_iter()
        .filter(|(language, _)| languages.is_empty() || languages.contains(language))
        .map(|(language, folder)| read_repository(language, &folder))
        .collect()
}

/// The repository folders under `root`, with the language their parent folder names.
fn repository_folders(root: &Path) -> Result<Vec<(Language, PathBuf)>> {
    if root.join("fixes.csv").is_file() {
        let language = root
            .parent()
            .and_then(|parent| parent.file_name())
            .and_then(|name| Language::from_name(&name.to_string_lossy()))
            .with_context(|| format!("{}: the folder above names no language", root.display()))?;
        return Ok(vec![(language, root.to_path_buf())]);
    }
    let mut found = Vec::new();
    let language_folders: Vec<(Language, PathBuf)> =
        match Language::from_name(&root.file_name().unwrap_or_default().to_string_lossy()) {
            Some(language) => vec![(language, root.to_path_buf())],
            None => Language::ALL
                .iter()
                .map(|language| (*language, root.join(language.name())))
                .filter(|(_, folder)| folder.is_dir())
                .collect(),
        };
    for (language, folder) in language_folders {
        let mut repositories: Vec<PathBuf> = std::fs::read_dir(&folder)
            .with_context(|| format!("reading {}", folder.display()))?
            .filter_map(|entry| entry.ok().map(|entry| entry.path()))
            .filter(|path| path.join("fixes.csv").is_file())
            .collect();
        repositories.sort();
        found.extend(repositories.into_iter().map(|path| (language, path)));
    }
    Ok(found)
}

fn read_repository(language: Language, folder: &Path) -> Result<Repository> {
    let project = folder
        .file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .to_ascii_lowercase();
    let rows: Vec<FixRow> = csv::Reader::from_path(folder.join("fixes.csv"))
        .with_context(|| format!("reading {}", folder.join("fixes.csv").display()))?
        .deserialize()
        .enumerate()
        .map(|(number, row)| {
            row.with_context(|| {
                format!(
                    "{}: line {}",
                    folder.join("fixes.csv").display(),
                    number + 2
                )
            })
        })
        .collect::<Result<_>>()?;
    let fixed_names: HashSet<(&str, &str)> = rows
        .iter()
        .map(|row| (row.path.as_str(), row.test_name.as_str()))
        .collect();

    let mut tests = Vec::new();
    // The snapshot: every test not known to be flaky, but those a fix changed (after their fix
    // they are often still flaky: a longer timeout is a common fix).
    let snapshot = folder.join("snapshot");
    // Fixtures come from the snapshot's conftest files, and base classes, helpers and the code
    // under test from its other files, for the snapshot's tests and for the fixed tests before
    // their fix alike (a fix's folder holds only the files it changed). A snapshot of test files
    // alone reaches only those. The symbols are not cached: a snapshot is read once.
    let sources = Arc::new(workspace::WorkspaceSources::new(
        &snapshot,
        globset::GlobSet::empty(),
    ));
    let others = workspace::OtherFiles::on_demand(sources.clone(), false);
    let surroundings = workspace::SurroundingsReader::with_others(&snapshot, Arc::new(others));
    let paths = sources.paths();
    let read: Vec<Vec<RepositoryTest>> = paths
        .par_iter()
        .filter(|path| Language::from_path(path) == Some(language))
        // Only the files the test runner collects, as `flakesense check` walks them.
        .filter(|path| {
            surroundings
                .discovery(language, path)
                .collects_walked(language, path, &snapshot)
        })
        .map(|path| {
            let relative = relative(&snapshot, path);
            read_file(
                language,
                &project,
                path,
                &relative,
                &surroundings.for_file(language, path),
            )
            .into_iter()
            .filter(|test| !fixed_names.contains(&(relative.as_str(), bare_name(&test.test))))
            .map(|mut test| {
                test.test.flaky = false;
                test
            })
            .collect()
        })
        .collect();
    tests.extend(read.into_iter().flatten());

    // Each fixed test as it was before its fix.
    let mut by_file: BTreeMap<(String, String), Vec<&FixRow>> = BTreeMap::new();
    for row in &rows {
        let commit: String = row.fix_commit.chars().take(12).collect();
        by_file
            .entry((commit, row.path.clone()))
            .or_default()
            .push(row);
    }
    let mut missing = 0;
    for ((commit, path), rows) in by_file {
        let file = folder
            .join("fixes")
            .join(&commit)
            .join("before")
            .join(&path);
        let found = read_file(
            language,
            &project,
            &file,
            &path,
            &surroundings.for_file(language, &snapshot.join(&path)),
        );
        let mut taken = HashSet::new();
        for row in rows {
            let line: usize = row.line_before.trim().parse().unwrap_or(0);
            let best = found
                .iter()
                .enumerate()
                .filter(|(position, test)| {
                    bare_name(&test.test) == row.test_name && !taken.contains(position)
                })
                .min_by_key(|(_, test)| test.line.abs_diff(line));
            match best {
                Some((position, test)) => {
                    taken.insert(position);
                    let mut test = test.clone();
                    test.test.flaky = true;
                    test.test.id = format!("{}@{commit}", test.test.id);
                    tests.push(test);
                }
                None => missing += 1,
            }
        }
    }
    Ok(Repository {
        language,
        project,
        tests,
        missing,
    })
}

/// The tests of one file with their signals; none for a file that cannot be read as UTF-8 source.
fn read_file(
    language: Language,
    project: &str,
    path: &Path,
    relative: &str,
    surroundings: &Surroundings,
) -> Vec<RepositoryTest> {
    let Ok(file) = files::read_source(path) else {
        return Vec::new();
    };
    if file.lossy || file.language != language {
        return Vec::new();
    }
    let read = analysis::read_tests(language, relative, &file.text, surroundings);
    read.tests
        .into_iter()
        .zip(read.signals)
        .map(|(test, signals)| RepositoryTest {
            line: line_of(&file.text, test.name_range.start),
            test: LabeledTest {
                id: test.id,
                project: project.to_string(),
                language,
                flaky: false,
                categories: Vec::new(),
                source: "fixes".to_string(),
                code: test.code,
            },
            signals,
        })
        .collect()
}

fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|byte| **byte == b'\n')
        .count()
        + 1
}

/// A test's bare name from its id: `test_x` of `a/test_y.py::Class::test_x`, `m` of `p.C#m`.
fn bare_name(test: &LabeledTest) -> &str {
    let id = test.id.as_str();
    let last = id.rsplit(['#', ':']).next().unwrap_or(id);
    last.split(['[', '(']).next().unwrap_or(last)
}

fn relative(base: &Path, path: &Path) -> String {
    path.strip_prefix(base)
        .unwrap_or(path)
        .to_string_lossy()
        .replace('\\', "/")
}
