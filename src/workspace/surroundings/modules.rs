//! The Python modules of a workspace that test classes derive from: read when an import names
//! them, parsed once, and read again when they change (the language server keeps one reader for
//! its whole life, so a keystroke in a test file reads no base module again).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use crate::extract::{self, ModuleSource, PythonModule};
use crate::files;
use crate::labels::FileStamp;
use crate::language::Language;

/// A module as last read: its stamp then, and what it held (`None`: no Python module there).
type Read = (FileStamp, Option<Arc<PythonModule>>);

#[derive(Debug)]
pub(super) struct ModuleReader {
    root: PathBuf,
    read: Mutex<HashMap<String, Read>>,
}

impl ModuleReader {
    pub(super) fn new(root: &Path) -> ModuleReader {
        ModuleReader {
            root: root.to_path_buf(),
            read: Mutex::default(),
        }
    }

    /// The importing file as a path relative to the root: ids spell it relative to the
    /// repository, the current directory or the root, or in full.
    fn relative_importer(&self, importer: &str) -> Option<String> {
        let path = Path::new(importer);
        let absolute = if path.is_absolute() {
            path.to_path_buf()
        } else {
            // Relative to the root, unless only the current directory holds it.
            let from_root = self.root.join(path);
            match std::env::current_dir().map(|current| current.join(path)) {
                Ok(from_current) if !from_root.exists() && from_current.exists() => from_current,
                _ => from_root,
            }
        };
        let relative = match absolute.strip_prefix(&self.root) {
            Ok(relative) => relative.to_path_buf(),
            Err(_) => {
                let root = self.root.canonicalize().ok()?;
                let absolute = absolute.canonicalize().ok()?;
                absolute.strip_prefix(root).ok()?.to_path_buf()
            }
        };
        Some(relative.to_string_lossy().replace('\\', "/"))
    }

    /// The module at `relative`, read again when its stamp changed.
    fn module_at(&self, relative: &str) -> Option<Arc<PythonModule>> {
        let path = self.root.join(relative);
        let stamp = FileStamp::of(&path)?;
        let known = self
            .read
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(relative)
            .cloned();
        if let Some((known_stamp, module)) = known
            && known_stamp == stamp
        {
            return module;
        }
        let module = files::read_source(&path)
            .ok()
            .filter(|file| !file.lossy && file.language == Language::Python)
            .and_then(|file| PythonModule::new(relative.to_string(), file.text))
            .map(Arc::new);
        self.read
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(relative.to_string(), (stamp, module.clone()));
        module
    }
}

impl ModuleSource for ModuleReader {
    fn python_module(&self, importer: &str, module: &str) -> Option<Arc<PythonModule>> {
        let importer = self.relative_importer(importer)?;
        extract::module_paths(&importer, module)
            .iter()
            .find_map(|candidate| self.module_at(candidate))
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::write;
    use super::*;

    #[test]
    fn a_module_is_found_from_its_importer_and_read_again_when_it_changes() {
        let workspace = tempfile::tempdir().unwrap();
        let root = workspace.path();
        write(&root.join("tests/base.py"), "class Base:\n    pass\n");
        let reader = ModuleReader::new(root);
        let first = reader.python_module("tests/test_a.py", "base").unwrap();
        assert_eq!(first.path, "tests/base.py");
        let again = reader.python_module("tests/test_b.py", "base").unwrap();
        assert!(Arc::ptr_eq(&first, &again), "read once");
        write(
            &root.join("tests/base.py"),
            "class Base:\n    x = 1\n\nclass Other:\n    pass\n",
        );
        let changed = reader.python_module("tests/test_a.py", "base").unwrap();
        assert!(changed.text.contains("Other"));
        assert!(
            reader
                .python_module("tests/test_a.py", "unittest")
                .is_none()
        );
    }
}
