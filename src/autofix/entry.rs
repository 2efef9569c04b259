//! A fix as the catalogue writes it (`[[fix]]` beside the mechanisms it cures): its kind, the
//! mechanisms it cures, what must hold for it to be offered, and the code it writes.

use regex::Regex;
use serde::Deserialize;

/// What a fix changes; each kind is one way of editing the syntax tree ([`super::build`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FixKind {
    /// A fixed sleep before an assertion becomes a wait, with a deadline, for the assertion to
    /// hold.
    ConditionWait,
    /// A bound under a second on a wait for success becomes 30 seconds, in the same unit.
    GenerousWait,
    /// A fixed port becomes port 0, and the test's other uses of the number read the bound port.
    EphemeralPort,
    /// Process-wide state the test changes is saved first and restored whatever the outcome.
    RestoreState,
}

impl FixKind {
    /// The kebab-case name JSON and the catalogue use.
    pub fn name(self) -> &'static str {
        match self {
            FixKind::ConditionWait => "condition-wait",
            FixKind::GenerousWait => "generous-wait",
            FixKind::EphemeralPort => "ephemeral-port",
            FixKind::RestoreState => "restore-state",
        }
    }
}

/// One `[[fix]]` of a catalogue file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct FixEntry {
    /// Stable within a language.
    pub id: String,
    pub kind: FixKind,
    /// The mechanisms it cures.
    pub cures: Vec<String>,
    /// What a user reads in the editor's menu and above a diff.
    pub title: String,
    /// What must hold for the fix to be offered; otherwise the hint stays text.
    pub needs: String,
    /// The code written in place of the matched statement, with placeholders: `{check}` the
    /// assertion statement, `{condition}` what it asserts, `{deadline}` a fresh name.
    #[serde(default)]
    pub template: Option<String>,
    /// The template for a test that is a coroutine (`async def`, `async fn`).
    #[serde(default)]
    pub async_template: Option<String>,
    /// The pause between two tries (`{pause}`) where the test may be interrupted (a Java method
    /// that declares `InterruptedException`), and where it may not (`quiet-pause`).
    #[serde(default)]
    pub pause: Option<String>,
    #[serde(default)]
    pub quiet_pause: Option<String>,
    /// Modules the template names (Python): imported at the top of the file when missing.
    #[serde(default)]
    pub imports: Vec<String>,
    #[serde(default)]
    pub async_imports: Vec<String>,
    /// The forms of code the fix knows, tried in order: a port's read-back for each kind of
    /// server, the save and restore for each kind of state.
    #[serde(default)]
    pub forms: Vec<Form>,
}

/// One form of code a fix knows, recognised by a pattern on the matched code.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Form {
    /// A regular expression the matched code (the bind, the write) must match.
    pub on: String,
    /// The bound port read back from `{var}` (ephemeral ports).
    #[serde(default)]
    pub read: Option<String>,
    /// The statement that saves the state into `{saved}` before the write, for `{key}`.
    #[serde(default)]
    pub save: Option<String>,
    /// The statement that puts `{saved}` back.
    #[serde(default)]
    pub restore: Option<String>,
    /// The write rewritten (for a fixture that restores by itself: pytest's `monkeypatch`),
    /// with `{key}`, `{value}`, `{object}` and `{attribute}`.
    #[serde(default)]
    pub write: Option<String>,
    #[serde(skip)]
    pub pattern: Option<Regex>,
}

impl FixEntry {
    /// Checks what serde cannot: the forms' patterns compile, and the kind has what it needs.
    pub fn compile(&mut self, mechanisms: &[&str]) -> Result<(), String> {
        for cured in &self.cures {
            if !mechanisms.contains(&cured.as_str()) {
                return Err(format!(
                    "fix {}: `cures` names {cured:?}, which is no mechanism",
                    self.id
                ));
            }
        }
        for form in &mut self.forms {
            form.pattern =
                Some(Regex::new(&form.on).map_err(|error| format!("fix {}: {error}", self.id))?);
        }
        let complete = match self.kind {
            FixKind::ConditionWait => self.template.is_some(),
            FixKind::GenerousWait => true,
            FixKind::EphemeralPort => self.forms.iter().all(|form| form.read.is_some()),
            FixKind::RestoreState => self.forms.iter().all(|form| {
                form.write.is_some() || (form.save.is_some() && form.restore.is_some())
            }),
        };
        if !complete {
            return Err(format!(
                "fix {}: a {} fix lacks its template or a form's code",
                self.id,
                self.kind.name()
            ));
        }
        Ok(())
    }

    /// The first form whose pattern matches `code`.
    pub fn form_for(&self, code: &str) -> Option<&Form> {
        self.forms.iter().find(|form| {
            form.pattern
                .as_ref()
                .is_some_and(|pattern| pattern.is_match(code))
        })
    }
}
