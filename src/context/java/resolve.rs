//! One test's context: the life cycle of its class's hierarchy, its parameter sources, and the
//! methods its calls reach, followed across the files.

use std::ops::Range;

use rustc_hash::FxHashSet as HashSet;

use super::JavaContext;
use super::definitions::{Call, Receiver};
use super::members::{Member, MemberKind, ParameterSource};
use super::others::ClassAt;
use crate::context::graph::{Graph, Step, breadth_first, within};
use crate::context::syntax::{contains, last_segment};
use crate::context::{Anchor, ContextKind, ContextUnit};
use crate::extract::TestMethod;

/// A member of one of the files: the file (as in [`ClassAt`]) and the member's index there.
type Key = (usize, usize);

/// The files as one test sees them.
pub(super) struct TestGraph<'a, 's> {
    context: &'a JavaContext<'s>,
    /// The test's own method, when the file's members hold it.
    own: Option<usize>,
    /// The test's class in the test's file.
    class: Option<usize>,
}

impl<'a, 's> TestGraph<'a, 's> {
    pub(super) fn new(context: &'a JavaContext<'s>, test: &TestMethod) -> TestGraph<'a, 's> {
        let file = &context.files[0];
        let own = file
            .member_by_name_start
            .get(&test.name_range.start)
            .copied();
        let class = own.map(|member| file.members[member].class).or_else(|| {
            // A test the file's members do not hold (broken code): the innermost class around it.
            let around = file.classes.iter().enumerate();
            around
                .filter(|(_, class)| contains(&class.range, &test.range))
                .max_by_key(|(_, class)| class.range.start)
                .map(|(index, _)| index)
        });
        TestGraph {
            context,
            own,
            class,
        }
    }

    pub(super) fn context(&self, test: &TestMethod) -> Vec<ContextUnit> {
        let mut roots = Vec::new();
        if let Some(class) = self.class {
            self.class_context(class, &mut roots);
        }
        if let Some(own) = self.own {
            let test_method = &self.context.files[0].members[own];
            for source in &test_method.sources {
                let mut push = |key| {
                    roots.push(Step {
                        key,
                        kind: ContextKind::ParameterSource,
                        anchor: None,
                    })
                };
                self.parameter_source(source, &test_method.name, &mut push);
            }
        }
        self.helpers(0, &test.range, &mut roots);
        breadth_first(self, self.own.map(|own| (0, own)), roots)
    }

    /// The life-cycle methods, constructors and fields of the test's class, its superclasses
    /// (in its file and further in others) and its enclosing classes. Within one hierarchy, a
    /// life-cycle method overridden by a nearer class does not run (JUnit shadows it; JUnit 3
    /// calls the override).
    fn class_context(&self, class: usize, roots: &mut Vec<Step<Key>>) {
        let file = &self.context.files[0];
        let mut around = Some(class);
        let mut visited: Vec<usize> = Vec::new();
        while let Some(class) = around.filter(|class| !visited.contains(class)) {
            visited.push(class);
            let mut overridden: HashSet<&str> = HashSet::default();
            for member_of in self.context.hierarchy((0, class)) {
                for (key, member) in self.context.set_up_of(member_of) {
                    let kind = match member.kind {
                        MemberKind::Method => match member.life_cycle {
                            Some(kind) if overridden.insert(&member.name) => kind,
                            _ => continue,
                        },
                        MemberKind::Constructor => ContextKind::SetUp,
                        MemberKind::Field => ContextKind::Field,
                    };
                    roots.push(Step {
                        key,
                        kind,
                        anchor: None,
                    });
                }
            }
            around = file.classes[class].outer;
        }
    }

