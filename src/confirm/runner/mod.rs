//! The test runners `confirm` drives, detected from the repository or named in the `[confirm]`
//! table of `flakesense.toml`: cargo test and cargo-nextest, pytest, Maven Surefire, Gradle, the
//! JUnit Platform console launcher, or a command template of the user's.
//!
//! A runner turns the chosen tests of one project into the commands of a batch of runs
//! ([`Prepared`]), and the reports of the batch back into outcomes per run and test
//! ([`Prepared::assign`]).

mod cargo;
mod command;
mod java;
mod junit_console;
mod prepared;
mod pytest;

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};

use super::choose::ChosenTest;
use super::condition::Condition;
use super::process::Stop;
use crate::config::{ConfirmConfig, RunnerConfig};
use crate::history::names::Catalogue;
use crate::language::Language;

pub use command::expand_template;
use prepared::Steps;
pub use prepared::{Prepared, TestRun};

/// Which program runs the tests, and what it needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunnerKind {
    /// `cargo test`: the test binaries are built once, then run directly.
    Cargo,
    /// `cargo nextest run`, with a JUnit report from a profile of flakesense's own.
    Nextest,
    Pytest {
        python: PathBuf,
    },
    /// Maven Surefire (`mvn test -Dtest=...`).
    Maven,
    /// Gradle (`gradle cleanTest test --tests ...`), the wrapper when the project has one.
    Gradle {
        program: PathBuf,
    },
    /// The JUnit Platform console launcher on a configured class path.
    JunitConsole {
        launcher: PathBuf,
        classpath: Vec<String>,
    },
    /// A command template of `flakesense.toml`.
    Command {
        template: String,
    },
}

/// A runner for the tests of one project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Runner {
    pub kind: RunnerKind,
    pub language: Language,
    /// Where it runs: the crate, the pytest root, the Maven or Gradle project, else the
    /// workspace root.
    pub root: PathBuf,
}

/// Where the command a runner starts comes from: `confirm` shows it, and the editor asks before
/// running one the repository chose.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CommandOrigin {
    /// The repository's `flakesense.toml` (`[confirm]`): a command, a launcher or a class path.
    Settings,
    /// The repository's virtual environment (`.venv/bin/python`).
    VirtualEnvironment,
    /// The project's own wrapper script (`gradlew`).
    ProjectWrapper,
    /// flakesense's default for the project's build files (`cargo`, `python3`, `mvn`, `gradle`).
    Default,
}

impl CommandOrigin {
    /// How the origin is named to the user: "the repository's settings (`flakesense.toml [confirm]`)", ...
    pub fn describe(self) -> &'static str {
        match self {
            CommandOrigin::Settings => "the repository's settings (flakesense.toml [confirm])",
            CommandOrigin::VirtualEnvironment => "the repository's virtual environment",
            CommandOrigin::ProjectWrapper => "the repository's Gradle wrapper",
            CommandOrigin::Default => "flakesense's default",
        }
    }

    /// Whether the repository chose the program: what someone who cloned it has not vetted.
    pub fn from_repository(self) -> bool {
        self != CommandOrigin::Default
    }
}

impl Runner {
    /// The command the runner starts, as a person would type it (the tests left out), and where
    /// it comes from.
    pub fn command(&self) -> (String, CommandOrigin) {
        let shown = |program: &Path| program.display().to_string();
        match &self.kind {
            RunnerKind::Cargo => ("cargo test".to_string(), CommandOrigin::Default),
            RunnerKind::Nextest => ("cargo nextest run".to_string(), CommandOrigin::Default),
            RunnerKind::Pytest { python } => (
                format!("{} -m pytest", shown(python)),
                if python != Path::new("python3") {
                    CommandOrigin::VirtualEnvironment
                } else {
                    CommandOrigin::Default
                },
            ),
            RunnerKind::Maven => ("mvn test".to_string(), CommandOrigin::Default),
            RunnerKind::Gradle { program } => (
                format!("{} test", shown(program)),
                if program != Path::new("gradle") {
                    CommandOrigin::ProjectWrapper
                } else {
                    CommandOrigin::Default
                },
            ),
            RunnerKind::JunitConsole { launcher, .. } => (
                format!("java -jar {}", shown(launcher)),
                CommandOrigin::Settings,
            ),
            RunnerKind::Command { template } => {
                (format!("sh -c {template:?}"), CommandOrigin::Settings)
            }
        }
    }

