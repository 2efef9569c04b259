//! Java: the set-up and tear-down methods, field initialisers, parameter sources and helpers that
//! a test runs from the classes of its file (JUnit 3, 4 and 5, TestNG).

mod annotations;
mod definitions;

pub(super) use self::definitions::walked_kinds;

use std::ops::Range;

use rustc_hash::FxHashSet as HashSet;

use self::definitions::{JavaFile, Member, MemberKind, ParameterSource, Receiver};
use super::graph::{Graph, Step, breadth_first, within};
use super::syntax::{contains, last_segment};
use super::{Anchor, ContextKind, ContextUnit, SourceFile};
use crate::extract::TestMethod;

/// A Java file read once, ready to resolve any of its tests.
pub(super) struct JavaContext<'s> {
    file: JavaFile<'s>,
}

impl<'s> JavaContext<'s> {
    /// `others` are the other files of the workspace the tests reach (path and file), whose
    /// units are `Some(i)` for the i-th; see [`super::Resolver::new`].
    pub(super) fn new(
        file: SourceFile<'s>,
        others: &[(&'s str, SourceFile<'s>)],
        tests: &[TestMethod],
    ) -> JavaContext<'s> {
        let _ = others;
        let file = JavaFile::new(file.source, file.tree.root_node(), tests);
        JavaContext { file }
    }

    pub(super) fn units(&self, test: &TestMethod) -> Vec<ContextUnit> {
        self.file.context(test)
    }
}

/// What the Java `file` uses that other files may define ([`super::Wanted`]).
pub(super) fn wanted(file: SourceFile) -> Vec<super::Wanted> {
    let _ = file;
    Vec::new()
}

impl<'s> JavaFile<'s> {
    fn context(&self, test: &TestMethod) -> Vec<ContextUnit> {
        let own = self
            .member_by_name_start
            .get(&test.name_range.start)
            .copied();
        let class = own.map(|member| self.members[member].class).or_else(|| {
            // A test the file's members do not hold (broken code): the innermost class around it.
            let around = self.classes.iter().enumerate();
            around
                .filter(|(_, class)| contains(&class.range, &test.range))
                .max_by_key(|(_, class)| class.range.start)
                .map(|(index, _)| index)
        });
        let mut roots = Vec::new();
        if let Some(class) = class {
            self.class_context(class, &mut roots);
        }
        if let Some(own) = own {
            for source in &self.members[own].sources {
                for factory in self.parameter_source(source, class, &self.members[own].name) {
                    roots.push(Step {
                        key: factory,
                        kind: ContextKind::ParameterSource,
                        anchor: None,
                    });
                }
            }
        }
        self.helpers(&test.range, &mut roots);
        breadth_first(self, own, roots)
    }

    /// The life-cycle methods, constructors and fields of the test's class, its superclasses and
    /// its enclosing classes. Within one hierarchy, a life-cycle method overridden by a nearer
    /// class does not run (JUnit shadows it; JUnit 3 calls the override).
    fn class_context(&self, class: usize, roots: &mut Vec<Step<usize>>) {
        let mut around = Some(class);
        let mut visited: Vec<usize> = Vec::new();
        while let Some(class) = around.filter(|class| !visited.contains(class)) {
            visited.push(class);
            let mut overridden: HashSet<&str> = HashSet::default();
            for &member_of in &self.hierarchies[class] {
                for (index, member) in self.members_of(member_of) {
                    let kind = match member.kind {
                        MemberKind::Method => match member.life_cycle {
                            Some(kind) if overridden.insert(&member.name) => kind,
                            _ => continue,
                        },
                        MemberKind::Constructor => ContextKind::SetUp,
                        MemberKind::Field => ContextKind::Field,
                    };
                    roots.push(Step {
                        key: index,
                        kind,
                        anchor: None,
                    });
                }
            }
            around = self.classes[class].outer;
        }
    }

    fn members_of(&self, class: usize) -> impl Iterator<Item = (usize, &Member<'s>)> {
        let members = self.members_by_class.get(class).map(Vec::as_slice);
        let members = members.unwrap_or_default().iter();
        members.map(|&index| (index, &self.members[index]))
    }

