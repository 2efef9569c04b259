//! pytest, with a JUnit XML report per run, and a plugin of flakesense's own for `twice`.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::{id_suffix, relative_to};
use crate::confirm::choose::ChosenTest;
use crate::confirm::condition::Condition;
use crate::confirm::process::Invocation;

/// Files that make a directory pytest's root: its configuration files, and a package's.
pub const ROOT_MARKERS: [&str; 7] = crate::extract::PYTEST_CONFIG_FILES;

/// The `twice` plugin, written next to the runs and loaded with `-p`.
const TWICE_PLUGIN: &str = include_str!("../twice/flakesense_twice.py");
const TWICE_MODULE: &str = "flakesense_twice";

/// The project's virtual environment's interpreter, else `python3`.
pub fn interpreter(root: &Path, workspace_root: &Path) -> PathBuf {
    [root, workspace_root]
        .iter()
        .flat_map(|directory| {
            [".venv/bin/python", "venv/bin/python"].map(|venv| directory.join(venv))
        })
        .find(|python| python.is_file())
        .unwrap_or_else(|| PathBuf::from("python3"))
}

#[derive(Debug)]
pub struct Prepared {
    python: PathBuf,
    root: PathBuf,
    node_ids: Vec<String>,
    plugin_directory: PathBuf,
}

pub fn prepare(
    python: &Path,
    root: &Path,
    tests: &[&ChosenTest],
    scratch: &Path,
) -> Result<Prepared> {
    let plugin_directory = scratch.join("pytest-plugin");
    std::fs::create_dir_all(&plugin_directory)
        .and_then(|()| {
            std::fs::write(
                plugin_directory.join(format!("{TWICE_MODULE}.py")),
                TWICE_PLUGIN,
            )
        })
        .with_context(|| {
            format!(
                "cannot write the twice plugin to {}",
                plugin_directory.display()
            )
        })?;
    Ok(Prepared {
        python: python.to_path_buf(),
        root: root.to_path_buf(),
        node_ids: tests.iter().map(|test| node_id(test, root)).collect(),
        plugin_directory,
    })
}

/// pytest's node id of a test run from `root`.
pub fn node_id(test: &ChosenTest, root: &Path) -> String {
    format!("{}::{}", relative_to(&test.file, root), id_suffix(test))
}

impl Prepared {
    pub fn invocation(&self, condition: Condition, report: &Path) -> Vec<Invocation> {
        let mut invocation = Invocation::new(&self.python, &self.root)
            .args([
                "-m",
                "pytest",
                "-p",
                "no:cacheprovider",
                "-o",
                "junit_logging=no",
            ])
            .arg("--rootdir")
            .arg(&self.root)
            .arg(format!(
                "--junitxml={}",
                report.join("report.xml").display()
            ))
            // The working tree is left as it was: no `__pycache__` from this run.
            .env("PYTHONDONTWRITEBYTECODE", "1");
        if condition == Condition::Twice {
            let mut path = OsString::from(&self.plugin_directory);
            if let Some(existing) = std::env::var_os("PYTHONPATH").filter(|path| !path.is_empty()) {
                path.push(":");
                path.push(existing);
            }
            invocation = invocation
                .args(["-p", TWICE_MODULE])
                .env("PYTHONPATH", path);
        }
        vec![invocation.args(&self.node_ids)]
    }
}
