//! Settings shared by the language server and `flakesense check`: a `flakesense.toml` at the
//! workspace root, overridden by the editor's settings or by command-line flags.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::Deserialize;

use crate::analysis::Thresholds;

/// The name of the settings file at a workspace root.
pub const CONFIG_FILE: &str = "flakesense.toml";

/// The language server's default wait after a keystroke, in milliseconds: long enough that a
/// burst of typing is judged once, short enough to feel immediate.
pub const DEFAULT_DEBOUNCE_MS: u64 = 150;

/// User settings. Every field is optional so that layers can be merged: defaults, then
/// `flakesense.toml`, then the editor's settings or the command line.
///
/// Keys are kebab-case in TOML (`warning-threshold`) and accepted in camelCase from editors
/// (`warningThreshold`).
/// The most neighbours a vote may take, from a flag or a settings file: FLAST votes with 7, and
/// a search keeps room for every neighbour it may return.
pub const MAX_K: usize = 10_000;
/// `flakesense.toml` holds a few settings; anything this large is not one.
const MAX_CONFIG_BYTES: u64 = 1 << 20;

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Config {
    /// A score at or above this is a warning (default 0.95).
    #[serde(alias = "warningThreshold")]
    pub warning_threshold: Option<f64>,
    /// A score above this is reported as information (default 0.5).
    #[serde(alias = "informationThreshold")]
    pub information_threshold: Option<f64>,
    /// Neighbours that vote (default 7).
    pub k: Option<usize>,
    /// Further model files consulted beside the shipped default and the project's own index.
    /// Relative paths are relative to the workspace root.
    #[serde(default)]
    pub models: Vec<PathBuf>,
    /// Glob patterns of files never analysed, relative to the workspace root (`vendor/**`).
    #[serde(default)]
    pub exclude: Vec<String>,
    /// Whether the default model shipped for each language is consulted (default true). Turn it
    /// off to rely only on the project's own index and the configured models.
    #[serde(alias = "defaultModels")]
    pub default_models: Option<bool>,
    /// How long the language server waits after a keystroke before judging the file, in
    /// milliseconds (default 150). Each keystroke within that time restarts the wait.
    #[serde(alias = "debounceMs")]
    pub debounce_ms: Option<u64>,
    /// How `flakesense confirm` runs tests (the `[confirm]` table). Read from `flakesense.toml`
    /// only, never from an editor's settings: it names commands to run, and its tables per
    /// language do not fit an editor's flat settings.
    #[serde(skip)]
    pub confirm: Option<ConfirmConfig>,
    /// What is wrong with `flakesense.toml`'s `[confirm]` table, which is then left out: only
    /// `confirm` refuses to go on; `check`, `predict` and the editor warn
    /// ([`Config::confirm_warning`]) and judge as usual.
    #[serde(skip)]
    pub confirm_error: Option<String>,
}

/// The `[confirm]` table: defaults of `flakesense confirm` and how each language's tests are run.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct ConfirmConfig {
    /// Runs per condition (default 20).
    pub runs: Option<u32>,
    /// Seconds one run may take (default 300).
    pub timeout: Option<u64>,
    /// The conditions run by default (all five).
    pub conditions: Option<Vec<String>>,
    /// A command for the tests of every language, `{tests}` and `{report}` filled in.
    pub command: Option<String>,
    pub rust: Option<RunnerConfig>,
    pub python: Option<RunnerConfig>,
    pub java: Option<RunnerConfig>,
}

/// How one language's tests are run; every field optional, the runner detected otherwise.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RunnerConfig {
    /// `cargo` or `nextest` (Rust), `pytest` (Python), `maven`, `gradle` or `junit-console`
    /// (Java).
    pub runner: Option<String>,
    /// A command template holding `{tests}` and `{report}`, run by `sh -c` at the workspace root.
    pub command: Option<String>,
    /// For the JUnit Platform console launcher: the test classes and their dependencies,
    /// relative to the workspace root (`build/classes`, `lib/*`).
    #[serde(default)]
    pub classpath: Vec<String>,
    /// The console launcher's standalone jar (default: Debian's
    /// `/usr/share/java/junit-platform-console-standalone.jar`).
    pub launcher: Option<PathBuf>,
}

impl ConfirmConfig {
    pub fn for_language(&self, language: crate::language::Language) -> Option<&RunnerConfig> {
        match language {
            crate::language::Language::Rust => self.rust.as_ref(),
            crate::language::Language::Python => self.python.as_ref(),
            crate::language::Language::Java => self.java.as_ref(),
        }
    }

