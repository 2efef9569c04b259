//! pytest: what decorators and marks say (fixtures, `usefixtures`, `parametrize`) and where a
//! requested fixture is looked for, in the order pytest looks: the test's class and its bases,
//! its enclosing classes, its module, the `conftest.py` files from the nearest directory up,
//! then the plugin modules `pytest_plugins` names.

use tree_sitter::Node;

use super::definitions::PythonFile;
use crate::context::syntax::{last_segment, named_children, text, unquote};

/// A function decorated as a pytest fixture.
#[derive(Debug, Default)]
pub(super) struct Fixture<'s> {
    /// The name tests request it by: `name=` when given, else the function's.
    pub name: &'s str,
    pub autouse: bool,
    /// Set up once for many tests (`scope=` session, package, module or class): not part of
    /// any one test's context.
    pub shared: bool,
    /// The names used in `params=`, which may be module-level values of the file.
    pub params: Vec<&'s str>,
}

/// The marks on a test, a class or a module (`pytestmark`) that bring in more code.
#[derive(Debug, Default)]
pub(super) struct Marks<'s> {
    /// `@pytest.mark.usefixtures("a", "b")`.
    pub usefixtures: Vec<&'s str>,
    /// Argument names `parametrize` fills directly: they are not fixtures.
    pub parametrized: Vec<&'s str>,
    /// The names used in `parametrize`'s argument values.
    pub sources: Vec<&'s str>,
}

/// Reads the decorators of a decorated definition: a fixture declaration and marks.
pub(super) fn read_decorators<'s>(
    source: &'s str,
    decorated: Node,
    function_name: &'s str,
) -> (Option<Fixture<'s>>, Marks<'s>) {
    let mut fixture = None;
    let mut marks = Marks::default();
    for decorator in named_children(decorated) {
        if decorator.kind() != "decorator" {
            continue;
        }
        let Some(expression) = decorator.named_child(0) else {
            continue;
        };
        let (callee, arguments) = callee_and_arguments(source, expression);
        if matches!(callee, "fixture" | "yield_fixture") {
            let mut declared = Fixture {
                name: function_name,
                ..Fixture::default()
            };
            for argument in arguments.map(named_children).unwrap_or_default() {
                let Some((key, value)) = keyword(source, argument) else {
                    continue;
                };
                match key {
                    "autouse" => declared.autouse = text(source, value) == "True",
                    "scope" if value.kind() == "string" => {
                        declared.shared = matches!(
                            unquote(text(source, value)),
                            "session" | "package" | "module" | "class"
                        )
                    }
                    "name" if value.kind() == "string" => {
                        declared.name = unquote(text(source, value))
                    }
                    "params" => declared.params = names_used(source, value),
                    _ => {}
                }
            }
            fixture = Some(declared);
        } else {
            read_mark(source, expression, &mut marks);
        }
    }
    (fixture, marks)
}

/// Reads a mark expression: `pytest.mark.usefixtures(...)`, `pytest.mark.parametrize(...)`, or a
/// list or tuple of marks as `pytestmark` holds them.
pub(super) fn read_mark<'s>(source: &'s str, expression: Node, marks: &mut Marks<'s>) {
    if matches!(expression.kind(), "list" | "tuple") {
        for element in named_children(expression) {
            read_mark(source, element, marks);
        }
        return;
    }
    let (callee, Some(arguments)) = callee_and_arguments(source, expression) else {
        return;
    };
    let arguments = named_children(arguments);
    let positional: Vec<Node> = arguments
        .iter()
        .copied()
        .filter(|argument| argument.kind() != "keyword_argument")
        .collect();
    let named = |name: &str| {
        let mut keywords = arguments
            .iter()
            .filter_map(|&argument| keyword(source, argument));
        keywords
            .find(|&(key, _)| key == name)
            .map(|(_, value)| value)
    };
    match callee {
        "usefixtures" => marks.usefixtures.extend(
            positional
                .iter()
                .filter(|argument| argument.kind() == "string")
                .map(|&argument| unquote(text(source, argument))),
        ),
        "parametrize" => {
            // With `indirect`, the named arguments go through fixtures of the same names.
            if named("indirect").is_none_or(|value| text(source, value) == "False") {
                let argnames = positional.first().copied().or_else(|| named("argnames"));
                marks.parametrized.extend(
                    argnames
                        .map(|names| argument_names(source, names))
                        .unwrap_or_default(),
                );
            }
            let argvalues = positional.get(1).copied().or_else(|| named("argvalues"));
            marks.sources.extend(
                argvalues
                    .map(|values| names_used(source, values))
                    .unwrap_or_default(),
            );
        }
        _ => {}
    }
}

