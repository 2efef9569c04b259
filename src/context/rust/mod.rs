//! Rust: the helper functions of its file that a test calls, and the rstest fixtures it requests.
//!
//! Functions are resolved by path as the test's module sees them: its own module first, then the
//! modules around it (test modules usually `use super::*`), `self::`, `super::`, `Self::`, an
//! inline module's name or the type of an `impl` block of the file.

mod definitions;

pub(super) use self::definitions::walked_kinds;

use std::ops::Range;

use self::definitions::RustFile;
use super::graph::{Graph, Step, breadth_first, within};
use super::syntax::contains;
use super::{Anchor, ContextKind, ContextUnit, SourceFile};
use crate::extract::TestMethod;

/// A Rust file read once, ready to resolve any of its tests.
pub(super) struct RustContext<'s> {
    file: RustFile<'s>,
}

/// What the Rust `file` at `path` uses that other files may define ([`super::Wanted`]).
pub(super) fn wanted(path: &str, file: SourceFile) -> Vec<super::Wanted> {
    let _ = (path, file);
    Vec::new()
}

impl<'s> RustContext<'s> {
    /// `others` are the other files of the workspace the tests reach (path and file), whose
    /// units are `Some(i)` for the i-th; see [`super::Resolver::new`].
    pub(super) fn new(
        file: SourceFile<'s>,
        others: &[(&'s str, SourceFile<'s>)],
        tests: &[TestMethod],
    ) -> RustContext<'s> {
        let _ = others;
        let file = RustFile::new(file.source, file.tree.root_node(), tests);
        RustContext { file }
    }

    pub(super) fn units(&self, test: &TestMethod) -> Vec<ContextUnit> {
        self.file.context(test)
    }
}

impl RustFile<'_> {
    fn context(&self, test: &TestMethod) -> Vec<ContextUnit> {
        let own = self
            .function_by_name_start
            .get(&test.name_range.start)
            .copied();
        let module = match own {
            Some(function) => self.functions[function].module,
            None => self.innermost_module(&test.range),
        };
        let mut roots = Vec::new();
        if let Some(function) = own {
            for request in &self.functions[function].requests {
                roots.extend(self.fixture(request, module));
            }
        }
        self.helpers(&test.range, &mut roots);
        breadth_first(self, own, roots)
    }

    fn innermost_module(&self, range: &Range<usize>) -> usize {
        let modules = self.modules.iter().enumerate();
        let around = modules.filter(|(_, module)| contains(&module.range, range));
        around
            .max_by_key(|(_, module)| module.range.start)
            .map_or(0, |(index, _)| index)
    }

    /// The `#[fixture]` called `name`, seen from `module` and the modules around it.
    fn fixture(&self, name: &str, module: usize) -> Option<Step<usize>> {
        let fixtures = self
            .free_functions(name, module)
            .into_iter()
            .filter(|&function| self.functions[function].fixture);
        fixtures
            .map(|key| Step {
                key,
                kind: ContextKind::Fixture,
                anchor: None,
            })
            .next()
    }

    /// Appends a helper step for every function of the file that a call in `range` runs.
    fn helpers(&self, range: &Range<usize>, found: &mut Vec<Step<usize>>) {
        for call in within(&self.calls, |call| call.at, range) {
            let called = if call.on_self {
                self.methods(call.owner, call.path.last().copied().unwrap_or_default())
            } else {
                self.resolve_path(&call.path, call.module, call.owner)
            };
            let anchor = Some(Anchor {
                at: call.at,
                cleanup: false,
            });
            found.extend(called.into_iter().map(|key| Step {
                key,
                kind: ContextKind::Helper,
                anchor,
            }));
        }
    }

    /// The functions a call path names, from a call in `module` (inside an `impl` of `owner`).
    fn resolve_path(&self, path: &[&str], module: usize, owner: Option<&str>) -> Vec<usize> {
        let Some((&name, qualifiers)) = path.split_last() else {
            return Vec::new();
        };
        match qualifiers {
            [] => self.free_functions(name, module),
            ["Self"] => self.methods(owner, name),
            _ => {
                let (mut current, rest, search_up) = match qualifiers {
                    ["self", rest @ ..] => (Some(module), rest, false),
                    ["crate", ..] => return Vec::new(),
                    _ => (Some(module), qualifiers, true),
                };
                let mut rest = rest;
                while let Some((&"super", tail)) = rest.split_first() {
                    current = current.and_then(|module| self.modules[module].parent);
                    rest = tail;
                }
                let Some(mut current) = current else {
                    return Vec::new();
                };
                for (position, segment) in rest.iter().enumerate() {
                    let child = if position == 0 && search_up {
                        self.module_visible(segment, current)
                    } else {
                        self.child_module(segment, current)
                    };
                    match child {
                        Some(child) => current = child,
                        // `Type::function` for a type with an `impl` in the file.
                        None if position + 1 == rest.len() => {
                            return self.methods(Some(segment), name);
                        }
                        None => return Vec::new(),
                    }
                }
                self.in_module(name, current)
            }
        }
    }

    /// Functions called `name` outside `impl` blocks of the nearest module from `module` up
    /// (tests modules usually `use super::*`) that has any.
    fn free_functions(&self, name: &str, module: usize) -> Vec<usize> {
        let mut current = Some(module);
        while let Some(module) = current {
            let found = self.in_module(name, module);
            if !found.is_empty() {
                return found;
            }
            current = self.modules[module].parent;
        }
        Vec::new()
    }

    fn in_module(&self, name: &str, module: usize) -> Vec<usize> {
        let candidates = self
            .functions_by_name
            .get(name)
            .map(Vec::as_slice)
            .unwrap_or_default();
        candidates
            .iter()
            .copied()
            .filter(|&function| {
                self.functions[function].module == module
                    && self.functions[function].owner.is_none()
            })
            .collect()
    }

    fn methods(&self, owner: Option<&str>, name: &str) -> Vec<usize> {
        let candidates = self
            .functions_by_name
            .get(name)
            .map(Vec::as_slice)
            .unwrap_or_default();
        candidates
            .iter()
            .copied()
            .filter(|&function| owner.is_some() && self.functions[function].owner == owner)
            .collect()
    }

    fn child_module(&self, name: &str, parent: usize) -> Option<usize> {
        (1..self.modules.len()).find(|&module| {
            self.modules[module].parent == Some(parent) && self.modules[module].name == name
        })
    }

    /// A module called `name` that a path written in `module` can start with: a child of it or of
    /// a module around it.
    fn module_visible(&self, name: &str, module: usize) -> Option<usize> {
        let mut current = Some(module);
        while let Some(module) = current {
            if let Some(child) = self.child_module(name, module) {
                return Some(child);
            }
            current = self.modules[module].parent;
        }
        None
    }
}