    pub fn name(&self) -> &'static str {
        match self.kind {
            RunnerKind::Cargo => "cargo test",
            RunnerKind::Nextest => "cargo-nextest",
            RunnerKind::Pytest { .. } => "pytest",
            RunnerKind::Maven => "maven",
            RunnerKind::Gradle { .. } => "gradle",
            RunnerKind::JunitConsole { .. } => "junit-console",
            RunnerKind::Command { .. } => "command",
        }
    }

    /// Why this runner cannot run a condition, if it cannot.
    pub fn unavailable(&self, condition: Condition) -> Option<String> {
        if condition != Condition::Twice {
            return None;
        }
        let reason = match self.kind {
            RunnerKind::Pytest { .. } | RunnerKind::JunitConsole { .. } => return None,
            RunnerKind::Cargo | RunnerKind::Nextest => {
                "cargo test cannot run a test twice in one process: libtest runs each test once (and nextest gives each test a process of its own)"
            }
            RunnerKind::Maven => {
                "Maven Surefire runs each test once per JVM; name the console launcher (`runner = \"junit-console\"` and a `classpath` in [confirm.java]) to run tests twice"
            }
            RunnerKind::Gradle { .. } => {
                "Gradle runs each test once per JVM; name the console launcher (`runner = \"junit-console\"` and a `classpath` in [confirm.java]) to run tests twice"
            }
            RunnerKind::Command { .. } => {
                "a command of flakesense.toml cannot be told to run a test twice in one process"
            }
        };
        Some(reason.to_string())
    }

    /// Builds what the runs need (cargo's test binaries, the launcher that runs JUnit tests in
    /// batches) and the commands of one batch of runs.
    pub fn prepare(
        &self,
        tests: &[&ChosenTest],
        workspace_root: &Path,
        scratch: &Path,
        stop: &Stop,
    ) -> Result<Prepared> {
        let steps = match &self.kind {
            RunnerKind::Cargo => Steps::Cargo(cargo::prepare(&self.root, tests, scratch, stop)?),
            RunnerKind::Nextest => {
                Steps::Nextest(cargo::prepare_nextest(&self.root, tests, scratch)?)
            }
            RunnerKind::Pytest { python } => {
                Steps::Pytest(pytest::prepare(python, &self.root, tests, scratch)?)
            }
            RunnerKind::Maven | RunnerKind::Gradle { .. } => {
                Steps::BuildTool(java::prepare_build_tool(&self.kind, &self.root, tests))
            }
            RunnerKind::JunitConsole {
                launcher,
                classpath,
            } => Steps::Console(junit_console::prepare_console(
                launcher,
                classpath,
                workspace_root,
                tests,
                scratch,
                stop,
            )?),
            RunnerKind::Command { template } => {
                Steps::Command(command::prepare(template, self.language, &self.root, tests))
            }
        };
        Ok(Prepared {
            steps,
            catalogue: Catalogue::new(
                tests
                    .iter()
                    .map(|test| (test.test.language, test.test.id.as_str())),
            ),
            tests: tests.len(),
        })
    }
}

/// The runner of a test, from `flakesense.toml` or the files around it.
pub fn detect(
    test: &ChosenTest,
    workspace_root: &Path,
    config: Option<&ConfirmConfig>,
) -> Result<Runner> {
    let language = test.test.language;
    let table: Option<&RunnerConfig> = config.and_then(|config| config.for_language(language));
    let directory = test.file.parent().unwrap_or(workspace_root);
    let template = table
        .and_then(|table| table.command.clone())
        .or_else(|| config.and_then(|config| config.command.clone()));
    if let Some(template) = template {
        return Ok(Runner {
            kind: RunnerKind::Command { template },
            language,
            root: workspace_root.to_path_buf(),
        });
    }
    let named = table.and_then(|table| table.runner.as_deref());
    match language {
        Language::Rust => {
            let root = nearest(directory, workspace_root, |directory| {
                crate::files::read_regular(&directory.join("Cargo.toml"), 16 << 20)
                    .is_ok_and(|manifest| String::from_utf8_lossy(&manifest).contains("[package]"))
            });
            let Some(root) = root else {
                bail!(
                    "{}: no Cargo.toml with a [package] above it, so cargo cannot run it",
                    test.path
                );
            };
            let nextest = match named {
                Some(name) => name == "nextest",
                // A project that configures nextest runs its tests with it.
                None => root
                    .ancestors()
                    .take_while(|directory| directory.starts_with(workspace_root))
                    .any(|directory| directory.join(".config/nextest.toml").is_file()),
            };
            Ok(Runner {
                kind: if nextest {
                    RunnerKind::Nextest
                } else {
                    RunnerKind::Cargo
                },
                language,
                root,
            })
        }
        Language::Python => {
            let root = nearest(directory, workspace_root, |directory| {
                pytest::ROOT_MARKERS
                    .iter()
                    .any(|marker| directory.join(marker).is_file())
            })
            .unwrap_or_else(|| workspace_root.to_path_buf());
            Ok(Runner {
                kind: RunnerKind::Pytest {
                    python: pytest::interpreter(&root, workspace_root),
                },
                language,
                root,
            })
        }
        Language::Java => java::detect(test, directory, workspace_root, table, named),
    }
}

/// The nearest directory from `start` up to `workspace_root` (both included) for which
/// `is_root` holds.
fn nearest(
    start: &Path,
    workspace_root: &Path,
    is_root: impl Fn(&Path) -> bool,
) -> Option<PathBuf> {
    start
        .ancestors()
        .take_while(|directory| directory.starts_with(workspace_root))
        .find(|directory| is_root(directory))
        .map(Path::to_path_buf)
}

/// The part of a test's id after its file (`tests::name`, `TestA::test_b`).
fn id_suffix(test: &ChosenTest) -> &str {
    test.test
        .id
        .strip_prefix(&test.path)
        .and_then(|rest| rest.strip_prefix("::"))
        .unwrap_or(&test.test.name)
}

/// `path` relative to `root`, `/`-separated.
fn relative_to(path: &Path, root: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .components()
        .map(|component| component.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}