/// The last segment of what an expression calls, or of the expression itself when it is not a
/// call, with the call's argument list.
fn callee_and_arguments<'s, 'tree>(
    source: &'s str,
    expression: Node<'tree>,
) -> (&'s str, Option<Node<'tree>>) {
    match expression.kind() {
        "call" => {
            let callee = expression
                .child_by_field_name("function")
                .map_or("", |function| text(source, function));
            (
                last_segment(callee),
                expression.child_by_field_name("arguments"),
            )
        }
        _ => (last_segment(text(source, expression)), None),
    }
}

fn keyword<'s, 'tree>(source: &'s str, argument: Node<'tree>) -> Option<(&'s str, Node<'tree>)> {
    if argument.kind() != "keyword_argument" {
        return None;
    }
    let name = argument.child_by_field_name("name")?;
    Some((text(source, name), argument.child_by_field_name("value")?))
}

/// `parametrize`'s argument names: `"a, b"`, `"a,b"` or `("a", "b")`.
fn argument_names<'s>(source: &'s str, names: Node) -> Vec<&'s str> {
    let strings = match names.kind() {
        "string" => vec![names],
        _ => named_children(names)
            .into_iter()
            .filter(|name| name.kind() == "string")
            .collect(),
    };
    strings
        .into_iter()
        .flat_map(|string| unquote(text(source, string)).split(','))
        .map(str::trim)
        .filter(|name| !name.is_empty())
        .collect()
}

/// The plain names an expression reads: `CASES` in `[*CASES, pytest.param(make(), id="x")]`
/// gives `CASES`, `pytest` and `make`; attribute names and keyword names are not read.
pub(super) fn names_used<'s>(source: &'s str, expression: Node) -> Vec<&'s str> {
    let mut names = Vec::new();
    let mut pending = vec![expression];
    while let Some(node) = pending.pop() {
        match node.kind() {
            "identifier" => names.push(text(source, node)),
            "attribute" => pending.extend(node.child_by_field_name("object")),
            "keyword_argument" => pending.extend(node.child_by_field_name("value")),
            "string" => {}
            _ => pending.extend(named_children(node).into_iter().rev()),
        }
    }
    names
}

/// One place where fixtures are defined, as seen from a test: a class of a file, or a module.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Level {
    /// 0 for the test's file, `i + 1` for the i-th `conftest.py`, then the other modules.
    pub file: usize,
    pub class: Option<usize>,
}

