//! The test methods a collected Python class inherits, as pytest collects them: pytest looks at
//! the class's own attributes, then each class of its method resolution order, and collects
//! every name it meets first that its rules call a test. A name the class (or a class before) binds
//! hides the same name further on, a method as well as an attribute (`test_x = None`).
//!
//! Bases are looked up in the class's own module, then through its imports in other modules of
//! the project ([`ModuleSource`]); a base outside the project (`unittest.TestCase`) adds nothing.
//! The order is Python's for the usual hierarchies (depth first, left to right, each class once),
//! not C3's in every diamond.

use std::collections::HashSet;
use std::ops::Range;
use std::sync::Arc;

use super::python_classes::{ClassDef, ClassTable, Import, ModuleSource, PythonModule};
use crate::language::Language;

/// Classes of a hierarchy looked at, at most: real ones have a handful.
const MAX_CLASSES: usize = 16;

/// Imports followed to find one class (a package re-exporting what a module defines).
const MAX_HOPS: usize = 4;

/// A test method a class inherits.
#[derive(Debug, Clone)]
pub(super) struct InheritedMethod {
    /// The module that defines it, `None` for the class's own.
    pub(super) module: Option<Arc<PythonModule>>,
    /// The method, decorators included, and its name, in that module's text.
    pub(super) range: Range<usize>,
    pub(super) name: Range<usize>,
}

/// Where a class is defined: the file being read (`None`) or another module.
type Place = Option<Arc<PythonModule>>;

/// What looking up classes needs: the file being read, its path and the project's modules.
pub(super) struct Hierarchy<'a> {
    pub(super) own: &'a ClassTable,
    pub(super) path: &'a str,
    pub(super) modules: Option<&'a dyn ModuleSource>,
}

impl Hierarchy<'_> {
    /// The test methods `class` (of the file being read) inherits and does not hide, those
    /// `collects` calls tests, in the order pytest meets them.
    pub(super) fn inherited(
        &self,
        class: &ClassDef,
        collects: &dyn Fn(&str) -> bool,
    ) -> Vec<InheritedMethod> {
        let mut seen: HashSet<&str> = class.members.iter().map(|m| m.name.as_str()).collect();
        let mut found = Vec::new();
        let order = self.resolution_order(class);
        for (place, index) in &order {
            let definition = &self.table(place).classes[*index];
            for member in &definition.members {
                if !seen.insert(member.name.as_str()) {
                    continue;
                }
                if let Some((range, name)) = &member.method
                    && collects(&member.name)
                {
                    found.push(InheritedMethod {
                        module: place.clone(),
                        range: range.clone(),
                        name: name.clone(),
                    });
                }
            }
        }
        found
    }

    fn table<'t>(&'t self, place: &'t Place) -> &'t ClassTable {
        place.as_ref().map_or(self.own, |module| &module.table)
    }

    fn path<'t>(&'t self, place: &'t Place) -> &'t str {
        place
            .as_ref()
            .map_or(self.path, |module| module.path.as_str())
    }

    /// The bases of `class` and theirs, depth first, left to right, each once.
    fn resolution_order(&self, class: &ClassDef) -> Vec<(Place, usize)> {
        let mut order: Vec<(Place, usize)> = Vec::new();
        let mut pending: Vec<(Place, String)> = class
            .bases
            .iter()
            .rev()
            .map(|base| (None, base.clone()))
            .collect();
        while let Some((place, base)) = pending.pop() {
            if order.len() >= MAX_CLASSES {
                break;
            }
            let Some((found_place, index)) = self.resolve(&place, &base) else {
                continue;
            };
            let key = (self.path(&found_place).to_string(), index);
            if order
                .iter()
                .any(|(known, at)| (self.path(known).to_string(), *at) == key)
            {
                continue;
            }
            let bases = &self.table(&found_place).classes[index].bases;
            pending.extend(
                bases
                    .iter()
                    .rev()
                    .map(|base| (found_place.clone(), base.clone())),
            );
            order.push((found_place, index));
        }
        order
    }

    /// The class a base expression written in the module at `place` names.
    fn resolve(&self, place: &Place, base: &str) -> Option<(Place, usize)> {
        let table = self.table(place);
        let path = self.path(place).to_string();
        match base.rsplit_once('.') {
            None => {
                if let Some(index) = table.class(base) {
                    return Some((place.clone(), index));
                }
                match table.imports.get(base)? {
                    Import::From { module, name } => self.class_in(&path, module, name, MAX_HOPS),
                    Import::Module(_) => None,
                }
            }
            Some((prefix, name)) => {
                let (first, rest) = prefix.split_once('.').unwrap_or((prefix, ""));
                let module = match table.imports.get(first)? {
                    Import::Module(module) => module.clone(),
                    Import::From { module, name } => join(module, name),
                };
                let module = if rest.is_empty() {
                    module
                } else {
                    join(&module, rest)
                };
                self.class_in(&path, &module, name, MAX_HOPS)
            }
        }
    }

    /// The class `name` of the module `module` imported from `importer`, following the imports
    /// of that module when it only re-exports it.
    fn class_in(
        &self,
        importer: &str,
        module: &str,
        name: &str,
        hops: usize,
    ) -> Option<(Place, usize)> {
        let found = self.modules?.python_module(importer, module)?;
        if let Some(index) = found.table.class(name) {
            return Some((Some(found), index));
        }
        match found.table.imports.get(name)? {
            Import::From {
                module: next,
                name: next_name,
            } if hops > 0 => self.class_in(&found.path, next, next_name, hops - 1),
            _ => None,
        }
    }
}

