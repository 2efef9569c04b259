//! Finds the test methods of a Java file: JUnit 3, 4 and 5, TestNG.

use tree_sitter::Node;

use super::markers;
use super::walk::{Candidate, Depth, Found, Stop, children, field_text};

/// JUnit 4 and 5 and TestNG: a method carrying one of these annotations. Only the last segment
/// of the annotation's name counts, so `@Test`, `@org.junit.Test` and `@Test(timeout = 100)` all do.
const TEST_ANNOTATIONS: [&str; 5] = [
    "Test",
    "ParameterizedTest",
    "RepeatedTest",
    "TestFactory",
    "TestTemplate",
];

/// The declarations whose names appear in ids (`Outer$Inner#test`), and the body that holds
/// their members.
const SCOPES: [&str; 4] = [
    "class_declaration",
    "interface_declaration",
    "enum_declaration",
    "record_declaration",
];

/// The comment kinds, for ignore markers.
pub(super) const COMMENTS: [&str; 2] = ["line_comment", "block_comment"];

pub(super) fn walk(root: Node<'_>, source: &str, max_nesting: usize) -> Result<Found, Stop> {
    let mut found = Found::default();
    members(
        root,
        source,
        &mut found,
        Class::default(),
        Depth::new(max_nesting),
    )?;
    Ok(found)
}

/// The type declaration a member belongs to.
#[derive(Debug, Clone, Copy, Default)]
struct Class {
    scope: Option<usize>,
    /// JUnit 3: the class extends `TestCase`, or a project base class named `...TestCase` that
    /// usually extends it in turn.
    is_junit3: bool,
}

/// The members of a file or type body: test methods, and nested types to walk. Syntax errors
/// are looked through, so the tests of a file's intact parts are still found.
fn members(
    container: Node<'_>,
    source: &str,
    found: &mut Found,
    class: Class,
    depth: Depth,
) -> Result<(), Stop> {
    for node in children(container) {
        match node.kind() {
            "method_declaration" => {
                if is_test_method(node, source, class)
                    && let Some(name) = node.child_by_field_name("name")
                {
                    found.candidates.push(Candidate {
                        range: node.byte_range(),
                        name: name.byte_range(),
                        scope: class.scope,
                        inherited: None,
                    });
                    let modifiers = children(node).filter(|child| child.kind() == "modifiers");
                    found.markers.extend(
                        modifiers
                            .flat_map(children)
                            .filter(|modifier| {
                                matches!(modifier.kind(), "marker_annotation" | "annotation")
                            })
                            .filter_map(markers::java)
                            .take(markers::MAX_PER_TEST),
                    );
                }
            }
            "package_declaration" if found.package.is_none() => {
                found.package = children(node)
                    .find(|child| matches!(child.kind(), "identifier" | "scoped_identifier"))
                    .map(|name| name.byte_range());
            }
            kind if SCOPES.contains(&kind) => {
                let Some(name) = node.child_by_field_name("name") else {
                    continue;
                };
                let inner = Class {
                    scope: Some(found.add_scope(name.byte_range(), class.scope)),
                    is_junit3: extends_test_case(node, source),
                };
                if let Some(body) = node.child_by_field_name("body") {
                    members(body, source, found, inner, depth.inner()?)?;
                }
            }
            // An enum's members follow its constants.
            "enum_body_declarations" => members(node, source, found, class, depth)?,
            "ERROR" => members(node, source, found, class, depth.inner()?)?,
            _ => {}
        }
    }
    Ok(())
}

fn is_test_method(method: Node<'_>, source: &str, class: Class) -> bool {
    let modifiers = children(method).find(|child| child.kind() == "modifiers");
    let annotated = modifiers.is_some_and(|modifiers| {
        children(modifiers).any(|modifier| {
            matches!(modifier.kind(), "marker_annotation" | "annotation")
                && modifier
                    .child_by_field_name("name")
                    .and_then(|name| last_segment(name, source))
                    .is_some_and(|name| TEST_ANNOTATIONS.contains(&name))
        })
    });
    annotated || (class.is_junit3 && is_junit3_test(method, modifiers, source))
}

/// JUnit 3: `public void testX()` without parameters.
fn is_junit3_test(method: Node<'_>, modifiers: Option<Node<'_>>, source: &str) -> bool {
    let public = modifiers
        .is_some_and(|modifiers| children(modifiers).any(|modifier| modifier.kind() == "public"));
    let void = method
        .child_by_field_name("type")
        .is_some_and(|kind| kind.kind() == "void_type");
    let no_parameters = method
        .child_by_field_name("parameters")
        .is_some_and(|parameters| parameters.named_child_count() == 0);
    let named_test =
        field_text(method, "name", source).is_some_and(|name| name.starts_with("test"));
    public && void && no_parameters && named_test
}

fn extends_test_case(class: Node<'_>, source: &str) -> bool {
    let Some(superclass) = class.child_by_field_name("superclass") else {
        return false;
    };
    children(superclass)
        .filter(|child| child.is_named())
        .last()
        .and_then(|kind| last_segment(kind, source))
        .is_some_and(|name| name.ends_with("TestCase"))
}

/// The last segment of a possibly qualified name: `Test` of `org.junit.Test`.
fn last_segment<'s>(name: Node<'_>, source: &'s str) -> Option<&'s str> {
    let text = source.get(name.byte_range())?;
    text.rsplit('.').next().map(str::trim)
}
