//! The unified taxonomy of flakiness causes shared by the datasets, the models and the reports.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::language::Language;

/// A root cause of flakiness, as named in `../shared/data/README.md` (after Luo et al.'s taxonomy).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Category {
    AsyncWait,
    Concurrency,
    OrderDependency,
    Network,
    Time,
    Randomness,
    Io,
    UnorderedCollection,
    ResourceLeak,
    FloatingPoint,
    Platform,
    Timeout,
}

impl Category {
    pub const ALL: [Category; 12] = [
        Category::AsyncWait,
        Category::Concurrency,
        Category::OrderDependency,
        Category::Network,
        Category::Time,
        Category::Randomness,
        Category::Io,
        Category::UnorderedCollection,
        Category::ResourceLeak,
        Category::FloatingPoint,
        Category::Platform,
        Category::Timeout,
    ];

    /// The kebab-case name used in the canonical CSV and in every output format.
    pub fn name(self) -> &'static str {
        match self {
            Category::AsyncWait => "async-wait",
            Category::Concurrency => "concurrency",
            Category::OrderDependency => "order-dependency",
            Category::Network => "network",
            Category::Time => "time",
            Category::Randomness => "randomness",
            Category::Io => "io",
            Category::UnorderedCollection => "unordered-collection",
            Category::ResourceLeak => "resource-leak",
            Category::FloatingPoint => "floating-point",
            Category::Platform => "platform",
            Category::Timeout => "timeout",
        }
    }

    /// A neighbour's causes as human output shows them after its name: ` [time, network]`, or
    /// nothing when none is known.
    pub fn bracketed(categories: &[Category]) -> String {
        if categories.is_empty() {
            return String::new();
        }
        let names: Vec<&str> = categories.iter().map(|category| category.name()).collect();
        format!(" [{}]", names.join(", "))
    }

    /// Parses a category name; accepts the kebab-case names and a few common spellings
    /// (`async wait`, `test order dependency`, `unordered collections`, `too restrictive range`).
    pub fn from_name(name: &str) -> Option<Category> {
        let normalised: String = name
            .trim()
            .to_ascii_lowercase()
            .chars()
            .map(|c| if c == '_' || c == ' ' { '-' } else { c })
            .collect();
        let category = match normalised.as_str() {
            "async-wait" | "asyncwait" | "async" | "wait" => Category::AsyncWait,
            "concurrency" => Category::Concurrency,
            "order-dependency" | "test-order-dependency" | "order-dependent" | "od" => {
                Category::OrderDependency
            }
            "network" => Category::Network,
            "time" => Category::Time,
            "randomness" | "random" => Category::Randomness,
            "io" => Category::Io,
            "unordered-collection" | "unordered-collections" => Category::UnorderedCollection,
            "resource-leak" => Category::ResourceLeak,
            "floating-point" | "floating-point-operations" | "too-restrictive-range" => {
                Category::FloatingPoint
            }
            "platform" | "platform-dependency" => Category::Platform,
            "timeout" | "test-case-timeout" => Category::Timeout,
            _ => return None,
        };
        Some(category)
    }

    /// Parses a `;`-separated list of categories, ignoring empty and unknown parts.
    pub fn parse_list(list: &str) -> Vec<Category> {
        let mut categories: Vec<Category> =
            list.split(';').filter_map(Category::from_name).collect();
        categories.sort();
        categories.dedup();
        categories
    }

    /// An honest hint at a fix, phrased as a suggestion, with examples in `language` (in all
    /// three when it is not known). Never suggests disabling the test: that throws its coverage
    /// away (design notes, "presenting predictions").
    pub fn fix_hint(self, language: Option<Language>) -> &'static str {
        match self {
            Category::AsyncWait => match language {
                Some(Language::Java) => {
                    "Consider waiting on a condition (Awaitility's `until`, a latch's `await` with a generous bound) instead of a fixed sleep; sleeping longer only hides the race."
                }
                Some(Language::Python) => {
                    "Consider waiting on a condition (an `Event`'s `wait`, polling with a deadline, awaiting the task) instead of a fixed sleep; sleeping longer only hides the race."
                }
                Some(Language::Rust) => {
                    "Consider waiting on a condition (joining the thread, awaiting the task, receiving on a channel, a `Notify`) instead of a fixed sleep; sleeping longer only hides the race."
                }
                None => {
                    "Consider waiting on a condition (polling with a deadline, a latch, a channel or an event) instead of a fixed sleep; sleeping longer only hides the race."
                }
            },
            Category::Concurrency => {
                "No automatic fix: look for unsynchronised shared state or unjoined threads, and confirm by rerunning the test under CPU load."
            }
            Category::OrderDependency => {
                "Consider resetting static or global state in teardown, or re-initialising it at the start of the test; to confirm, run the test twice in one process."
            }
            Category::Network => {
                "Consider a local server or a mock instead of a remote host, or turn a network exception into a skip; checking that the network is up first is not a fix."
            }
            Category::Time => {
                "Consider injecting a clock, and avoid `now()` near day, month or time-zone boundaries."
            }
            Category::Randomness => {
                "Consider seeding the random generator so each run sees the same values."
            }
            Category::Io => {
                "Consider a fresh temporary directory per test and cleaning up files the test creates."
            }
            Category::UnorderedCollection => {
                "Consider comparing as sets, or sorting before comparing; hash iteration order is not guaranteed."
            }
            Category::ResourceLeak => match language {
                Some(Language::Java) => {
                    "Consider closing sockets, servers and pools in teardown, or with try-with-resources."
                }
                Some(Language::Python) => {
                    "Consider closing sockets, servers and pools in teardown, or with a `with` block or a fixture that yields."
                }
                Some(Language::Rust) => {
                    "Consider closing sockets, servers and pools with a guard dropped at the end of the test."
                }
                None => {
                    "Consider closing sockets, servers and pools in teardown, or with try-with-resources (Java), `with` (Python) or a guard dropped at the end of the test (Rust)."
                }
            },
            Category::FloatingPoint => {
                "Consider comparing with a tolerance, and bounds wide enough for the variation you expect."
            }
            Category::Platform => match language {
                Some(Language::Java) => {
                    "Consider stating the condition the test needs (`@EnabledOnOs`) and using portable paths."
                }
                Some(Language::Python) => {
                    "Consider stating the condition the test needs (`pytest.mark.skipif(sys.platform ...)`) and using portable paths."
                }
                Some(Language::Rust) => {
                    "Consider stating the condition the test needs (`#[cfg(...)]`) and using portable paths."
                }
                None => {
                    "Consider stating the condition the test needs (`@EnabledOnOs`, `pytest.mark.skipif(sys.platform ...)`, `#[cfg(...)]`) and using portable paths."
                }
            },
            Category::Timeout => {
                "Consider a timeout with headroom for slow CI machines, or waiting on progress rather than wall-clock time."
            }
        }
    }
}