impl Graph for RustFile<'_> {
    type Key = usize;

    fn locate(&self, key: usize) -> (Option<usize>, &str, Range<usize>) {
        let function = &self.functions[key];
        (None, function.name, function.range.clone())
    }

    fn is_test(&self, key: usize) -> bool {
        self.test_name_starts
            .contains(&self.functions[key].name_start)
    }

    fn runs(&self, step: Step<usize>, found: &mut Vec<Step<usize>>) {
        let function = &self.functions[step.key];
        self.helpers(&function.range, found);
        if step.kind == ContextKind::Fixture {
            for request in &function.requests {
                found.extend(self.fixture(request, function.module));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::context::tests::units_by_test;
    use crate::language::Language;

    fn units_of(source: &str, test: &str) -> Vec<String> {
        let found = units_by_test(Language::Rust, source, &[]);
        let units = found.into_iter().find(|(name, _)| name == test);
        units.map(|(_, units)| units).unwrap_or_default()
    }

    /// `crate::` names the file's root only when the file is the crate root, which the file
    /// alone does not tell.
    #[test]
    fn paths_resolve_through_modules_and_impl_types() {
        let source = "mod net { pub fn open() {} }\nstruct Pool;\nimpl Pool { fn new() -> Pool { Pool } }\n\
                      fn top() {}\nfn only_through_crate() {}\nmod tests {\n    use super::*;\n    #[test]\n    fn t() {\n        \
                      net::open();\n        let _ = Pool::new();\n        super::top();\n        \
                      crate::only_through_crate();\n        other::open();\n    }\n}\n";
        assert_eq!(
            units_of(source, "t"),
            ["Helper open 1", "Helper new 1", "Helper top 1"]
        );
    }

    #[test]
    fn calls_inside_macros_count_but_macro_names_and_methods_on_values_do_not() {
        let source = "fn compute() -> u8 { 1 }\nfn check() -> bool { true }\n\
                      #[test]\nfn t() {\n    assert_eq!(compute(), 1);\n    assert!(check());\n    \
                      assert!(value.check());\n    vec![format!(\"{}\", compute())];\n}\n";
        assert_eq!(
            units_of(source, "t"),
            ["Helper compute 1", "Helper check 1"]
        );
    }

    #[test]
    fn rstest_parameters_filled_by_cases_or_values_are_not_fixtures() {
        let source = "#[fixture]\nfn count() -> u8 { 1 }\n#[fixture]\nfn name() -> u8 { 1 }\n\
                      #[rstest]\n#[case(1)]\nfn t(#[case] count: u8, #[values(1)] name: u8, #[from(name)] n: u8) {}\n";
        assert_eq!(units_of(source, "t"), ["Fixture name 1"]);
    }

    #[test]
    fn a_fixture_set_up_once_for_every_test_is_no_test_s_context() {
        let source = "#[fixture]\n#[once]\nfn server() -> u8 { 1 }\n#[fixture]\nfn client() -> u8 { 1 }\n\
                      #[rstest]\nfn t(server: &u8, client: u8) {}\n";
        assert_eq!(units_of(source, "t"), ["Fixture client 1"]);
    }
}
