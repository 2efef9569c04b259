//! Reads the members of a Java class body: methods and constructors, fields with an initialiser,
//! initializer blocks, and the declared type of every field.

use std::borrow::Cow;
use std::ops::Range;
use std::sync::OnceLock;

use tree_sitter::Node;

use super::annotations::read_annotations;
use super::grammar::{Grammar, Kind};
use crate::context::ContextKind;
use crate::context::syntax::{child_of_kind, last_segment, named_children, text};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum MemberKind {
    Method,
    Constructor,
    /// A field declaration with an initialiser, or an initializer block.
    Field,
}

/// Where a parameterised test takes its arguments from, as its annotations name it.
pub(super) enum ParameterSource<'s> {
    /// `@MethodSource`: a factory method, `Class#method` or plain.
    Factory(&'s str),
    /// TestNG `@Test(dataProvider = "x")`.
    DataProvider(&'s str),
}

/// A member of a class of the file.
pub(super) struct Member<'s> {
    pub(super) kind: MemberKind,
    pub(super) name: Cow<'s, str>,
    pub(super) name_start: usize,
    pub(super) range: Range<usize>,
    pub(super) class: usize,
    /// `SetUp` or `TearDown` for life-cycle methods.
    pub(super) life_cycle: Option<ContextKind>,
    /// The name a TestNG `@DataProvider` method provides under.
    pub(super) provides: Option<&'s str>,
    pub(super) sources: Vec<ParameterSource<'s>>,
    /// The name evidence gives the member when a test runs it from outside its class's scope
    /// (`Server.start`, `new Server`), made the first time a test needs it.
    pub(super) qualified: OnceLock<String>,
}

/// A variable whose declared type may be a class of the workspace: a field, a local variable
/// or a try-with-resources resource.
pub(super) struct Variable<'s> {
    pub(super) name: &'s str,
    /// The simple name of its type: `Server` for `org.example.Server<T>`, and for `var`, the
    /// class its initialiser creates.
    pub(super) type_name: &'s str,
    /// Where it is declared: a local variable is in scope after this.
    pub(super) at: usize,
}

/// Appends the members declared directly in a class body (methods and constructors, fields with
/// an initialiser, initializer blocks) to `members`, and the type of every field, static or
/// not, to `fields`. Members of anonymous classes are not the class's own.
pub(super) fn index_members<'s>(
    source: &'s str,
    body: Node,
    class: usize,
    members: &mut Vec<Member<'s>>,
    fields: &mut Vec<Variable<'s>>,
) {
    let mut declarations = named_children(body);
    // An enum's members follow its constants, inside one more node.
    if let Some(position) = declarations
        .iter()
        .position(|node| node.kind() == "enum_body_declarations")
    {
        declarations = named_children(declarations[position]);
    }
    // Members tree-sitter could not fit stay inside an error node.
    let declarations = declarations.into_iter().flat_map(|node| match node.kind() {
        "ERROR" => named_children(node),
        _ => vec![node],
    });
    for node in declarations {
        let member = |kind, name: Cow<'s, str>, name_start| Member {
            kind,
            name,
            name_start,
            range: node.byte_range(),
            class,
            life_cycle: None,
            provides: None,
            sources: Vec::new(),
            qualified: OnceLock::new(),
        };
        match node.kind() {
            "method_declaration" => {
                let Some(name_node) = node.child_by_field_name("name") else {
                    continue;
                };
                let name = text(source, name_node);
                let mut method = member(
                    MemberKind::Method,
                    Cow::Borrowed(name),
                    name_node.start_byte(),
                );
                read_annotations(source, node, name, &mut method);
                let parameters = node
                    .child_by_field_name("parameters")
                    .map_or(0, |parameters| parameters.named_child_count());
                if method.life_cycle.is_none() && parameters == 0 {
                    // JUnit 3 names its life cycle instead of annotating it.
                    method.life_cycle = match name {
                        "setUp" => Some(ContextKind::SetUp),
                        "tearDown" => Some(ContextKind::TearDown),
                        _ => None,
                    };
                }
                members.push(method);
            }
            "constructor_declaration" => {
                let start = node
                    .child_by_field_name("name")
                    .map_or(node.start_byte(), |name| name.start_byte());
                let name = Cow::Borrowed(
                    node.child_by_field_name("name")
                        .map_or("", |name| text(source, name)),
                );
                members.push(member(MemberKind::Constructor, name, start));
            }
            "field_declaration" => {
                let declarators = declared_variables(source, node, fields);
                // A static field or a static initializer runs once for the class, like
                // `@BeforeAll`: what it starts is shared by every test (see `annotations`).
                if is_static(node)
                    || !declarators
                        .iter()
                        .any(|declarator| declarator.child_by_field_name("value").is_some())
                {
                    continue;
                }
                let names: Vec<&str> = declarators
                    .iter()
                    .filter_map(|declarator| declarator.child_by_field_name("name"))
                    .map(|name| text(source, name))
                    .collect();
                let start = declarators
                    .first()
                    .map_or(node.start_byte(), Node::start_byte);
                members.push(member(
                    MemberKind::Field,
                    Cow::Owned(names.join(", ")),
                    start,
                ));
            }
            "block" => {
                members.push(member(
                    MemberKind::Field,
                    Cow::Borrowed("initializer"),
                    node.start_byte(),
                ));
            }
            _ => {}
        }
    }
}

