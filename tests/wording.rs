//! How flakesense speaks, snapshotted for one Java, one Python and one Rust test (the waiting
//! tests of `tests/fixtures/demo`, judged by the shipped models): `check`, `predict` and the
//! editor's hover say the same things in the same words (similarity, signals, the category of the
//! strongest evidence, a hint in the test's own language).
//!
//! Figures and neighbours depend on the shipped models, which are retrained from time to time,
//! so they are replaced by placeholders; the verdicts, signals, categories and hints are kept.

mod common;
mod lsp_client;

use std::path::{Path, PathBuf};
use std::time::Duration;

use regex::Regex;
use serde_json::json;

use lsp_client::{ClientBehaviour, LspClient};

const DEMO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/demo");

/// The flagged test of each language: its file and the name the hover is asked on.
const FLAGGED: [(&str, &str); 3] = [
    (
        "src/test/java/demo/NotificationTest.java",
        "deliversAnOrderNotification",
    ),
    (
        "tests/test_status_page.py",
        "test_status_page_reports_healthy_after_restart",
    ),
    ("tests/server.rs", "accepts_a_connection_after_start"),
];

/// A copy of the demo, so no index or settings of this repository take part; its own empty
/// `flakesense.toml` makes it a project, whose root the ids are relative to.
fn demo() -> tempfile::TempDir {
    let directory = tempfile::tempdir().expect("a temporary directory");
    std::fs::write(directory.path().join("flakesense.toml"), "").expect("settings written");
    for (path, _) in FLAGGED {
        let target = directory.path().join(path);
        std::fs::create_dir_all(target.parent().expect("a parent")).expect("directories");
        std::fs::copy(Path::new(DEMO).join(path), target).expect("the demo file copies");
    }
    directory
}

/// The text with the model-dependent parts replaced: figures, neighbours, shared tokens.
fn redact(text: &str) -> String {
    let figure = Regex::new(r"\b[01]\.\d{2,3}\b").expect("a valid pattern");
    let mut lines: Vec<String> = Vec::new();
    for line in text.lines() {
        let trimmed = line.trim_start();
        let indent = &line[..line.len() - trimmed.len()];
        let replaced = if trimmed.starts_with("similarity ") || trimmed.starts_with("| `") {
            format!("{indent}<neighbour, similarity N.NN>")
        } else if let Some((head, _)) = trimmed.split_once("tokens: ") {
            format!("{indent}{head}tokens: <tokens>")
        } else if let Some((head, _)) = trimmed.split_once("ones: ") {
            format!("{indent}{head}ones: <tokens>")
        } else if let Some((head, _)) = trimmed.split_once("neighbours: ") {
            format!("{indent}{head}neighbours: <tokens>")
        } else {
            figure.replace_all(line, "N.NN").into_owned()
        };
        // Neighbour lists differ in length between models; one placeholder stands for them.
        if lines.last() != Some(&replaced) {
            lines.push(replaced);
        }
    }
    lines.join("\n") + "\n"
}

#[test]
fn check_speaks_of_similarity_signals_and_a_hint_in_the_tests_language() {
    let demo = demo();
    let paths: Vec<&str> = FLAGGED.iter().map(|(path, _)| *path).collect();
    let mut arguments = vec!["check", "--exit-zero"];
    arguments.extend(&paths);
    insta::assert_snapshot!(redact(&common::run_ok(
        "flakesense",
        &arguments,
        demo.path()
    )));
}

#[test]
fn predict_speaks_as_check_does() {
    let demo = demo();
    let paths: Vec<&str> = FLAGGED.iter().map(|(path, _)| *path).collect();
    let mut arguments = vec!["predict"];
    arguments.extend(&paths);
    insta::assert_snapshot!(redact(&common::run_ok(
        "flakesense",
        &arguments,
        demo.path()
    )));
}

#[tokio::test]
async fn the_hover_speaks_as_check_does() {
    let demo = demo();
    let root = demo.path();
    let (client_end, server_end) = tokio::io::duplex(1 << 16);
    let (server_input, server_output) = tokio::io::split(server_end);
    tokio::spawn(flakesense::lsp::serve(server_input, server_output));
    let (client_input, client_output) = tokio::io::split(client_end);
    let mut client = LspClient::new(client_input, client_output, ClientBehaviour::default());
    let folder = format!("file://{}", root.display());
    client
        .initialize(json!({
            "processId": null,
            "rootUri": folder,
            "workspaceFolders": [{"uri": folder, "name": "demo"}],
            "capabilities": {},
            "initializationOptions": {"debounceMs": 10},
        }))
        .await;
    let mut hovers = String::new();
    for (path, name) in FLAGGED {
        let file: PathBuf = root.join(path);
        let text = std::fs::read_to_string(&file).expect("the demo file reads");
        let uri = format!("file://{}", file.display());
        let language = match path.rsplit('.').next() {
            Some("java") => "java",
            Some("py") => "python",
            _ => "rust",
        };
        client.open(&uri, language, 1, &text).await;
        client.diagnostics(&uri, Some(1)).await;
        let before = &text[..text.find(name).expect("the test's name is in its file")];
        let line = before.matches('\n').count();
        let character = before.len() - before.rfind('\n').map_or(0, |at| at + 1) + 2;
        let hover = tokio::time::timeout(
            Duration::from_secs(30),
            client.request(
                "textDocument/hover",
                json!({"textDocument": {"uri": uri}, "position": {"line": line, "character": character}}),
            ),
        )
        .await
        .expect("the hover answers");
        let markdown = hover["result"]["contents"]["value"]
            .as_str()
            .unwrap_or_else(|| panic!("a hover on {name}: {hover:#}"));
        hovers.push_str(&format!("## {path}\n\n{markdown}\n"));
    }
    insta::assert_snapshot!(redact(&hovers));
}
