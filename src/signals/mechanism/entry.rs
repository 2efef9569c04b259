//! A mechanism as the catalogue writes it: the parts it is made of, by role, and the shape that
//! relates them (one part that is the whole mechanism; a start, a wait and a check in that order;
//! a write of shared state never restored; a race of plain state written by several threads).

use serde::Deserialize;

use crate::category::Category;

/// How a mechanism's parts relate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Shape {
    /// One `check` part is the whole mechanism: a tight upper bound on elapsed time, a request
    /// to a host outside the machine.
    Single,
    /// Asynchronous work is started (`start`), the test waits a fixed time (`wait`, when the
    /// entry names one) and then checks (`check`) what the work does, with nothing that waits
    /// for the work (`cures`) between the start and the check.
    Sequence,
    /// Shared state is written (`write`) and not restored: no `restore` of the same key after
    /// it, and no write of the same key in clean-up code (`finally`, tear-down, after a
    /// fixture's `yield`).
    Unrestored,
    /// Work is started several times (`start` in a loop) writing the same plain state, which a
    /// `check` reads afterwards: threads racing on it, whatever waits between.
    Race,
}

/// How a start and a check must be linked for the check to read the work's effect.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Link {
    /// No link: order alone.
    #[default]
    None,
    /// The check mentions a name (or string) that the start mentions.
    Names,
    /// The check mentions a name that the started work writes.
    Written,
    /// The check holds the start's code, or mentions the name the start's value is kept in.
    Flow,
}

/// One mechanism of the catalogue, as written in its TOML file (`[[mechanism]]`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct MechanismEntry {
    /// Stable within a language.
    pub id: String,
    #[serde(deserialize_with = "category")]
    pub category: Category,
    /// What a user reads first: "asserts what a thread does after a fixed sleep".
    pub message: String,
    /// What it matches.
    pub what: String,
    /// How it makes a test fail, with the study behind it.
    pub why: String,
    /// How to fix it.
    pub fix: String,
    pub shape: Shape,
    /// Entries (parts or risks) that start work.
    #[serde(default)]
    pub start: Vec<String>,
    /// Entries that wait a fixed time; a sleep of them inside a loop polls and is a cure.
    #[serde(default)]
    pub wait: Vec<String>,
    /// Entries that check an outcome (assertions), or that are the whole mechanism.
    #[serde(default)]
    pub check: Vec<String>,
    /// Entries that write shared state, with a `@key`.
    #[serde(default)]
    pub write: Vec<String>,
    /// Entries that restore shared state (with a `@key`, or all of it without one).
    #[serde(default)]
    pub restore: Vec<String>,
    /// Entries that wait for the work itself (a join, a condition): between the start and the
    /// check, they make the mechanism no risk.
    #[serde(default)]
    pub cures: Vec<String>,
    /// Entries anywhere in what the test runs that make the mechanism no risk (a timeout the
    /// test expects to fire, a mocked transport).
    #[serde(default)]
    pub unless: Vec<String>,
    /// Entries that make the mechanism no risk where the test's own file writes them: what the
    /// test itself expects (a timeout it asserts runs out). In another file, a helper or the
    /// code under test, they are about other work (a server's `Err(e)` arm, a caught
    /// `TimeoutException` in a client).
    #[serde(default)]
    pub expects: Vec<String>,
    #[serde(default)]
    pub link: Link,
    /// For a `single` bound on time: the check counts only when its bound minus the longest
    /// `wait` shorter than it (the time the test itself waits) leaves less than this.
    #[serde(default)]
    pub slack_below_ms: Option<f64>,
    /// The evidence, with each role's part in braces: `starts {start}, sleeps {wait}, then
    /// asserts {check} without waiting for it`.
    pub evidence: String,
    /// Whole tests in which the mechanism must be found.
    #[serde(default)]
    pub matches: Vec<String>,
    /// Whole tests in which it must not.
    #[serde(default)]
    pub ignores: Vec<String>,
}

fn category<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Category, D::Error> {
    let name = String::deserialize(deserializer)?;
    Category::from_name(&name)
        .ok_or_else(|| serde::de::Error::custom(format!("unknown category {name:?}")))
}

/// The roles a part can play, as the evidence template names them.
pub const ROLES: [&str; 5] = ["start", "wait", "check", "write", "restore"];

impl MechanismEntry {
    /// The ids the entry names, with the field that names them.
    pub fn named_ids(&self) -> impl Iterator<Item = (&'static str, &str)> {
        [
            ("start", &self.start),
            ("wait", &self.wait),
            ("check", &self.check),
            ("write", &self.write),
            ("restore", &self.restore),
            ("cures", &self.cures),
            ("unless", &self.unless),
            ("expects", &self.expects),
        ]
        .into_iter()
        .flat_map(|(field, ids)| ids.iter().map(move |id| (field, id.as_str())))
    }

    /// What the entry's shape needs, said as an error when it is missing.
    pub fn check_shape(&self) -> Result<(), String> {
        let needs: &[(&str, &Vec<String>)] = match self.shape {
            Shape::Single => &[("check", &self.check)],
            Shape::Sequence | Shape::Race => &[("start", &self.start), ("check", &self.check)],
            Shape::Unrestored => &[("write", &self.write)],
        };
        for (field, ids) in needs {
            if ids.is_empty() {
                return Err(format!("{}: a {:?} needs `{field}`", self.id, self.shape));
            }
        }
        for role in ROLES {
            let placeholder = format!("{{{role}}}");
            let named = match role {
                "start" => &self.start,
                "wait" => &self.wait,
                "check" => &self.check,
                "write" => &self.write,
                _ => &self.restore,
            };
            if self.evidence.contains(&placeholder) && named.is_empty() {
                return Err(format!(
                    "{}: the evidence names {placeholder}, which the entry does not have",
                    self.id
                ));
            }
        }
        Ok(())
    }
}
