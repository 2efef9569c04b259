//! How a judged test reads as a diagnostic: on the test's name, with the score, the likely
//! category, a one-line reason, the evidence in `data` and the workspace neighbours as related
//! information.

use serde::Serialize;
use tower_lsp_server::ls_types::{
    Diagnostic, DiagnosticRelatedInformation, DiagnosticSeverity, Location, NumberOrString, Uri,
};

use crate::analysis::{Severity, similarity};
use crate::category::Category;
use crate::index::Origin;
use crate::lsp::judging::JudgedTest;
use crate::lsp::position::{PositionEncoding, TextLines};
use crate::predict::{Neighbor, Prediction};
use crate::signals::{SignalContext, SignalHit};

pub const SOURCE: &str = "flakesense";

/// How many shared tokens the one-line reason names.
const TOKENS_IN_MESSAGE: usize = 3;
/// How many flakiness signals the one-line reason names.
const SIGNALS_IN_MESSAGE: usize = 2;

/// Closer than this, a neighbour is the same code (see `predict::vote`).
const SAME_CODE_DISTANCE: f64 = 1e-9;

pub fn diagnostic(
    document: &Uri,
    judged_test: &JudgedTest,
    severity: Severity,
    text_lines: TextLines<'_>,
    encoding: PositionEncoding,
    related: &[(Location, Neighbor)],
) -> Diagnostic {
    let test = &judged_test.test;
    let prediction = &judged_test.judged.prediction;
    // Each part of a mechanism in the test's own file is a place the editor can jump to.
    let parts = prediction
        .mechanisms
        .iter()
        .flat_map(|mechanism| &mechanism.parts)
        .filter(|part| {
            part.place
                .context()
                .is_none_or(|context| context.path.is_none())
        })
        .map(|part| DiagnosticRelatedInformation {
            location: Location {
                uri: document.clone(),
                range: text_lines.range(&part.range, encoding),
            },
            message: format!("{}: `{}`", part.role, part.text),
        });
    let related_information: Vec<DiagnosticRelatedInformation> = parts
        .chain(
            related
                .iter()
                .filter(|(_, neighbor)| neighbor.id != test.id)
                .map(|(location, neighbor)| DiagnosticRelatedInformation {
                    location: location.clone(),
                    message: neighbor_line(neighbor),
                }),
        )
        .collect();
    Diagnostic {
        range: text_lines.range(&test.name_range, encoding),
        severity: Some(match severity {
            Severity::Warning => DiagnosticSeverity::WARNING,
            Severity::Information => DiagnosticSeverity::INFORMATION,
        }),
        code: Some(NumberOrString::String(
            prediction
                .category
                .map_or("flaky", Category::name)
                .to_string(),
        )),
        code_description: None,
        source: Some(SOURCE.to_string()),
        message: message(&test.id, prediction),
        related_information: (!related_information.is_empty()).then_some(related_information),
        tags: None,
        data: serde_json::to_value(Evidence::new(&test.id, prediction, severity)).ok(),
    }
}

/// `likely flaky (0.93, async-wait): fixed sleep `Thread.sleep`; 6 of 7 nearest known tests are
/// flaky; shares thread.sleep, countdownlatch`.
pub fn message(test_id: &str, prediction: &Prediction) -> String {
    let score = crate::analysis::score_text(prediction.score);
    let mut message = match prediction.category {
        Some(category) => format!("likely flaky ({score}, {category})"),
        None => format!("likely flaky ({score}, cause unknown)"),
    };
    // A mechanism says how the test can fail: that is the message, whole.
    if let Some(mechanism) = prediction.mechanisms.first() {
        message.push_str(": it ");
        message.push_str(&mechanism.evidence());
        return message;
    }
    let signals: Vec<String> = prediction
        .signals
        .iter()
        .take(SIGNALS_IN_MESSAGE)
        .map(SignalHit::evidence)
        .collect();
    if !signals.is_empty() {
        message.push_str(": ");
        message.push_str(&signals.join(", "));
        message.push(';');
    } else {
        message.push(':');
    }
    let same_code: Vec<&Neighbor> = prediction
        .neighbors
        .iter()
        .filter(|neighbor| neighbor.distance <= SAME_CODE_DISTANCE)
        .collect();
    // Exact duplicates decide alone (FLAST's vote would divide by zero), so say that instead of
    // a count the vote did not use.
    if same_code.iter().any(|neighbor| {
        neighbor.id == test_id && neighbor.origin == Origin::Manual && neighbor.flaky
    }) {
        message.push_str(" marked flaky in this workspace");
    } else if let Some(duplicate) = same_code.iter().find(|neighbor| neighbor.flaky) {
        message.push_str(&format!(
            " the same code is a known flaky test ({})",
            duplicate.id
        ));
    } else {
        let flaky = prediction
            .neighbors
            .iter()
            .filter(|neighbor| neighbor.flaky)
            .count();
        message.push_str(&format!(
            " {flaky} of {} nearest known tests are flaky",
            prediction.neighbors.len()
        ));
    }
    if !prediction.shared_tokens.is_empty() {
        let shown: Vec<&str> = prediction
            .shared_tokens
            .iter()
            .take(TOKENS_IN_MESSAGE)
            .map(String::as_str)
            .collect();
        message.push_str("; shares ");
        message.push_str(&shown.join(", "));
    }
    message
}

/// One line about a neighbour, for related information and messages.
pub fn neighbor_line(neighbor: &Neighbor) -> String {
    let label = neighbor.label.name();
    let categories: Vec<&str> = neighbor.categories.iter().map(|c| c.name()).collect();
    let categories = if categories.is_empty() {
        String::new()
    } else {
        format!(", {}", categories.join(", "))
    };
    format!(
        "similar {label} test {} ({}{categories}), similarity {:.2}",
        neighbor.id,
        neighbor.project,
        similarity(neighbor)
    )
}

