//! How common each risk signal is among one project's tests. A shipped model's prior weighs a
//! signal by it: a fixed sleep says less in a project where every test sleeps than in one where
//! almost none does (measured in models/HISTORY.md, "Project-relative signals").

use std::collections::BTreeMap;

use crate::language::Language;
use crate::signals::Signals;

/// Per language: how many tests were seen and how many of them match each risk.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Prevalence {
    languages: BTreeMap<Language, Tally>,
}

#[derive(Debug, Clone, Default, PartialEq)]
struct Tally {
    tests: u32,
    risks: BTreeMap<&'static str, u32>,
}

impl Prevalence {
    /// Counts one test of the project.
    pub fn add(&mut self, language: Language, signals: &Signals) {
        let tally = self.languages.entry(language).or_default();
        tally.tests += 1;
        for hit in &signals.risks {
            *tally.risks.entry(hit.feature).or_default() += 1;
        }
    }

    /// The counts of two parts of the same project together.
    pub fn merged(mut self, other: Prevalence) -> Prevalence {
        for (language, theirs) in other.languages {
            let ours = self.languages.entry(language).or_default();
            ours.tests += theirs.tests;
            for (name, count) in theirs.risks {
                *ours.risks.entry(name).or_default() += count;
            }
        }
        self
    }

    /// How many of the project's tests of `language` have the risk feature `name` (a risk in
    /// their own code, or `id@context` in what they run), and how many tests of that language
    /// were seen.
    pub fn count(&self, language: Language, name: &str) -> (u32, u32) {
        self.languages.get(&language).map_or((0, 0), |tally| {
            (tally.risks.get(name).copied().unwrap_or(0), tally.tests)
        })
    }

    /// How many tests of `language` were seen.
    pub fn tests(&self, language: Language) -> u32 {
        self.languages.get(&language).map_or(0, |tally| tally.tests)
    }
}

/// One language's counts as plain values: tests seen, and tests per risk feature.
pub type Counts = (Language, u32, Vec<(String, u32)>);

impl Prevalence {
    /// The counts as plain values, to keep them (see `workspace::cache`).
    pub fn counts(&self) -> Vec<Counts> {
        self.languages
            .iter()
            .map(|(&language, tally)| {
                let risks = tally
                    .risks
                    .iter()
                    .map(|(&name, &count)| (name.to_string(), count))
                    .collect();
                (language, tally.tests, risks)
            })
            .collect()
    }

    /// Counts kept by [`Prevalence::counts`]; `None` when one names a feature this build's
    /// catalogue does not have (a cache written by another build).
    pub fn from_counts(counts: &[Counts]) -> Option<Prevalence> {
        let mut prevalence = Prevalence::default();
        for (language, tests, risks) in counts {
            let tally = prevalence.languages.entry(*language).or_default();
            tally.tests = tally.tests.checked_add(*tests)?;
            for (name, count) in risks {
                let name = crate::signals::feature_name(*language, name)?;
                *tally.risks.entry(name).or_default() += count;
            }
        }
        Some(prevalence)
    }
}

impl<'a> FromIterator<(Language, &'a Signals)> for Prevalence {
    fn from_iter<I: IntoIterator<Item = (Language, &'a Signals)>>(tests: I) -> Prevalence {
        let mut prevalence = Prevalence::default();
        for (language, signals) in tests {
            prevalence.add(language, signals);
        }
        prevalence
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::signals;

    #[test]
    fn counts_each_risk_once_per_test_and_per_language() {
        let sleeps = signals::detect(
            Language::Java,
            "void t() { Thread.sleep(10); Thread.sleep(20); }",
        );
        let plain = signals::detect(Language::Java, "void t() { assertEquals(1, 1); }");
        let python = signals::detect(Language::Python, "def test_a():\n    time.sleep(1)\n");
        let prevalence: Prevalence = [
            (Language::Java, &sleeps),
            (Language::Java, &plain),
            (Language::Python, &python),
        ]
        .into_iter()
        .collect();
        assert_eq!(prevalence.count(Language::Java, "fixed-sleep"), (1, 2));
        assert_eq!(prevalence.count(Language::Python, "fixed-sleep"), (1, 1));
        assert_eq!(prevalence.count(Language::Rust, "fixed-sleep"), (0, 0));
        let prevalence = prevalence.merged([(Language::Java, &sleeps)].into_iter().collect());
        assert_eq!(prevalence.count(Language::Java, "fixed-sleep"), (2, 3));
        assert_eq!(prevalence.tests(Language::Java), 3);
    }
}
