//! Python: the set-up and tear-down (unittest and pytest's xunit style), fixtures, parameter
//! sources and helpers a test runs, from its file, the `conftest.py` files above it and the other
//! modules of the workspace it reaches: those its classes inherit methods from, those it imports
//! helpers, classes and fixtures from, and the plugin modules `pytest_plugins` names.
//!
//! A test a class inherits runs in that class: its set-up, and fixtures looked up from it first,
//! whichever class or module defines the method. A method of another module brings that module's
//! helpers and its class's fixtures, not its module-level ones (pytest does not see those).

mod call_sites;
mod calls;
mod definitions;
mod imports;
mod namespace;
mod pytest;
#[cfg(test)]
mod tests;
mod wanted;

pub(super) use self::call_sites::walked_kinds;
pub(super) use self::wanted::wanted;

use std::ops::Range;

use rustc_hash::FxHashSet as HashSet;

use self::definitions::{Item, PythonFile};
use self::namespace::Namespaces;
use self::pytest::Level;
use super::graph::{Graph, Step, breadth_first};
use super::syntax::contains;
use super::{ContextKind, ContextUnit, SourceFile};
use crate::extract::TestMethod;

/// Module-level functions that run around every test function, not methods (pytest).
const FUNCTION_SET_UP: [(&str, ContextKind); 2] = [
    ("setup_function", ContextKind::SetUp),
    ("teardown_function", ContextKind::TearDown),
];

/// Methods that run around every test of their class (unittest, pytest's xunit style). What runs
/// once for a class or a module (`setUpClass`, `setup_module`, and fixtures whose scope is wider
/// than a function) is not part of any one test's context: it is shared by many tests, and a
/// risk there would warn them all alike.
const CLASS_SET_UP: [(&str, ContextKind); 6] = [
    ("setUp", ContextKind::SetUp),
    ("asyncSetUp", ContextKind::SetUp),
    ("setup_method", ContextKind::SetUp),
    ("tearDown", ContextKind::TearDown),
    ("asyncTearDown", ContextKind::TearDown),
    ("teardown_method", ContextKind::TearDown),
];

/// Which file (0 for the test's file, `i + 1` for the i-th `conftest.py`, then the other
/// modules) and which item in it.
type Key = (usize, Item);

/// A Python file, its `conftest.py` files and the other modules its tests reach, read once,
/// ready to resolve any of its tests.
pub(super) struct PythonContext<'s> {
    /// The test's file, the `conftest.py` files from the nearest directory up, then the modules.
    files: Vec<PythonFile<'s>>,
    /// How many of `files` are the test's file and its `conftest.py` files.
    modules_from: usize,
    /// The paths of the modules, in the order of `files`.
    module_paths: Vec<&'s str>,
    test_name_starts: HashSet<usize>,
    /// What each file imports from the others; nothing when there are no modules.
    namespaces: Namespaces<'s>,
    /// The plugin modules of the test's file and its `conftest.py` files, whose fixtures come
    /// after theirs.
    plugins: Vec<usize>,
    /// Per file, the `autouse` fixtures it imports from others (see
    /// [`Namespaces::imported_autouse`]); read for the files whose fixtures tests see.
    imported_autouse: Vec<Vec<(usize, usize)>>,
}

impl<'s> PythonContext<'s> {
    pub(super) fn new(
        file: SourceFile<'s>,
        conftests: &[SourceFile<'s>],
        modules: &[(&'s str, SourceFile<'s>)],
        tests: &[TestMethod],
    ) -> PythonContext<'s> {
        let sources: Vec<SourceFile> = std::iter::once(file)
            .chain(conftests.iter().copied())
            .chain(modules.iter().map(|(_, module)| *module))
            .collect();
        let with_modules = !modules.is_empty();
        let files: Vec<PythonFile> = sources
            .iter()
            .map(|file| PythonFile::new(file.source, file.tree.root_node(), with_modules))
            .collect();
        let modules_from = 1 + conftests.len();
        let namespaces = Namespaces::new(&sources, tests, conftests.len(), modules);
        let plugins = namespaces.plugins(0..modules_from);
        let mut imported_autouse = vec![Vec::new(); files.len()];
        for file in (0..modules_from).chain(plugins.iter().copied()) {
            imported_autouse[file] = namespaces.imported_autouse(&files, file);
        }
        PythonContext {
            files,
            modules_from,
            module_paths: modules.iter().map(|(path, _)| *path).collect(),
            test_name_starts: tests.iter().map(|test| test.name_range.start).collect(),
            namespaces,
            plugins,
            imported_autouse,
        }
    }

    pub(super) fn units(&self, test: &TestMethod) -> Vec<ContextUnit> {
        TestScope::new(self, test).context(test)
    }

