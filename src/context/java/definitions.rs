//! Reads a Java file's classes, their members, its local variables and the call sites of its
//! code, in one walk.

use std::borrow::Cow;
use std::ops::Range;
use std::sync::OnceLock;

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use tree_sitter::Node;

use super::grammar::{Grammar, Kind};
use super::members::{
    Member, MemberKind, Variable, base_type_name, class_type_name, declared_variables,
    index_members, variable_type,
};
use crate::context::graph::within;
use crate::context::syntax::{Kinds, child_of_kind, contains, named_children, preorder, text};
use crate::extract::TestMethod;

/// A class, interface, enum or record of the file.
pub(super) struct Class<'s> {
    pub(super) name: &'s str,
    pub(super) range: Range<usize>,
    pub(super) superclass: Option<&'s str>,
    pub(super) outer: Option<usize>,
    /// Its fields, static or not, with or without an initialiser.
    pub(super) fields: Vec<Variable<'s>>,
}

/// What a call names, before it is resolved.
pub(super) enum Receiver<'s> {
    /// `foo()`, `this.foo()`, `this::foo`.
    Implicit,
    /// `super.foo()`.
    Super,
    /// `name.foo()`: a method of the variable's class when a variable `name` is in scope, else
    /// a static method of the class `name`.
    Named(&'s str),
    /// `this.name.foo()`: a method of the field's class.
    Field(&'s str),
    /// `new Name(...).foo()`: a method of the class `Name`.
    Created(&'s str),
    /// `new Name(...)`, the call's name being the class's: its constructors and initialisers.
    New,
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
    /// The local variables and resources of the file's code whose type may be a class, by
    /// position.
    pub(super) locals: Vec<Variable<'s>>,
    pub(super) methods_by_name: HashMap<&'s str, Vec<usize>>,
    /// Per class: the members that run without being called, for each test of the class or
    /// each object of it (life-cycle methods, constructors, field initialisers), in source
    /// order. A test's class is read for every test: its other members, the tests, are many.
    pub(super) set_up_by_class: Vec<Vec<usize>>,
    /// The TestNG data providers.
    pub(super) providers: Vec<usize>,
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
        let mut locals = Vec::new();
        let mut open: Vec<usize> = Vec::new();
        let grammar = Grammar::of(root);
        preorder(root, walked_kinds(root), |node, cleanup| {
            let range = node.byte_range();
            while open
                .last()
                .is_some_and(|&class| !contains(&classes[class].range, &range))
            {
                open.pop();
            }
            match grammar.kind(node) {
                Some(Kind::Class) => {
                    let Some(name) = node.child_by_field_id(grammar.name) else {
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
                        fields: Vec::new(),
                    });
                    open.push(class);
                    if let Some(body) = node.child_by_field_name("body") {
                        let fields = &mut classes[class].fields;
                        index_members(source, body, class, &mut members, fields);
                    }
                }
                Some(Kind::LocalVariables) => {
                    declared_variables(source, node, &mut locals);
                }
                Some(Kind::Resource) => {
                    let (Some(name), Some(declared)) = (
                        node.child_by_field_id(grammar.name),
                        node.child_by_field_id(grammar.type_),
                    ) else {
                        return;
                    };
                    let value = node.child_by_field_id(grammar.value);
                    if let Some(type_name) = variable_type(source, declared, value) {
                        locals.push(Variable {
                            name: text(source, name),
                            type_name,
                            at: name.start_byte(),
                        });
                    }
                }
                _ => {
                    if let Some((at, name, receiver)) = read_call(grammar, source, node) {
                        calls.push(Call {
                            at,
                            name,
                            receiver,
                            cleanup,
                            class: open.last().copied(),
                        });
                    }
                }
            }
        });
        // A chained call's name comes after the calls it is chained on.
        calls.sort_by_key(|call| call.at);
        // A declaration's variables come before those of lambdas in its initialisers.
        locals.sort_by_key(|local| local.at);
        let mut methods_by_name: HashMap<&str, Vec<usize>> = HashMap::default();
        let mut member_by_name_start = HashMap::default();
        let mut set_up_by_class = vec![Vec::new(); classes.len()];
        let mut providers = Vec::new();
        for (index, member) in members.iter().enumerate() {
            if member.kind != MemberKind::Method || member.life_cycle.is_some() {
                set_up_by_class[member.class].push(index);
            }
            if member.provides.is_some() {
                providers.push(index);
            }
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
            locals,
            methods_by_name,
            set_up_by_class,
            providers,
            classes_by_name,
            hierarchies,
            scopes,
            member_by_name_start,
            test_name_starts: tests.iter().map(|test| test.name_range.start).collect(),
        }
    }
}

