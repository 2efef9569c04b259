//! Reads a Java file's classes, their members and the call sites of its code, in one walk.

use std::borrow::Cow;
use std::ops::Range;
use std::sync::OnceLock;

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use tree_sitter::Node;

use super::annotations::read_annotations;
use crate::context::ContextKind;
use crate::context::syntax::{
    Kinds, child_of_kind, contains, last_segment, named_children, preorder, text,
};
use crate::extract::TestMethod;

/// A class, interface, enum or record of the file.
pub(super) struct Class<'s> {
    pub(super) name: &'s str,
    pub(super) range: Range<usize>,
    pub(super) superclass: Option<&'s str>,
    pub(super) outer: Option<usize>,
}

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
}

/// What a call names, before it is resolved.
pub(super) enum Receiver<'s> {
    /// `foo()`, `this.foo()`, `this::foo`.
    Implicit,
    /// `super.foo()`.
    Super,
    /// `Name.foo()`: a static call when a class of the file is called `Name`.
    Named(&'s str),
}

pub(super) struct Call<'s> {
    pub(super) at: usize,
    pub(super) name: &'s str,
    pub(super) receiver: Receiver<'s>,
    /// The call is in a `finally` block.
    pub(super) cleanup: bool,
    /// The innermost class around the call.
    pub(super) class: Option<usize>,
}

/// The classes, members and call sites of one Java file.
pub(super) struct JavaFile<'s> {
    pub(super) classes: Vec<Class<'s>>,
    pub(super) members: Vec<Member<'s>>,
    pub(super) calls: Vec<Call<'s>>,
    pub(super) methods_by_name: HashMap<&'s str, Vec<usize>>,
    /// Per class: its members, in source order.
    pub(super) members_by_class: Vec<Vec<usize>>,
    pub(super) classes_by_name: HashMap<&'s str, usize>,
    /// Per class: the class and its superclasses declared in the file, nearest first.
    pub(super) hierarchies: Vec<Vec<usize>>,
    /// Per class: its hierarchy, then each enclosing class's, innermost first.
    pub(super) scopes: Vec<Vec<usize>>,
    pub(super) member_by_name_start: HashMap<usize, usize>,
    pub(super) test_name_starts: HashSet<usize>,
}

