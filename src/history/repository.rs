//! Stage 1 of learning from history: the repository's Java, Python and Rust test files
//! (`.gitignore` and `flakesense.toml` excludes honoured), their tests, and the flakiness markers
//! on each test, which never reach the tokens.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use rayon::prelude::*;
use rustc_hash::FxHashMap as HashMap;

use super::annotations::{self, Marks};
use super::names::Catalogue;
use crate::config::Config;
use crate::extract::{TestMethod, extract_tests_with};
use crate::language::Language;
use crate::workspace::SurroundingsReader;

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
/// pytest would not collect (`python_files`, `norecursedirs`) left out; and the problems met on
/// the way.
pub fn find_test_files(root: &Path) -> Result<(Vec<PathBuf>, Vec<String>)> {
    let config = Config::load(root)?;
    let exclude = config.exclude_matcher()?;
    let (files, problems) = crate::files::walk_sources(&[root.to_path_buf()], root, &exclude);
    let discoveries = SurroundingsReader::new(root);
    let files = files
        .into_iter()
        .filter(|path| {
            Language::from_path(path).is_none_or(|language| {
                discoveries
                    .discovery(language, path)
                    .collects_walked(language, path, root)
            })
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
    let discovery = discoveries.discovery(file.language, path);
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
