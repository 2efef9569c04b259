//! What the server's handlers read often and change rarely: the workspace, the settings from
//! each source, the client's abilities and the models a test is judged against.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tower_lsp_server::ls_types::Uri;

use crate::analysis::{Models, Thresholds};
use crate::config::Config;
use crate::index::Index;
use crate::labels::FileStamp;
use crate::language::Language;
use crate::lsp::position::PositionEncoding;
use crate::prevalence::Prevalence;
use crate::workspace::SurroundingsReader;

/// The project's own index as the server found it.
#[derive(Debug, Clone, Default)]
pub enum ProjectIndexState {
    /// None yet: the first test marked in the editor creates it.
    #[default]
    Missing,
    Loaded(Arc<Index>),
    /// A file the server must not overwrite (foreign, from a newer release, unreadable): the
    /// label store refuses marks until it is fixed or removed.
    Unusable,
}

/// What the client said it can do, among the things the server would use.
#[derive(Debug, Clone, Copy, Default)]
pub struct ClientSupport {
    pub work_done_progress: bool,
    pub configuration: bool,
    pub show_document: bool,
    /// The client lets the server register file watchers (`workspace/didChangeWatchedFiles`).
    pub watched_files: bool,
}

/// Settings from each source, kept apart so that one can change without losing the others.
#[derive(Debug, Clone, Default)]
pub struct SettingsLayers {
    /// `flakesense.toml` at the workspace root.
    pub file: Config,
    /// The client's `initializationOptions`.
    pub initialization: Config,
    /// The client's answer to `workspace/configuration`, or the settings of
    /// `workspace/didChangeConfiguration`.
    pub editor: Config,
}

impl SettingsLayers {
    pub fn merged(&self) -> Config {
        Config::default()
            .merged_with(self.file.clone())
            .merged_with(self.initialization.clone())
            .merged_with(self.editor.clone())
    }
}

/// Everything the handlers read often and change rarely.
#[derive(Debug, Default)]
pub struct State {
    /// The workspace root: the first workspace folder, else the root URI.
    pub root: Option<PathBuf>,
    /// What the workspace's files need from it (pytest's settings, `conftest.py` files), read
    /// once, and the conftest files again when they change on disk.
    pub surroundings: Option<Arc<SurroundingsReader>>,
    pub encoding: PositionEncoding,
    pub client_support: ClientSupport,
    pub layers: SettingsLayers,
    /// `layers` merged and checked.
    pub config: Config,
    pub thresholds: Thresholds,
    pub exclude: globset::GlobSet,
    pub project: ProjectIndexState,
    /// The project index's file as `project` was read from it: when the file on disk differs,
    /// another process wrote it and it is read again (see `analyze`).
    pub project_stamp: Option<FileStamp>,
    /// `flakesense.toml` as `layers.file` was read from it: when the file on disk differs, it was
    /// edited and is read again (see `analyze`).
    pub settings_stamp: Option<FileStamp>,
    pub extra: Vec<Arc<Index>>,
    /// How common each signal is among the workspace's tests; empty until they are read.
    pub prevalence: Arc<Prevalence>,
}

impl State {
    /// Merges the settings layers; on invalid settings keeps the previous ones and says why.
    pub fn apply_settings(&mut self) -> Result<(), String> {
        let config = self.layers.merged();
        let checked = config
            .validate()
            .and_then(|()| config.exclude_matcher())
            .map_err(|error| format!("{error:#}"))?;
        self.thresholds = config.thresholds();
        self.exclude = checked;
        self.config = config;
        Ok(())
    }

    /// The models a test of `language` is judged against.
    pub fn models(&self, language: Language) -> Result<Models, String> {
        let defaults =
            if self.config.uses_default_models() {
                vec![crate::models::embedded(language).map_err(|error| {
                    format!("the shipped {language} model cannot be read: {error}")
                })?]
            } else {
                Vec::new()
            };
        let project = match &self.project {
            ProjectIndexState::Loaded(index) => Some(index.clone()),
            _ => None,
        };
        Ok(Models {
            defaults,
            project,
            extra: self.extra.clone(),
            prevalence: self.prevalence.clone(),
        })
    }

    /// The path a document's test ids are built from: relative to the workspace root with `/`
    /// separators when the file lies in it, else the file's name.
    pub fn relative_path(&self, uri: &Uri) -> String {
        let Some(path) = file_path(uri) else {
            return uri
                .as_str()
                .rsplit('/')
                .next()
                .unwrap_or_default()
                .to_string();
        };
        let relative = self
            .root
            .as_deref()
            .and_then(|root| path.strip_prefix(root).ok())
            .unwrap_or_else(|| Path::new(path.file_name().unwrap_or(path.as_os_str())));
        relative
            .components()
            .map(|component| component.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/")
    }

    /// True when the settings exclude a document from analysis.
    pub fn is_excluded(&self, relative_path: &str) -> bool {
        self.exclude.is_match(relative_path)
    }
}

/// The local path of a `file:` URI.
pub fn file_path(uri: &Uri) -> Option<PathBuf> {
    if uri.scheme().as_str() != "file" {
        return None;
    }
    uri.to_file_path().map(|path| path.into_owned())
}