/// The levels a test in `class` (if any) of file 0 sees, nearest first: the class and its bases,
/// each enclosing class and its bases, `more` (the classes of other modules it derives from),
/// the module, each `conftest.py` (the first `modules` files), then each of `plugins`. The
/// module-level fixtures of other modules are not seen (pytest does not collect them) unless
/// they are plugins or a level imports them.
pub(super) fn levels(
    files: &[PythonFile],
    class: Option<usize>,
    more: &[Level],
    modules: usize,
    plugins: &[usize],
) -> Vec<Level> {
    let mut levels: Vec<Level> = Vec::new();
    let test_file = &files[0];
    let mut around = class;
    while let Some(class) = around {
        for &base in test_file.mro(class) {
            let level = Level {
                file: 0,
                class: Some(base),
            };
            if !levels.contains(&level) {
                levels.push(level);
            }
        }
        around = test_file.outer(class);
    }
    for level in more {
        if !levels.contains(level) {
            levels.push(*level);
        }
    }
    levels.extend((0..modules.min(files.len())).map(|file| Level { file, class: None }));
    let plugins = plugins.iter().filter(|&&file| file < files.len());
    levels.extend(plugins.map(|&file| Level { file, class: None }));
    levels
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::tests::units_by_test;
    use crate::extract::parse;
    use crate::language::Language;

    fn units_of(source: &str, conftests: &[&str], test: &str) -> Vec<String> {
        let found = units_by_test(Language::Python, source, conftests);
        let units = found.into_iter().find(|(name, _)| name == test);
        units.map(|(_, units)| units).unwrap_or_default()
    }

    const NEAR: &str = "import pytest\n\n@pytest.fixture\ndef db():\n    pass\n\n\
                        @pytest.fixture\ndef shared():\n    pass\n";
    const FAR: &str = "import pytest\n\n@pytest.fixture\ndef db():\n    pass\n\n\
                       @pytest.fixture\ndef root_only():\n    pass\n";
    const TESTS: &str = "import pytest\n\n\
        @pytest.fixture\ndef shared(shared):\n    return shared\n\n\
        class Base:\n    @pytest.fixture\n    def db(self):\n        pass\n\n\
        class TestX(Base):\n    @pytest.fixture(autouse=True)\n    def only_here(self):\n        pass\n\n\
        \x20   def test_in_class(self, db, root_only):\n        pass\n\n\
        def test_module(db, shared, builtin):\n    pass\n";

    #[test]
    fn a_class_fixture_wins_over_the_module_and_conftest_files() {
        assert_eq!(
            units_of(TESTS, &[NEAR, FAR], "test_in_class"),
            [
                "Fixture db 1",
                "Fixture only_here 1",
                "Fixture root_only 1 conftest 1"
            ]
        );
    }

    #[test]
    fn the_nearest_conftest_wins_and_an_override_extends_the_next_one_out() {
        // `builtin` is defined nowhere in the files: pytest's own, or a plugin's.
        assert_eq!(
            units_of(TESTS, &[NEAR, FAR], "test_module"),
            [
                "Fixture shared 1",
                "Fixture db 1 conftest 0",
                "Fixture shared 2 conftest 0"
            ]
        );
    }

    #[test]
    fn parametrized_arguments_are_fixtures_only_when_indirect() {
        let source = "import pytest\n\n@pytest.fixture\ndef x():\n    pass\n\n\
            @pytest.mark.parametrize(\"x\", [1])\ndef test_direct(x):\n    pass\n\n\
            @pytest.mark.parametrize(\"x\", [1], indirect=True)\ndef test_indirect(x):\n    pass\n";
        assert!(units_of(source, &[], "test_direct").is_empty());
        assert_eq!(units_of(source, &[], "test_indirect"), ["Fixture x 1"]);
    }

    #[test]
    fn class_marks_and_module_marks_bring_fixtures() {
        let source = "import pytest\n\npytestmark = [pytest.mark.usefixtures(\"a\"), pytest.mark.slow]\n\n\
            @pytest.fixture\ndef a():\n    pass\n\n@pytest.fixture\ndef b():\n    pass\n\n\
            class TestY:\n    pytestmark = pytest.mark.usefixtures(\"b\")\n\n\
            \x20   def test_marked(self):\n        pass\n";
        assert_eq!(
            units_of(source, &[], "test_marked"),
            ["Fixture a 1", "Fixture b 1"]
        );
    }

    fn first_expression(source: &str) -> (tree_sitter::Tree, Vec<String>) {
        let tree = parse(Language::Python, source, None).expect("the Python grammar loads");
        let root = tree.root_node();
        let expression = root
            .named_child(0)
            .and_then(|statement| statement.named_child(0))
            .expect("one expression statement");
        let names = names_used(source, expression)
            .into_iter()
            .map(str::to_owned)
            .collect();
        (tree, names)
    }

    #[test]
    fn names_used_skip_attributes_keywords_and_strings() {
        let (_, names) = first_expression("[*CASES, pytest.param(make(), id=\"x\", marks=SLOW)]\n");
        assert_eq!(names, ["CASES", "pytest", "make", "SLOW"]);
    }
}
