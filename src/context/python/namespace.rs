//! What the names of each file mean across the files a resolver reads: imports bound to the
//! modules it was given, the plugin modules `pytest_plugins` names, and what a name, a dotted
//! name or a fixture request finds through them.
//!
//! Lookups through re-exports and star imports are bounded ([`MAX_LOOKUPS`]), so import cycles
//! end; a name whose module the resolver was not given is simply not found.

use rustc_hash::FxHashMap as HashMap;

use super::definitions::PythonFile;
use super::imports::{Imports, ModuleName, Taken, candidates};
use crate::context::SourceFile;
use crate::extract::TestMethod;

/// At most this many files are visited to find what one name means: a name re-exported
/// through a chain of modules or star imports is rarely more than two or three away.
const MAX_LOOKUPS: u8 = 16;

/// At most this many plugin modules, plugins of plugins included.
const MAX_PLUGINS: usize = 32;

/// What an import binds a name of a file to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Bound<'s> {
    /// `import a.b as h`, `from a import b` where `b` is a submodule: that module's file.
    Module(usize),
    /// `from a import b`: the name `b` of `a`'s file.
    Name(usize, &'s str),
}

/// The names one file imports from files of the resolver.
#[derive(Debug, Default)]
struct Namespace<'s> {
    bound: HashMap<&'s str, Bound<'s>>,
    /// The files `from x import *` reads, in order.
    stars: Vec<usize>,
    /// The files its `pytest_plugins` names, in order.
    plugins: Vec<usize>,
}

/// What a name means where it is used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Symbol {
    /// A module-level function (not a fixture) of a file, by its index there.
    Function(usize, usize),
    /// A module-level fixture of a file.
    Fixture(usize, usize),
    /// A class of a file.
    Class(usize, usize),
    Module(usize),
}

/// The namespaces of all the files of a resolver; empty (every lookup local) when it was given
/// no other modules, so that a file read alone costs nothing more.
#[derive(Debug, Default)]
pub(super) struct Namespaces<'s> {
    files: Vec<Namespace<'s>>,
}

impl<'s> Namespaces<'s> {
    /// Binds the imports of each file of a context (the test's file, its `conftest.py` files,
    /// then `modules`, as `files` holds them) to the files that hold their modules. A file read
    /// alone (the editor's case on every keystroke) reads no imports: nothing is there for them
    /// to find.
    pub(super) fn new(
        files: &[SourceFile<'s>],
        tests: &[TestMethod],
        conftests: usize,
        modules: &[(&str, SourceFile)],
    ) -> Namespaces<'s> {
        if modules.is_empty() {
            return Namespaces::default();
        }
        let modules_from = 1 + conftests;
        let modules_by_path: HashMap<&str, usize> = modules
            .iter()
            .enumerate()
            .map(|(index, (path, _))| (*path, modules_from + index))
            .collect();
        let paths = possible_paths(tests, conftests, modules);
        Namespaces::bind(files, &paths, &modules_by_path)
    }

    /// Binds the imports of each of `files` to the files that hold their modules. `paths` are,
    /// per file, the paths it may have, most likely first; `modules` are the files by path.
    fn bind(
        files: &[SourceFile<'s>],
        paths: &[Vec<String>],
        modules: &HashMap<&str, usize>,
    ) -> Namespaces<'s> {
        let namespaces = files.iter().zip(paths).map(|(file, paths)| {
            let imports = Imports::read(file.source, file.tree.root_node());
            let find = |module: ModuleName, name: Option<&str>| {
                paths.iter().find_map(|path| {
                    candidates(path, module, name)
                        .into_iter()
                        .find_map(|candidate| {
                            let found = modules.get(candidate.path.as_str())?;
                            Some((*found, candidate.submodule))
                        })
                })
            };
            let mut namespace = Namespace::default();
            for import in &imports.imports {
                let name = match import.taken {
                    Taken::Name(name) => Some(name),
                    Taken::Module | Taken::All => None,
                };
                let Some((module, submodule)) = find(import.module, name) else {
                    continue;
                };
                let bound = match (import.taken, submodule) {
                    (Taken::All, _) => {
                        namespace.stars.push(module);
                        continue;
                    }
                    (Taken::Name(name), false) => Bound::Name(module, name),
                    _ => Bound::Module(module),
                };
                namespace.bound.insert(import.local, bound);
            }
            for &(_, module) in &imports.plugins {
                namespace
                    .plugins
                    .extend(find(module, None).map(|(module, _)| module));
            }
            namespace
        });
        Namespaces {
            files: namespaces.collect(),
        }
    }

    /// Whether no file imports anything from the others: then only a file's own definitions
    /// mean anything, and lookups across files can be skipped.
    pub(super) fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// What `name` means at the top level of `file`: its own definitions first, then what it
    /// imports by name, then what its star imports bring (public names only).
    pub(super) fn symbol(&self, files: &[PythonFile], file: usize, name: &str) -> Option<Symbol> {
        let mut budget = MAX_LOOKUPS;
        self.symbol_within(files, file, name, &mut budget)
    }

    fn symbol_within(
        &self,
        files: &[PythonFile],
        file: usize,
        name: &str,
        budget: &mut u8,
    ) -> Option<Symbol> {
        *budget = budget.checked_sub(1)?;
        let python = files.get(file)?;
        if let Some(&function) = python.module_functions.get(name) {
            return Some(Symbol::Function(file, function));
        }
        if let Some(&class) = python.classes_by_name.get(name) {
            return Some(Symbol::Class(file, class));
        }
        if let Some(&fixture) = python.module_fixtures.get(name) {
            return Some(Symbol::Fixture(file, fixture));
        }
        let namespace = self.files.get(file)?;
        match namespace.bound.get(name) {
            Some(&Bound::Module(module)) => return Some(Symbol::Module(module)),
            Some(&Bound::Name(module, name)) => {
                return self.symbol_within(files, module, name, budget);
            }
            None => {}
        }
        if name.starts_with('_') {
            return None;
        }
        let stars = namespace.stars.iter();
        stars
            .filter(|&&module| module != file)
            .find_map(|&module| self.symbol_within(files, module, name, budget))
    }

