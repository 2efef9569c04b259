//! Reads pytest's collection settings from the text of its configuration files, as pytest's
//! "Configuration" documentation describes them. No IO: the caller finds and reads the files.
//!
//! pytest takes the first file holding a pytest section, looking in the directory where it
//! starts and then in each parent, and within one directory in the order of [`CONFIG_FILES`].
//! `pytest.toml` and `pytest.ini` (dotted or not) count even without a section ("they take
//! precedence over other files, even when empty"); `pyproject.toml` counts with a
//! `[tool.pytest.ini_options]` table (or pytest 9's native `[tool.pytest]`), `tox.ini` with a
//! `[pytest]` section and `setup.cfg` with a `[tool:pytest]` section.

use super::discovery::PytestSettings;

/// The files pytest reads its settings from, in its order of precedence within a directory.
pub const CONFIG_FILES: [&str; 7] = [
    "pytest.toml",
    ".pytest.toml",
    "pytest.ini",
    ".pytest.ini",
    "pyproject.toml",
    "tox.ini",
    "setup.cfg",
];

/// The settings flakesense reads; pytest declares all four with type `args`.
const KEYS: [&str; 4] = [
    "python_files",
    "python_classes",
    "python_functions",
    "norecursedirs",
];

/// A configuration file pytest would refuse.
#[derive(Debug, thiserror::Error)]
#[error("{file_name} is not valid TOML: {message}")]
pub struct ConfigError {
    file_name: String,
    message: String,
}

impl PytestSettings {
    /// The settings of the configuration file `file_name` (one of [`CONFIG_FILES`]) whose text is
    /// `text`; `Ok(None)` when the file holds no pytest section, so pytest would look further up.
    /// Settings the file leaves out keep pytest's defaults.
    pub fn from_config_file(
        file_name: &str,
        text: &str,
    ) -> Result<Option<PytestSettings>, ConfigError> {
        let values = match file_name {
            "pytest.toml" | ".pytest.toml" => {
                let table = parse_toml(file_name, text)?;
                Some(toml_values(table.get("pytest"), None))
            }
            "pyproject.toml" => {
                let table = parse_toml(file_name, text)?;
                let pytest = table
                    .get("tool")
                    .and_then(|tool| tool.get("pytest"))
                    .filter(|pytest| pytest.is_table());
                pytest.map(|pytest| toml_values(Some(pytest), pytest.get("ini_options")))
            }
            "pytest.ini" | ".pytest.ini" => Some(ini_values(text, "pytest").unwrap_or_default()),
            "tox.ini" => ini_values(text, "pytest"),
            "setup.cfg" => ini_values(text, "tool:pytest"),
            _ => None,
        };
        Ok(values.map(|[files, classes, functions, norecursedirs]| {
            let defaults = PytestSettings::default();
            let settings = PytestSettings::new(
                files.as_deref().unwrap_or(defaults.files()),
                classes.as_deref().unwrap_or(defaults.classes()),
                functions.as_deref().unwrap_or(defaults.functions()),
            );
            // pytest's defaults, compiled once, unless the project sets its own.
            match norecursedirs {
                Some(norecursedirs) => settings.with_norecursedirs(&norecursedirs),
                None => settings,
            }
        }))
    }
}

/// The value of each of [`KEYS`] that the file sets.
type Values = [Option<Vec<String>>; 4];

fn parse_toml(file_name: &str, text: &str) -> Result<toml::Table, ConfigError> {
    text.parse::<toml::Table>().map_err(|error| ConfigError {
        file_name: file_name.to_string(),
        message: error.message().to_string(),
    })
}

/// The keys of a native table, each falling back to an INI-compatible `ini_options` table. An
/// array is taken as it is; a string is split as pytest splits `args` values.
fn toml_values(native: Option<&toml::Value>, ini_options: Option<&toml::Value>) -> Values {
    KEYS.map(|key| {
        let value = native
            .and_then(|table| table.get(key))
            .or_else(|| ini_options.and_then(|table| table.get(key)))?;
        match value {
            toml::Value::String(text) => Some(split_args(text)),
            toml::Value::Array(items) => Some(
                items
                    .iter()
                    .filter_map(|item| item.as_str().map(String::from))
                    .collect(),
            ),
            _ => None,
        }
    })
}

