//! Finds test methods in Java, Python and Rust source with tree-sitter.

use std::ops::Range;

use crate::language::Language;

/// One test method or function found in a source file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestMethod {
    pub language: Language,
    /// The bare name: `testFoo`, `test_foo`.
    pub name: String,
    /// The canonical identifier of `../shared/data/README.md`: Java `pkg.Outer$Inner#method`,
    /// Python `path/test_x.py::Class::test_y` or `path/test_x.py::test_y`,
    /// Rust `path/file.rs::module::test_fn`.
    pub id: String,
    /// Byte range of the whole test, annotations, decorators and attributes included.
    pub range: Range<usize>,
    /// Byte range of the test's name.
    pub name_range: Range<usize>,
    /// The source text of `range`.
    pub code: String,
    /// The test carries a `flakesense: ignore` comment and must not be reported.
    pub ignored: bool,
}

/// What extraction found in one file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Extraction {
    pub tests: Vec<TestMethod>,
    /// The file has syntax errors; the tests in its intact parts are still listed.
    pub has_syntax_errors: bool,
}
