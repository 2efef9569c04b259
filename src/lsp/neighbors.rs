//! Where the workspace's neighbours of a judged test live, for the diagnostics' related
//! information and the code action that lists them: in an open document when there is one, else
//! on disk.

use std::collections::HashMap;
use std::path::Path;

use tower_lsp_server::ls_types::{Location, Uri};

use crate::extract;
use crate::line_index::LineIndex;
use crate::lsp::position::{PositionEncoding, TextLines};
use crate::lsp::session::Session;
use crate::predict::Neighbor;

/// Finds where workspace neighbours live: in an open document when there is one, else on disk.
/// Each file is read and parsed at most once per locator.
pub struct NeighborLocator<'a> {
    session: &'a Session,
    root: Option<&'a Path>,
    encoding: PositionEncoding,
    files: HashMap<String, Option<LocatedFile>>,
}

/// A file's tests' name positions.
struct LocatedFile {
    uri: Uri,
    names: HashMap<String, tower_lsp_server::ls_types::Range>,
}

impl<'a> NeighborLocator<'a> {
    pub fn new(
        session: &'a Session,
        root: Option<&'a Path>,
        encoding: PositionEncoding,
    ) -> NeighborLocator<'a> {
        NeighborLocator {
            session,
            root,
            encoding,
            files: HashMap::new(),
        }
    }

    /// The workspace neighbours among `neighbors`, with their locations.
    pub fn locate_all(&mut self, neighbors: &[Neighbor]) -> Vec<(Location, Neighbor)> {
        neighbors
            .iter()
            .filter_map(|neighbor| Some((self.locate(neighbor)?, neighbor.clone())))
            .collect()
    }

    /// Where a neighbour's name is, when it lives in the workspace.
    pub fn locate(&mut self, neighbor: &Neighbor) -> Option<Location> {
        let path = neighbor.path.as_deref()?;
        let root = self.root?;
        if !self.files.contains_key(path) {
            let located = self.read(root, path);
            self.files.insert(path.to_string(), located);
        }
        let file = self.files.get(path)?.as_ref()?;
        let range = file.names.get(&neighbor.id).copied().unwrap_or_default();
        Some(Location::new(file.uri.clone(), range))
    }

    fn read(&self, root: &Path, relative: &str) -> Option<LocatedFile> {
        let path = root.join(relative);
        let uri = Uri::from_file_path(&path)?;
        let open = self.session.documents.lock().get(&uri).map(|document| {
            (
                document.language,
                document.relative_path.clone(),
                document.text.clone(),
            )
        });
        let (language, relative_path, text) = match open {
            Some(open) => open,
            None => {
                let file = crate::files::read_source(&path).ok()?;
                (file.language, relative.to_string(), file.text)
            }
        };
        let lines = LineIndex::new(&text);
        let text_lines = TextLines {
            text: &text,
            lines: &lines,
        };
        let discovery = crate::workspace::discovery(root, language, &path);
        let names = extract::extract_tests_with(language, &relative_path, &text, &discovery)
            .tests
            .into_iter()
            .map(|test| (test.id, text_lines.range(&test.name_range, self.encoding)))
            .collect();
        Some(LocatedFile { uri, names })
    }
}