    /// The file defining a test's method and where its name starts there.
    fn defined_at(&self, test: &TestMethod) -> (usize, usize) {
        let elsewhere = test
            .inherited
            .as_ref()
            .and_then(|inherited| inherited.elsewhere.as_ref());
        match elsewhere {
            Some(elsewhere) => {
                let module = self
                    .module_paths
                    .iter()
                    .position(|path| *path == elsewhere.module.path)
                    .map_or(usize::MAX, |position| self.modules_from + position);
                (module, elsewhere.name_range.start)
            }
            None => (0, test.name_range.start),
        }
    }
}

/// One test's view of the files: which fixtures it sees, and which definitions are tests.
struct TestScope<'a, 's> {
    files: &'a [PythonFile<'s>],
    namespaces: &'a Namespaces<'s>,
    imported_autouse: &'a [Vec<(usize, usize)>],
    test_name_starts: &'a HashSet<usize>,
    /// The test's own definition (its file and index), when the files' definitions hold it.
    function: Option<(usize, usize)>,
    /// The class of the test's file the test runs in.
    class: Option<usize>,
    levels: Vec<Level>,
}

impl<'a, 's> TestScope<'a, 's> {
    fn new(context: &'a PythonContext<'s>, test: &TestMethod) -> TestScope<'a, 's> {
        let files = &context.files;
        let own = &files[0];
        let (defined_in, name_start) = context.defined_at(test);
        let function = files.get(defined_in).and_then(|file| {
            let function = file.function_by_name_start.get(&name_start).copied()?;
            Some((defined_in, function))
        });
        let innermost_around = |range: &std::ops::Range<usize>| {
            let classes = own.classes.iter().enumerate();
            let around = classes.filter(|(_, class)| contains(&class.range, range));
            around
                .max_by_key(|(_, class)| class.range.start)
                .map(|(index, _)| index)
        };
        let class = match (&test.inherited, function) {
            // An inherited test runs in the class that collects it.
            (Some(inherited), _) => innermost_around(&inherited.class_name),
            (None, Some((_, function))) => own.functions[function].class,
            // A test the file's definitions do not hold (broken code): the innermost class around it.
            (None, None) => innermost_around(&test.range),
        };
        // A method of another module brings the fixtures of its class and that class's bases.
        let more: Vec<Level> = function
            .filter(|(file, _)| *file > 0)
            .and_then(|(file, function)| {
                let module = &files[file];
                let class = module.functions[function].class?;
                Some(
                    module
                        .mro(class)
                        .iter()
                        .map(|&base| Level {
                            file,
                            class: Some(base),
                        })
                        .collect(),
                )
            })
            .unwrap_or_default();
        TestScope {
            files,
            namespaces: &context.namespaces,
            imported_autouse: &context.imported_autouse,
            test_name_starts: &context.test_name_starts,
            function,
            class,
            levels: pytest::levels(files, class, &more, context.modules_from, &context.plugins),
        }
    }

    fn context(&self, test: &TestMethod) -> Vec<ContextUnit> {
        let own = &self.files[0];
        let mut roots = Vec::new();
        let function_set_up: &[_] = match self.class {
            Some(_) => &[],
            None => &FUNCTION_SET_UP,
        };
        for &(name, kind) in function_set_up {
            roots.extend(own.module_functions.get(name).map(|&index| Step {
                key: (0, Item::Function(index)),
                kind,
                anchor: None,
            }));
        }
        if let Some(class) = self.class {
            for &(name, kind) in &CLASS_SET_UP {
                roots.extend(own.method(own.mro(class), name).map(|index| Step {
                    key: (0, Item::Function(index)),
                    kind,
                    anchor: None,
                }));
            }
        }
        // Autouse fixtures first, as pytest sets them up first.
        for level in &self.levels {
            let file = &self.files[level.file];
            for &index in &file.autouse {
                if file.functions[index].class == level.class {
                    roots.extend(self.fixture_step(level.file, index));
                }
            }
            if level.class.is_none() {
                let imported = self.imported_autouse.get(level.file);
                for &(file, index) in imported.map(Vec::as_slice).unwrap_or_default() {
                    roots.extend(self.fixture_step(file, index));
                }
            }
        }
        let defined_in = self.function.map_or(0, |(file, _)| file);
        let test_function = self
            .function
            .map(|(file, function)| &self.files[file].functions[function]);
        // Marks, each with the file its parameter sources are looked up in.
        let marks = test_function
            .map(|function| (defined_in, &function.marks))
            .into_iter()
            .chain(self.levels.iter().filter(|level| level.file == 0).map(
                |level| match level.class {
                    Some(class) => (0, &own.classes[class].marks),
                    None => (0, &own.module_marks),
                },
            ));
        let mut parametrized: Vec<&str> = Vec::new();
        for (file, marks) in marks {
            for name in &marks.usefixtures {
                roots.extend(self.requested(name, 0));
            }
            for name in &marks.sources {
                roots.extend(self.files[file].parameter_source(name).map(|item| Step {
                    key: (file, item),
                    kind: ContextKind::ParameterSource,
                    anchor: None,
                }));
            }
            parametrized.extend(&marks.parametrized);
        }
        for parameter in test_function
            .map(|function| function.parameters.as_slice())
            .unwrap_or_default()
        {
            if !parametrized.contains(parameter) {
                roots.extend(self.requested(parameter, 0));
            }
        }
        match (defined_in, test_function) {
            (0, _) | (_, None) => self.helpers(0, &test.range, &mut roots),
            (file, Some(function)) => self.helpers(file, &function.range, &mut roots),
        }
        breadth_first(
            self,
            self.function
                .map(|(file, function)| (file, Item::Function(function))),
            roots,
        )
    }

