//! Which functions a call's path names, as rustc would look them up from the call's module:
//! through inline modules, `mod name;` files, `use` imports (globs too), `self::`, `super::`,
//! `crate::`, the package's library by name, and `Type::function` for a type with an `impl`.
//!
//! Every lookup spends from a budget per call, so imports that lead to each other or fan out
//! end; what the budget does not reach stays unresolved.

use super::RustContext;
use super::modules::ModuleId;
use super::paths::children;
use super::targets::{Place, Target, may_name_the_library};
use super::uses::Import;

/// Module and import lookups one call may take.
const LOOKUPS_PER_CALL: u32 = 64;

/// A function: the file (0 the tests' own) and its index among the file's functions.
pub(super) type Key = (usize, usize);

impl<'s> RustContext<'s> {
    /// The functions a call with `path`, in `module` (inside an `impl` of `owner`), runs.
    pub(super) fn called(
        &self,
        path: &[&'s str],
        module: ModuleId,
        owner: Option<&str>,
    ) -> Vec<Key> {
        let mut budget = LOOKUPS_PER_CALL;
        self.functions(path, module, owner, &mut budget)
    }

    /// The method `name` of the type `type_path` names from `module` (inside an `impl` of
    /// `owner`, for `Self`).
    pub(super) fn method_of(
        &self,
        type_path: &[&'s str],
        name: &str,
        module: ModuleId,
        owner: Option<&str>,
    ) -> Vec<Key> {
        if type_path == ["Self"] {
            return self.methods(module.0, owner, name);
        }
        let mut budget = LOOKUPS_PER_CALL;
        match self.target(type_path, module, &mut budget) {
            Some(Target::Type(Place::Module((file, _)), type_name)) => {
                self.methods(file, Some(type_name), name)
            }
            _ => Vec::new(),
        }
    }

    /// The free functions called `name` that `module` sees, from it up through the inline modules
    /// around it (tests modules usually `use super::*`).
    pub(super) fn visible_functions(&self, name: &str, module: ModuleId) -> Vec<Key> {
        let mut budget = LOOKUPS_PER_CALL;
        self.by_name(name, module, true, &mut budget)
    }

    fn functions(
        &self,
        path: &[&'s str],
        module: ModuleId,
        owner: Option<&str>,
        budget: &mut u32,
    ) -> Vec<Key> {
        let Some((&name, qualifiers)) = path.split_last() else {
            return Vec::new();
        };
        match qualifiers {
            [] => self.by_name(name, module, true, budget),
            ["Self"] => self.methods(module.0, owner, name),
            _ => match self.target(qualifiers, module, budget) {
                Some(Target::Module(Place::Module(module))) => {
                    self.by_name(name, module, false, budget)
                }
                Some(Target::Type(Place::Module((file, _)), type_name)) => {
                    self.methods(file, Some(type_name), name)
                }
                _ => Vec::new(),
            },
        }
    }

    /// The free functions called `name` in `module`, those its imports bring in, and, with
    /// `walk_up`, the same from the inline modules around it, nearest first.
    fn by_name(&self, name: &str, module: ModuleId, walk_up: bool, budget: &mut u32) -> Vec<Key> {
        let (file, mut current) = module;
        loop {
            if !spend(budget) {
                return Vec::new();
            }
            let found = self.in_module(file, current, name);
            if !found.is_empty() {
                return found;
            }
            for import in self.imports(file, current) {
                let found = match import.glob {
                    false if import.alias == name => {
                        let found = self.functions(&import.path, (file, current), None, budget);
                        if found.is_empty() {
                            self.by_module_of(import)
                        } else {
                            found
                        }
                    }
                    true => match self.import_target(import, (file, current), budget) {
                        Some(Target::Module(Place::Module(glob))) if glob != (file, current) => {
                            self.by_name(name, glob, false, budget)
                        }
                        _ => Vec::new(),
                    },
                    false => Vec::new(),
                };
                if !found.is_empty() {
                    return found;
                }
            }
            match self.files[file].modules[current].parent {
                Some(parent) if walk_up => current = parent,
                _ => return Vec::new(),
            }
        }
    }

    /// For an import that leads to no module read (`use other_crate::net::connect`, another
    /// package of the workspace): a free function of that name at the top of a file whose path
    /// ends as the import's module path does (`net.rs`, `net/mod.rs`; `lib.rs` for the root).
    fn by_module_of(&self, import: &Import) -> Vec<Key> {
        let path = &import.path;
        let (Some(&name), Some(&first)) = (path.last(), path.first()) else {
            return Vec::new();
        };
        if path.len() < 2 || !may_name_the_library(first) {
            return Vec::new();
        }
        let ends: Vec<String> = match path.len() {
            2 => vec!["lib.rs".to_owned()],
            length => children("", path[length - 2]),
        };
        for file in 1..self.files.len() {
            let path = self.tree.path(file);
            if ends
                .iter()
                .any(|end| path == end || path.ends_with(&format!("/{end}")))
            {
                let found = self.in_module(file, 0, name);
                if !found.is_empty() {
                    return found;
                }
            }
        }
        Vec::new()
    }

    pub(super) fn imports(&self, file: usize, module: usize) -> &[Import<'s>] {
        let imports = &self.files[file].body().imports;
        imports.get(module).map(Vec::as_slice).unwrap_or_default()
    }

    /// Free functions called `name` in `module` of `file`.
    pub(super) fn in_module(&self, file: usize, module: usize, name: &str) -> Vec<Key> {
        let rust = &self.files[file];
        let candidates = rust.functions_by_name.get(name);
        let candidates = candidates.map(Vec::as_slice).unwrap_or_default();
        candidates
            .iter()
            .filter(|&&function| {
                rust.functions[function].module == module
                    && rust.functions[function].owner.is_none()
            })
            .map(|&function| (file, function))
            .collect()
    }

    /// Methods called `name` of the `impl` blocks of `owner` in `file`.
    pub(super) fn methods(&self, file: usize, owner: Option<&str>, name: &str) -> Vec<Key> {
        let rust = &self.files[file];
        let candidates = rust.functions_by_name.get(name);
        let candidates = candidates.map(Vec::as_slice).unwrap_or_default();
        candidates
            .iter()
            .filter(|&&function| owner.is_some() && rust.functions[function].owner == owner)
            .map(|&function| (file, function))
            .collect()
    }
}

/// Takes one lookup from the budget; false when none is left.
pub(super) fn spend(budget: &mut u32) -> bool {
    match budget.checked_sub(1) {
        Some(left) => {
            *budget = left;
            true
        }
        None => false,
    }
}