    /// The methods a `@MethodSource` or `dataProvider` names, looked up from the test's class.
    fn parameter_source(
        &self,
        source: &ParameterSource,
        test_name: &str,
        push: &mut impl FnMut(Key),
    ) {
        let context = self.context;
        match *source {
            ParameterSource::Factory(reference) => {
                // `@MethodSource` without a value names a factory called like the test.
                let reference = if reference.is_empty() {
                    test_name
                } else {
                    reference
                };
                let reference = reference.split('(').next().unwrap_or(reference);
                match reference.split_once('#') {
                    Some((class_name, method)) => {
                        let class = context.class_named(0, last_segment(class_name));
                        if let Some(class) = class {
                            context.methods_in_hierarchy(method, class, 0, push);
                        }
                    }
                    None => {
                        if let Some(class) = self.class {
                            context.methods_in_scope(reference, (0, class), push);
                        }
                    }
                }
            }
            ParameterSource::DataProvider(name) => {
                // Any class of the test's file, or a base class of another file, may provide it.
                let beyond = self.class.map_or(&[][..], |class| context.beyond(0, class));
                let classes = std::iter::once(None).chain(beyond.iter().copied().map(Some));
                for class in classes {
                    let file = class.map_or(0, |(file, _)| file);
                    let java = &context.files[file];
                    for &index in &java.providers {
                        let member = &java.members[index];
                        let declared = class.is_none_or(|(_, class)| member.class == class);
                        if declared && member.provides == Some(name) {
                            push((file, index));
                        }
                    }
                }
            }
        }
    }

    /// Appends a helper step for every method, constructor or initialiser of the files that a
    /// call in `range` of `file` runs.
    fn helpers(&self, file: usize, range: &Range<usize>, found: &mut Vec<Step<Key>>) {
        let context = self.context;
        for call in within(&context.files[file].calls, |call| call.at, range) {
            let anchor = Some(Anchor {
                at: call.at,
                cleanup: call.cleanup,
            });
            let mut push = |key| {
                found.push(Step {
                    key,
                    kind: ContextKind::Helper,
                    anchor,
                })
            };
            let class = call.class.map(|class| (file, class));
            match call.receiver {
                Receiver::Implicit => {
                    if let Some(class) = class {
                        context.methods_in_scope(call.name, class, &mut push);
                    }
                }
                Receiver::Super => {
                    if let Some(class) = class {
                        context.methods_in_hierarchy(call.name, class, 1, &mut push);
                    }
                }
                Receiver::New => {
                    if let Some(created) = context.class_named(file, call.name) {
                        context.construction(created, &mut push);
                    }
                }
                Receiver::Named(_) | Receiver::Field(_) | Receiver::Created(_) => {
                    if let Some(receiver) = context.receiver_class(file, range, call) {
                        context.methods_in_hierarchy(call.name, receiver, 0, &mut push);
                    }
                }
            }
        }
    }

    /// Whether a class belongs to the test's scope: its hierarchy and its enclosing classes',
    /// whose members a test calls by their bare names.
    fn in_test_scope(&self, (file, class): ClassAt) -> bool {
        let Some(test_class) = self.class else {
            return file == 0;
        };
        match file {
            0 => self.context.files[0].scopes[test_class].contains(&class),
            _ => {
                let beyond = self.context.beyond_scope(0, test_class);
                beyond.contains(&(file, class))
            }
        }
    }
}

