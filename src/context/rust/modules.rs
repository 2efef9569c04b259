//! How the files given to a resolver fit together as modules: which file each `mod name;`
//! declares, and which module each file is declared in.
//!
//! Links are made breadth first from the tests' file, so a file declared by several (a
//! `tests/common/mod.rs` included twice, a `#[path]` loop) takes the declaration nearest the
//! tests as its parent, and no file becomes its own ancestor.

use std::collections::VecDeque;

use rustc_hash::FxHashMap as HashMap;

use super::definitions::RustFile;
use super::paths::{FilePlace, ends_alike};

/// A module: the file (0 the tests' own) and the module's index among the file's.
pub(super) type ModuleId = (usize, usize);

/// The files' paths and places, and the links between them.
pub(super) struct ModuleTree {
    paths: Vec<String>,
    by_path: HashMap<String, usize>,
    pub(super) places: Vec<FilePlace>,
    /// Per file, per `mod name;` declaration of it (in order): the file it declares.
    declared: Vec<Vec<Option<usize>>>,
    /// Per file: the module whose `mod name;` declares it.
    parents: Vec<Option<ModuleId>>,
}

impl ModuleTree {
    /// Links `files`, whose paths are `paths` (relative to the workspace root; the first, the
    /// tests' file's, may be a placeholder: see [`FilePlace::of`]).
    pub(super) fn new(files: &[RustFile], paths: Vec<String>) -> ModuleTree {
        let places: Vec<FilePlace> = paths.iter().map(|path| FilePlace::of(path)).collect();
        // The first file of a path keeps it: the tests' own file when another is the same.
        let mut by_path: HashMap<String, usize> = HashMap::default();
        for (index, path) in paths.iter().enumerate() {
            by_path.entry(path.clone()).or_insert(index);
        }
        let mut tree = ModuleTree {
            paths,
            by_path,
            places,
            declared: files.iter().map(|_| Vec::new()).collect(),
            parents: vec![None; files.len()],
        };
        // A file read alone declares no file that is there: nothing to link, nothing to pay.
        if files.len() > 1 {
            tree.link(files);
        }
        tree
    }

    fn link(&mut self, files: &[RustFile]) {
        let mut visited = vec![false; files.len()];
        let mut queue = VecDeque::new();
        for seed in 0..files.len() {
            if visited[seed] {
                continue;
            }
            visited[seed] = true;
            queue.push_back(seed);
            while let Some(file) = queue.pop_front() {
                for declared in &files[file].declared {
                    let Some(inline) = files[file].inline_path(declared.module) else {
                        self.declared[file].push(None);
                        continue;
                    };
                    let candidates =
                        self.places[file].declared(&inline, declared.name, declared.path);
                    let found = self.find(&candidates, file);
                    self.declared[file].push(found);
                    let Some(child) = found else {
                        continue;
                    };
                    if self.parents[child].is_none() && !self.is_ancestor_or_self(child, file) {
                        self.parents[child] = Some((file, declared.module));
                    }
                    if !visited[child] {
                        visited[child] = true;
                        queue.push_back(child);
                    }
                }
            }
        }
    }

    /// Whether `ancestor` is `file` or a file its declarations lead up to.
    fn is_ancestor_or_self(&self, ancestor: usize, file: usize) -> bool {
        let mut current = Some(file);
        // Parents never form a cycle (this check keeps it so); the bound is for certainty.
        for _ in 0..=self.parents.len() {
            match current {
                Some(current) if current == ancestor => return true,
                Some(file) => current = self.parents[file].map(|(parent, _)| parent),
                None => return false,
            }
        }
        true
    }

    /// The first of `candidates` among the files, for a path written in file `from`. The tests'
    /// file's own path may not be the workspace's (a placeholder, another root): its candidates
    /// also match by the end of their paths, after every exact match failed.
    pub(super) fn find(&self, candidates: &[String], from: usize) -> Option<usize> {
        let exact = candidates
            .iter()
            .find_map(|candidate| self.by_path.get(candidate).copied());
        if exact.is_some() || from != 0 {
            return exact;
        }
        candidates.iter().find_map(|candidate| {
            self.paths
                .iter()
                .position(|path| !path.is_empty() && ends_alike(candidate, path))
        })
    }

    /// The path of `file` as given.
    pub(super) fn path(&self, file: usize) -> &str {
        self.paths.get(file).map_or("", String::as_str)
    }

    /// The file the `index`-th `mod name;` declaration of `file` declares, when it is read.
    pub(super) fn declared_file(&self, file: usize, index: usize) -> Option<usize> {
        self.declared.get(file)?.get(index).copied().flatten()
    }

    /// The module that declares `file`, when a file read does.
    pub(super) fn parent(&self, file: usize) -> Option<ModuleId> {
        self.parents.get(file).copied().flatten()
    }

    /// The outermost file that declarations lead up to from `file`.
    pub(super) fn top(&self, file: usize) -> usize {
        let mut current = file;
        for _ in 0..self.parents.len() {
            match self.parent(current) {
                Some((parent, _)) => current = parent,
                None => break,
            }
        }
        current
    }
}