/// The evidence behind a diagnostic, in its `data`: what a client needs to explain it without
/// asking again.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Evidence<'a> {
    pub test_id: &'a str,
    pub score: f64,
    pub severity: Severity,
    pub category: Option<Category>,
    pub neighbors: Vec<NeighborEvidence<'a>>,
    /// The nearest known flaky tests with the risk of the strongest signal.
    pub examples: Vec<NeighborEvidence<'a>>,
    pub shared_tokens: &'a [String],
    /// Catalogue signals that speak for flakiness, strongest first.
    pub signals: Vec<SignalEvidence<'a>>,
    /// The shipped model's estimate from the signals alone, when it has one for the language.
    pub signal_score: Option<f64>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SignalEvidence<'a> {
    pub id: &'a str,
    pub name: &'a str,
    pub category: Category,
    pub text: &'a str,
    pub line: u32,
    /// Where in what the test runs, when not in its own code.
    pub context: Option<SignalContext<'a>>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NeighborEvidence<'a> {
    pub id: &'a str,
    pub project: &'a str,
    pub flaky: bool,
    pub categories: &'a [Category],
    /// 1 - the cosine distance.
    pub similarity: f64,
    pub origin: Origin,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<&'a str>,
    pub shared_tokens: &'a [String],
}

impl<'a> NeighborEvidence<'a> {
    fn new(neighbor: &'a Neighbor) -> NeighborEvidence<'a> {
        NeighborEvidence {
            id: &neighbor.id,
            project: &neighbor.project,
            flaky: neighbor.flaky,
            categories: &neighbor.categories,
            similarity: similarity(neighbor),
            origin: neighbor.origin,
            path: neighbor.path.as_deref(),
            shared_tokens: &neighbor.shared_tokens,
        }
    }
}

impl<'a> Evidence<'a> {
    pub fn new(test_id: &'a str, prediction: &'a Prediction, severity: Severity) -> Evidence<'a> {
        Evidence {
            test_id,
            score: prediction.score,
            severity,
            category: prediction.category,
            neighbors: prediction
                .neighbors
                .iter()
                .map(NeighborEvidence::new)
                .collect(),
            examples: prediction
                .examples
                .iter()
                .map(NeighborEvidence::new)
                .collect(),
            shared_tokens: &prediction.shared_tokens,
            signals: prediction
                .signals
                .iter()
                .map(|hit| SignalEvidence {
                    id: hit.id,
                    name: hit.message,
                    category: hit.category,
                    text: &hit.text,
                    line: hit.line,
                    context: hit.context(),
                })
                .collect(),
            signal_score: prediction.prior_score,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn neighbor(id: &str, flaky: bool, distance: f64, origin: Origin) -> Neighbor {
        Neighbor {
            model: 0,
            entry: 0,
            id: id.to_string(),
            project: "p".to_string(),
            flaky,
            label: if flaky {
                crate::index::Label::Flaky
            } else {
                crate::index::Label::Stable
            },
            categories: if flaky {
                vec![Category::AsyncWait]
            } else {
                Vec::new()
            },
            origin,
            path: None,
            distance,
            shared_tokens: Vec::new(),
        }
    }

    fn prediction(neighbors: Vec<Neighbor>) -> Prediction {
        Prediction {
            score: 0.93,
            flaky: true,
            category: Some(Category::AsyncWait),
            neighbors,
            examples: Vec::new(),
            shared_tokens: vec![
                "thread.sleep".into(),
                "countdownlatch".into(),
                "await".into(),
                "latch".into(),
            ],
            signals: Vec::new(),
            mechanisms: Vec::new(),
            prior_score: None,
            neighbor_weight: 1.0,
        }
    }

    #[test]
    fn the_message_gives_score_category_count_and_shared_tokens() {
        let mut neighbors: Vec<Neighbor> = (0..6)
            .map(|i| neighbor(&format!("f{i}"), true, 0.2, Origin::Dataset))
            .collect();
        neighbors.push(neighbor("n", false, 0.3, Origin::Dataset));
        assert_eq!(
            message("T#t", &prediction(neighbors)),
            "likely flaky (0.93, async-wait): 6 of 7 nearest known tests are flaky; shares \
             thread.sleep, countdownlatch, await"
        );
    }

    #[test]
    fn signals_lead_the_reason_when_there_are_some() {
        let mut with_signal = prediction(vec![neighbor("n", false, 0.5, Origin::Dataset)]);
        with_signal.signals = vec![SignalHit {
            id: "fixed-sleep",
            feature: "fixed-sleep",
            category: Category::AsyncWait,
            message: "fixed sleep",
            text: "Thread.sleep(50)".to_string(),
            line: 4,
            place: crate::signals::Place::Test,
            setting: false,
        }];
        assert_eq!(
            message("T#t", &with_signal),
            "likely flaky (0.93, async-wait): fixed sleep `Thread.sleep(50)` (line 4); 0 of 1 \
             nearest known tests are flaky; shares thread.sleep, countdownlatch, await"
        );
    }

    #[test]
    fn exact_duplicates_are_named_instead_of_counted() {
        let marked = vec![
            neighbor("T#t", true, 0.0, Origin::Manual),
            neighbor("n", false, 0.1, Origin::Dataset),
        ];
        assert!(message("T#t", &prediction(marked)).contains("marked flaky in this workspace"));
        let known = vec![neighbor("Other#t", true, 0.0, Origin::Dataset)];
        assert!(
            message("T#t", &prediction(known))
                .contains("the same code is a known flaky test (Other#t)")
        );
    }
}
