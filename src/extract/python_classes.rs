//! What inheritance needs of a Python module: its module-level classes (bases, methods, class
//! attributes) and its imports, and where a project keeps the module an import names.
//!
//! pytest collects a test class's inherited test methods in the class itself (a mixin's, or a
//! base class's of another module: itsdangerous's `TestTimestampSigner(FreezeMixin,
//! TestSigner)`). Reading another module is IO: a [`ModuleSource`] (the workspace) reads and
//! parses it; this module only reads trees and names candidate paths.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

use tree_sitter::Node;

use super::walk::{children, field_text};

/// Reads the Python modules a file's classes derive from: the workspace implements it, caching
/// what it read. Paths are relative to the workspace root, `/`-separated.
pub trait ModuleSource: Send + Sync + std::fmt::Debug {
    /// The project module that `importer` means by `module` (dotted, with leading dots for a
    /// relative import), or `None` when the project has no such file.
    fn python_module(&self, importer: &str, module: &str) -> Option<Arc<PythonModule>>;
}

/// A module of the project, read and parsed.
pub struct PythonModule {
    /// Relative to the workspace root, `/`-separated.
    pub path: String,
    pub text: String,
    pub tree: tree_sitter::Tree,
    pub(super) table: ClassTable,
}

impl PythonModule {
    /// Parses `text`; `None` when the parser gives up on it.
    pub fn new(path: String, text: String) -> Option<PythonModule> {
        let tree = super::parse(crate::language::Language::Python, &text, None)?;
        let table = ClassTable::read(tree.root_node(), &text);
        Some(PythonModule {
            path,
            text,
            tree,
            table,
        })
    }
}

impl std::fmt::Debug for PythonModule {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("PythonModule")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl PartialEq for PythonModule {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self, other) || (self.path == other.path && self.text == other.text)
    }
}

impl Eq for PythonModule {}

/// A module's classes and imports.
#[derive(Debug, Default)]
pub(super) struct ClassTable {
    pub(super) classes: Vec<ClassDef>,
    /// What each name bound by an import statement at module level refers to.
    pub(super) imports: HashMap<String, Import>,
}

/// A class defined at module level.
#[derive(Debug)]
pub(super) struct ClassDef {
    pub(super) name: String,
    /// The superclasses as written: `Base`, `module.Base`.
    pub(super) bases: Vec<String>,
    /// What its body binds, in order: methods and class attributes (`test_x = None` hides an
    /// inherited test).
    pub(super) members: Vec<Member>,
}

#[derive(Debug)]
pub(super) struct Member {
    pub(super) name: String,
    /// For a method: its range (decorators included) and its name's.
    pub(super) method: Option<(Range<usize>, Range<usize>)>,
}

/// What an imported name refers to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Import {
    /// `import a.b as m` (`m` is `a.b`), `import a.b` (`a` is `a`).
    Module(String),
    /// `from a.b import c as d` (`d` is `c` of `a.b`); the module keeps its leading dots.
    From { module: String, name: String },
}

impl ClassTable {
    pub(super) fn read(root: Node<'_>, source: &str) -> ClassTable {
        let mut table = ClassTable::default();
        for statement in children(root) {
            let definition = match statement.kind() {
                "decorated_definition" => statement.child_by_field_name("definition"),
                _ => Some(statement),
            };
            let Some(definition) = definition else {
                continue;
            };
            match definition.kind() {
                "class_definition" => table.classes.extend(class_def(definition, source)),
                "import_statement" => imports(definition, source, None, &mut table.imports),
                "import_from_statement" => {
                    let module = definition
                        .child_by_field_name("module_name")
                        .and_then(|module| source.get(module.byte_range()))
                        .map(|module| module.split_whitespace().collect::<String>());
                    if let Some(module) = module {
                        imports(definition, source, Some(&module), &mut table.imports);
                    }
                }
                _ => {}
            }
        }
        table
    }

    /// The last class of this name, as Python binds it.
    pub(super) fn class(&self, name: &str) -> Option<usize> {
        self.classes.iter().rposition(|class| class.name == name)
    }
}

/// A class definition's name, bases and members.
fn class_def(class: Node<'_>, source: &str) -> Option<ClassDef> {
    let name = field_text(class, "name", source)?.to_string();
    let bases = class
        .child_by_field_name("superclasses")
        .map(|bases| {
            children(bases)
                .filter(|base| matches!(base.kind(), "identifier" | "attribute"))
                .filter_map(|base| source.get(base.byte_range()))
                .map(|base| base.split_whitespace().collect())
                .collect()
        })
        .unwrap_or_default();
    let mut members = Vec::new();
    if let Some(body) = class.child_by_field_name("body") {
        for node in children(body) {
            let definition = match node.kind() {
                "decorated_definition" => node.child_by_field_name("definition"),
                _ => Some(node),
            };
            let Some(definition) = definition else {
                continue;
            };
            match definition.kind() {
                "function_definition" | "class_definition" => {
                    if let Some(name) = definition.child_by_field_name("name") {
                        let method = (definition.kind() == "function_definition")
                            .then(|| (node.byte_range(), name.byte_range()));
                        members.push(Member {
                            name: source
                                .get(name.byte_range())
                                .unwrap_or_default()
                                .to_string(),
                            method,
                        });
                    }
                }
                "expression_statement" => {
                    let assigned = children(definition)
                        .filter(|child| child.kind() == "assignment")
                        .filter_map(|assignment| assignment.child_by_field_name("left"))
                        .filter(|left| left.kind() == "identifier")
                        .filter_map(|left| source.get(left.byte_range()));
                    members.extend(assigned.map(|name| Member {
                        name: name.to_string(),
                        method: None,
                    }));
                }
                _ => {}
            }
        }
    }
    Some(ClassDef {
        name,
        bases,
        members,
    })
}