/// Where a test a Python class inherits is collected and defined. pytest collects it in each
/// collecting subclass, under the subclass's name; it runs with the subclass's set-up and
/// fixtures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inherited {
    /// The name of the class that collects the test, in this file.
    pub class_name: Range<usize>,
    /// The method when another module of the project defines it; `None` when this file does, at
    /// the test's `range`. A test defined elsewhere has its `range` and `name_range` on the
    /// collecting class's name (where a report points), and its `code` from that module.
    pub elsewhere: Option<Elsewhere>,
}

/// A test method defined in another module of the project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Elsewhere {
    pub module: Arc<PythonModule>,
    /// The method in the module's text, decorators included.
    pub range: Range<usize>,
    pub name_range: Range<usize>,
}

/// Whether a `flakesense: ignore` comment in a module silences its method at `elsewhere`.
pub(super) fn ignored_in_module(elsewhere: &Elsewhere) -> bool {
    let module = &elsewhere.module;
    let comments = super::walk::comments(module.tree.root_node(), &module.text, Language::Python);
    let above =
        super::layout::comments_directly_above(&module.text, &comments, elsewhere.range.start);
    super::ignore::ignored_tests(
        &module.text,
        &comments,
        std::slice::from_ref(&elsewhere.range),
        std::slice::from_ref(&above),
    )
    .first()
    .copied()
    .unwrap_or(false)
}

/// A module path and a name inside it: `pkg` and `base` give `pkg.base`, `.` and `base` give
/// `.base`.
fn join(module: &str, name: &str) -> String {
    if module.ends_with('.') {
        format!("{module}{name}")
    } else {
        format!("{module}.{name}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::language::Language;
    use std::collections::HashMap;

    /// Modules by path, found as the workspace finds them.
    #[derive(Debug, Default)]
    struct Modules(HashMap<String, Arc<PythonModule>>);

    impl Modules {
        fn with(mut self, path: &str, text: &str) -> Modules {
            let module = PythonModule::new(path.to_string(), text.to_string()).unwrap();
            self.0.insert(path.to_string(), Arc::new(module));
            self
        }
    }

    impl ModuleSource for Modules {
        fn python_module(&self, importer: &str, module: &str) -> Option<Arc<PythonModule>> {
            super::super::python_classes::module_paths(importer, module)
                .iter()
                .find_map(|path| self.0.get(path).cloned())
        }
    }

    /// The inherited tests of `class` in `source` (at `tests/test_a.py`): per test, its module
    /// and name.
    fn inherited(source: &str, class: &str, modules: &Modules) -> Vec<(String, String)> {
        let tree = super::super::parse(Language::Python, source, None).unwrap();
        let table = ClassTable::read(tree.root_node(), source);
        let hierarchy = Hierarchy {
            own: &table,
            path: "tests/test_a.py",
            modules: Some(modules),
        };
        let definition = &table.classes[table.class(class).unwrap()];
        hierarchy
            .inherited(definition, &|name| name.starts_with("test"))
            .into_iter()
            .map(|method| {
                let (path, text) = match &method.module {
                    Some(module) => (module.path.clone(), module.text.as_str()),
                    None => ("tests/test_a.py".to_string(), source),
                };
                (path, text[method.name].to_string())
            })
            .collect()
    }

    #[test]
    fn a_mixin_of_the_same_file_gives_its_tests_and_hidden_names_stay_hidden() {
        let source = "class Checks:\n    def test_a(self):\n        pass\n    def test_b(self):\n        pass\n    def helper(self):\n        pass\n\nclass TestX(Checks):\n    test_b = None\n    def test_own(self):\n        pass\n";
        assert_eq!(
            inherited(source, "TestX", &Modules::default()),
            [("tests/test_a.py".to_string(), "test_a".to_string())]
        );
    }

    #[test]
    fn bases_of_other_modules_are_found_through_imports_and_re_exports() {
        let modules = Modules::default()
            .with(
                "tests/pkg/test_signer.py",
                "class TestSigner(Base):\n    def test_signs(self):\n        pass\n    def test_over(self):\n        pass\n\nclass Base:\n    def test_base(self):\n        pass\n",
            )
            .with("tests/pkg/__init__.py", "from .mixins import Frozen\n")
            .with("tests/pkg/mixins.py", "class Frozen:\n    def test_frozen(self):\n        pass\n");
        let source = "from pkg.test_signer import TestSigner\nimport pkg\n\nclass TestTimed(pkg.Frozen, TestSigner):\n    def test_over(self):\n        pass\n";
        assert_eq!(
            inherited(source, "TestTimed", &modules),
            [
                ("tests/pkg/mixins.py".to_string(), "test_frozen".to_string()),
                (
                    "tests/pkg/test_signer.py".to_string(),
                    "test_signs".to_string()
                ),
                (
                    "tests/pkg/test_signer.py".to_string(),
                    "test_base".to_string()
                ),
            ]
        );
        // Outside the project, a base adds nothing.
        let source = "import unittest\n\nclass TestY(unittest.TestCase):\n    pass\n";
        assert!(inherited(source, "TestY", &modules).is_empty());
    }
}
