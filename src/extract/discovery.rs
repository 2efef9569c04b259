//! How the test runners of a project find its tests, where a project can change it: pytest's
//! `python_files`, `python_classes`, `python_functions` and `norecursedirs` settings.
//!
//! The rules follow pytest's documentation ("Changing naming conventions") and its collector:
//! a class or function name is collected when it starts with one of the configured entries, or
//! when an entry holding a glob character (`*`, `?`, `[`) matches it with `fnmatch`; a file is a
//! test file when one of the `python_files` globs matches its base name, or its whole path for a
//! glob holding a `/`; a directory is not entered when a `norecursedirs` glob matches it the same
//! way. This module only holds the values and the predicates; reading them from the
//! configuration files is [`super::pytest_config`]'s job, finding those files the caller's.

use std::path::Path;
use std::sync::Arc;

use super::fnmatch::Patterns;
use super::python_classes::ModuleSource;
use crate::language::Language;

/// What decides which files, classes and functions are tests, beyond a language's fixed rules.
/// The default is each runner's own default.
#[derive(Debug, Clone, Default)]
pub struct Discovery {
    pub pytest: PytestSettings,
    /// Where the other modules of the project are read from, for the test methods a class
    /// inherits from them; `None`: only the file's own classes are looked at.
    pub modules: Option<Arc<dyn ModuleSource>>,
}

impl PartialEq for Discovery {
    fn eq(&self, other: &Self) -> bool {
        let same_modules = match (&self.modules, &other.modules) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            (a, b) => a.is_none() && b.is_none(),
        };
        self.pytest == other.pytest && same_modules
    }
}

impl Eq for Discovery {}

impl Discovery {
    /// Whether a file found by walking a directory is one the runner collects tests from. A file
    /// named explicitly (on the command line, open in an editor) is judged whatever this says,
    /// as pytest collects a file named on its command line whatever `python_files` says.
    pub fn collects_file(&self, language: Language, path: &Path) -> bool {
        match language {
            Language::Python => self.pytest.collects_file(path),
            // JUnit runners and cargo find tests by annotation or attribute in every file.
            Language::Java | Language::Rust => true,
        }
    }

    /// Whether the runner enters every directory between `walked_from` (the directory a walk
    /// started from, entered whatever its name, as pytest enters a directory named on its
    /// command line) and the file at `path`: pytest skips those `norecursedirs` matches. Java's
    /// and Rust's runners have no such setting.
    pub fn enters_directories(&self, language: Language, path: &Path, walked_from: &Path) -> bool {
        match language {
            Language::Python => path
                .ancestors()
                .skip(1)
                .take_while(|directory| {
                    *directory != walked_from && directory.starts_with(walked_from)
                })
                .all(|directory| self.pytest.recurses_into(directory)),
            Language::Java | Language::Rust => true,
        }
    }

    /// Whether a file found by walking from `walked_from` is one the runner collects: its name
    /// ([`Discovery::collects_file`]) and its directories ([`Discovery::enters_directories`]).
    pub fn collects_walked(&self, language: Language, path: &Path, walked_from: &Path) -> bool {
        self.collects_file(language, path) && self.enters_directories(language, path, walked_from)
    }
}

/// [`DEFAULT_NORECURSEDIRS`], compiled once per process.
fn default_norecursedirs() -> Patterns {
    static DEFAULTS: std::sync::OnceLock<Patterns> = std::sync::OnceLock::new();
    DEFAULTS
        .get_or_init(|| Patterns::new(&DEFAULT_NORECURSEDIRS.map(String::from)))
        .clone()
}

/// pytest's default `norecursedirs`.
pub const DEFAULT_NORECURSEDIRS: [&str; 9] = [
    "*.egg",
    ".*",
    "_darcs",
    "build",
    "CVS",
    "dist",
    "node_modules",
    "venv",
    "{arch}",
];

/// pytest's collection settings, defaults filled in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PytestSettings {
    files: Patterns,
    classes: Patterns,
    functions: Patterns,
    norecursedirs: Patterns,
}

