//! Python imports and `pytest_plugins`: what a file takes from other modules, and the paths of
//! the workspace where each of those modules may be.
//!
//! The paths follow how pytest imports test files (its default `prepend` mode): the first
//! directory up from a test file without an `__init__.py` goes first on `sys.path`, so an
//! absolute name is looked for from each directory above the file, nearest first (the file
//! system, which would tell which one pytest picks, is not seen here), the root among them, then
//! from `src/`. A relative name is looked for from the file's package.

use tree_sitter::Node;

use crate::context::syntax::{Kinds, named_children, preorder, text, unquote};

/// At most this many imports of a file are read: each costs a few lookups per directory above
/// the file, and a generated file may hold thousands.
const MAX_IMPORTS: usize = 256;

/// At most this many directories above a file are tried for an absolute name.
const MAX_ANCESTORS: usize = 16;

/// A module an import or `pytest_plugins` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct ModuleName<'s> {
    /// The leading dots of a relative name: 1 for the importing file's package, 2 for its
    /// parent; 0 for an absolute name.
    pub(super) dots: usize,
    /// The dotted name after the dots; empty in `from . import helpers`.
    pub(super) dotted: &'s str,
}

/// What an import statement takes from its module.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Taken<'s> {
    /// `import a.b` or `import a.b as h`: the module itself.
    Module,
    /// `from a.b import name`: a name of the module, or its submodule of that name.
    Name(&'s str),
    /// `from a.b import *`: every public name of the module.
    All,
}

/// One name an import statement binds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Import<'s> {
    /// Where the statement starts, to list what a file wants in its order.
    pub(super) at: usize,
    pub(super) module: ModuleName<'s>,
    pub(super) taken: Taken<'s>,
    /// The name bound in the importing file: the alias, the name, or the whole dotted name of a
    /// plain `import a.b` (code then calls `a.b.f()`); empty for a star import.
    pub(super) local: &'s str,
}

/// The imports of a file and the modules its `pytest_plugins` names.
#[derive(Debug, Default)]
pub(super) struct Imports<'s> {
    pub(super) imports: Vec<Import<'s>>,
    /// Each with where its assignment starts.
    pub(super) plugins: Vec<(usize, ModuleName<'s>)>,
}

impl<'s> Imports<'s> {
    /// Reads the import statements anywhere in the file (a test may import inside its body) and
    /// the module-level `pytest_plugins`.
    pub(super) fn read(source: &'s str, root: Node) -> Imports<'s> {
        let mut imports = Imports::default();
        preorder(root, import_kinds(root), |statement, _| {
            if imports.imports.len() < MAX_IMPORTS {
                read_import(source, statement, &mut imports.imports);
            }
        });
        for statement in named_children(root) {
            let assignment = statement
                .named_child(0)
                .filter(|node| node.kind() == "assignment");
            let Some(assignment) = assignment else {
                continue;
            };
            let left = assignment.child_by_field_name("left");
            if left.is_none_or(|left| text(source, left) != "pytest_plugins") {
                continue;
            }
            let Some(right) = assignment.child_by_field_name("right") else {
                continue;
            };
            let strings = match right.kind() {
                "string" => vec![right],
                "list" | "tuple" => named_children(right),
                _ => Vec::new(),
            };
            let names = strings
                .into_iter()
                .filter(|string| string.kind() == "string")
                .map(|string| unquote(text(source, string)))
                .filter(|name| is_dotted_name(name));
            imports.plugins.extend(names.map(|dotted| {
                let module = ModuleName { dots: 0, dotted };
                (statement.start_byte(), module)
            }));
        }
        imports
    }
}

fn import_kinds(root: Node) -> &'static Kinds {
    static KINDS: std::sync::OnceLock<Kinds> = std::sync::OnceLock::new();
    KINDS.get_or_init(|| {
        let names = ["import_statement", "import_from_statement"];
        Kinds::new(&root.language(), &names)
    })
}

fn read_import<'s>(source: &'s str, statement: Node, found: &mut Vec<Import<'s>>) {
    let at = statement.start_byte();
    let mut cursor = statement.walk();
    let names: Vec<Node> = statement
        .children_by_field_name("name", &mut cursor)
        .collect();
    // Each name with its alias, when it has one.
    let names = names.into_iter().filter_map(|name| match name.kind() {
        "dotted_name" => Some((text(source, name), None)),
        "aliased_import" => {
            let alias = name.child_by_field_name("alias");
            let name = name.child_by_field_name("name")?;
            Some((text(source, name), alias.map(|alias| text(source, alias))))
        }
        _ => None,
    });
    let names = names.filter(|(name, _)| is_dotted_name(name));
    if statement.kind() == "import_statement" {
        found.extend(names.map(|(dotted, alias)| Import {
            at,
            module: ModuleName { dots: 0, dotted },
            taken: Taken::Module,
            local: alias.unwrap_or(dotted),
        }));
        return;
    }
    let Some(module) = statement
        .child_by_field_name("module_name")
        .and_then(|module| module_name(source, module))
    else {
        return;
    };
    let star = named_children(statement)
        .iter()
        .any(|child| child.kind() == "wildcard_import");
    if star {
        found.push(Import {
            at,
            module,
            taken: Taken::All,
            local: "",
        });
        return;
    }
    found.extend(
        names
            .filter(|(name, _)| !name.contains('.'))
            .map(|(name, alias)| Import {
                at,
                module,
                taken: Taken::Name(name),
                local: alias.unwrap_or(name),
            }),
    );
}

