//! Counting runs: what the runs of one test under one condition gave, with the telling line of
//! each distinct failure and what it names.

use std::collections::BTreeMap;

use serde::Serialize;

use super::fisher::Counts;
use crate::category::Category;
use crate::confirm::condition::Condition;
use crate::confirm::outcome::{CaseResult, Outcome};
use crate::history::category_hints;

/// The longest failure message kept per distinct failure.
const MESSAGE_CHARS: usize = 200;

/// A failure message and how often it was seen.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Failure {
    /// Its telling line: the exception and its message, or the panic's message.
    pub message: String,
    pub count: u32,
    /// What the whole failure text names (the history module's hints).
    pub categories: Vec<Category>,
}

/// What the runs of one test under one condition gave.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Tally {
    pub condition: Condition,
    /// Why the condition did not run for this test.
    pub unavailable: Option<String>,
    pub runs: u32,
    pub passed: u32,
    pub failed: u32,
    pub skipped: u32,
    /// Runs whose reports held nothing for the test: the runner did not get to it.
    pub no_result: u32,
    /// Failed runs that ran past the timeout without a result for the test.
    pub timed_out: u32,
    /// `twice`: runs whose first execution passed.
    pub first_passed: u32,
    /// `twice`: runs whose first execution failed, as a fresh process's would.
    pub first_failed: u32,
    /// `twice`: runs in which the test passed and then failed.
    pub non_idempotent: u32,
    /// The one-sided p-value (Fisher's exact test) that the test failed more often under this
    /// condition than under the baseline (plain runs) by chance alone; `None` for plain itself
    /// and where there was nothing to compare (see [`super::cause`]).
    pub p_value: Option<f64>,
    pub failures: Vec<Failure>,
}

impl Tally {
    pub fn new(condition: Condition, unavailable: Option<String>) -> Tally {
        Tally {
            condition,
            unavailable,
            runs: 0,
            passed: 0,
            failed: 0,
            skipped: 0,
            no_result: 0,
            timed_out: 0,
            first_passed: 0,
            first_failed: 0,
            non_idempotent: 0,
            p_value: None,
            failures: Vec::new(),
        }
    }

    /// Counts one run from the test's results in it (two per case under `twice`, in order).
    /// A run that timed out without a result for the test failed it.
    pub fn record(&mut self, results: &[CaseResult], timed_out_after: Option<u64>) {
        self.runs += 1;
        if results.is_empty() {
            match timed_out_after {
                Some(seconds) => {
                    self.failed += 1;
                    self.timed_out += 1;
                    self.add_failure(&format!("the run timed out after {seconds} s"));
                }
                None => self.no_result += 1,
            }
            return;
        }
        let failed: Vec<&CaseResult> = results
            .iter()
            .filter(|result| result.outcome == Outcome::Failed)
            .collect();
        if let Some(first) = failed.first() {
            self.failed += 1;
            let text = first.messages.join("\n");
            self.add_failure(if text.trim().is_empty() {
                "failed without a message"
            } else {
                &text
            });
        } else if results
            .iter()
            .all(|result| result.outcome == Outcome::Skipped)
        {
            self.skipped += 1;
        } else {
            self.passed += 1;
        }
        if self.condition == Condition::Twice {
            self.record_executions(results);
        }
    }

    /// Under `twice` each case runs two times in one process: its first execution is as a fresh
    /// process's, and passed, then failed, is state the first left behind.
    fn record_executions(&mut self, results: &[CaseResult]) {
        let mut by_case: BTreeMap<&str, Vec<Outcome>> = BTreeMap::new();
        for result in results {
            by_case
                .entry(&result.name)
                .or_default()
                .push(result.outcome);
        }
        let firsts: Vec<Outcome> = by_case.values().map(|outcomes| outcomes[0]).collect();
        if firsts.contains(&Outcome::Failed) {
            self.first_failed += 1;
        } else if firsts.contains(&Outcome::Passed) {
            self.first_passed += 1;
        }
        if by_case.values().any(|outcomes| {
            outcomes
                .windows(2)
                .any(|pair| pair == [Outcome::Passed, Outcome::Failed])
        }) {
            self.non_idempotent += 1;
        }
    }

    fn add_failure(&mut self, text: &str) {
        let message = telling_line(text);
        match self
            .failures
            .iter_mut()
            .find(|failure| failure.message == message)
        {
            Some(failure) => failure.count += 1,
            None => self.failures.push(Failure {
                message,
                count: 1,
                categories: category_hints::in_failure(text),
            }),
        }
    }

    /// Failed runs out of runs with an outcome.
    pub fn counts(&self) -> Counts {
        Counts::new(self.failed, self.passed + self.failed)
    }

    /// Runs with an outcome.
    pub fn decided(&self) -> u32 {
        self.passed + self.failed
    }
}

/// The line of a failure that says what went wrong: a panic's message rather than the line
/// naming the thread, an exception's type joined to its message.
fn telling_line(text: &str) -> String {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .filter(|line| !(line.starts_with("thread '") && line.contains("panicked at")))
        .filter(|line| !line.starts_with("note: run with `RUST_BACKTRACE"))
        .collect();
    let line = match lines.as_slice() {
        [] => String::new(),
        [kind, message, ..]
            if !kind.contains(char::is_whitespace) && !message.starts_with(kind) =>
        {
            format!("{kind}: {message}")
        }
        [first, ..] => first.to_string(),
    };
    if line.chars().count() > MESSAGE_CHARS {
        let cut: String = line.chars().take(MESSAGE_CHARS).collect();
        format!("{cut}...")
    } else {
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::confirm::verdict::{Verdict, judge};

    #[test]
    fn runs_without_results_are_not_outcomes_unless_they_timed_out() {
        let mut tally = Tally::new(Condition::Offline, None);
        tally.record(&[], None);
        tally.record(&[], Some(30));
        assert_eq!((tally.runs, tally.no_result, tally.failed), (2, 1, 1));
        assert_eq!(tally.failures[0].categories, [Category::Timeout]);
        let verdict = judge(vec![Tally::new(Condition::Plain, None)], &[]);
        assert_eq!(verdict.verdict, Verdict::NotRun);
    }
}
