//! SARIF 2.1.0 in the subset GitHub code scanning reads, as `check` writes it: a result per
//! confirmed flaky test (level error, rule `flakesense-confirm/<category>`) and per broken test
//! (level warning), located by repository-relative URIs under `%SRCROOT%`.

use std::io::Write;

use serde_json::{Value, json};

use super::{Report, headline};
use crate::category::Category;
use crate::confirm::verdict::{self, Verdict};

const SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";

fn rule_id(verdict: Verdict, category: Option<Category>) -> String {
    match (verdict, category) {
        (Verdict::Flaky, Some(category)) => format!("flakesense-confirm/{category}"),
        (Verdict::Flaky, None) => "flakesense-confirm/flaky".to_string(),
        _ => "flakesense-confirm/broken".to_string(),
    }
}

pub(super) fn write(report: &Report, out: &mut dyn Write) -> anyhow::Result<()> {
    let mut rules: Vec<String> = Vec::new();
    let mut results: Vec<Value> = Vec::new();
    for (test, verdict, _) in report.entries() {
        let level = match verdict.verdict {
            Verdict::Flaky => "error",
            Verdict::Broken => "warning",
            Verdict::NoFlakinessSeen | Verdict::NotRun => continue,
        };
        let rule = rule_id(verdict.verdict, verdict.category);
        let rule_index = match rules.iter().position(|known| *known == rule) {
            Some(index) => index,
            None => {
                rules.push(rule.clone());
                rules.len() - 1
            }
        };
        results.push(json!({
            "ruleId": rule,
            "ruleIndex": rule_index,
            "level": level,
            "message": { "text": match verdict::hint(verdict, Some(test.test.language)) {
                Some(hint) => format!("{} is {}. {hint}", test.test.id, headline(verdict)),
                None => format!("{} is {}.", test.test.id, headline(verdict)),
            } },
            "locations": [{
                "physicalLocation": {
                    "artifactLocation": { "uri": test.path, "uriBaseId": "%SRCROOT%" },
                    "region": { "startLine": test.line, "startColumn": test.column },
                },
                "logicalLocations": [{ "fullyQualifiedName": test.test.id, "kind": "function" }],
            }],
            "partialFingerprints": { "flakesenseTestId/v1": test.test.id },
        }));
    }
    let rules: Vec<Value> = rules
        .iter()
        .map(|rule| {
            let category = rule.rsplit('/').next().and_then(Category::from_name);
            let text = match (rule.ends_with("/broken"), category) {
                (true, _) => "A test failed every run: broken, not flaky".to_string(),
                (false, Some(category)) => format!("A test confirmed flaky ({category})"),
                (false, None) => "A test confirmed flaky (cause unknown)".to_string(),
            };
            json!({
                "id": rule,
                "shortDescription": { "text": text },
                "help": { "text": category.map_or(
                    "Run the test under the conditions that exposed it and look at what it waits for or shares.",
                    |category| category.fix_hint(None),
                ) },
            })
        })
        .collect();
    let value = json!({
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": { "driver": {
                "name": "flakesense",
                "version": env!("CARGO_PKG_VERSION"),
                "rules": rules,
            } },
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    });
    serde_json::to_writer_pretty(&mut *out, &value)?;
    writeln!(out)?;
    Ok(())
}