/// `a.b` or the `..a.b` of a relative import.
fn module_name<'s>(source: &'s str, module: Node) -> Option<ModuleName<'s>> {
    match module.kind() {
        "dotted_name" => {
            let dotted = text(source, module);
            is_dotted_name(dotted).then_some(ModuleName { dots: 0, dotted })
        }
        "relative_import" => {
            let whole = text(source, module);
            let dotted = whole.trim_start_matches('.');
            let dots = whole.len() - dotted.len();
            (dotted.is_empty() || is_dotted_name(dotted)).then_some(ModuleName { dots, dotted })
        }
        _ => None,
    }
}

/// Identifiers joined by dots, nothing else: what can become a path.
fn is_dotted_name(name: &str) -> bool {
    !name.is_empty()
        && name.split('.').all(|segment| {
            segment
                .chars()
                .next()
                .is_some_and(|first| first == '_' || first.is_alphabetic())
                && segment.chars().all(|c| c == '_' || c.is_alphanumeric())
        })
}

/// One place a module may be, and whether it is there as the submodule a `from` import names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Candidate {
    pub(super) path: String,
    pub(super) submodule: bool,
}

/// Where `module`, as the file at `path` names it, may be in the workspace, most likely first.
/// With `name` (`from module import name`), the submodule `module.name` goes before the module
/// in each directory, as Python finds it: a name the package's `__init__.py` defines is found
/// in the package when no submodule of that name exists.
pub(super) fn candidates(path: &str, module: ModuleName, name: Option<&str>) -> Vec<Candidate> {
    let stem = module.dotted.replace('.', "/");
    let mut found: Vec<Candidate> = Vec::new();
    let mut add = |path: String, submodule: bool| {
        if !found.iter().any(|known| known.path == path) {
            found.push(Candidate { path, submodule });
        }
    };
    for base in bases(path, module.dots) {
        // The module's own path without its extension, empty for the package a `from . import`
        // is relative to (then its `__init__.py`).
        let module_stem = join(&base, &stem);
        if let Some(name) = name {
            let submodule = join(&module_stem, name);
            add(format!("{submodule}.py"), true);
            add(join(&submodule, "__init__.py"), true);
        }
        if !stem.is_empty() {
            add(format!("{module_stem}.py"), false);
        }
        add(join(&module_stem, "__init__.py"), false);
    }
    found
}

/// The directories (`""` for the root, else without a trailing `/`) a name with `dots` leading
/// dots is looked for from, for the file at `path`.
fn bases(path: &str, dots: usize) -> Vec<String> {
    let segments: Vec<&str> = path
        .split(['/', '\\'])
        .filter(|segment| !segment.is_empty() && *segment != ".")
        .collect();
    let directories = &segments[..segments.len().saturating_sub(1)];
    if dots > 0 {
        // `.` is the file's own package, each further dot one package up.
        let up = dots - 1;
        return match directories.len().checked_sub(up) {
            Some(depth) => vec![directories[..depth].join("/")],
            None => Vec::new(),
        };
    }
    let mut bases: Vec<String> = (0..=directories.len())
        .rev()
        .take(MAX_ANCESTORS)
        .map(|depth| directories[..depth].join("/"))
        .collect();
    if !bases.iter().any(|base| base == "src") {
        bases.push("src".to_owned());
    }
    bases
}

fn join(directory: &str, rest: &str) -> String {
    match (directory.is_empty(), rest.is_empty()) {
        (true, _) => rest.to_owned(),
        (false, true) => directory.to_owned(),
        (false, false) => format!("{directory}/{rest}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(found: Vec<Candidate>) -> Vec<String> {
        found.into_iter().map(|candidate| candidate.path).collect()
    }

    #[test]
    fn an_absolute_name_is_looked_for_from_each_directory_up_then_src() {
        let module = ModuleName {
            dots: 0,
            dotted: "app.server",
        };
        assert_eq!(
            paths(candidates("tests/unit/test_x.py", module, None)),
            [
                "tests/unit/app/server.py",
                "tests/unit/app/server/__init__.py",
                "tests/app/server.py",
                "tests/app/server/__init__.py",
                "app/server.py",
                "app/server/__init__.py",
                "src/app/server.py",
                "src/app/server/__init__.py",
            ]
        );
    }

    #[test]
    fn a_relative_name_is_looked_for_from_the_file_s_package_only() {
        let parent = ModuleName {
            dots: 2,
            dotted: "pkg",
        };
        assert_eq!(
            paths(candidates("tests/unit/test_x.py", parent, Some("y"))),
            [
                "tests/pkg/y.py",
                "tests/pkg/y/__init__.py",
                "tests/pkg.py",
                "tests/pkg/__init__.py"
            ]
        );
        let package = ModuleName {
            dots: 1,
            dotted: "",
        };
        assert_eq!(
            paths(candidates("tests/test_x.py", package, Some("helpers"))),
            [
                "tests/helpers.py",
                "tests/helpers/__init__.py",
                "tests/__init__.py"
            ]
        );
        let above_the_root = ModuleName {
            dots: 3,
            dotted: "x",
        };
        assert!(candidates("tests/test_x.py", above_the_root, None).is_empty());
    }

    #[test]
    fn a_file_under_src_does_not_list_src_twice() {
        let module = ModuleName {
            dots: 0,
            dotted: "pkg",
        };
        assert_eq!(
            paths(candidates("src/test_x.py", module, None)),
            [
                "src/pkg.py",
                "src/pkg/__init__.py",
                "pkg.py",
                "pkg/__init__.py"
            ]
        );
    }
}
