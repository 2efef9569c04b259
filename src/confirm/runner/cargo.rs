//! cargo test and cargo-nextest. cargo test's binaries are built once and then run directly, so
//! that a condition applies to the tests and not to cargo; nextest is driven whole, with a JUnit
//! report from a profile of flakesense's own (`--tool-config-file`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Result, bail};

use super::{id_suffix, relative_to};
use crate::confirm::choose::ChosenTest;
use crate::confirm::condition::{Condition, Host};
use crate::confirm::outcome::{self, CaseResult};
use crate::confirm::process::{self, Finished, Invocation, Stop};
use crate::history::names::spelling::rust_module_path;

/// How long building the test binaries may take.
const BUILD_TIMEOUT: Duration = Duration::from_secs(30 * 60);

/// The test binaries of a run and, per binary, the group's tests in it.
#[derive(Debug)]
pub struct Prepared {
    root: PathBuf,
    binaries: Vec<Binary>,
}

#[derive(Debug)]
struct Binary {
    executable: PathBuf,
    /// (position of the test in the group, libtest's name of it)
    tests: Vec<(usize, String)>,
}

/// libtest's name of a test: its module path within its binary, then its name.
pub fn filter_name(test: &ChosenTest, crate_root: &Path) -> String {
    let relative = relative_to(&test.file, crate_root);
    let mut path = rust_module_path(&relative);
    // Integration tests and `src/bin` targets are binaries of their own: their name leads the
    // module path, and libtest does not show it.
    if (relative.starts_with("tests/") || relative.starts_with("src/bin/")) && !path.is_empty() {
        path.remove(0);
    }
    path.extend(id_suffix(test).split("::").map(str::to_string));
    path.join("::")
}

/// The crate root file of the target a test file belongs to.
fn target_root(crate_root: &Path, relative: &str) -> Result<PathBuf> {
    let parts: Vec<&str> = relative.split('/').collect();
    let single_or_main = |directory: &str, name: &str, nested: bool| {
        if nested {
            crate_root.join(directory).join(name).join("main.rs")
        } else {
            crate_root.join(directory).join(name)
        }
    };
    match parts.as_slice() {
        ["tests", file] => Ok(single_or_main("tests", file, false)),
        ["tests", directory, ..] => Ok(single_or_main("tests", directory, true)),
        ["src", "bin", file] => Ok(single_or_main("src/bin", file, false)),
        ["src", "bin", directory, ..] => Ok(single_or_main("src/bin", directory, true)),
        ["src", ..] => {
            let library = crate_root.join("src/lib.rs");
            Ok(if library.is_file() {
                library
            } else {
                crate_root.join("src/main.rs")
            })
        }
        _ => bail!("{relative}: only tests under src/ and tests/ are run by confirm"),
    }
}

/// Builds the test binaries (`cargo test --no-run`) and finds each test's binary.
pub fn prepare(
    crate_root: &Path,
    tests: &[&ChosenTest],
    scratch: &Path,
    stop: &Stop,
) -> Result<Prepared> {
    let artifacts = build(crate_root, scratch, stop)?;
    let mut binaries: Vec<Binary> = Vec::new();
    for (position, test) in tests.iter().enumerate() {
        let relative = relative_to(&test.file, crate_root);
        let root_file = target_root(crate_root, &relative)?;
        let Some((_, executable)) = artifacts
            .iter()
            .find(|(source, _)| same_file(source, &root_file))
        else {
            bail!(
                "cargo built no test binary for {} (target {})",
                test.path,
                root_file.display()
            );
        };
        let name = filter_name(test, crate_root);
        match binaries
            .iter_mut()
            .find(|binary| binary.executable == *executable)
        {
            Some(binary) => binary.tests.push((position, name)),
            None => binaries.push(Binary {
                executable: executable.clone(),
                tests: vec![(position, name)],
            }),
        }
    }
    Ok(Prepared {
        root: crate_root.to_path_buf(),
        binaries,
    })
}

fn same_file(a: &Path, b: &Path) -> bool {
    a == b || matches!((a.canonicalize(), b.canonicalize()), (Ok(a), Ok(b)) if a == b)
}

/// `cargo test --no-run`: the test binaries with the crate root file each was built from.
fn build(crate_root: &Path, scratch: &Path, stop: &Stop) -> Result<Vec<(PathBuf, PathBuf)>> {
    let invocation = Invocation::new("cargo", crate_root).args([
        "test",
        "--no-run",
        "--message-format=json-render-diagnostics",
    ]);
    let finished = process::execute(
        &invocation,
        Condition::Plain,
        &Host::plain(),
        BUILD_TIMEOUT,
        &scratch.join("cargo-build"),
        stop,
    )?
    .map_err(|_| anyhow::anyhow!("stopped while building the tests"))?;
    if !finished.status.is_some_and(|status| status.success()) {
        bail!(
            "`{}` failed in {}:\n{}",
            invocation.display(),
            crate_root.display(),
            finished.stderr_tail(15)
        );
    }
    let mut artifacts = Vec::new();
    for line in finished.stdout_text().lines() {
        let Ok(message) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let is_test =
            message["reason"] == "compiler-artifact" && message["profile"]["test"] == true;
        if let (true, Some(executable), Some(source)) = (
            is_test,
            message["executable"].as_str(),
            message["target"]["src_path"].as_str(),
        ) {
            artifacts.push((PathBuf::from(source), PathBuf::from(executable)));
        }
    }
    if artifacts.is_empty() {
        bail!("`{}` reported no test binary", invocation.display());
    }
    Ok(artifacts)
}

