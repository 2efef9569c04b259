//! Zed extension registering the flakesense language server (`flakesense serve`) for Java, Python
//! and Rust.
//!
//! Zed's settings can configure a language server that Zed or an extension registered, but cannot
//! register a new one: this extension is that registration, and nothing more. The command comes
//! from the `lsp.flakesense.binary` settings or the worktree's `PATH`; the server's settings from
//! `lsp.flakesense.settings`.

use zed_extension_api::{self as zed, LanguageServerId, Result, serde_json, settings::LspSettings};

/// The server's name in `extension.toml` and under `lsp` in settings.json.
const SERVER_NAME: &str = "flakesense";

/// The executable looked up on the worktree's `PATH` when settings name none.
const DEFAULT_PROGRAM: &str = "flakesense";

struct FlakesenseExtension;

impl zed::Extension for FlakesenseExtension {
    fn new() -> Self {
        FlakesenseExtension
    }

    fn language_server_command(
        &mut self,
        _language_server_id: &LanguageServerId,
        worktree: &zed::Worktree,
    ) -> Result<zed::Command> {
        let binary = LspSettings::for_worktree(SERVER_NAME, worktree)?.binary;
        let (path, arguments, env) = match binary {
            Some(binary) => (binary.path, binary.arguments, binary.env),
            None => (None, None, None),
        };
        let mut command_env = worktree.shell_env();
        command_env.extend(env.unwrap_or_default());
        Ok(zed::Command {
            command: resolve_program(path.as_deref(), |name| worktree.which(name))?,
            args: arguments.unwrap_or_else(|| vec!["serve".to_string()]),
            env: command_env,
        })
    }

    fn language_server_initialization_options(
        &mut self,
        _language_server_id: &LanguageServerId,
        worktree: &zed::Worktree,
    ) -> Result<Option<serde_json::Value>> {
        let settings = LspSettings::for_worktree(SERVER_NAME, worktree)?;
        Ok(initialization_options(settings))
    }

    fn language_server_workspace_configuration(
        &mut self,
        _language_server_id: &LanguageServerId,
        worktree: &zed::Worktree,
    ) -> Result<Option<serde_json::Value>> {
        let settings = LspSettings::for_worktree(SERVER_NAME, worktree)?;
        Ok(workspace_configuration(settings.settings))
    }
}

/// The program to start: `binary.path` when it is a path, looked up on `PATH` when it is a bare
/// name or absent.
fn resolve_program(
    configured: Option<&str>,
    which: impl Fn(&str) -> Option<String>,
) -> Result<String> {
    let configured = configured.map(str::trim).filter(|path| !path.is_empty());
    match configured {
        Some(path) if path.contains('/') || path.contains('\\') => Ok(path.to_string()),
        Some(name) => which(name).ok_or_else(|| {
            format!("lsp.flakesense.binary.path is \"{name}\", which is not on the PATH of this worktree")
        }),
        None => which(DEFAULT_PROGRAM).ok_or_else(|| {
            "flakesense is not on the PATH of this worktree: install it with \
             `cargo install --locked --path <flakesense checkout>`, or set \
             lsp.flakesense.binary.path in settings.json"
                .to_string()
        }),
    }
}

/// `lsp.flakesense.initialization_options` when given, else the same object as
/// `lsp.flakesense.settings`, so that the settings need writing once.
fn initialization_options(settings: LspSettings) -> Option<serde_json::Value> {
    settings.initialization_options.or(settings.settings)
}

/// Zed answers `workspace/configuration` by looking the requested section up in this object, so the
/// settings go under the server's section, `flakesense`.
fn workspace_configuration(settings: Option<serde_json::Value>) -> Option<serde_json::Value> {
    settings.map(|settings| serde_json::json!({ SERVER_NAME: settings }))
}

zed::register_extension!(FlakesenseExtension);

#[cfg(test)]
mod tests {
    use super::*;

    fn on_path(name: &str) -> Option<String> {
        (name == "flakesense").then(|| "/home/ada/.cargo/bin/flakesense".to_string())
    }

    #[test]
    fn finds_the_program_on_path_unless_settings_give_a_path() {
        assert_eq!(
            resolve_program(None, on_path).unwrap(),
            "/home/ada/.cargo/bin/flakesense"
        );
        assert_eq!(
            resolve_program(Some(" "), on_path).unwrap(),
            "/home/ada/.cargo/bin/flakesense"
        );
        assert_eq!(
            resolve_program(Some("flakesense"), on_path).unwrap(),
            "/home/ada/.cargo/bin/flakesense"
        );
        assert_eq!(
            resolve_program(Some("/opt/flakesense/bin/flakesense"), on_path).unwrap(),
            "/opt/flakesense/bin/flakesense"
        );
    }

    #[test]
    fn a_missing_program_says_how_to_install_it() {
        let error = resolve_program(None, |_| None).unwrap_err();
        assert!(error.contains("cargo install --locked --path"), "{error}");
        let error = resolve_program(Some("flakesense-dev"), |_| None).unwrap_err();
        assert!(error.contains("\"flakesense-dev\""), "{error}");
    }

    #[test]
    fn settings_become_initialization_options_and_the_flakesense_section() {
        let settings = serde_json::json!({ "warningThreshold": 0.9, "exclude": ["vendor/**"] });
        let lsp_settings = LspSettings {
            settings: Some(settings.clone()),
            ..LspSettings::default()
        };
        assert_eq!(initialization_options(lsp_settings), Some(settings.clone()));
        assert_eq!(
            workspace_configuration(Some(settings.clone())),
            Some(serde_json::json!({ "flakesense": settings }))
        );
        assert_eq!(workspace_configuration(None), None);

        let explicit = serde_json::json!({ "k": 3 });
        let lsp_settings = LspSettings {
            initialization_options: Some(explicit.clone()),
            settings: Some(serde_json::json!({ "k": 5 })),
            ..LspSettings::default()
        };
        assert_eq!(initialization_options(lsp_settings), Some(explicit));
    }
}