impl<'s> JavaFile<'s> {
    pub(super) fn new(source: &'s str, root: Node, tests: &[TestMethod]) -> JavaFile<'s> {
        let mut classes: Vec<Class<'s>> = Vec::new();
        let mut members = Vec::new();
        let mut calls = Vec::new();
        let mut open: Vec<usize> = Vec::new();
        preorder(root, walked_kinds(root), |node, cleanup| {
            let range = node.byte_range();
            while open
                .last()
                .is_some_and(|&class| !contains(&classes[class].range, &range))
            {
                open.pop();
            }
            match node.kind() {
                "class_declaration"
                | "interface_declaration"
                | "enum_declaration"
                | "record_declaration" => {
                    let Some(name) = node.child_by_field_name("name") else {
                        return;
                    };
                    let superclass = child_of_kind(node, "superclass")
                        .and_then(|superclass| superclass.named_child(0))
                        .map(|type_node| base_type_name(text(source, type_node)));
                    let class = classes.len();
                    classes.push(Class {
                        name: text(source, name),
                        range,
                        superclass,
                        outer: open.last().copied(),
                    });
                    open.push(class);
                    if let Some(body) = node.child_by_field_name("body") {
                        index_members(source, body, class, &mut members);
                    }
                }
                "method_invocation" => {
                    let Some(name) = node.child_by_field_name("name") else {
                        return;
                    };
                    let receiver = match node.child_by_field_name("object") {
                        None => Receiver::Implicit,
                        Some(object) => match object.kind() {
                            "this" => Receiver::Implicit,
                            "super" => Receiver::Super,
                            "identifier" => Receiver::Named(text(source, object)),
                            _ => return,
                        },
                    };
                    calls.push(Call {
                        at: name.start_byte(),
                        name: text(source, name),
                        receiver,
                        cleanup,
                        class: open.last().copied(),
                    });
                }
                "method_reference" => {
                    // `this::foo` or `Helper::foo`: the method runs when the reference is called.
                    let parts = named_children(node);
                    let (Some(object), Some(name)) = (parts.first(), parts.last()) else {
                        return;
                    };
                    let receiver = match object.kind() {
                        "this" => Receiver::Implicit,
                        "identifier" | "type_identifier" => Receiver::Named(text(source, *object)),
                        _ => return,
                    };
                    if parts.len() == 2 && name.kind() == "identifier" {
                        calls.push(Call {
                            at: name.start_byte(),
                            name: text(source, *name),
                            receiver,
                            cleanup,
                            class: open.last().copied(),
                        });
                    }
                }
                _ => {}
            }
        });
        // A chained call's name comes after the calls it is chained on.
        calls.sort_by_key(|call| call.at);
        let mut methods_by_name: HashMap<&str, Vec<usize>> = HashMap::default();
        let mut member_by_name_start = HashMap::default();
        let mut members_by_class = vec![Vec::new(); classes.len()];
        for (index, member) in members.iter().enumerate() {
            members_by_class[member.class].push(index);
            if member.kind == MemberKind::Method
                && let Cow::Borrowed(name) = member.name
            {
                methods_by_name.entry(name).or_default().push(index);
            }
            member_by_name_start.insert(member.name_start, index);
        }
        let mut classes_by_name = HashMap::default();
        for (index, class) in classes.iter().enumerate() {
            classes_by_name.entry(class.name).or_insert(index);
        }
        let hierarchies: Vec<Vec<usize>> = (0..classes.len())
            .map(|class| hierarchy(&classes, &classes_by_name, class))
            .collect();
        let scopes = (0..classes.len())
            .map(|class| {
                let mut scope: Vec<usize> = Vec::new();
                let mut seen: HashSet<usize> = HashSet::default();
                let mut around = Some(class);
                // Outer classes come before the classes they hold: the chain ends, and past
                // `MAX_CHAIN` enclosing classes (deeper than tests are found) it is cut.
                for _ in 0..MAX_CHAIN {
                    let Some(class) = around else {
                        break;
                    };
                    for &member_of in &hierarchies[class] {
                        if seen.insert(member_of) {
                            scope.push(member_of);
                        }
                    }
                    around = classes[class].outer;
                }
                scope
            })
            .collect();
        JavaFile {
            classes,
            members,
            calls,
            methods_by_name,
            members_by_class,
            classes_by_name,
            hierarchies,
            scopes,
            member_by_name_start,
            test_name_starts: tests.iter().map(|test| test.name_range.start).collect(),
        }
    }
}

/// How many classes a hierarchy, or a class and the classes around it, holds at most: as deep as
/// extraction finds tests (32). A file of 20,000 nested classes made every class's scope hold
/// all the classes around it, cubic in the nesting.
const MAX_CHAIN: usize = 32;

/// The class, then its superclasses declared in the file, stopping at a cycle or after
/// [`MAX_CHAIN`] classes.
fn hierarchy(classes: &[Class], by_name: &HashMap<&str, usize>, class: usize) -> Vec<usize> {
    let mut chain = vec![class];
    let mut current = class;
    while let Some(&superclass) = classes[current]
        .superclass
        .and_then(|name| by_name.get(name))
    {
        if chain.contains(&superclass) || chain.len() >= MAX_CHAIN {
            break;
        }
        chain.push(superclass);
        current = superclass;
    }
    chain
}

/// `Base` from `Base`, `pkg.Base`, `Base<T>` or `Outer.Base<T>`.
fn base_type_name(type_text: &str) -> &str {
    last_segment(type_text.split('<').next().unwrap_or(type_text))
}

/// Appends the members declared directly in a class body: methods and constructors, fields with
/// an initialiser, initializer blocks. Members of anonymous classes are not the class's own.
fn index_members<'s>(source: &'s str, body: Node, class: usize, members: &mut Vec<Member<'s>>) {
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
            // A static field or a static initializer runs once for the class, like
            // `@BeforeAll`: what it starts is shared by every test (see `annotations`).
            "field_declaration" if is_static(node) => {}
            "field_declaration" => {
                let mut cursor = node.walk();
                let declarators: Vec<Node> = node
                    .children_by_field_name("declarator", &mut cursor)
                    .collect();
                if !declarators
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

fn is_static(declaration: Node) -> bool {
    child_of_kind(declaration, "modifiers")
        .is_some_and(|modifiers| child_of_kind(modifiers, "static").is_some())
}

/// The kinds the walk over the whole file stops at.
pub(in crate::context) fn walked_kinds(root: Node) -> &'static Kinds {
    static KINDS: OnceLock<Kinds> = OnceLock::new();
    KINDS.get_or_init(|| {
        let names = [
            "class_declaration",
            "interface_declaration",
            "enum_declaration",
            "record_declaration",
            "method_invocation",
            "method_reference",
        ];
        Kinds::new(&root.language(), &names)
    })
}