/// The keys of `section` in an INI file read as pytest's `iniconfig` reads it: `key = value` or
/// `key: value`, indented lines continuing a value, whole-line comments starting with `#` or `;`.
/// `None` when the section is missing.
fn ini_values(text: &str, section: &str) -> Option<Values> {
    let mut in_section = false;
    let mut found = false;
    let mut values: Values = Default::default();
    // The key whose value the next indented line continues, and that value so far.
    let mut current: Option<(usize, String)> = None;
    let finish = |current: &mut Option<(usize, String)>, values: &mut Values| {
        if let Some((index, value)) = current.take() {
            values[index] = Some(split_args(&value));
        }
    };
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with(['#', ';']) {
            continue;
        }
        if line.starts_with('[') {
            finish(&mut current, &mut values);
            let name = trimmed
                .strip_prefix('[')
                .and_then(|rest| rest.split(']').next())
                .unwrap_or_default()
                .trim();
            in_section = name == section;
            found |= in_section;
            continue;
        }
        if !in_section {
            continue;
        }
        if line.starts_with(char::is_whitespace) {
            if let Some((_, value)) = current.as_mut() {
                value.push('\n');
                value.push_str(trimmed);
            }
            continue;
        }
        finish(&mut current, &mut values);
        let Some(at) = line.find(['=', ':']) else {
            continue;
        };
        let key = line[..at].trim();
        let value = line[at + 1..].trim();
        if let Some(index) = KEYS.iter().position(|known| *known == key) {
            current = Some((index, value.to_string()));
        }
    }
    finish(&mut current, &mut values);
    found.then_some(values)
}

/// Splits a value as `shlex.split` does, which pytest applies to `args` settings: whitespace
/// separates, quotes group, a backslash escapes. Unbalanced quotes, which pytest refuses, fall
/// back to splitting on whitespace.
fn split_args(value: &str) -> Vec<String> {
    shell_words(value).unwrap_or_else(|| value.split_whitespace().map(String::from).collect())
}

