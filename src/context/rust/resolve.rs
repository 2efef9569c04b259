//! Which functions a call's path names, as rustc would look them up from the call's module:
//! through inline modules, `mod name;` files, `use` imports (globs too), `self::`, `super::`,
//! `crate::`, the package's library by name, and `Type::function` for a type with an `impl`.
//!
//! Every lookup spends from a budget per call, so imports that lead to each other or fan out
//! end; what the budget does not reach stays unresolved.

use super::RustContext;
use super::modules::ModuleId;
use super::paths::{children, join};
use super::uses::Import;

/// Module and import lookups one call may take.
const LOOKUPS_PER_CALL: u32 = 64;

/// A function: the file (0 the tests' own) and its index among the file's functions.
pub(super) type Key = (usize, usize);

/// A module, read or not.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Place {
    Module(ModuleId),
    /// A module whose file is not among those read: where its own modules' files would be, and
    /// the file whose path led there (see [`super::modules::ModuleTree::find`]).
    Unloaded {
        dir: String,
        from: usize,
    },
}

/// What a path up to its last segment names.
enum Target<'s> {
    Module(Place),
    /// `Type` in `Type::function`: a type declared, or imported, in a module.
    Type(Place, &'s str),
}

/// Names that never start a path into the package's library: the standard crates, primitive
/// types, and crates that tests commonly use, which a workspace does not define.
const NOT_THE_LIBRARY: [&str; 52] = [
    "std",
    "core",
    "alloc",
    "proc_macro",
    "test",
    "bool",
    "char",
    "str",
    "i8",
    "i16",
    "i32",
    "i64",
    "i128",
    "isize",
    "u8",
    "u16",
    "u32",
    "u64",
    "u128",
    "usize",
    "f32",
    "f64",
    "anyhow",
    "assert_cmd",
    "assert_fs",
    "async_std",
    "bytes",
    "chrono",
    "clap",
    "criterion",
    "futures",
    "insta",
    "itertools",
    "libc",
    "log",
    "mockall",
    "once_cell",
    "predicates",
    "pretty_assertions",
    "proptest",
    "quickcheck",
    "rand",
    "regex",
    "reqwest",
    "rstest",
    "serde",
    "serde_json",
    "serial_test",
    "tempfile",
    "thiserror",
    "tokio",
    "tracing",
];

