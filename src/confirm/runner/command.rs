//! A command template of `flakesense.toml`: `{tests}` becomes the tests, each shell-quoted, in
//! the form the language's runners take them (pytest node ids from the workspace root, Java's
//! `pkg.Class#method`, libtest's `module::tests::name`), and `{report}` the path where the run's
//! JUnit XML report is expected, a file or a directory. The command runs in `sh -c` at the
//! workspace root.

use std::path::{Path, PathBuf};

use super::cargo::filter_name;
use crate::confirm::choose::ChosenTest;
use crate::confirm::process::Invocation;
use crate::language::Language;

#[derive(Debug)]
pub struct Prepared {
    template: String,
    root: PathBuf,
    pub language: Language,
    /// The runner's name of each test.
    pub selectors: Vec<String>,
}

pub fn prepare(template: &str, language: Language, root: &Path, tests: &[&ChosenTest]) -> Prepared {
    let selectors = tests
        .iter()
        .map(|test| match language {
            Language::Python | Language::Java => test.test.id.clone(),
            // The module path within the crate of the workspace root, or of the test's file.
            Language::Rust => {
                let crate_root = test
                    .file
                    .ancestors()
                    .find(|directory| directory.join("Cargo.toml").is_file())
                    .unwrap_or(root);
                filter_name(test, crate_root)
            }
        })
        .collect();
    Prepared {
        template: template.to_string(),
        root: root.to_path_buf(),
        language,
        selectors,
    }
}

impl Prepared {
    pub fn invocation(&self, report: &Path) -> Invocation {
        Invocation::new("sh", &self.root)
            .arg("-c")
            .arg(expand_template(
                &self.template,
                &self.selectors,
                &report.join("report.xml"),
            ))
    }
}

/// The template with `{tests}` and `{report}` filled in, shell-quoted.
pub fn expand_template(template: &str, tests: &[String], report: &Path) -> String {
    let tests: Vec<String> = tests.iter().map(|test| shell_quote(test)).collect();
    template
        .replace("{tests}", &tests.join(" "))
        .replace("{report}", &shell_quote(&report.to_string_lossy()))
}

fn shell_quote(word: &str) -> String {
    if !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=,+@%#".contains(c))
    {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_get_quoted_tests_and_the_report_path() {
        let command = expand_template(
            "python -m pytest {tests} --junitxml={report}",
            &[
                "tests/test_a.py::test_b[x y]".to_string(),
                "tests/test_a.py::test_c".to_string(),
            ],
            Path::new("/tmp/run 1/report.xml"),
        );
        assert_eq!(
            command,
            "python -m pytest 'tests/test_a.py::test_b[x y]' tests/test_a.py::test_c --junitxml='/tmp/run 1/report.xml'"
        );
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
    }
}
