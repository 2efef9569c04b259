//! What every format shows alike: the hint that a long list has likelier findings (and the human
//! format's last lines), and which flaky neighbours of a finding are shown first.

use super::*;
use crate::analysis::Severity;
use crate::check::report::Position;
use crate::index::Origin;
use crate::language::Language;

fn neighbor(id: &str, flaky: bool, category: Category, distance: f64) -> Neighbor {
    Neighbor {
        model: 0,
        // Neighbours at different distances are different entries.
        entry: (distance * 100.0) as usize,
        id: id.to_string(),
        project: "p".to_string(),
        flaky,
        label: if flaky {
            crate::index::Label::Flaky
        } else {
            crate::index::Label::Stable
        },
        categories: vec![category],
        origin: Origin::Dataset,
        path: None,
        distance,
        shared_tokens: Vec::new(),
    }
}

fn finding(neighbors: Vec<Neighbor>, examples: Vec<Neighbor>) -> Finding {
    let at = Position {
        line: 1,
        column: 1,
        column_utf16: 1,
    };
    Finding {
        path: "t.py".to_string(),
        display_path: "t.py".to_string(),
        language: Language::Python,
        id: "t.py::test_a".to_string(),
        name: "test_a".to_string(),
        start: at,
        end: at,
        score: 0.99,
        severity: Severity::Warning,
        category: Some(Category::Network),
        mechanisms: Vec::new(),
        signals: Vec::new(),
        shared_tokens: Vec::new(),
        neighbors,
        examples,
        hint: Category::Network
            .fix_hint(Some(Language::Python))
            .to_string(),
    }
}

fn report(scores: &[f64], sigma: f64) -> Report {
    let findings: Vec<Finding> = scores
        .iter()
        .map(|&score| Finding {
            score,
            ..finding(Vec::new(), Vec::new())
        })
        .collect();
    Report {
        settings: crate::check::report::Settings {
            sigma,
            k: 7,
            warning: 0.95,
            changes: Changes::All,
        },
        summary: crate::check::report::Summary {
            files: 1,
            tests: 100,
            unchanged_tests: 0,
            flagged: findings.len(),
            skipped: Vec::new(),
        },
        findings,
    }
}

#[test]
fn a_long_list_says_how_to_see_its_likeliest_findings_alone() {
    let mut scores = vec![0.96; 9];
    scores.extend([0.995, 0.999, 0.97]);
    assert_eq!(
        likeliest_line(&report(&scores, 0.95)).as_deref(),
        Some(
            "2 of the 12 flagged tests score above 0.99, the likeliest to be flaky; \
             `--sigma 0.99` lists only those"
        )
    );
    assert_eq!(
        likeliest_line(&report(&scores[2..], 0.95)),
        None,
        "ten findings are read at once"
    );
    assert_eq!(
        likeliest_line(&report(&scores, 0.99)),
        None,
        "already the likeliest alone"
    );
    assert_eq!(
        likeliest_line(&report(&[0.96; 12], 0.5)),
        None,
        "none above 0.99"
    );
    assert_eq!(
        likeliest_line(&report(&[0.995; 12], 0.95)),
        None,
        "all above 0.99: the list is what --sigma 0.99 gives"
    );
}

#[test]
fn the_human_format_ends_a_long_list_with_its_likeliest_findings_after_the_summary() {
    let mut scores = vec![0.96; 9];
    scores.extend([0.995, 0.999, 0.97]);
    let mut out = Vec::new();
    human::write(&report(&scores, 0.95), &mut out, false).unwrap();
    let text = String::from_utf8(out).unwrap();
    let last: Vec<&str> = text.lines().rev().take(2).collect();
    assert_eq!(
        last[0],
        "2 of the 12 flagged tests score above 0.99, the likeliest to be flaky; \
         `--sigma 0.99` lists only those"
    );
    assert!(
        last[1].starts_with("flagged 12 of 100 tests"),
        "the summary comes first: {}",
        last[1]
    );
    let mut short = Vec::new();
    human::write(&report(&scores[2..], 0.95), &mut short, false).unwrap();
    assert!(!String::from_utf8(short).unwrap().contains("likeliest"));
}

fn shown(finding: &Finding) -> Vec<&str> {
    flaky_neighbors(finding)
        .into_iter()
        .map(|neighbor| neighbor.id.as_str())
        .collect()
}

#[test]
fn the_flaky_neighbours_of_the_findings_category_are_shown_first() {
    let finding = finding(
        vec![
            neighbor("near-io", true, Category::Io, 0.3),
            neighbor("stable", false, Category::Network, 0.35),
            neighbor("far-network", true, Category::Network, 0.5),
            neighbor("farther-io", true, Category::Io, 0.6),
            neighbor("farthest-network", true, Category::Network, 0.7),
        ],
        Vec::new(),
    );
    assert_eq!(
        shown(&finding),
        ["far-network", "farthest-network", "near-io"]
    );
}

#[test]
fn the_tests_with_the_same_risk_leave_room_for_a_nearest_flaky_neighbour() {
    let examples = vec![
        neighbor("risk-1", true, Category::Network, 0.5),
        neighbor("risk-2", true, Category::Network, 0.6),
        neighbor("risk-3", true, Category::Network, 0.7),
    ];
    let with_neighbour = finding(
        vec![neighbor("near-network", true, Category::Network, 0.3)],
        examples.clone(),
    );
    assert_eq!(shown(&with_neighbour), ["risk-1", "risk-2", "near-network"]);
    let sentences = message(&with_neighbour, "\n");
    assert!(
        sentences.contains("\nKnown flaky tests with the same risk: risk-1 (")
            && sentences.contains("\nNearest known flaky tests: near-network ("),
        "each group under its own heading: {sentences}"
    );
    let alone = finding(Vec::new(), examples);
    assert_eq!(
        shown(&alone),
        ["risk-1", "risk-2", "risk-3"],
        "without flaky neighbours the examples fill the list"
    );
}

#[test]
fn flaky_tests_with_the_same_risk_come_before_the_nearest_by_tokens_and_once() {
    let with_risk = neighbor("with-risk", true, Category::Network, 0.5);
    let finding = finding(
        vec![
            neighbor("near-network", true, Category::Network, 0.3),
            with_risk.clone(),
        ],
        vec![
            with_risk,
            neighbor("far-with-risk", true, Category::Network, 0.8),
        ],
    );
    assert_eq!(
        shown(&finding),
        ["with-risk", "far-with-risk", "near-network"]
    );
}

#[test]
fn a_score_below_a_threshold_never_reads_as_the_threshold() {
    use crate::analysis::score_text;
    // 0.4959 is not flagged at sigma 0.5: rounded, it would read "0.50".
    assert_eq!(score_text(0.4959), "0.49");
    assert_eq!(score_text(0.9499), "0.94");
    assert_eq!(score_text(0.95), "0.95");
    assert_eq!(score_text(0.9999), "0.99");
    assert_eq!(score_text(1.0), "1.00");
    assert_eq!(score_text(0.0), "0.00");
}
