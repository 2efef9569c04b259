//! Java's runners: Maven Surefire, Gradle, and the JUnit Platform console launcher's jar, which
//! a small launcher of flakesense's own (`helpers/FlakesenseRuns.java`) drives through the
//! Launcher API: a batch of runs in one JVM, each run's test classes in a class loader of their
//! own, and `twice` as two executions in one class loader.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Result, bail};

use super::{Runner, RunnerKind, nearest};
use crate::config::RunnerConfig;
use crate::confirm::choose::ChosenTest;
use crate::confirm::condition::{Condition, Host};
use crate::confirm::outcome::{self, CaseResult};
use crate::confirm::process::{self, Invocation, Stop};
use crate::language::Language;

/// Debian's `junit5` package puts the console launcher here.
pub const DEBIAN_LAUNCHER: &str = "/usr/share/java/junit-platform-console-standalone.jar";

/// The launcher that runs the selected tests a batch of times in one JVM, compiled on first use.
const RUNS_LAUNCHER: &str = include_str!("helpers/FlakesenseRuns.java");
const RUNS_CLASS: &str = "FlakesenseRuns";

const COMPILE_TIMEOUT: Duration = Duration::from_secs(5 * 60);

pub fn detect(
    test: &ChosenTest,
    directory: &Path,
    workspace_root: &Path,
    table: Option<&RunnerConfig>,
    named: Option<&str>,
) -> Result<Runner> {
    let maven = || {
        nearest(directory, workspace_root, |directory| {
            directory.join("pom.xml").is_file()
        })
    };
    let gradle = || {
        nearest(directory, workspace_root, |directory| {
            ["build.gradle", "build.gradle.kts"]
                .iter()
                .any(|file| directory.join(file).is_file())
        })
    };
    let classpath = table
        .map(|table| table.classpath.clone())
        .unwrap_or_default();
    let console = |launcher: Option<&PathBuf>| -> Result<Runner> {
        if classpath.is_empty() {
            bail!(
                "{}: the console launcher needs the test classes: set `classpath` in [confirm.java] of flakesense.toml",
                test.path
            );
        }
        let launcher = match launcher {
            Some(path) if path.is_relative() => workspace_root.join(path),
            Some(path) => path.clone(),
            None => PathBuf::from(DEBIAN_LAUNCHER),
        };
        if !launcher.is_file() {
            bail!(
                "the JUnit Platform console launcher is not at {} (install Debian's junit5, or set `launcher` in [confirm.java])",
                launcher.display()
            );
        }
        Ok(Runner {
            kind: RunnerKind::JunitConsole {
                launcher,
                classpath: classpath.clone(),
            },
            language: Language::Java,
            root: workspace_root.to_path_buf(),
        })
    };
    let launcher = table.and_then(|table| table.launcher.as_ref());
    let build_tool = |kind: fn(&Path) -> RunnerKind, root: Option<PathBuf>, what: &str| match root {
        Some(root) => Ok(Runner {
            kind: kind(&root),
            language: Language::Java,
            root,
        }),
        None => bail!("{}: no {what} above it", test.path),
    };
    match named {
        Some("maven") => build_tool(|_| RunnerKind::Maven, maven(), "pom.xml"),
        Some("gradle") => build_tool(gradle_kind, gradle(), "build.gradle"),
        Some(_) => console(launcher),
        None if !classpath.is_empty() => console(launcher),
        None => match (maven(), gradle()) {
            (Some(root), _) => build_tool(|_| RunnerKind::Maven, Some(root), "pom.xml"),
            (None, Some(root)) => build_tool(gradle_kind, Some(root), "build.gradle"),
            (None, None) => bail!(
                "{}: no pom.xml or build.gradle above it; to run it with the JUnit Platform console launcher, set `classpath` in [confirm.java] of flakesense.toml",
                test.path
            ),
        },
    }
}

/// Gradle through the project's wrapper when it has one.
fn gradle_kind(root: &Path) -> RunnerKind {
    let wrapper = root.join("gradlew");
    RunnerKind::Gradle {
        program: if wrapper.is_file() {
            wrapper
        } else {
            PathBuf::from("gradle")
        },
    }
}

fn java() -> PathBuf {
    match std::env::var_os("JAVA_HOME") {
        Some(home) if !home.is_empty() => Path::new(&home).join("bin/java"),
        _ => PathBuf::from("java"),
    }
}

