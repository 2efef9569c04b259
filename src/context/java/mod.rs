//! Java: the set-up and tear-down methods, field initialisers, parameter sources and helpers that
//! a test runs from the classes of its file and of the other files of the workspace it reaches
//! (JUnit 3, 4 and 5, TestNG): base classes, static helpers, the classes it creates and calls.

mod annotations;
mod definitions;
mod grammar;
mod members;
mod others;
mod resolve;
#[cfg(test)]
mod tests;
mod wanted;

pub(super) use self::definitions::walked_kinds;
pub(super) use self::wanted::wanted;

use self::definitions::JavaFile;
use self::others::Elsewhere;
use self::resolve::TestGraph;
use super::{ContextUnit, SourceFile};
use crate::extract::TestMethod;

/// A Java file and the other files its tests reach, read once, ready to resolve any of its tests.
pub(super) struct JavaContext<'s> {
    /// The test's file, then the others in the order given.
    files: Vec<JavaFile<'s>>,
    elsewhere: Elsewhere<'s>,
}

impl<'s> JavaContext<'s> {
    /// `others` are the other files of the workspace the tests reach (path and file), nearest
    /// first, whose units are `Some(i)` for the i-th; see [`super::Resolver::new`].
    pub(super) fn new(
        file: SourceFile<'s>,
        others: &[(&'s str, SourceFile<'s>)],
        tests: &[TestMethod],
    ) -> JavaContext<'s> {
        let own = JavaFile::new(file.source, file.tree.root_node(), tests);
        let others = others
            .iter()
            .map(|(_, other)| JavaFile::new(other.source, other.tree.root_node(), &[]));
        let files: Vec<JavaFile> = std::iter::once(own).chain(others).collect();
        let elsewhere = Elsewhere::new(&files);
        JavaContext { files, elsewhere }
    }

    pub(super) fn units(&self, test: &TestMethod) -> Vec<ContextUnit> {
        TestGraph::new(self, test).context(test)
    }
}