    /// What a dotted name (`h`, `a.b`, `h.Server`) means in `file`: a plain `import a.b` binds
    /// the whole of `a.b`, so the longest bound prefix is looked up first, then each further
    /// segment in the module before it.
    pub(super) fn dotted(&self, files: &[PythonFile], file: usize, dotted: &str) -> Option<Symbol> {
        let mut budget = MAX_LOOKUPS;
        let bound = self.files.get(file).map(|namespace| &namespace.bound);
        let prefixes = dotted
            .match_indices('.')
            .map(|(at, _)| at)
            .chain([dotted.len()])
            .rev();
        for end in prefixes {
            let (prefix, rest) = dotted.split_at(end);
            let start = match bound.and_then(|bound| bound.get(prefix)) {
                Some(&Bound::Module(module)) if prefix.contains('.') => Symbol::Module(module),
                _ if prefix.contains('.') => continue,
                _ => self.symbol_within(files, file, prefix, &mut budget)?,
            };
            let mut segments = rest.split('.').filter(|segment| !segment.is_empty());
            return segments.try_fold(start, |symbol, segment| match symbol {
                Symbol::Module(module) => self.symbol_within(files, module, segment, &mut budget),
                _ => None,
            });
        }
        None
    }

    /// The fixture `name` that `file` imports (by name or with a star import) from another
    /// file: pytest registers the fixtures a module's namespace holds, wherever defined.
    pub(super) fn imported_fixture(
        &self,
        files: &[PythonFile],
        file: usize,
        name: &str,
    ) -> Option<(usize, usize)> {
        if self.is_empty() {
            return None;
        }
        match self.symbol(files, file, name)? {
            Symbol::Fixture(module, fixture) if module != file => Some((module, fixture)),
            _ => None,
        }
    }

    /// The `autouse` fixtures that `file` imports from other files, each once: pytest sets
    /// them up for the tests the file's fixtures apply to.
    pub(super) fn imported_autouse(
        &self,
        files: &[PythonFile],
        file: usize,
    ) -> Vec<(usize, usize)> {
        let mut found = Vec::new();
        let Some(namespace) = self.files.get(file) else {
            return found;
        };
        let mut add = |module: usize, fixture: usize| {
            let autouse = files[module].functions[fixture]
                .fixture
                .as_ref()
                .is_some_and(|fixture| fixture.autouse);
            if module != file && autouse && !found.contains(&(module, fixture)) {
                found.push((module, fixture));
            }
        };
        for &bound in namespace.bound.values() {
            let Bound::Name(module, name) = bound else {
                continue;
            };
            let mut budget = MAX_LOOKUPS;
            if let Some(Symbol::Fixture(module, fixture)) =
                self.symbol_within(files, module, name, &mut budget)
            {
                add(module, fixture);
            }
        }
        // A star import brings a module's own fixtures; what that module imports in turn is
        // left to the names requested.
        for &module in &namespace.stars {
            let Some(python) = files.get(module) else {
                continue;
            };
            for &fixture in &python.autouse {
                let function = &python.functions[fixture];
                let public = function
                    .fixture
                    .as_ref()
                    .is_some_and(|fixture| !fixture.name.starts_with('_'));
                if function.class.is_none() && public {
                    add(module, fixture);
                }
            }
        }
        found.sort_unstable();
        found
    }

    /// The plugin modules `pytest_plugins` names in `roots` (the test's file and its
    /// `conftest.py` files), then those the plugins name in turn, each once and none of `roots`.
    pub(super) fn plugins(&self, roots: std::ops::Range<usize>) -> Vec<usize> {
        let mut found: Vec<usize> = Vec::new();
        let mut pending: std::collections::VecDeque<usize> = roots.clone().collect();
        while let Some(file) = pending.pop_front() {
            let Some(namespace) = self.files.get(file) else {
                continue;
            };
            for &plugin in &namespace.plugins {
                if found.len() == MAX_PLUGINS {
                    return found;
                }
                if !roots.contains(&plugin) && !found.contains(&plugin) {
                    found.push(plugin);
                    pending.push_back(plugin);
                }
            }
        }
        found
    }
}

/// The paths each file of a context may have, most likely first, for finding the modules its
/// imports name: the test's file has the path of its tests' ids (`path::name`, the path the
/// caller read it at), a `conftest.py` is in one of the directories above it (the caller gives
/// those that exist, nearest first), a module has its own.
fn possible_paths(
    tests: &[TestMethod],
    conftests: usize,
    modules: &[(&str, SourceFile)],
) -> Vec<Vec<String>> {
    let test_path = tests
        .first()
        .and_then(|test| test.id.split("::").next())
        .filter(|path| !path.is_empty());
    let above = test_path
        .map(crate::context::conftest_candidates)
        .unwrap_or_default();
    // The i-th of the conftest files that exist is at least i directories up, and leaves
    // room above it for the others.
    let spare = above.len().checked_sub(conftests);
    let conftest_paths = (0..conftests).map(|index| match spare {
        Some(spare) => above[index..=index + spare].to_vec(),
        None => Vec::new(),
    });
    std::iter::once(test_path.map(str::to_owned).into_iter().collect())
        .chain(conftest_paths)
        .chain(modules.iter().map(|(path, _)| vec![(*path).to_owned()]))
        .collect()
}