/// Appends the variables a field or local variable declaration declares with a type that may be
/// a class, and returns its declarators.
pub(super) fn declared_variables<'s, 't>(
    source: &'s str,
    declaration: Node<'t>,
    variables: &mut Vec<Variable<'s>>,
) -> Vec<Node<'t>> {
    let grammar = Grammar::of(declaration);
    let mut cursor = declaration.walk();
    let declarators: Vec<Node> = match grammar.declarator {
        Some(declarator) => declaration
            .children_by_field_id(declarator, &mut cursor)
            .collect(),
        None => Vec::new(),
    };
    let Some(declared) = declaration.child_by_field_id(grammar.type_) else {
        return declarators;
    };
    for declarator in &declarators {
        let Some(name) = declarator.child_by_field_id(grammar.name) else {
            continue;
        };
        let value = declarator.child_by_field_id(grammar.value);
        if let Some(type_name) = variable_type(source, declared, value) {
            variables.push(Variable {
                name: text(source, name),
                type_name,
                at: declarator.start_byte(),
            });
        }
    }
    declarators
}

/// The simple name of a variable's class: its declared type's, or for `var`, that of the class
/// its initialiser `value` creates. `None` for primitives, arrays, and `var` set otherwise.
pub(super) fn variable_type<'s>(
    source: &'s str,
    declared: Node,
    value: Option<Node>,
) -> Option<&'s str> {
    match class_type_name(source, declared)? {
        "var" => {
            let grammar = Grammar::of(declared);
            let value = value.filter(|value| grammar.kind(*value) == Some(Kind::ObjectCreation));
            class_type_name(source, value?.child_by_field_id(grammar.type_)?)
        }
        name => Some(name),
    }
}

/// The simple name of a class type node (`Server`, `pkg.Server`, `Server<T>`); `None` for other
/// types (primitives, arrays).
pub(super) fn class_type_name<'s>(source: &'s str, type_node: Node) -> Option<&'s str> {
    match Grammar::of(type_node).kind(type_node) {
        Some(Kind::TypeIdentifier | Kind::QualifiedOrGenericType) => {
            Some(base_type_name(text(source, type_node))).filter(|name| !name.is_empty())
        }
        _ => None,
    }
}

/// `Base` from `Base`, `pkg.Base`, `Base<T>` or `Outer.Base<T>`.
pub(super) fn base_type_name(type_text: &str) -> &str {
    last_segment(type_text.split('<').next().unwrap_or(type_text))
}

fn is_static(declaration: Node) -> bool {
    child_of_kind(declaration, "modifiers")
        .is_some_and(|modifiers| child_of_kind(modifiers, "static").is_some())
}