impl Prepared {
    /// One command per binary, its tests one after the other (`--test-threads=1`) so that they
    /// do not load each other.
    pub fn invocations(&self) -> Vec<Invocation> {
        self.binaries
            .iter()
            .map(|binary| {
                Invocation::new(&binary.executable, &self.root)
                    .args(["--exact", "--test-threads=1", "--color=never"])
                    .args(binary.tests.iter().map(|(_, name)| name))
                    .env("CARGO_MANIFEST_DIR", &self.root)
                    .env("RUST_BACKTRACE", "0")
            })
            .collect()
    }

    /// Each binary's output gives the results of its tests.
    pub fn assign(&self, finished: &[Finished], tests: usize) -> Vec<Vec<CaseResult>> {
        let mut assigned = vec![Vec::new(); tests];
        for (binary, finished) in self.binaries.iter().zip(finished) {
            for result in outcome::parse_cargo_output(&finished.stdout_text()) {
                if let Some((position, _)) =
                    binary.tests.iter().find(|(_, name)| *name == result.name)
                {
                    assigned[*position].push(result);
                }
            }
        }
        assigned
    }
}

/// nextest's filter of the group's tests.
#[derive(Debug)]
pub struct PreparedNextest {
    root: PathBuf,
    filterset: String,
}

/// The profile flakesense adds with `--tool-config-file`, and its JUnit report.
const NEXTEST_PROFILE: &str = "flakesense-confirm";

pub fn prepare_nextest(
    crate_root: &Path,
    tests: &[&ChosenTest],
    _scratch: &Path,
) -> Result<PreparedNextest> {
    let filterset = tests
        .iter()
        .map(|test| format!("test(={})", filter_name(test, crate_root)))
        .collect::<Vec<_>>()
        .join(" | ");
    Ok(PreparedNextest {
        root: crate_root.to_path_buf(),
        filterset,
    })
}

impl PreparedNextest {
    /// `cargo nextest run` with a profile whose JUnit report lands in `report`. The profile's
    /// file is written there too: it names the report's path, which differs per run.
    pub fn invocations(&self, condition: Condition, report: &Path) -> Vec<Invocation> {
        let config = report.join("nextest.toml");
        let text = format!(
            "[profile.{NEXTEST_PROFILE}]\nfail-fast = false\nretries = 0\n\n[profile.{NEXTEST_PROFILE}.junit]\npath = {}\n",
            toml_string(&report.join("junit.xml").to_string_lossy())
        );
        // A run whose profile cannot be written fails without a report, which is reported.
        let _ = std::fs::create_dir_all(report).and_then(|()| std::fs::write(&config, text));
        let mut invocation = Invocation::new("cargo", &self.root)
            .args(["nextest", "run", "--no-fail-fast", "--test-threads=1"])
            .arg("--tool-config-file")
            .arg(format!("flakesense:{}", config.display()))
            .args(["--profile", NEXTEST_PROFILE, "-E", &self.filterset])
            .env("RUST_BACKTRACE", "0");
        if condition == Condition::Offline {
            invocation = invocation.arg("--offline");
        }
        vec![invocation]
    }
}

fn toml_string(text: &str) -> String {
    format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract::TestMethod;
    use crate::language::Language;

    fn test(path: &str, id_rest: &str) -> ChosenTest {
        ChosenTest {
            test: TestMethod {
                language: Language::Rust,
                name: id_rest.rsplit("::").next().unwrap().to_string(),
                id: format!("{path}::{id_rest}"),
                range: 0..0,
                name_range: 0..0,
                code: String::new(),
                ignored: false,
                comments_above: 0..0,
                markers: Vec::new(),
                head_comments: Vec::new(),
                inherited: None,
            },
            file: Path::new("/repo/crate").join(path.trim_start_matches("crate/")),
            path: path.to_string(),
            line: 1,
            column: 1,
            score: None,
            predicted: None,
            signals: Vec::new(),
        }
    }

    #[test]
    fn filter_names_follow_the_module_path_within_the_binary() {
        let root = Path::new("/repo/crate");
        assert_eq!(
            filter_name(&test("crate/src/lib.rs", "tests::adds"), root),
            "tests::adds"
        );
        assert_eq!(
            filter_name(&test("crate/src/shop/cache.rs", "tests::refreshes"), root),
            "shop::cache::tests::refreshes"
        );
        assert_eq!(
            filter_name(&test("crate/tests/api.rs", "connects"), root),
            "connects"
        );
        assert_eq!(
            filter_name(&test("crate/tests/it/db.rs", "inserts"), root),
            "db::inserts"
        );
        assert_eq!(
            filter_name(&test("crate/src/bin/tool.rs", "tests::parses"), root),
            "tests::parses"
        );
    }

    #[test]
    fn targets_are_found_by_their_root_file() {
        let root = Path::new("/repo/crate");
        assert_eq!(
            target_root(root, "tests/api.rs").unwrap(),
            root.join("tests/api.rs")
        );
        assert_eq!(
            target_root(root, "tests/it/db.rs").unwrap(),
            root.join("tests/it/main.rs")
        );
        assert_eq!(
            target_root(root, "src/bin/tool.rs").unwrap(),
            root.join("src/bin/tool.rs")
        );
        assert!(target_root(root, "examples/demo.rs").is_err());
    }
}