impl<'s> JavaContext<'s> {
    /// The class and its superclasses, in its file and then in others, nearest first.
    fn hierarchy(&self, (file, class): ClassAt) -> impl Iterator<Item = ClassAt> + '_ {
        let own = self.files[file].hierarchies[class].iter();
        let own = own.map(move |&class| (file, class));
        own.chain(self.beyond(file, class).iter().copied())
    }

    /// The members of `class` that run without being called (see `set_up_by_class`).
    fn set_up_of(&self, (file, class): ClassAt) -> impl Iterator<Item = (Key, &Member<'s>)> {
        let java = &self.files[file];
        let members = java.set_up_by_class.get(class).map(Vec::as_slice);
        let members = members.unwrap_or_default().iter();
        members.map(move |&index| ((file, index), &java.members[index]))
    }

    /// The superclasses of `class` of `file` in other files, nearest first.
    fn beyond(&self, file: usize, class: usize) -> &[ClassAt] {
        self.elsewhere.beyond(&self.files, file, class)
    }

    /// The classes of other files in the scope of `class` of `file`.
    fn beyond_scope(&self, file: usize, class: usize) -> &[ClassAt] {
        self.elsewhere.beyond_scope(&self.files, file, class)
    }

    fn class_named(&self, file: usize, name: &str) -> Option<ClassAt> {
        self.elsewhere.class_named(&self.files, file, name)
    }

    /// The methods called `name` that an unqualified call in `class` reaches: those of its
    /// scope (its hierarchy and its enclosing classes'), in its file and in others. A method of
    /// that name elsewhere is another method.
    fn methods_in_scope(&self, name: &str, (file, class): ClassAt, push: &mut impl FnMut(Key)) {
        let java = &self.files[file];
        for method in java.methods_in(name, &java.scopes[class]) {
            push((file, method));
        }
        for &(other, class) in self.beyond_scope(file, class) {
            for method in self.files[other].methods_in(name, &[class]) {
                push((other, method));
            }
        }
    }

    /// The methods called `name` of the hierarchy of `class`, but its first `skip` classes.
    fn methods_in_hierarchy(
        &self,
        name: &str,
        (file, class): ClassAt,
        skip: usize,
        push: &mut impl FnMut(Key),
    ) {
        let java = &self.files[file];
        let own = &java.hierarchies[class];
        for method in java.methods_in(name, own.get(skip..).unwrap_or_default()) {
            push((file, method));
        }
        let beyond = self.beyond(file, class);
        for &(other, class) in beyond
            .get(skip.saturating_sub(own.len())..)
            .unwrap_or_default()
        {
            for method in self.files[other].methods_in(name, &[class]) {
                push((other, method));
            }
        }
    }

    /// What `new` of `class` runs: the constructors and instance initialisers of the class and
    /// of its superclasses (an implicit `super()` runs theirs).
    fn construction(&self, class: ClassAt, push: &mut impl FnMut(Key)) {
        for member_of in self.hierarchy(class) {
            for (key, member) in self.set_up_of(member_of) {
                if matches!(member.kind, MemberKind::Constructor | MemberKind::Field) {
                    push(key);
                }
            }
        }
    }

    /// The class whose methods a call on a variable, a field or a new object runs: the declared
    /// type of the local variable or field the call names (a variable hides a class of the same
    /// name), else the class it names.
    fn receiver_class(&self, file: usize, range: &Range<usize>, call: &Call) -> Option<ClassAt> {
        let java = &self.files[file];
        let (name, may_be_local) = match call.receiver {
            Receiver::Named(name) => (name, true),
            Receiver::Field(name) => (name, false),
            Receiver::Created(class) => return self.class_named(file, class),
            _ => return None,
        };
        if may_be_local && let Some(type_name) = java.local_type(range, call.at, name) {
            return self.class_named(file, type_name);
        }
        if let Some((declared_in, type_name)) = self.field_type(file, call.class, name) {
            return self.class_named(declared_in, type_name);
        }
        match call.receiver {
            Receiver::Named(name) => self.class_named(file, name),
            _ => None,
        }
    }

    /// The file declaring the field `name` that code of `class` sees, and the field's type:
    /// a field of its scope in its file, else of one in other files.
    fn field_type(
        &self,
        file: usize,
        class: Option<usize>,
        name: &str,
    ) -> Option<(usize, &'s str)> {
        let java = &self.files[file];
        let class = class?;
        if let Some(type_name) = java.field_type(class, name) {
            return Some((file, type_name));
        }
        self.beyond_scope(file, class)
            .iter()
            .find_map(|&(other, class)| {
                let fields = &self.files[other].classes[class].fields;
                let field = fields.iter().find(|field| field.name == name)?;
                Some((other, field.type_name))
            })
    }
}

impl Graph for TestGraph<'_, '_> {
    type Key = Key;

    fn locate(&self, (file, index): Key) -> (Option<usize>, &str, Range<usize>) {
        let java = &self.context.files[file];
        let member = &java.members[index];
        // A member of a class outside the test's scope is told by its class: `Server.start`,
        // `new Server` for what creating one runs.
        let name = match self.in_test_scope((file, member.class)) {
            true => &*member.name,
            false => member
                .qualified
                .get_or_init(|| {
                    let class = java.classes[member.class].name;
                    match member.kind {
                        MemberKind::Method => format!("{class}.{}", member.name),
                        MemberKind::Constructor | MemberKind::Field => format!("new {class}"),
                    }
                })
                .as_str(),
        };
        (file.checked_sub(1), name, member.range.clone())
    }

    fn is_test(&self, (file, index): Key) -> bool {
        let java = &self.context.files[file];
        file == 0
            && java
                .test_name_starts
                .contains(&java.members[index].name_start)
    }

    fn runs(&self, step: Step<Key>, found: &mut Vec<Step<Key>>) {
        let (file, index) = step.key;
        self.helpers(file, &self.context.files[file].members[index].range, found);
    }
}
