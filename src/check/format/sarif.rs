//! SARIF 2.1.0 (OASIS), in the subset GitHub code scanning reads: one rule per flakiness
//! category with a stable id, results located by repository-relative URIs under `%SRCROOT%`,
//! columns in UTF-16 code units (the `columnKind` stated on the run), and a partial fingerprint
//! per test id so an alert follows its test when lines move.

use std::io::Write;

use serde_json::{Value, json};

use super::{Report, flaky_neighbors, message, rule_id};
use crate::analysis::{GENERAL_HINT, Severity, similarity};
use crate::category::Category;

const SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";
/// The base every result's URI is relative to: the repository's top level (SARIF 3.14.14).
const SOURCE_ROOT: &str = "%SRCROOT%";
/// The partial fingerprint's name; the version suffix changes if its computation ever does.
const FINGERPRINT: &str = "flakesenseTestId/v1";

/// The rules in a fixed order, so a rule's index never moves: cause unknown first, then the
/// taxonomy's order.
fn rules() -> Vec<Option<Category>> {
    std::iter::once(None)
        .chain(Category::ALL.into_iter().map(Some))
        .collect()
}

pub(super) fn write(report: &Report, out: &mut dyn Write) -> anyhow::Result<()> {
    let rules = rules();
    let results: Vec<Value> = report
        .findings
        .iter()
        .map(|finding| {
            let rule_index = rules
                .iter()
                .position(|rule| *rule == finding.category)
                .unwrap_or(0);
            let text = message(finding, " ");
            let artifact = if finding.path.starts_with('/') {
                json!({ "uri": file_uri(&finding.path) })
            } else {
                json!({ "uri": encode_uri_path(&finding.path), "uriBaseId": SOURCE_ROOT })
            };
            json!({
                "ruleId": rule_id(finding.category),
                "ruleIndex": rule_index,
                "level": level(finding.severity),
                "message": { "text": text },
                "locations": [{
                    "physicalLocation": {
                        "artifactLocation": artifact,
                        "region": {
                            "startLine": finding.start.line,
                            "startColumn": finding.start.column_utf16,
                            "endLine": finding.end.line,
                            "endColumn": finding.end.column_utf16,
                        }
                    },
                    "logicalLocations": [{
                        "fullyQualifiedName": finding.id,
                        "name": finding.name,
                        "kind": "function",
                    }]
                }],
                "partialFingerprints": { FINGERPRINT: fingerprint(&finding.id) },
                "properties": {
                    "score": finding.score,
                    "sharedTokens": finding.shared_tokens,
                    "nearestFlakyTests": flaky_neighbors(finding)
                        .into_iter()
                        .map(|neighbor| json!({
                            "id": neighbor.id,
                            "project": neighbor.project,
                            "similarity": similarity(neighbor),
                        }))
                        .collect::<Vec<_>>(),
                }
            })
        })
        .collect();
    let log = json!({
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {
                "driver": {
                    "name": "flakesense",
                    "version": env!("CARGO_PKG_VERSION"),
                    "semanticVersion": env!("CARGO_PKG_VERSION"),
                    "fullName": format!("flakesense {}", env!("CARGO_PKG_VERSION")),
                    "rules": rules.iter().map(|&category| rule(category)).collect::<Vec<_>>(),
                }
            },
            "columnKind": "utf16CodeUnits",
            "results": results,
            "properties": {
                "sigma": report.settings.sigma,
                "k": report.settings.k,
            }
        }]
    });
    serde_json::to_writer_pretty(&mut *out, &log)?;
    writeln!(out)?;
    Ok(())
}

fn level(severity: Severity) -> &'static str {
    match severity {
        Severity::Warning => "warning",
        Severity::Information => "note",
    }
}