fn shell_words(value: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = value.chars();
    while let Some(char) = chars.next() {
        match char {
            char if char.is_whitespace() => {
                words.extend(word.take());
            }
            '\'' => {
                let word = word.get_or_insert_with(String::new);
                loop {
                    match chars.next()? {
                        '\'' => break,
                        other => word.push(other),
                    }
                }
            }
            '"' => {
                let word = word.get_or_insert_with(String::new);
                loop {
                    match chars.next()? {
                        '"' => break,
                        '\\' => match chars.next()? {
                            escaped @ ('\\' | '"' | '$' | '`') => word.push(escaped),
                            '\n' => {}
                            other => {
                                word.push('\\');
                                word.push(other);
                            }
                        },
                        other => word.push(other),
                    }
                }
            }
            '\\' => word.get_or_insert_with(String::new).push(chars.next()?),
            other => word.get_or_insert_with(String::new).push(other),
        }
    }
    words.extend(word);
    Some(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(file_name: &str, text: &str) -> Option<PytestSettings> {
        PytestSettings::from_config_file(file_name, text).expect("valid")
    }

    #[test]
    fn each_file_kind_has_its_own_section() {
        let celery = |settings: Option<PytestSettings>| {
            settings.is_some_and(|settings| settings.classes() == ["test_*"])
        };
        assert!(celery(read(
            "setup.cfg",
            "[metadata]\nname = celery\n\n[tool:pytest]\ntestpaths = t/unit/\npython_classes = test_*\n"
        )));
        assert!(celery(read(
            "tox.ini",
            "[pytest]\npython_classes = test_*\n"
        )));
        assert!(celery(read(
            "pytest.ini",
            "[pytest]\npython_classes: test_*\n"
        )));
        assert!(celery(read(
            "pyproject.toml",
            "[tool.pytest.ini_options]\npython_classes = \"test_*\"\n"
        )));
        assert!(celery(read(
            "pyproject.toml",
            "[tool.pytest]\npython_classes = [\"test_*\"]\n"
        )));
        assert!(celery(read(
            "pytest.toml",
            "[pytest]\npython_classes = [\"test_*\"]\n"
        )));
        // The wrong section is no configuration, except in pytest.ini.
        assert_eq!(
            read("setup.cfg", "[pytest]\npython_classes = test_*\n"),
            None
        );
        assert_eq!(
            read("tox.ini", "[tool:pytest]\npython_classes = test_*\n"),
            None
        );
        assert_eq!(
            read("pyproject.toml", "[tool.black]\nline-length = 99\n"),
            None
        );
        assert_eq!(read("pytest.ini", ""), Some(PytestSettings::default()));
        assert_eq!(read("pytest.toml", ""), Some(PytestSettings::default()));
        assert_eq!(read("README.md", "[pytest]\n"), None);
    }

    #[test]
    fn values_are_split_like_shell_words_and_continue_on_indented_lines() {
        let settings = read(
            "tox.ini",
            "[pytest]\naddopts = -ra\npython_files =\n    check_*.py\n\n    *_check.py \"with space.py\"\n# a comment\npython_functions = check_ 'should '\n[other]\npython_classes = Ignored\n",
        )
        .expect("has a section");
        assert_eq!(
            settings.files(),
            ["check_*.py", "*_check.py", "with space.py"]
        );
        assert_eq!(settings.functions(), ["check_", "should "]);
        assert_eq!(settings.classes(), ["Test"]);
    }

    #[test]
    fn norecursedirs_is_read_where_the_other_settings_are() {
        let settings = read(
            "pyproject.toml",
            "[tool.pytest.ini_options]\nnorecursedirs = [\"docs\", \"*.egg\"]\n",
        )
        .expect("has a section");
        assert_eq!(settings.norecursedirs(), ["docs", "*.egg"]);
        let settings = read(
            "setup.cfg",
            "[tool:pytest]\nnorecursedirs = .git fixtures\n",
        )
        .expect("has a section");
        assert_eq!(settings.norecursedirs(), [".git", "fixtures"]);
        let settings = read("pytest.ini", "[pytest]\n").expect("pytest.ini");
        assert_eq!(
            settings.norecursedirs(),
            super::super::discovery::DEFAULT_NORECURSEDIRS
        );
    }

    #[test]
    fn native_keys_win_over_ini_options_and_lists_are_kept_whole() {
        let settings = read(
            "pyproject.toml",
            "[tool.pytest]\npython_files = [\"a b.py\"]\n[tool.pytest.ini_options]\npython_files = \"ignored.py\"\npython_functions = \"check_ verify_\"\n",
        )
        .expect("has a section");
        assert_eq!(settings.files(), ["a b.py"]);
        assert_eq!(settings.functions(), ["check_", "verify_"]);
    }

    #[test]
    fn an_empty_value_collects_nothing_by_that_rule() {
        let settings = read("pytest.ini", "[pytest]\npython_classes =\n").expect("pytest.ini");
        assert!(settings.classes().is_empty());
        assert!(!settings.collects_class("TestA"));
    }

    #[test]
    fn invalid_toml_is_an_error_naming_the_file() {
        let error = PytestSettings::from_config_file("pyproject.toml", "[tool.pytest\n")
            .expect_err("invalid");
        assert!(error.to_string().contains("pyproject.toml"), "{error}");
    }

    #[test]
    fn shell_words_follow_shlex() {
        assert_eq!(
            shell_words("a  b\tc"),
            Some(vec!["a".into(), "b".into(), "c".into()])
        );
        assert_eq!(
            shell_words(r#"'a b' "c \"d\"" e\ f"#),
            Some(vec!["a b".into(), "c \"d\"".into(), "e f".into()])
        );
        assert_eq!(shell_words("''"), Some(vec![String::new()]));
        assert_eq!(shell_words("'open"), None);
        assert_eq!(split_args("'open x"), ["'open", "x"]);
    }
}
