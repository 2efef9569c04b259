//! What the qualifiers of a path name from a module (`common::server`, `crate::net`,
//! `shop::pool::Pool`): a module of one of the files read, a module whose file is not read, or a
//! type, looked up through inline modules, `mod name;` files, imports, `self`, `super`, `crate`
//! and the package's library by its crate name.

use super::RustContext;
use super::modules::ModuleId;
use super::paths::{children, join};
use super::resolve::spend;
use super::uses::Import;

/// A module, read or not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Place {
    Module(ModuleId),
    /// A module whose file is not among those read: where its own modules' files would be, and
    /// the file whose path led there (see [`super::modules::ModuleTree::find`]).
    Unloaded {
        dir: String,
        from: usize,
    },
}

/// What a path up to its last segment names.
pub(super) enum Target<'s> {
    Module(Place),
    /// `Type` in `Type::function`: a type declared, or imported, in a module.
    Type(Place, &'s str),
}

/// Names that never start a path into the package's library: the standard crates, primitive
/// types, and crates that tests commonly use, which a workspace does not define.
const NOT_THE_LIBRARY: &str = "\
    std core alloc proc_macro test \
    bool char str i8 i16 i32 i64 i128 isize u8 u16 u32 u64 u128 usize f32 f64 \
    anyhow assert_cmd assert_fs async_std bytes chrono clap criterion futures insta itertools \
    libc log mockall once_cell predicates pretty_assertions proptest quickcheck rand regex \
    reqwest rstest serde serde_json serial_test tempfile thiserror tokio tracing";

/// Whether `name`, starting a path no local module or import explains, may be the package's
/// library named by its crate name: a lower-case identifier (`my_crate`) that is not a standard
/// or commonly used crate. A wrong guess costs a look for files that are not there.
pub(super) fn may_name_the_library(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && !NOT_THE_LIBRARY
            .split_whitespace()
            .any(|known| known == name)
}

impl<'s> RustContext<'s> {
    /// What the path of `import` (a glob's whole path) names from `module`. Its first segment
    /// is not looked up through the module's globs: a glob's own path could otherwise go through
    /// itself, and every unresolved name would spend the whole budget on it.
    pub(super) fn import_target(
        &self,
        import: &Import<'s>,
        module: ModuleId,
        budget: &mut u32,
    ) -> Option<Target<'s>> {
        self.target_from(&import.path, module, false, budget)
    }

    /// What `qualifiers` (a path without its last segment) name from `module`.
    pub(super) fn target(
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
                    let inline = rust.inline_path(module)?;
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
}

/// The type name an import brings in under its alias: `Pool` for `use pool::Pool as P`, since
/// `impl` blocks name the type, not the alias.
fn name_of<'s>(import: &Import<'s>) -> &'s str {
    import.path.last().copied().unwrap_or(import.alias)
}
