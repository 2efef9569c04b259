//! Rust: the helper functions a test calls, in its file and the files of the modules it reaches
//! (`mod common;`, the crate's `src/` through `crate::` or the package's name), and the rstest
//! fixtures it requests.
//!
//! Functions are resolved by path as the test's module sees them: its own module first, then the
//! modules around it (test modules usually `use super::*`), its `use` imports, `self::`,
//! `super::`, `crate::`, an inline module's name, a `mod name;` file or the type of an `impl`
//! block, a method of a local whose `let` tells its type. A file read alone (the editor's case)
//! links nothing and reads no other file.

#[cfg(test)]
mod across_files;
mod body;
mod definitions;
mod modules;
mod paths;
mod resolve;
mod targets;
mod uses;
mod values;
mod wanted;

pub(super) use self::body::walked_kinds;
pub(super) use self::wanted::wanted;

use std::ops::Range;

use self::body::On;
use self::definitions::RustFile;
use self::modules::{ModuleId, ModuleTree};
use self::resolve::Key;
use super::graph::{Graph, Step, breadth_first, within};
use super::syntax::contains;
use super::{Anchor, ContextKind, ContextUnit, SourceFile};
use crate::extract::TestMethod;

/// A Rust file and the other files its tests reach, read once, ready to resolve any of its tests.
pub(super) struct RustContext<'s> {
    /// The tests' file, then the others in the order given: a unit of `files[i]` is `Some(i - 1)`.
    files: Vec<RustFile<'s>>,
    tree: ModuleTree,
}

impl<'s> RustContext<'s> {
    /// `others` are the other files of the workspace the tests reach (path and file), whose
    /// units are `Some(i)` for the i-th; see [`super::Resolver::new`].
    pub(super) fn new(
        file: SourceFile<'s>,
        others: &[(&'s str, SourceFile<'s>)],
        tests: &[TestMethod],
    ) -> RustContext<'s> {
        let mut files = vec![RustFile::new(file, tests)];
        files.extend(others.iter().map(|(_, other)| RustFile::new(*other, &[])));
        let mut paths = vec![tests_path(tests)];
        paths.extend(others.iter().map(|(path, _)| (*path).to_owned()));
        let tree = ModuleTree::new(&files, paths);
        RustContext { files, tree }
    }

    pub(super) fn units(&self, test: &TestMethod) -> Vec<ContextUnit> {
        let own = &self.files[0];
        let function = own
            .function_by_name_start
            .get(&test.name_range.start)
            .copied();
        let module = match function {
            Some(function) => own.functions[function].module,
            None => innermost_module(own, &test.range),
        };
        let mut roots = Vec::new();
        if let Some(function) = function {
            for request in &own.functions[function].requests {
                roots.extend(self.fixture(request, (0, module)));
            }
        }
        self.helpers(0, &test.range, &mut roots);
        breadth_first(self, function.map(|function| (0, function)), roots)
    }

    /// The `#[fixture]` called `name`, seen from `module` and the modules around it.
    fn fixture(&self, name: &'s str, module: ModuleId) -> Option<Step<Key>> {
        let fixtures = self.visible_functions(name, module).into_iter();
        let mut fixtures =
            fixtures.filter(|&(file, function)| self.files[file].functions[function].fixture);
        fixtures.next().map(|key| Step {
            key,
            kind: ContextKind::Fixture,
            anchor: None,
        })
    }

    /// Appends a helper step for every function that a call in `range` of `file` runs.
    fn helpers(&self, file: usize, range: &Range<usize>, found: &mut Vec<Step<Key>>) {
        let body = self.files[file].body();
        for call in within(&body.calls, |call| call.at, range) {
            let name = call.path.last().copied().unwrap_or_default();
            let called = match call.on {
                On::Path => self.called(&call.path, (file, call.module), call.owner),
                On::SelfValue => self.methods(file, call.owner, name),
                On::Local(local) => {
                    // The last `let` of that name before the call, in the same unit.
                    let bindings = within(&body.bindings, |binding| binding.at, range);
                    let binding = bindings
                        .iter()
                        .rev()
                        .find(|binding| binding.at < call.at && binding.name == local);
                    binding.map_or_else(Vec::new, |binding| {
                        let module = (file, call.module);
                        self.method_of(&binding.type_path, name, module, call.owner)
                    })
                }
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
}

/// The path of the tests' file, as their ids begin with it (`tests/it.rs::module::test`, see
/// [`TestMethod::id`]); callers give the same path to extraction and to [`wanted()`]. Empty
/// without tests or when the id does not start with a `.rs` path.
fn tests_path(tests: &[TestMethod]) -> String {
    let path = tests.first().and_then(|test| test.id.split("::").next());
    path.filter(|path| path.ends_with(".rs"))
        .unwrap_or_default()
        .to_owned()
}

fn innermost_module(file: &RustFile, range: &Range<usize>) -> usize {
    let modules = file.modules.iter().enumerate();
    let around = modules.filter(|(_, module)| contains(&module.range, range));
    around
        .max_by_key(|(_, module)| module.range.start)
        .map_or(0, |(index, _)| index)
}

impl Graph for RustContext<'_> {
    type Key = Key;

    fn locate(&self, (file, function): Key) -> (Option<usize>, &str, Range<usize>) {
        let function = &self.files[file].functions[function];
        (file.checked_sub(1), function.name, function.range.clone())
    }

    fn is_test(&self, (file, function): Key) -> bool {
        let own = &self.files[0];
        file == 0
            && own
                .test_name_starts
                .contains(&own.functions[function].name_start)
    }

    fn runs(&self, step: Step<Key>, found: &mut Vec<Step<Key>>) {
        let (file, function) = step.key;
        let function = &self.files[file].functions[function];
        self.helpers(file, &function.range, found);
        if step.kind == ContextKind::Fixture {
            for request in &function.requests {
                found.extend(self.fixture(request, (file, function.module)));
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
    fn calls_inside_macros_count_but_macro_names_and_methods_of_unknown_types_do_not() {
        let source = "fn compute() -> u8 { 1 }\nfn check() -> bool { true }\n\
                      #[test]\nfn t() {\n    assert_eq!(compute(), 1);\n    assert!(check());\n    \
                      assert!(value.check());\n    vec![format!(\"{}\", compute())];\n}\n";
        assert_eq!(
            units_of(source, "t"),
            ["Helper compute 1", "Helper check 1"]
        );
    }

    #[test]
    fn a_method_on_a_local_whose_let_tells_its_type_is_that_type_s_method() {
        let source = "struct Server;\nimpl Server {\n    fn start() -> Server { Server }\n    fn stop(&self) {}\n}\n\
                      struct Other;\nimpl Other {\n    fn stop(&self) {}\n    fn halt(&self) {}\n}\n\
                      #[test]\nfn t() {\n    let server = Server::start();\n    server.stop();\n    \
                      let other = Other {};\n    assert!(other.halt() == ());\n    unknown.stop();\n}\n";
        assert_eq!(
            units_of(source, "t"),
            ["Helper start 1", "Helper stop 1", "Helper halt 1"]
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