impl Default for PytestSettings {
    /// pytest's defaults, compiled once per process: every Java and Rust file, and every Python
    /// file without a configuration, has them.
    fn default() -> Self {
        static DEFAULTS: std::sync::OnceLock<PytestSettings> = std::sync::OnceLock::new();
        DEFAULTS
            .get_or_init(|| {
                PytestSettings::new(
                    &["test_*.py", "*_test.py"].map(String::from),
                    &["Test".to_string()],
                    &["test".to_string()],
                )
            })
            .clone()
    }
}

impl PytestSettings {
    /// Settings from the entries of `python_files`, `python_classes` and `python_functions`.
    pub fn new(files: &[String], classes: &[String], functions: &[String]) -> PytestSettings {
        PytestSettings {
            files: Patterns::new(files),
            classes: Patterns::new(classes),
            functions: Patterns::new(functions),
            norecursedirs: default_norecursedirs(),
        }
    }

    /// The same settings with these `norecursedirs` entries in place of pytest's defaults.
    pub fn with_norecursedirs(self, norecursedirs: &[String]) -> PytestSettings {
        PytestSettings {
            norecursedirs: Patterns::new(norecursedirs),
            ..self
        }
    }

    /// The `python_files` entries.
    pub fn files(&self) -> &[String] {
        &self.files.entries
    }

    /// The `python_classes` entries.
    pub fn classes(&self) -> &[String] {
        &self.classes.entries
    }

    /// The `python_functions` entries.
    pub fn functions(&self) -> &[String] {
        &self.functions.entries
    }

    /// The `norecursedirs` entries.
    pub fn norecursedirs(&self) -> &[String] {
        &self.norecursedirs.entries
    }

    /// Whether pytest collects `path` when it meets it walking a directory: a `python_files`
    /// glob without a `/` matches the base name, one with a `/` the whole path (pytest's
    /// `fnmatch_ex`, which prefixes a relative glob with `*/` to match an absolute path).
    pub fn collects_file(&self, path: &Path) -> bool {
        self.files.match_path(path)
    }

    /// Whether pytest enters the directory at `path` when it meets it walking its parent: not
    /// when a `norecursedirs` glob matches it, as `python_files` globs match files.
    pub fn recurses_into(&self, path: &Path) -> bool {
        !self.norecursedirs.match_path(path)
    }

    /// Whether a class of this name is collected (`python_classes`).
    pub fn collects_class(&self, name: &str) -> bool {
        self.classes.prefix_or_glob(name)
    }