    /// The fixture `name` requested from `levels[from..]`.
    fn requested(&self, name: &str, from: usize) -> Option<Step<Key>> {
        let mut later = self.levels.iter().skip(from);
        let (file, function) = later.find_map(|&level| self.fixture_at(level, name))?;
        self.fixture_step(file, function)
    }

    /// The fixture `name` a level defines (its file and index): its own, or for a module one
    /// it imports from another.
    fn fixture_at(&self, level: Level, name: &str) -> Option<(usize, usize)> {
        let file = self.files.get(level.file)?;
        match (file.fixture(level.class, name), level.class) {
            (Some(function), _) => Some((level.file, function)),
            (None, Some(_)) => None,
            (None, None) => self
                .namespaces
                .imported_fixture(self.files, level.file, name),
        }
    }

    /// The step into a fixture, `None` for one set up once for many tests.
    fn fixture_step(&self, file: usize, function: usize) -> Option<Step<Key>> {
        let shared = self.files[file].functions[function]
            .fixture
            .as_ref()
            .is_some_and(|fixture| fixture.shared);
        (!shared).then_some(Step {
            key: (file, Item::Function(function)),
            kind: ContextKind::Fixture,
            anchor: None,
        })
    }
}

impl Graph for TestScope<'_, '_> {
    type Key = Key;

    fn locate(&self, (file, item): Key) -> (Option<usize>, &str, Range<usize>) {
        let python = &self.files[file];
        let (name, range) = match item {
            Item::Function(index) => {
                let function = &python.functions[index];
                let name = match (&function.fixture, function.class) {
                    (Some(fixture), _) => fixture.name,
                    // A constructor goes by its class's name, as the call that runs it reads.
                    (None, Some(class)) if function.name == "__init__" => {
                        python.classes[class].name
                    }
                    (None, _) => function.name,
                };
                (name, function.range.clone())
            }
            Item::Assignment(index) => (
                python.assignments[index].name,
                python.assignments[index].range.clone(),
            ),
        };
        (file.checked_sub(1), name, range)
    }

    fn is_test(&self, (file, item): Key) -> bool {
        match item {
            Item::Function(index) => {
                file == 0
                    && self
                        .test_name_starts
                        .contains(&self.files[0].functions[index].name_start)
            }
            Item::Assignment(_) => false,
        }
    }

    fn runs(&self, step: Step<Key>, found: &mut Vec<Step<Key>>) {
        let (file, item) = step.key;
        let python = &self.files[file];
        let range = match item {
            Item::Function(index) => &python.functions[index].range,
            Item::Assignment(index) => &python.assignments[index].range,
        };
        self.helpers(file, range, found);
        let Item::Function(index) = item else {
            return;
        };
        let function = &python.functions[index];
        let (ContextKind::Fixture, Some(fixture)) = (step.kind, &function.fixture) else {
            return;
        };
        // A fixture requesting its own name extends the one it overrides, further out: after
        // the level it is found at (for one a module imports, the importing module's).
        for parameter in &function.parameters {
            let own_level = (*parameter == fixture.name)
                .then(|| {
                    let mut levels = self.levels.iter();
                    levels
                        .position(|&level| self.fixture_at(level, parameter) == Some((file, index)))
                })
                .flatten();
            let from = own_level.map_or(0, |position| position + 1);
            found.extend(self.requested(parameter, from));
        }
        for name in &fixture.params {
            found.extend(python.parameter_source(name).map(|item| Step {
                key: (file, item),
                kind: ContextKind::ParameterSource,
                anchor: None,
            }));
        }
    }
}