/// A rule's reporting descriptor.
fn rule(category: Option<Category>) -> Value {
    let (name, cause) = match category {
        None => ("LikelyFlakyTest", "an unknown cause"),
        Some(category) => (rule_name(category), cause(category)),
    };
    let short = match category {
        None => "Test is likely flaky".to_string(),
        Some(category) => format!("Test is likely flaky ({category})"),
    };
    let full = format!(
        "The test's code resembles known flaky tests, most of which were flaky because of {cause}. A static prediction is an estimate: the nearest known flaky tests and the shared tokens are the evidence."
    );
    let tags: Vec<&str> = std::iter::once("flaky-test")
        .chain(category.map(Category::name))
        .collect();
    json!({
        "id": rule_id(category),
        "name": name,
        "shortDescription": { "text": format!("{short}.") },
        "fullDescription": { "text": full },
        "help": {
            "text": category.map_or(GENERAL_HINT, |category| category.fix_hint(None)),
            "markdown": category.map_or(GENERAL_HINT, |category| category.fix_hint(None)),
        },
        "defaultConfiguration": { "level": "warning" },
        "properties": {
            "tags": tags,
            "precision": "medium",
            "problem.severity": "warning",
        }
    })
}

fn rule_name(category: Category) -> &'static str {
    match category {
        Category::AsyncWait => "LikelyFlakyAsyncWait",
        Category::Concurrency => "LikelyFlakyConcurrency",
        Category::OrderDependency => "LikelyFlakyOrderDependency",
        Category::Network => "LikelyFlakyNetwork",
        Category::Time => "LikelyFlakyTime",
        Category::Randomness => "LikelyFlakyRandomness",
        Category::Io => "LikelyFlakyIo",
        Category::UnorderedCollection => "LikelyFlakyUnorderedCollection",
        Category::ResourceLeak => "LikelyFlakyResourceLeak",
        Category::FloatingPoint => "LikelyFlakyFloatingPoint",
        Category::Platform => "LikelyFlakyPlatform",
        Category::Timeout => "LikelyFlakyTimeout",
    }
}

fn cause(category: Category) -> &'static str {
    match category {
        Category::AsyncWait => "asynchronous waits (fixed sleeps racing the work they wait for)",
        Category::Concurrency => "concurrency (threads racing on shared state)",
        Category::OrderDependency => "test order dependency (state shared between tests)",
        Category::Network => "the network (remote hosts, DNS, connections)",
        Category::Time => "time (the clock, dates, time zones)",
        Category::Randomness => "unseeded randomness",
        Category::Io => "files and other IO shared between runs",
        Category::UnorderedCollection => "the iteration order of unordered collections",
        Category::ResourceLeak => "leaked resources (sockets, servers, pools left open)",
        Category::FloatingPoint => "floating-point comparisons with tight bounds",
        Category::Platform => "the platform (operating system, runtime, paths)",
        Category::Timeout => "timeouts too tight for slow machines",
    }
}

/// A stable fingerprint of a test id: FNV-1a, 64 bits, in hex. Any stable hash would do; this
/// one is simple enough to recompute anywhere.
fn fingerprint(id: &str) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in id.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{hash:016x}")
}

/// Percent-encodes a relative path for a URI reference (RFC 3986), keeping `/` separators.
fn encode_uri_path(path: &str) -> String {
    let mut encoded = String::with_capacity(path.len());
    for byte in path.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~/".contains(&byte) {
            encoded.push(byte as char);
        } else {
            encoded.push_str(&format!("%{byte:02X}"));
        }
    }
    encoded
}

/// A `file:` URI for an absolute path outside the repository.
fn file_uri(path: &str) -> String {
    format!("file://{}", encode_uri_path(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_encode_what_a_path_may_hold() {
        assert_eq!(
            encode_uri_path("src/test/My Tests/Ünï.java"),
            "src/test/My%20Tests/%C3%9Cn%C3%AF.java"
        );
        assert_eq!(file_uri("/tmp/a b.py"), "file:///tmp/a%20b.py");
    }

    #[test]
    fn fingerprints_are_stable() {
        // FNV-1a's published test vector for "a".
        assert_eq!(fingerprint("a"), "af63dc4c8601ec8c");
        assert_ne!(fingerprint("A#b"), fingerprint("A#c"));
    }

    #[test]
    fn every_category_has_a_rule_with_a_unique_id() {
        let ids: std::collections::HashSet<String> = rules().into_iter().map(rule_id).collect();
        assert_eq!(ids.len(), Category::ALL.len() + 1);
    }
}
