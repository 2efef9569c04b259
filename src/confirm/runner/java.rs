//! Java's runners: which one a test gets, Maven Surefire and Gradle; the JUnit Platform console
//! launcher's jar is driven in [`super::junit_console`].

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};

use super::{Runner, RunnerKind, nearest};
use crate::config::RunnerConfig;
use crate::confirm::choose::ChosenTest;
use crate::confirm::condition::Condition;
use crate::confirm::process::Invocation;
use crate::language::Language;

/// Debian's `junit5` package puts the console launcher here.
pub const DEBIAN_LAUNCHER: &str = "/usr/share/java/junit-platform-console-standalone.jar";

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

pub(super) fn java() -> PathBuf {
    match std::env::var_os("JAVA_HOME") {
        Some(home) if !home.is_empty() => Path::new(&home).join("bin/java"),
        _ => PathBuf::from("java"),
    }
}

pub(super) fn javac() -> PathBuf {
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
