//! Settings sent by editors: `initializationOptions`, `workspace/configuration` and
//! `workspace/didChangeConfiguration`, read into the [`Config`] that `flakesense.toml` also fills.

use std::path::Path;

use serde_json::Value;

use crate::config::Config;

/// Editor settings, read leniently: editors put their own keys beside ours (VS Code sends
/// `trace`, clients wrap everything in `{"flakesense": ...}`), so unknown keys are skipped and
/// named in `ignored` instead of rejecting the whole object. Relative model paths are resolved
/// against the workspace root, as in `flakesense.toml`.
#[derive(Debug, Default)]
pub struct EditorSettings {
    pub config: Config,
    /// Keys that are not settings of flakesense.
    pub ignored: Vec<String>,
    /// Why the settings were refused, when they were; `config` is then the defaults.
    pub error: Option<String>,
}

pub fn read_editor_settings(value: Option<Value>, root: Option<&Path>) -> EditorSettings {
    let mut value = match value {
        None | Some(Value::Null) => return EditorSettings::default(),
        Some(value) => value,
    };
    if let Some(inner) = value.get_mut("flakesense")
        && inner.is_object()
    {
        value = inner.take();
    }
    let Value::Object(object) = value else {
        return EditorSettings {
            error: Some(format!("settings must be an object, found `{value}`")),
            ..EditorSettings::default()
        };
    };
    let mut known = serde_json::Map::new();
    let mut ignored = Vec::new();
    for (key, setting) in object {
        if setting.is_null() {
            // An editor's way of saying "not set".
            continue;
        }
        let alone = Value::Object([(key.clone(), Value::Null)].into_iter().collect());
        // A key is ours when, alone and unset, it is not refused as unknown.
        let is_known = match serde_json::from_value::<Config>(alone) {
            Ok(_) => true,
            Err(error) => !error.to_string().contains("unknown field"),
        };
        if is_known {
            known.insert(key, setting);
        } else {
            ignored.push(key);
        }
    }
    match Config::from_json(Value::Object(known)) {
        Ok(mut config) => {
            if let Some(root) = root {
                for model in &mut config.models {
                    if model.is_relative() {
                        *model = root.join(&*model);
                    }
                }
            }
            EditorSettings {
                config,
                ignored,
                error: None,
            }
        }
        Err(error) => EditorSettings {
            config: Config::default(),
            ignored,
            error: Some(format!("{error:#}")),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn foreign_keys_are_skipped_and_named() {
        let settings = read_editor_settings(
            Some(json!({"flakesense": {"k": 3, "trace": {"server": "verbose"}, "debounceMs": 0}})),
            None,
        );
        assert_eq!(settings.error, None);
        assert_eq!(settings.config.k, Some(3));
        assert_eq!(settings.config.debounce_ms, Some(0));
        assert_eq!(settings.ignored, ["trace"]);
    }

    #[test]
    fn bad_values_are_refused_with_a_reason() {
        let settings = read_editor_settings(Some(json!({"warningThreshold": 2.0})), None);
        assert!(
            settings
                .error
                .is_some_and(|error| error.contains("between 0 and 1"))
        );
        assert_eq!(settings.config, Config::default());
        let settings = read_editor_settings(Some(json!({"k": "seven"})), None);
        assert!(settings.error.is_some());
    }

    #[test]
    fn relative_models_resolve_against_the_root() {
        let settings = read_editor_settings(
            Some(json!({"models": ["ci/flaky.idx", "/abs/m.idx"]})),
            Some(Path::new("/work/project")),
        );
        assert_eq!(
            settings.config.models,
            [
                Path::new("/work/project/ci/flaky.idx"),
                Path::new("/abs/m.idx")
            ]
        );
        assert_eq!(read_editor_settings(None, None).config, Config::default());
    }
}