    /// The methods a `@MethodSource` or `dataProvider` names, looked up from the test's class.
    fn parameter_source(
        &self,
        source: &ParameterSource,
        class: Option<usize>,
        test_name: &str,
    ) -> Vec<usize> {
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
                        match self.classes_by_name.get(last_segment(class_name)) {
                            Some(&class) => self.methods_in(method, &self.hierarchies[class]),
                            None => Vec::new(),
                        }
                    }
                    None => self.methods_from(reference, class),
                }
            }
            ParameterSource::DataProvider(name) => (0..self.members.len())
                .filter(|&index| self.members[index].provides == Some(name))
                .collect(),
        }
    }

    /// Appends a helper step for every method of the file that a call in `range` runs.
    fn helpers(&self, range: &Range<usize>, found: &mut Vec<Step<usize>>) {
        for call in within(&self.calls, |call| call.at, range) {
            let methods = match call.receiver {
                Receiver::Implicit => self.methods_from(call.name, call.class),
                Receiver::Super => match call.class {
                    Some(class) => self.methods_in(call.name, &self.hierarchies[class][1..]),
                    None => Vec::new(),
                },
                Receiver::Named(class_name) => match self.classes_by_name.get(class_name) {
                    Some(&class) => self.methods_in(call.name, &self.hierarchies[class]),
                    None => Vec::new(),
                },
            };
            let anchor = Some(Anchor {
                at: call.at,
                cleanup: call.cleanup,
            });
            found.extend(methods.into_iter().map(|key| Step {
                key,
                kind: ContextKind::Helper,
                anchor,
            }));
        }
    }

    /// The methods called `name` that an unqualified call in `class` reaches: those of its scope
    /// (its hierarchy and its enclosing classes'). A method of that name elsewhere in the file is
    /// another method: the call goes to one inherited from a class of another file.
    fn methods_from(&self, name: &str, class: Option<usize>) -> Vec<usize> {
        match class {
            Some(class) => self.methods_in(name, &self.scopes[class]),
            None => Vec::new(),
        }
    }

    /// The methods called `name` declared in one of `classes`.
    fn methods_in(&self, name: &str, classes: &[usize]) -> Vec<usize> {
        let methods = self.methods_by_name.get(name).map(Vec::as_slice);
        let methods = methods.unwrap_or_default().iter().copied();
        methods
            .filter(|&method| classes.contains(&self.members[method].class))
            .collect()
    }
}

impl Graph for JavaFile<'_> {
    type Key = usize;

    fn locate(&self, key: usize) -> (Option<usize>, &str, Range<usize>) {
        let member = &self.members[key];
        (None, &member.name, member.range.clone())
    }

    fn is_test(&self, key: usize) -> bool {
        self.test_name_starts
            .contains(&self.members[key].name_start)
    }

    fn runs(&self, step: Step<usize>, found: &mut Vec<Step<usize>>) {
        self.helpers(&self.members[step.key].range, found);
    }
}

#[cfg(test)]
mod tests {
    use crate::context::tests::units_by_test;
    use crate::language::Language;

    fn units_of(source: &str, test: &str) -> Vec<String> {
        let found = units_by_test(Language::Java, source, &[]);
        let units = found.into_iter().find(|(name, _)| name == test);
        units.map(|(_, units)| units).unwrap_or_default()
    }

    #[test]
    fn an_unqualified_call_reaches_only_methods_in_scope() {
        // `Other.cleanUp` is no method of `T`'s scope: `cleanUp()` is inherited from `Base`.
        let source = "class T extends Base {\n  @Test void t() { cleanUp(); }\n}\n\
                      class Other {\n  void cleanUp() {}\n}\n";
        assert!(units_of(source, "t").is_empty());
    }

    #[test]
    fn a_superclass_cycle_ends() {
        let source = "class A extends B {\n  @Before void a() {}\n  @Test void t() {}\n}\n\
                      class B extends A {\n  @Before void b() {}\n}\n";
        assert_eq!(units_of(source, "t"), ["SetUp a 1", "SetUp b 1"]);
    }

    #[test]
    fn calls_on_other_classes_and_sources_of_other_files_are_not_followed() {
        // `run` and `cases` exist in the file, but the calls name classes the file does not have.
        let source = "class T {\n  @ParameterizedTest @MethodSource(\"Other#cases\")\n  \
                      void t(int x) { Executors.run(); }\n  void run() {}\n  \
                      static Stream<Integer> cases() { return null; }\n}\n";
        assert!(units_of(source, "t").is_empty());
    }

    #[test]
    fn an_enum_s_members_and_a_method_reference_count() {
        let source = "enum Mode {\n  FAST, SLOW;\n  private final Clock clock = Clock.systemUTC();\n  \
                      @Test void t() { list.forEach(this::check); }\n  void check(Object o) {}\n}\n";
        assert_eq!(units_of(source, "t"), ["Field clock 1", "Helper check 1"]);
    }
}