    /// Whether a function or method of this name is collected (`python_functions`).
    pub fn collects_function(&self, name: &str) -> bool {
        self.functions.prefix_or_glob(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(entries: &[&str]) -> Vec<String> {
        entries.iter().map(|entry| entry.to_string()).collect()
    }

    #[test]
    fn defaults_are_pytests() {
        let settings = PytestSettings::default();
        assert!(settings.collects_file(Path::new("/repo/tests/test_orders.py")));
        assert!(settings.collects_file(Path::new("/repo/orders_test.py")));
        assert!(!settings.collects_file(Path::new("/repo/tests/conftest.py")));
        assert!(!settings.collects_file(Path::new("/repo/tests/helpers.py")));
        assert!(settings.collects_class("TestOrders"));
        assert!(settings.collects_class("Testing"));
        assert!(!settings.collects_class("OrdersTest"));
        assert!(settings.collects_function("test_create"));
        assert!(settings.collects_function("testCreate"));
        assert!(!settings.collects_function("check_create"));
    }

    #[test]
    fn entries_are_prefixes_or_globs() {
        // celery's `python_classes = test_*`, and urllib3's `Test *TestCase`.
        let celery = PytestSettings::new(&[], &strings(&["test_*"]), &strings(&["test"]));
        assert!(celery.collects_class("test_AsyncResult"));
        assert!(!celery.collects_class("TestAsyncResult"));
        assert!(!celery.collects_class("test"));
        let urllib3 = PytestSettings::new(&[], &strings(&["Test", "*TestCase"]), &[]);
        assert!(urllib3.collects_class("TestPool"));
        assert!(urllib3.collects_class("HTTPSTestCase"));
        assert!(!urllib3.collects_class("HTTPSTestCases"));
        let functions = PytestSettings::new(&[], &[], &strings(&["check_", "*_should_*"]));
        assert!(functions.collects_function("check_total"));
        assert!(functions.collects_function("total_should_add_up"));
        assert!(!functions.collects_function("test_total"));
    }

    #[test]
    fn file_globs_with_a_slash_match_the_whole_path() {
        // pytest's own `testing/python/*.py`, scrapy's `test_*/__init__.py`.
        let settings = PytestSettings::new(
            &strings(&["test_*.py", "testing/python/*.py", "test_*/__init__.py"]),
            &[],
            &[],
        );
        assert!(settings.collects_file(Path::new("/repo/testing/python/collect.py")));
        assert!(settings.collects_file(Path::new("/repo/tests/test_http/__init__.py")));
        assert!(!settings.collects_file(Path::new("/repo/testing/other/collect.py")));
        assert!(!settings.collects_file(Path::new("/repo/tests/http/__init__.py")));
        assert!(settings.collects_file(Path::new("test_a.py")));
    }

    #[test]
    fn norecursedirs_defaults_are_pytests_and_a_project_replaces_them() {
        let defaults = PytestSettings::default();
        for skipped in [
            ".venv",
            ".git",
            "build",
            "dist",
            "venv",
            "node_modules",
            "x.egg",
            "{arch}",
        ] {
            assert!(!defaults.recurses_into(Path::new(skipped)), "{skipped}");
        }
        assert!(defaults.recurses_into(Path::new("/repo/tests")));
        assert!(defaults.recurses_into(Path::new("/repo/builder")));
        let own = defaults.with_norecursedirs(&strings(&["docs", "tests/data/*"]));
        assert!(!own.recurses_into(Path::new("/repo/docs")));
        assert!(!own.recurses_into(Path::new("/repo/tests/data/big")));
        assert!(own.recurses_into(Path::new("/repo/build")));
        assert_eq!(own.norecursedirs(), ["docs", "tests/data/*"]);
    }

    #[test]
    fn only_directories_below_the_start_of_a_walk_are_judged_by_name() {
        let discovery = Discovery::default();
        let walked_from = Path::new("/repo");
        let python = |path: &str| {
            discovery.enters_directories(Language::Python, Path::new(path), walked_from)
        };
        assert!(python("/repo/tests/test_a.py"));
        assert!(!python("/repo/build/lib/tests/test_a.py"));
        assert!(!python("/repo/tests/.cache/test_a.py"));
        // The start itself, and what lies above it, are entered whatever their names.
        assert!(python("/repo/test_a.py"));
        assert!(discovery.enters_directories(
            Language::Python,
            Path::new("/work/build/tests/test_a.py"),
            Path::new("/work/build")
        ));
        // pytest's setting is no rule of Java's or Rust's runners: a package named `build` is
        // source code.
        assert!(discovery.enters_directories(
            Language::Java,
            Path::new("/repo/src/test/java/com/ex/build/BuildTest.java"),
            walked_from
        ));
        assert!(!discovery.collects_walked(
            Language::Python,
            Path::new("/repo/dist/test_a.py"),
            walked_from
        ));
        assert!(discovery.collects_walked(
            Language::Python,
            Path::new("/repo/tests/test_a.py"),
            walked_from
        ));
    }

    #[test]
    fn only_python_files_are_filtered() {
        let discovery = Discovery::default();
        assert!(discovery.collects_file(Language::Java, Path::new("src/Helper.java")));
        assert!(discovery.collects_file(Language::Rust, Path::new("src/lib.rs")));
        assert!(!discovery.collects_file(Language::Python, Path::new("src/helper.py")));
    }
}