fn javac() -> PathBuf {
    match std::env::var_os("JAVA_HOME") {
        Some(home) if !home.is_empty() => Path::new(&home).join("bin/javac"),
        _ => PathBuf::from("javac"),
    }
}

/// Maven or Gradle, whose reports land in the project's build directory.
#[derive(Debug)]
pub struct PreparedBuildTool {
    kind: RunnerKind,
    root: PathBuf,
    /// `pkg.Class#method` of each test.
    methods: Vec<String>,
}

pub fn prepare_build_tool(
    kind: &RunnerKind,
    root: &Path,
    tests: &[&ChosenTest],
) -> PreparedBuildTool {
    PreparedBuildTool {
        kind: kind.clone(),
        root: root.to_path_buf(),
        methods: tests.iter().map(|test| test.test.id.clone()).collect(),
    }
}

impl PreparedBuildTool {
    pub fn invocation(&self, condition: Condition) -> Invocation {
        let offline = condition == Condition::Offline;
        match &self.kind {
            RunnerKind::Gradle { program } => {
                let mut invocation =
                    Invocation::new(program, &self.root).args(["cleanTest", "test"]);
                for method in &self.methods {
                    invocation = invocation.arg("--tests").arg(method.replacen('#', ".", 1));
                }
                if offline {
                    invocation = invocation.arg("--offline");
                }
                invocation
            }
            _ => {
                let mut invocation = Invocation::new("mvn", &self.root)
                    .args(["-B", "test"])
                    .arg(format!("-Dtest={}", surefire_selection(&self.methods)))
                    .args([
                        "-Dsurefire.failIfNoSpecifiedTests=false",
                        "-DfailIfNoTests=false",
                    ]);
                if offline {
                    invocation = invocation.arg("-o");
                }
                invocation
            }
        }
    }

    pub fn reports_directory(&self) -> PathBuf {
        match self.kind {
            RunnerKind::Gradle { .. } => self.root.join("build/test-results/test"),
            _ => self.root.join("target/surefire-reports"),
        }
    }
}

/// Surefire's `-Dtest`: `pkg.A#m1+m2,pkg.B#m`.
fn surefire_selection(methods: &[String]) -> String {
    let mut classes: Vec<(String, Vec<String>)> = Vec::new();
    for method in methods {
        let (class, name) = method.split_once('#').unwrap_or((method, ""));
        match classes.iter_mut().find(|(seen, _)| seen == class) {
            Some((_, names)) => names.push(name.to_string()),
            None => classes.push((class.to_string(), vec![name.to_string()])),
        }
    }
    classes
        .into_iter()
        .map(|(class, names)| format!("{class}#{}", names.join("+")))
        .collect::<Vec<_>>()
        .join(",")
}

/// The console launcher on the configured class path.
#[derive(Debug)]
pub struct PreparedConsole {
    root: PathBuf,
    launcher: PathBuf,
    classpath: String,
    methods: Vec<String>,
    /// Where flakesense's launcher was compiled, or why it could not be: then each run starts
    /// the console launcher, and `twice` is unavailable.
    helper: std::result::Result<PathBuf, String>,
}