/// Whether `name`, starting a path no local module or import explains, may be the package's
/// library named by its crate name: a lower-case identifier (`my_crate`) that is not a standard
/// or commonly used crate. A wrong guess costs a look for files that are not there.
pub(super) fn may_name_the_library(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && !NOT_THE_LIBRARY.contains(&name)
}

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

    /// What the path of `import` (a glob's whole path) names from `module`. Its first segment
    /// is not looked up through the module's globs: a glob's own path could otherwise go through
    /// itself, and every unresolved name would spend the whole budget on it.
    fn import_target(
        &self,
        import: &Import<'s>,
        module: ModuleId,
        budget: &mut u32,
    ) -> Option<Target<'s>> {
        self.target_from(&import.path, module, false, budget)
    }

    /// What `qualifiers` (a path without its last segment) name from `module`.
    fn target(
        &self,
        qualifiers: &[&'s str],
        module: ModuleId,
        budget: &mut u32,
    ) -> Option<Target<'s>> {
        self.target_from(qualifiers, module, true, budget)
    }

    fn target_from(
        &self,
        qualifiers: &[&'s str],
        module: ModuleId,
        globs: bool,
        budget: &mut u32,
    ) -> Option<Target<'s>> {
        let (&first, rest) = qualifiers.split_first()?;
        if !spend(budget) {
            return None;
        }
        let mut target = match first {
            "crate" => Target::Module(self.crate_root(module.0)),
            "self" => Target::Module(Place::Module(module)),
            "super" => Target::Module(self.parent(&Place::Module(module))?),
            _ => self.visible(first, module, globs, budget)?,
        };
        for (position, &segment) in rest.iter().enumerate() {
            let Target::Module(place) = target else {
                return None;
            };
            target = match segment {
                "super" => Target::Module(self.parent(&place)?),
                "self" => Target::Module(place),
                _ => match self.child(&place, segment, true, budget) {
                    Some(child) => child,
                    None if position + 1 == rest.len() => Target::Type(place, segment),
                    None => return None,
                },
            };
        }
        Some(target)
    }

    /// What a path's first segment `name` names in `module`: a module or import of it or of an
    /// inline module around it, the package's library, or else a type.
    fn visible(
        &self,
        name: &'s str,
        module: ModuleId,
        globs: bool,
        budget: &mut u32,
    ) -> Option<Target<'s>> {
        let (file, mut current) = module;
        loop {
            let place = Place::Module((file, current));
            if let Some(found) = self.child(&place, name, globs, budget) {
                return Some(found);
            }
            match self.files[file].modules[current].parent {
                Some(parent) => current = parent,
                None => break,
            }
        }
        if may_name_the_library(name)
            && let Some(library) = self.library(file)
        {
            return Some(Target::Module(library));
        }
        Some(Target::Type(Place::Module(module), name))
    }

    /// What `name` names inside `place`: an inline module, a `mod name;` file, an import, and
    /// with `globs` a module a glob import brings in.
    fn child(
        &self,
        place: &Place,
        name: &'s str,
        globs: bool,
        budget: &mut u32,
    ) -> Option<Target<'s>> {
        if !spend(budget) {
            return None;
        }
        let (file, module) = match place {
            Place::Module(module) => *module,
            Place::Unloaded { dir, from } => {
                if !name.starts_with(|c: char| c.is_lowercase() || c == '_') {
                    return None;
                }
                let place = match self.tree.find(&children(dir, name), *from) {
                    Some(file) => Place::Module((file, 0)),
                    None => Place::Unloaded {
                        dir: join(dir, name),
                        from: *from,
                    },
                };
                return Some(Target::Module(place));
            }
        };
        let rust = &self.files[file];
        let inline = (1..rust.modules.len()).find(|&inline| {
            rust.modules[inline].parent == Some(module) && rust.modules[inline].name == name
        });
        if let Some(inline) = inline {
            return Some(Target::Module(Place::Module((file, inline))));
        }
        let declared = rust
            .declared
            .iter()
            .enumerate()
            .find(|(_, declared)| declared.module == module && declared.name == name);
        if let Some((index, declared)) = declared {
            let place = match self.tree.declared_file(file, index) {
                Some(declared) => Place::Module((declared, 0)),
                // Not read: where its modules' files would be, unless `#[path]` says otherwise.
                None if declared.path.is_none() => {
                    let inline = rust.inline_path(module);
                    let candidates = self.tree.places[file].declared(&inline, name, None);
                    let dir = candidates.first()?.trim_end_matches(".rs").to_owned();
                    Place::Unloaded { dir, from: file }
                }
                None => return None,
            };
            return Some(Target::Module(place));
        }
        let imports = self.imports(file, module);
        if let Some(import) = imports
            .iter()
            .find(|import| !import.glob && import.alias == name)
        {
            return match self.import_target(import, (file, module), budget)? {
                Target::Module(place) => Some(Target::Module(place)),
                Target::Type(place, _) => Some(Target::Type(place, name_of(import))),
            };
        }
        // A module a glob brings in (`use a::*;` where `a` declares `pub mod b;`).
        for import in imports.iter().filter(|import| globs && import.glob) {
            if let Some(Target::Module(Place::Module(glob))) =
                self.import_target(import, (file, module), budget)
                && glob != (file, module)
                && let Some(Target::Module(found)) =
                    self.child(&Place::Module(glob), name, false, budget)
            {
                return Some(Target::Module(found));
            }
        }
        None
    }

    /// The root module of `file`'s crate: the file itself when it is a crate root, the file its
    /// declarations lead up to when that is one, else a root file read, else where its modules'
    /// files are.
    fn crate_root(&self, file: usize) -> Place {
        let places = &self.tree.places;
        let top = self.tree.top(file);
        if places[top].is_root {
            return Place::Module((top, 0));
        }
        if let Some(root) = self.tree.find(&places[file].crate_roots(), file) {
            return Place::Module((root, 0));
        }
        // A test crate's helper module (`tests/common/mod.rs`): its root is the tests' file.
        let dir = places[file].crate_dir().unwrap_or_default();
        if places[0].is_root && places[0].crate_dir() == Some(dir) && file != 0 {
            return Place::Module((0, 0));
        }
        Place::Unloaded {
            dir: dir.to_owned(),
            from: file,
        }
    }

    /// The root of the package's library, for a file of a crate that may name it.
    fn library(&self, file: usize) -> Option<Place> {
        let dir = self.tree.places[file].library_dir()?;
        let place = match self.tree.find(&[join(&dir, "lib.rs")], file) {
            Some(root) => Place::Module((root, 0)),
            None => Place::Unloaded { dir, from: file },
        };
        Some(place)
    }

    /// The module around `place`: the inline module around it, the module that declares its
    /// file, or the file its path says is its parent.
    fn parent(&self, place: &Place) -> Option<Place> {
        let &Place::Module((file, module)) = place else {
            return None;
        };
        if let Some(parent) = self.files[file].modules[module].parent {
            return Some(Place::Module((file, parent)));
        }
        if let Some(parent) = self.tree.parent(file) {
            return Some(Place::Module(parent));
        }
        let own = &self.tree.places[file];
        let mut path = own.module_path(&[])?;
        path.pop()?;
        let Some(name) = path.pop() else {
            return Some(self.crate_root(file));
        };
        let mut dir = own.crate_dir()?.to_owned();
        for module in &path {
            dir = join(&dir, module);
        }
        Some(match self.tree.find(&children(&dir, &name), file) {
            Some(parent) => Place::Module((parent, 0)),
            None => Place::Unloaded {
                dir: join(&dir, &name),
                from: file,
            },
        })
    }

    fn imports(&self, file: usize, module: usize) -> &[Import<'s>] {
        let imports = &self.files[file].body().imports;
        imports.get(module).map(Vec::as_slice).unwrap_or_default()
    }

    /// Free functions called `name` in `module` of `file`.
    fn in_module(&self, file: usize, module: usize, name: &str) -> Vec<Key> {
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

/// The type name an import brings in under its alias: `Pool` for `use pool::Pool as P`, since
/// `impl` blocks name the type, not the alias.
fn name_of<'s>(import: &Import<'s>) -> &'s str {
    import.path.last().copied().unwrap_or(import.alias)
}

/// Takes one lookup from the budget; false when none is left.
fn spend(budget: &mut u32) -> bool {
    match budget.checked_sub(1) {
        Some(left) => {
            *budget = left;
            true
        }
        None => false,
    }
}