    fn validate(&self) -> Result<()> {
        if self.runs == Some(0) {
            bail!("[confirm] runs must be at least 1");
        }
        if self.timeout == Some(0) {
            bail!("[confirm] timeout must be at least 1 second");
        }
        let tables = [
            ("rust", &self.rust),
            ("python", &self.python),
            ("java", &self.java),
        ];
        let commands = std::iter::once(("confirm", self.command.as_ref())).chain(
            tables.iter().map(|(name, table)| {
                (
                    *name,
                    table.as_ref().and_then(|table| table.command.as_ref()),
                )
            }),
        );
        for (table, command) in commands {
            if let Some(command) = command
                && !command.contains("{tests}")
            {
                bail!("the command of [{table}] must hold {{tests}}: `{command}`");
            }
        }
        for (name, table) in tables {
            let known: &[&str] = match name {
                "rust" => &["cargo", "nextest"],
                "python" => &["pytest"],
                _ => &["maven", "gradle", "junit-console"],
            };
            if let Some(runner) = table.as_ref().and_then(|table| table.runner.as_deref())
                && !known.contains(&runner)
            {
                bail!(
                    "[confirm.{name}] runner `{runner}` is not one of {}",
                    known.join(", ")
                );
            }
        }
        Ok(())
    }
}