impl<'s> JavaFile<'s> {
    /// The methods called `name` declared in one of `classes`.
    pub(super) fn methods_in(&self, name: &str, classes: &[usize]) -> Vec<usize> {
        let methods = self.methods_by_name.get(name).map(Vec::as_slice);
        let methods = methods.unwrap_or_default().iter().copied();
        methods
            .filter(|&method| classes.contains(&self.members[method].class))
            .collect()
    }

    /// The type of the local variable `name` that code at `at` sees in the code of `range`: the
    /// nearest declared before it. Blocks are not told apart: in one method, two variables of
    /// one name usually hold one kind of thing.
    pub(super) fn local_type(
        &self,
        range: &Range<usize>,
        at: usize,
        name: &str,
    ) -> Option<&'s str> {
        let locals = within(&self.locals, |local| local.at, &(range.start..at));
        let local = locals.iter().rev().find(|local| local.name == name)?;
        Some(local.type_name)
    }

    /// The type of the field `name` of the scope of `class` (its hierarchy and the classes
    /// around it) in this file, the nearest class's.
    pub(super) fn field_type(&self, class: usize, name: &str) -> Option<&'s str> {
        self.scopes[class].iter().find_map(|&class| {
            let fields = &self.classes[class].fields;
            let field = fields.iter().find(|field| field.name == name)?;
            Some(field.type_name)
        })
    }
}

/// How many classes a hierarchy, or a class and the classes around it, holds at most: as deep as
/// extraction finds tests (32). A file of 20,000 nested classes made every class's scope hold
/// all the classes around it, cubic in the nesting.
pub(super) const MAX_CHAIN: usize = 32;

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

/// Where a call's name starts, the name, and what it is called on: for a method invocation, a
/// method reference or an object creation (whose name is the class's simple name).
fn read_call<'s>(
    grammar: &Grammar,
    source: &'s str,
    node: Node,
) -> Option<(usize, &'s str, Receiver<'s>)> {
    match grammar.kind(node)? {
        Kind::MethodInvocation => {
            let name = node.child_by_field_id(grammar.name)?;
            let receiver = match node.child_by_field_id(grammar.object) {
                None => Receiver::Implicit,
                Some(object) => match grammar.kind(object)? {
                    Kind::This => Receiver::Implicit,
                    Kind::Super => Receiver::Super,
                    Kind::Identifier => Receiver::Named(text(source, object)),
                    Kind::FieldAccess => {
                        let this = object.child_by_field_id(grammar.object)?;
                        let field = object.child_by_field_id(grammar.field)?;
                        if grammar.kind(this) != Some(Kind::This)
                            || grammar.kind(field) != Some(Kind::Identifier)
                        {
                            return None;
                        }
                        Receiver::Field(text(source, field))
                    }
                    Kind::ObjectCreation => {
                        let created = object.child_by_field_id(grammar.type_)?;
                        Receiver::Created(class_type_name(source, created)?)
                    }
                    _ => return None,
                },
            };
            Some((name.start_byte(), text(source, name), receiver))
        }
        Kind::MethodReference => {
            // `this::foo` or `Helper::foo`: the method runs when the reference is called.
            let parts = named_children(node);
            let (Some(object), Some(name), 2) = (parts.first(), parts.last(), parts.len()) else {
                return None;
            };
            let receiver = match grammar.kind(*object)? {
                Kind::This => Receiver::Implicit,
                Kind::Identifier | Kind::TypeIdentifier => Receiver::Named(text(source, *object)),
                _ => return None,
            };
            (grammar.kind(*name) == Some(Kind::Identifier))
                .then(|| (name.start_byte(), text(source, *name), receiver))
        }
        Kind::ObjectCreation => {
            let created = node.child_by_field_id(grammar.type_)?;
            let name = class_type_name(source, created)?;
            Some((created.start_byte(), name, Receiver::New))
        }
        _ => None,
    }
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
            "object_creation_expression",
            // What a call on a variable runs depends on the variable's declared type.
            "local_variable_declaration",
            "resource",
        ];
        Kinds::new(&root.language(), &names)
    })
}
