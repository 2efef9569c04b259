//! The hint shown with a confirmed flaky test: the category's hint, made to fit the cause the runs
//! showed. A clock test that fails under load measures elapsed time, and midnight and time zones
//! have nothing to do with it; a concurrency test that fails on one CPU needs parallelism.

use super::{CategoryFrom, TestVerdict, Verdict};
use crate::category::Category;
use crate::confirm::condition::Condition;
use crate::language::Language;

/// A test that reads the clock and fails under noise or on one CPU.
const ELAPSED_TIME: &str = "Consider asserting on the result rather than on how long it took, or injecting a clock the test advances itself; the test measures elapsed time against a bound a loaded machine exceeds, and a wider bound only makes the failure rarer.";

/// A concurrency test that fails when it gets one CPU.
const ONE_CPU: &str = "Consider waiting for the work itself (joining, a latch, a channel) rather than counting on it running in parallel: the test fails when the process gets one CPU, as on a busy or small CI machine; look for a second thread it needs at the same time, or a worker count taken from the number of CPUs.";

/// The hint for a flaky verdict; `None` for other verdicts and unknown causes.
pub fn hint(verdict: &TestVerdict, language: Option<Language>) -> Option<&'static str> {
    if verdict.verdict != Verdict::Flaky {
        return None;
    }
    let category = verdict.category?;
    let shown_by_load = verdict.category_from == Some(CategoryFrom::Condition)
        && verdict
            .exposed_by
            .iter()
            .any(|condition| matches!(condition, Condition::Noise | Condition::Cpu1));
    Some(match category {
        Category::Time if shown_by_load => ELAPSED_TIME,
        Category::Concurrency
            if verdict.category_from == Some(CategoryFrom::Condition)
                && verdict.exposed_by.first() == Some(&Condition::Cpu1) =>
        {
            ONE_CPU
        }
        category => category.fix_hint(language),
    })
}