impl fmt::Display for Category {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::language::Language::{Java, Python, Rust};

    #[test]
    fn every_name_parses_back() {
        for category in Category::ALL {
            assert_eq!(Category::from_name(category.name()), Some(category));
        }
    }

    #[test]
    fn parses_lists_and_dataset_spellings() {
        assert_eq!(
            Category::parse_list("time;async-wait;;bogus;time"),
            vec![Category::AsyncWait, Category::Time]
        );
        assert_eq!(
            Category::from_name("test order dependency"),
            Some(Category::OrderDependency)
        );
        assert_eq!(
            Category::from_name("Too restrictive range"),
            Some(Category::FloatingPoint)
        );
    }

    #[test]
    fn no_hint_suggests_disabling_the_test() {
        let languages = [None, Some(Java), Some(Python), Some(Rust)];
        for category in Category::ALL {
            for language in languages {
                let hint = category.fix_hint(language).to_lowercase();
                for word in ["@disabled", "@ignore", "#[ignore]", "disable the test"] {
                    assert!(!hint.contains(word), "{category}: {hint}");
                }
            }
        }
    }

    #[test]
    fn a_hint_names_only_its_own_languages_tools() {
        for category in Category::ALL {
            let rust = category.fix_hint(Some(Rust));
            let python = category.fix_hint(Some(Python));
            let java = category.fix_hint(Some(Java));
            assert!(
                !rust.contains("Awaitility") && !rust.contains("@EnabledOnOs"),
                "{rust}"
            );
            assert!(
                !python.contains("try-with-resources") && !python.contains("#[cfg"),
                "{python}"
            );
            assert!(
                !java.contains("pytest") && !java.contains("(Rust)"),
                "{java}"
            );
        }
    }
}