pub fn prepare_console(
    launcher: &Path,
    classpath: &[String],
    workspace_root: &Path,
    tests: &[&ChosenTest],
    scratch: &Path,
    stop: &Stop,
) -> Result<PreparedConsole> {
    let classpath = classpath
        .iter()
        .map(|entry| {
            let path = Path::new(entry);
            if path.is_relative() {
                workspace_root.join(path).display().to_string()
            } else {
                entry.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(":");
    Ok(PreparedConsole {
        root: workspace_root.to_path_buf(),
        launcher: launcher.to_path_buf(),
        classpath,
        methods: tests.iter().map(|test| test.test.id.clone()).collect(),
        helper: compile_helper(launcher, scratch, stop)?,
    })
}

/// Compiles [`RUNS_LAUNCHER`] against the console launcher's jar; `Err` says why it cannot be.
fn compile_helper(
    launcher: &Path,
    scratch: &Path,
    stop: &Stop,
) -> Result<std::result::Result<PathBuf, String>> {
    let source_directory = scratch.join("junit-runs-source");
    let classes = scratch.join("junit-runs");
    std::fs::create_dir_all(&source_directory)?;
    std::fs::create_dir_all(&classes)?;
    let source = source_directory.join(format!("{RUNS_CLASS}.java"));
    std::fs::write(&source, RUNS_LAUNCHER)?;
    let invocation = Invocation::new(javac(), scratch)
        .arg("-d")
        .arg(&classes)
        .arg("-cp")
        .arg(launcher)
        .arg(&source);
    let finished = match process::execute(
        &invocation,
        Condition::Plain,
        &Host::plain(),
        COMPILE_TIMEOUT,
        &scratch.join("junit-runs-javac"),
        stop,
    ) {
        Ok(Ok(finished)) => finished,
        Ok(Err(_)) => bail!("stopped while compiling flakesense's JUnit launcher"),
        Err(error) => {
            return Ok(Err(format!(
                "cannot compile flakesense's JUnit launcher: {error:#}"
            )));
        }
    };
    if finished.status.is_some_and(|status| status.success()) {
        Ok(Ok(classes))
    } else {
        Ok(Err(format!(
            "javac could not compile flakesense's JUnit launcher against {}: {}",
            launcher.display(),
            finished.stderr_tail(5)
        )))
    }
}

impl PreparedConsole {
    pub fn unavailable(&self, condition: Condition) -> Option<String> {
        match (&self.helper, condition) {
            (Err(reason), Condition::Twice) => Some(reason.clone()),
            _ => None,
        }
    }

    /// Whether one JVM makes a batch's runs (flakesense's launcher compiled).
    pub fn in_one_process(&self) -> bool {
        self.helper.is_ok()
    }

    /// One JVM making `runs` runs (one run without flakesense's launcher).
    pub fn invocation(&self, condition: Condition, report: &Path, runs: u32) -> Invocation {
        match &self.helper {
            Ok(classes) => {
                let ready = report.join("ready");
                Invocation::new(java(), &self.root)
                    .arg("-cp")
                    .arg(format!("{}:{}", classes.display(), self.launcher.display()))
                    .arg(RUNS_CLASS)
                    .arg(report)
                    .arg(runs.to_string())
                    .arg(if condition == Condition::Twice {
                        "2"
                    } else {
                        "1"
                    })
                    .arg(&ready)
                    .arg(&self.classpath)
                    .args(&self.methods)
                    .ready_file(ready)
            }
            Err(_) => {
                let mut invocation = Invocation::new(java(), &self.root)
                    .arg("-jar")
                    .arg(&self.launcher)
                    .args([
                        "--disable-banner",
                        "--details=none",
                        "--class-path",
                        &self.classpath,
                    ]);
                for method in &self.methods {
                    invocation = invocation.arg("--select-method").arg(method);
                }
                invocation.arg(format!("--reports-dir={}", report.display()))
            }
        }
    }

    /// Per run of the batch, the results in the order they ran.
    pub fn reports(&self, condition: Condition, report: &Path, runs: u32) -> Vec<Vec<CaseResult>> {
        if self.helper.is_err() {
            return vec![outcome::read_reports(report, None)];
        }
        let executions = if condition == Condition::Twice { 2 } else { 1 };
        (1..=runs)
            .map(|run| {
                (1..=executions)
                    .flat_map(|execution| {
                        outcome::read_reports(
                            &report.join(format!("run-{run}/execution-{execution}")),
                            None,
                        )
                    })
                    .collect()
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn surefire_groups_methods_by_class() {
        let methods = [
            "com.ex.ATest#one".to_string(),
            "com.ex.BTest#two".to_string(),
            "com.ex.ATest#three".to_string(),
        ];
        assert_eq!(
            surefire_selection(&methods),
            "com.ex.ATest#one+three,com.ex.BTest#two"
        );
    }

    #[test]
    fn build_tools_select_the_tests_and_go_offline_when_asked() {
        let prepared = PreparedBuildTool {
            kind: RunnerKind::Gradle {
                program: PathBuf::from("gradle"),
            },
            root: PathBuf::from("/repo"),
            methods: vec!["com.ex.ATest#one".to_string()],
        };
        assert_eq!(
            prepared.invocation(Condition::Offline).display(),
            "gradle cleanTest test --tests com.ex.ATest.one --offline"
        );
        assert_eq!(
            prepared.reports_directory(),
            Path::new("/repo/build/test-results/test")
        );
        let maven = PreparedBuildTool {
            kind: RunnerKind::Maven,
            ..prepared
        };
        assert_eq!(
            maven.invocation(Condition::Plain).display(),
            "mvn -B test -Dtest=com.ex.ATest#one -Dsurefire.failIfNoSpecifiedTests=false -DfailIfNoTests=false"
        );
    }
}
