//! flakesense predicts, from the source code alone, whether a test is likely to be flaky and why.
//!
//! The pipeline, one module per stage:
//!
//! - [`extract`]: tree-sitter finds the test methods of a Java, Python or Rust file.
//! - [`embed`]: a test's code becomes a bag of tokens, projected by a sparse random projection.
//! - [`index`]: the labelled tests, persisted in a versioned file, searched for nearest neighbours.
//! - [`predict`]: FLAST's distance-weighted vote of the k nearest neighbours, the likely category
//!   and the evidence behind the verdict.
//!
//! Around it:
//!
//! - [`analysis`]: the facade both front ends call, a file in and a judgement per test out,
//!   with the [`models`] shipped in the binary and the project's own [`workspace`] index.
//! - [`dataset`] reads the canonical labelled CSV, [`fixes`] whole repositories with the tests
//!   their maintainers fixed for flakiness; [`eval`] measures accuracy with the paper's
//!   protocols; [`history`] labels a repository's own tests from its flaky history (flaky lists,
//!   annotations, JUnit XML reports) for its project index.
//! - [`signals`] is the catalogue of static flakiness signals, and [`prior`] the regression over
//!   them that a shipped model uses for projects it has never seen, weighing each signal by its
//!   [`prevalence`] among the project's tests.
//! - [`context`] finds what a test runs besides its own body (set-up and tear-down, fields,
//!   fixtures, parameter sources, helpers of its file), so that the signals found there count for it.
//! - [`lsp`] is the language server, the only module that knows the protocol's types;
//!   [`cli`] is the command line; [`config`] the settings both front ends share; [`files`] reads
//!   source files from disk; [`line_index`] converts byte offsets to lines and columns.
//! - [`check`] is `flakesense check` for pre-commit hooks and CI; [`confirm`] is `flakesense
//!   confirm`, which runs suspected tests under noise, one CPU, no network and twice in one
//!   process, and learns from what the runs show. These two know terminals and exit codes.
//!
//! Nothing in the pipeline performs IO on its own or fails on broken code.

// The crate's readers are its developers: its documentation is built with private items
// (`cargo doc --document-private-items`, as `.ci/run` checks it), where such links resolve.
#![allow(rustdoc::private_intra_doc_links)]

/// Standard error for the whole crate: std's `eprintln!` panics when standard error is a closed
/// pipe (`flakesense predict ... 2>&1 | head -1`); a message nobody can read any more is dropped
/// instead, and the command goes on. Defined before the modules so that it shadows std's macro
/// in every one of them.
macro_rules! eprintln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

pub mod analysis;
pub mod autofix;
pub mod category;
pub mod check;
pub mod cli;
pub mod config;
pub mod confirm;
pub mod context;
pub mod dataset;
pub mod embed;
pub mod eval;
pub mod extract;
pub mod files;
pub mod fixes;
pub mod history;
pub mod index;
pub mod labels;
pub mod language;
pub mod line_index;
pub mod lsp;
pub mod models;
pub mod predict;
pub mod prevalence;
pub mod prior;
#[cfg(test)]
mod random_edits;
pub mod signals;
pub mod terminal;
pub mod workspace;
