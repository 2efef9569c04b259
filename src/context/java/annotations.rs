//! What a Java method's annotations say: a life-cycle method, a data provider, or a test with
//! parameter sources.

use tree_sitter::Node;

use super::members::{Member, ParameterSource};
use crate::context::ContextKind;
use crate::context::syntax::{child_of_kind, last_segment, named_children, text, unquote};

/// JUnit 4 and 5 and TestNG annotations of methods that run before each test. Methods that run
/// once for a class, a suite or a group of tests (`@BeforeClass`, `@BeforeAll`, TestNG's
/// `@BeforeTest`, `@BeforeSuite`, `@BeforeGroups` and their `@After` twins) are not part of any
/// one test's context: what they start is shared by many tests, and a risk there would warn every
/// test of the class alike (fixbench and fixtrain caught more fixed tests without them, see
/// `models/HISTORY.md`).
const SET_UP_ANNOTATIONS: [&str; 3] = ["Before", "BeforeEach", "BeforeMethod"];

/// Their twins that run after each test.
const TEAR_DOWN_ANNOTATIONS: [&str; 3] = ["After", "AfterEach", "AfterMethod"];

/// Reads the annotations of a method that make it a life-cycle method, a data provider or a test
/// with parameter sources.
pub(super) fn read_annotations<'s>(
    source: &'s str,
    method: Node,
    method_name: &'s str,
    member: &mut Member<'s>,
) {
    let Some(modifiers) = child_of_kind(method, "modifiers") else {
        return;
    };
    for annotation in named_children(modifiers) {
        if !matches!(annotation.kind(), "annotation" | "marker_annotation") {
            continue;
        }
        let Some(name) = annotation.child_by_field_name("name") else {
            continue;
        };
        let arguments = annotation.child_by_field_name("arguments");
        let values = |key| arguments.map(|arguments| element_values(source, arguments, key));
        match last_segment(text(source, name)) {
            name if SET_UP_ANNOTATIONS.contains(&name) => {
                member.life_cycle = Some(ContextKind::SetUp)
            }
            name if TEAR_DOWN_ANNOTATIONS.contains(&name) => {
                member.life_cycle = Some(ContextKind::TearDown)
            }
            "MethodSource" => {
                let factories = values("value").unwrap_or_default();
                if factories.is_empty() {
                    member.sources.push(ParameterSource::Factory(""));
                }
                member
                    .sources
                    .extend(factories.into_iter().map(ParameterSource::Factory));
            }
            "Test" => {
                let providers = values("dataProvider").unwrap_or_default();
                member
                    .sources
                    .extend(providers.into_iter().map(ParameterSource::DataProvider));
            }
            "DataProvider" => {
                let name = values("name").unwrap_or_default().into_iter().next();
                member.provides = Some(name.unwrap_or(method_name));
            }
            _ => {}
        }
    }
}

/// The string values of an annotation's element `key` (`value` also takes the unnamed element):
/// `"a"` and `{"a", "b"}`.
fn element_values<'s>(source: &'s str, arguments: Node, key: &str) -> Vec<&'s str> {
    let mut values = Vec::new();
    for argument in named_children(arguments) {
        let value = match argument.kind() {
            "element_value_pair" => {
                let named = argument
                    .child_by_field_name("key")
                    .map(|name| text(source, name));
                match argument.child_by_field_name("value") {
                    Some(value) if named == Some(key) => value,
                    _ => continue,
                }
            }
            _ if key == "value" => argument,
            _ => continue,
        };
        let literals = match value.kind() {
            "element_value_array_initializer" => named_children(value),
            _ => vec![value],
        };
        values.extend(
            literals
                .into_iter()
                .filter(|literal| literal.kind() == "string_literal")
                .map(|literal| unquote(text(source, literal))),
        );
    }
    values
}
