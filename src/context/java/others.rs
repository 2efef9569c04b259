//! The classes of the other files a test's file reaches: found by simple name, and where the
//! hierarchies of every file's classes go on in them.

use std::sync::OnceLock;

use rustc_hash::FxHashMap as HashMap;

use super::definitions::{JavaFile, MAX_CHAIN};

/// A class of one of the files: the file (0 for the test's, `i + 1` for the i-th of the others)
/// and the class's index there.
pub(super) type ClassAt = (usize, usize);

/// What the other files add to the classes of each file. What a class's hierarchy and scope
/// hold beyond its file is found the first time a test needs it: a file of thousands of classes
/// costs only for those its tests reach.
#[derive(Default)]
pub(super) struct Elsewhere<'s> {
    /// The classes of the other files by simple name: where several files declare one, the
    /// first's, as the caller gives the nearest files first.
    by_name: HashMap<&'s str, ClassAt>,
    /// Per file, per class: its superclasses in other files, nearest first.
    beyond: Vec<Vec<OnceLock<Vec<ClassAt>>>>,
    /// Per file, per class: the classes of other files in its scope (its hierarchy and those of
    /// the classes around it).
    beyond_scope: Vec<Vec<OnceLock<Vec<ClassAt>>>>,
}

impl<'s> Elsewhere<'s> {
    /// Reads the classes of `files[1..]` (the test's file is `files[0]`).
    pub(super) fn new(files: &[JavaFile<'s>]) -> Elsewhere<'s> {
        let mut by_name = HashMap::default();
        for (file, java) in files.iter().enumerate().skip(1) {
            for (class, declared) in java.classes.iter().enumerate() {
                by_name.entry(declared.name).or_insert((file, class));
            }
        }
        if by_name.is_empty() {
            return Elsewhere::default();
        }
        let unknown = || -> Vec<Vec<OnceLock<Vec<ClassAt>>>> {
            let per_class =
                |java: &JavaFile| java.classes.iter().map(|_| OnceLock::new()).collect();
            files.iter().map(per_class).collect()
        };
        Elsewhere {
            by_name,
            beyond: unknown(),
            beyond_scope: unknown(),
        }
    }

    /// The class called `name` as code of `file` names it: the file's own, else the first of
    /// the other files'.
    pub(super) fn class_named(
        &self,
        files: &[JavaFile<'s>],
        file: usize,
        name: &str,
    ) -> Option<ClassAt> {
        let own = files.get(file)?.classes_by_name.get(name);
        match own {
            Some(&class) => Some((file, class)),
            None => self.by_name.get(name).copied(),
        }
    }

    /// The superclasses of `class` of `file` in other files, nearest first.
    pub(super) fn beyond(&self, files: &[JavaFile<'s>], file: usize, class: usize) -> &[ClassAt] {
        let Some(known) = self.beyond.get(file).and_then(|classes| classes.get(class)) else {
            return &[];
        };
        known.get_or_init(|| self.continuation(files, (file, class)))
    }

    /// The classes of other files in the scope of `class` of `file`: what its unqualified calls
    /// reach besides its file's own classes.
    pub(super) fn beyond_scope(
        &self,
        files: &[JavaFile<'s>],
        file: usize,
        class: usize,
    ) -> &[ClassAt] {
        let Some(known) = self
            .beyond_scope
            .get(file)
            .and_then(|classes| classes.get(class))
        else {
            return &[];
        };
        known.get_or_init(|| {
            let mut scope: Vec<ClassAt> = Vec::new();
            let mut around = Some(class);
            // As a file's own scopes, cut past `MAX_CHAIN` enclosing classes.
            for _ in 0..MAX_CHAIN {
                let Some(class) = around else {
                    break;
                };
                for &at in self.beyond(files, file, class) {
                    if !scope.contains(&at) {
                        scope.push(at);
                    }
                }
                around = files[file].classes[class].outer;
            }
            scope
        })
    }

    /// Where the hierarchy of `class` goes on past its own file: the superclass its file's
    /// chain ends at, found in another file, with that file's chain, and so on, stopping at a
    /// class already in the hierarchy (a cycle across files) or after [`MAX_CHAIN`] classes.
    fn continuation(&self, files: &[JavaFile<'s>], (file, class): ClassAt) -> Vec<ClassAt> {
        let own = &files[file].hierarchies[class];
        let mut chain: Vec<ClassAt> = own.iter().map(|&class| (file, class)).collect();
        let mut beyond = Vec::new();
        let mut top = chain.last().copied();
        while let Some((file, class)) = top {
            let java = &files[file];
            let Some(name) = java.classes[class].superclass else {
                break;
            };
            // A superclass the file declares ended the file's chain by a cycle or the bound.
            if java.classes_by_name.contains_key(name) {
                break;
            }
            let Some(&(next_file, next_class)) = self.by_name.get(name) else {
                break;
            };
            for &class in &files[next_file].hierarchies[next_class] {
                if chain.contains(&(next_file, class)) || chain.len() >= MAX_CHAIN {
                    return beyond;
                }
                chain.push((next_file, class));
                beyond.push((next_file, class));
            }
            top = chain.last().copied();
        }
        beyond
    }
}