/// The names an import statement binds; `from` is the module of a `from ... import`.
fn imports(
    statement: Node<'_>,
    source: &str,
    from: Option<&str>,
    found: &mut HashMap<String, Import>,
) {
    let text = |node: Node<'_>| {
        source
            .get(node.byte_range())
            .unwrap_or_default()
            .split_whitespace()
            .collect::<String>()
    };
    let mut cursor = statement.walk();
    for name in statement.children_by_field_name("name", &mut cursor) {
        let (dotted, alias) = match name.kind() {
            "aliased_import" => (
                name.child_by_field_name("name").map(text),
                name.child_by_field_name("alias").map(text),
            ),
            _ => (Some(text(name)), None),
        };
        let Some(dotted) = dotted.filter(|dotted| !dotted.is_empty()) else {
            continue;
        };
        match from {
            Some(module) => {
                found.insert(
                    alias.unwrap_or_else(|| dotted.clone()),
                    Import::From {
                        module: module.to_string(),
                        name: dotted,
                    },
                );
            }
            None => match alias {
                Some(alias) => {
                    found.insert(alias, Import::Module(dotted));
                }
                None => {
                    let first = dotted.split('.').next().unwrap_or_default().to_string();
                    found.insert(first.clone(), Import::Module(first));
                }
            },
        }
    }
}

/// Where the module `module` imported from the file at `importer` may be, nearest first: for a
/// relative import, from the importer's package; for an absolute one, from the importer's
/// directory and each directory above it (pytest's default import mode puts the first directory
/// above a test file that is no package on `sys.path`), and from `src/`.
pub fn module_paths(importer: &str, module: &str) -> Vec<String> {
    let dots = module.chars().take_while(|&char| char == '.').count();
    let rest: Vec<&str> = module[dots..]
        .split('.')
        .filter(|part| !part.is_empty())
        .collect();
    let mut directories: Vec<&str> = importer.split('/').collect();
    directories.pop();
    let bases: Vec<String> = if dots > 0 {
        let up = dots - 1;
        if up > directories.len() {
            return Vec::new();
        }
        vec![directories[..directories.len() - up].join("/")]
    } else {
        let mut bases: Vec<String> = (0..=directories.len())
            .rev()
            .map(|depth| directories[..depth].join("/"))
            .collect();
        bases.push("src".to_string());
        bases
    };
    let mut paths = Vec::new();
    for base in bases {
        let mut parts: Vec<&str> = Vec::new();
        if !base.is_empty() {
            parts.push(&base);
        }
        parts.extend(&rest);
        let joined = parts.join("/");
        if rest.is_empty() {
            paths.push(format!("{joined}/__init__.py"));
        } else {
            paths.push(format!("{joined}.py"));
            paths.push(format!("{joined}/__init__.py"));
        }
    }
    paths.dedup();
    paths
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::language::Language;

    #[test]
    fn classes_members_and_imports_are_read() {
        let source = "import os\nimport a.b as m\nimport pkg.sub\nfrom test_x.test_signer import TestSigner\nfrom . import base as b\nfrom ..shared import Mixin, Other as O\n\nclass FreezeMixin:\n    @pytest.fixture\n    def ts(self):\n        pass\n\nclass TestA(FreezeMixin, m.Base):\n    test_hidden = None\n    def test_own(self):\n        pass\n";
        let tree = super::super::parse(Language::Python, source, None).unwrap();
        let table = ClassTable::read(tree.root_node(), source);
        let test_a = &table.classes[table.class("TestA").unwrap()];
        assert_eq!(test_a.bases, ["FreezeMixin", "m.Base"]);
        let members: Vec<(&str, bool)> = test_a
            .members
            .iter()
            .map(|member| (member.name.as_str(), member.method.is_some()))
            .collect();
        assert_eq!(members, [("test_hidden", false), ("test_own", true)]);
        assert_eq!(table.imports["m"], Import::Module("a.b".into()));
        assert_eq!(table.imports["pkg"], Import::Module("pkg".into()));
        assert_eq!(
            table.imports["TestSigner"],
            Import::From {
                module: "test_x.test_signer".into(),
                name: "TestSigner".into()
            }
        );
        assert_eq!(
            table.imports["b"],
            Import::From {
                module: ".".into(),
                name: "base".into()
            }
        );
        assert_eq!(
            table.imports["O"],
            Import::From {
                module: "..shared".into(),
                name: "Other".into()
            }
        );
    }

    #[test]
    fn modules_are_looked_for_from_the_importer_up_and_in_src() {
        assert_eq!(
            module_paths("tests/pkg/test_timed.py", "pkg.test_signer"),
            [
                "tests/pkg/pkg/test_signer.py",
                "tests/pkg/pkg/test_signer/__init__.py",
                "tests/pkg/test_signer.py",
                "tests/pkg/test_signer/__init__.py",
                "pkg/test_signer.py",
                "pkg/test_signer/__init__.py",
                "src/pkg/test_signer.py",
                "src/pkg/test_signer/__init__.py",
            ]
        );
        assert_eq!(
            module_paths("tests/unit/test_a.py", "..shared"),
            ["tests/shared.py", "tests/shared/__init__.py"]
        );
        assert_eq!(module_paths("tests/test_a.py", "."), ["tests/__init__.py"]);
        assert!(module_paths("test_a.py", "...far").is_empty());
    }
}