impl Config {
    /// Reads `flakesense.toml` from a workspace root; a missing file gives the defaults.
    pub fn load(root: &Path) -> Result<Config> {
        let path = root.join(CONFIG_FILE);
        let text = match crate::files::read_regular(&path, MAX_CONFIG_BYTES) {
            Ok(bytes) => String::from_utf8(bytes)
                .with_context(|| format!("invalid {}: not UTF-8", path.display()))?,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Config::default());
            }
            Err(error) => {
                return Err(error).with_context(|| format!("cannot read {}", path.display()));
            }
        };
        let mut table: toml::Table =
            toml::from_str(&text).with_context(|| format!("invalid {}", path.display()))?;
        let confirm = table
            .remove("confirm")
            .map(|confirm| confirm.try_into::<ConfirmConfig>())
            .transpose()
            .map_err(anyhow::Error::from)
            .and_then(|confirm| {
                if let Some(confirm) = &confirm {
                    confirm.validate()?;
                }
                Ok(confirm)
            })
            .map_err(|error| format!("invalid {}: its [confirm] table: {error:#}", path.display()));
        let mut config: Config = toml::Value::Table(table)
            .try_into()
            .with_context(|| format!("invalid {}", path.display()))?;
        match confirm {
            Ok(confirm) => config.confirm = confirm,
            Err(error) => config.confirm_error = Some(error),
        }
        config.models = config
            .models
            .into_iter()
            .map(|model| {
                if model.is_relative() {
                    root.join(model)
                } else {
                    model
                }
            })
            .collect();
        config
            .validate()
            .with_context(|| format!("invalid {}", path.display()))?;
        Ok(config)
    }

    /// The warning a command that judges tests gives for a bad `[confirm]` table.
    pub fn confirm_warning(&self) -> Option<String> {
        self.confirm_error.as_ref().map(|error| {
            format!("{error} (left out: `flakesense confirm` refuses it, judging goes on)")
        })
    }

    /// Parses settings sent by an editor (`initializationOptions`, `workspace/configuration`).
    pub fn from_json(value: serde_json::Value) -> Result<Config> {
        if value.is_null() {
            return Ok(Config::default());
        }
        let config: Config =
            serde_json::from_value(value).context("invalid flakesense settings")?;
        config.validate()?;
        Ok(config)
    }

    /// Settings of `other` win over these where both have a value; lists are concatenated.
    pub fn merged_with(mut self, other: Config) -> Config {
        self.warning_threshold = other.warning_threshold.or(self.warning_threshold);
        self.information_threshold = other.information_threshold.or(self.information_threshold);
        self.k = other.k.or(self.k);
        self.default_models = other.default_models.or(self.default_models);
        self.debounce_ms = other.debounce_ms.or(self.debounce_ms);
        self.confirm = other.confirm.or(self.confirm);
        self.confirm_error = other.confirm_error.or(self.confirm_error);
        self.models.extend(other.models);
        self.exclude.extend(other.exclude);
        self
    }

    pub fn validate(&self) -> Result<()> {
        for (name, value) in [
            ("warning-threshold", self.warning_threshold),
            ("information-threshold", self.information_threshold),
        ] {
            if let Some(value) = value
                && !(0.0..=1.0).contains(&value)
            {
                bail!("{name} must lie between 0 and 1, found {value}");
            }
        }
        if let Some(k) = self.k
            && !(1..=MAX_K).contains(&k)
        {
            bail!("k must lie between 1 and {MAX_K}, found {k}");
        }
        let thresholds = self.thresholds();
        if thresholds.information > thresholds.warning {
            bail!(
                "information-threshold ({}) must not exceed warning-threshold ({})",
                thresholds.information,
                thresholds.warning
            );
        }
        for pattern in &self.exclude {
            globset::Glob::new(pattern)
                .with_context(|| format!("invalid exclude pattern `{pattern}`"))?;
        }
        if let Some(confirm) = &self.confirm {
            confirm.validate()?;
        }
        Ok(())
    }

    /// The thresholds these settings give, defaults filled in.
    pub fn thresholds(&self) -> Thresholds {
        let defaults = Thresholds::default();
        Thresholds {
            k: self.k.unwrap_or(defaults.k),
            warning: self.warning_threshold.unwrap_or(defaults.warning),
            information: self.information_threshold.unwrap_or(defaults.information),
        }
    }

    /// Whether the shipped default models are consulted.
    pub fn uses_default_models(&self) -> bool {
        self.default_models.unwrap_or(true)
    }

    /// The language server's wait after a keystroke.
    pub fn debounce(&self) -> std::time::Duration {
        std::time::Duration::from_millis(self.debounce_ms.unwrap_or(DEFAULT_DEBOUNCE_MS))
    }

    /// A matcher for the exclude patterns; call after [`Config::validate`].
    pub fn exclude_matcher(&self) -> Result<globset::GlobSet> {
        let mut builder = globset::GlobSetBuilder::new();
        for pattern in &self.exclude {
            builder.add(globset::Glob::new(pattern)?);
        }
        Ok(builder.build()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_toml_and_resolves_model_paths() {
        let root = tempfile::tempdir().unwrap();
        std::fs::write(
            root.path().join(CONFIG_FILE),
            "warning-threshold = 0.9\nk = 5\nmodels = [\"ci/flaky.idx\"]\nexclude = [\"vendor/**\"]\n",
        )
        .unwrap();
        let config = Config::load(root.path()).unwrap();
        assert_eq!(
            config.thresholds(),
            Thresholds {
                k: 5,
                warning: 0.9,
                information: 0.5
            }
        );
        assert_eq!(config.models, [root.path().join("ci/flaky.idx")]);
        assert!(
            config
                .exclude_matcher()
                .unwrap()
                .is_match("vendor/lib/Test.java")
        );
    }

    #[test]
    fn a_missing_file_gives_defaults() {
        let root = tempfile::tempdir().unwrap();
        assert_eq!(Config::load(root.path()).unwrap(), Config::default());
        assert_eq!(Config::default().thresholds(), Thresholds::default());
    }

    #[test]
    fn errors_name_the_file_and_the_problem() {
        let root = tempfile::tempdir().unwrap();
        std::fs::write(root.path().join(CONFIG_FILE), "warning-treshold = 0.9\n").unwrap();
        let error = format!("{:#}", Config::load(root.path()).unwrap_err());
        assert!(
            error.contains(CONFIG_FILE) && error.contains("warning-treshold"),
            "{error}"
        );
        std::fs::write(
            root.path().join(CONFIG_FILE),
            "information-threshold = 0.99\n",
        )
        .unwrap();
        let error = format!("{:#}", Config::load(root.path()).unwrap_err());
        assert!(error.contains("must not exceed"), "{error}");
    }

    #[test]
    fn editor_settings_use_camel_case_and_win_when_merged() {
        let editor = Config::from_json(
            serde_json::json!({"warningThreshold": 0.8, "exclude": ["gen/**"], "debounceMs": 0}),
        )
        .unwrap();
        let file = Config {
            warning_threshold: Some(0.9),
            k: Some(3),
            ..Config::default()
        };
        let merged = file.merged_with(editor);
        assert_eq!(
            merged.thresholds(),
            Thresholds {
                k: 3,
                warning: 0.8,
                information: 0.5
            }
        );
        assert_eq!(merged.exclude, ["gen/**"]);
        assert_eq!(merged.debounce(), std::time::Duration::ZERO);
        assert!(merged.uses_default_models());
        assert!(Config::from_json(serde_json::json!({"k": 0})).is_err());
        assert_eq!(
            Config::from_json(serde_json::Value::Null).unwrap(),
            Config::default()
        );
    }

    #[test]
    fn the_confirm_table_comes_from_the_file_only() {
        let directory = tempfile::tempdir().unwrap();
        std::fs::write(
            directory.path().join(CONFIG_FILE),
            "k = 5\n[confirm]\nruns = 3\n[confirm.python]\ncommand = \"tox -- {tests} --junitxml={report}\"\n",
        )
        .unwrap();
        let config = Config::load(directory.path()).unwrap();
        assert_eq!(config.k, Some(5));
        let confirm = config.confirm.as_ref().expect("read");
        assert_eq!(confirm.runs, Some(3));
        // An editor's settings keep it: they carry no [confirm] of their own.
        let merged = config
            .clone()
            .merged_with(Config::from_json(serde_json::json!({"k": 7})).unwrap());
        assert_eq!(merged.confirm, config.confirm);
        assert!(Config::from_json(serde_json::json!({"confirm": {"runs": 3}})).is_err());
    }
}
