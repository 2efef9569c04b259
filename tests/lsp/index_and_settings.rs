//! The workspace index and the settings: a corrupt index, an index from elsewhere, huge files,
//! and settings from the TOML file, the initialization options and the editor.

use std::time::Duration;

use serde_json::json;

use flakesense::index::Index;

use crate::lsp_client::{ClientBehaviour, LspClient};
use crate::{ORDER_TEST, ORDER_TOTAL, Workspace, fixture, known_tests_model, messages};

#[tokio::test]
async fn a_corrupt_workspace_index_is_reported_moved_aside_and_rebuilt() {
    let workspace = Workspace::new();
    let index_path = workspace.path(".flakesense/index");
    let mut damaged = known_tests_model().to_bytes();
    let last = damaged.len() - 1;
    damaged[last] ^= 0xff;
    workspace.write(".flakesense/index", "");
    std::fs::write(&index_path, &damaged).unwrap();

    let mut client = workspace.start().await;
    let shown = client
        .wait_for(
            "a message about the index",
            |message| message["method"] == "window/showMessage",
            Duration::from_secs(10),
        )
        .await;
    let message = shown["params"]["message"].as_str().unwrap();
    let moved_to = workspace.path(".flakesense/index.corrupt-1");
    assert!(
        message.contains("damaged") && message.contains(&moved_to.display().to_string()),
        "{message}"
    );
    assert_eq!(shown["params"]["type"], 2, "a warning");
    assert_eq!(
        std::fs::read(&moved_to).unwrap(),
        damaged,
        "nothing is lost"
    );
    assert!(!index_path.exists());

    // The server works without it, and the first mark builds a new one beside the damaged file.
    let uri = workspace.uri(ORDER_TEST);
    client
        .open(&uri, "java", 1, &fixture("OrderServiceTest.java"))
        .await;
    assert_eq!(messages(&client.diagnostics(&uri, Some(1)).await).len(), 1);
    let response = client
        .request(
            "workspace/executeCommand",
            json!({"command": "flakesense.markFlaky", "arguments": [uri, ORDER_TOTAL]}),
        )
        .await;
    assert!(response.get("error").is_none(), "{response}");
    assert_eq!(Index::load(&index_path).unwrap().len(), 1);
    assert_eq!(std::fs::read(&moved_to).unwrap(), damaged);
}

#[tokio::test]
async fn an_index_from_elsewhere_is_left_alone_and_marks_are_refused() {
    let workspace = Workspace::new();
    workspace.write(".flakesense/index", "not an index, and not ours to replace");
    let mut client = workspace.start().await;
    let shown = client
        .wait_for(
            "a message about the index",
            |message| message["method"] == "window/showMessage",
            Duration::from_secs(10),
        )
        .await;
    assert_eq!(shown["params"]["type"], 1, "an error");
    assert!(
        shown["params"]["message"]
            .as_str()
            .unwrap()
            .contains("left untouched")
    );

    let uri = workspace.uri(ORDER_TEST);
    client
        .open(&uri, "java", 1, &fixture("OrderServiceTest.java"))
        .await;
    client.diagnostics(&uri, Some(1)).await;
    let response = client
        .request(
            "workspace/executeCommand",
            json!({"command": "flakesense.markFlaky", "arguments": [uri, ORDER_TOTAL]}),
        )
        .await;
    assert!(response.get("error").is_some(), "{response}");
    assert_eq!(
        std::fs::read_to_string(workspace.path(".flakesense/index")).unwrap(),
        "not an index, and not ours to replace"
    );
}

#[tokio::test]
async fn huge_files_are_skipped_with_a_log_line() {
    let workspace = Workspace::new();
    let mut client = workspace.start().await;
    let uri = workspace.uri("src/test/java/org/example/GeneratedTest.java");
    let mut text = fixture("OrderServiceTest.java");
    text.push_str(&format!(
        "// {}\n",
        "x".repeat(flakesense::analysis::MAX_FILE_BYTES)
    ));
    client.open(&uri, "java", 1, &text).await;
    let published = client.diagnostics(&uri, Some(1)).await;
    assert_eq!(published["diagnostics"], json!([]));
    let logs = client.take("window/logMessage");
    assert!(
        logs.iter().any(|log| log["params"]["message"]
            .as_str()
            .unwrap()
            .contains("larger than 2 MB")),
        "{logs:#?}"
    );
}

#[tokio::test]
async fn settings_come_from_the_toml_file_the_options_and_the_editor() {
    let workspace = Workspace::new();
    // The file excludes a folder; the editor's answer to workspace/configuration changes k and
    // the warning threshold, over the initialization options.
    workspace.write("flakesense.toml", "exclude = [\"generated/**\"]\nk = 4\n");
    workspace.write(
        "generated/FlakyTest.java",
        &fixture("OrderServiceTest.java"),
    );
    let behaviour = ClientBehaviour {
        configuration: json!({"k": 5, "warningThreshold": 0.99, "trace": {"server": "off"}}),
    };
    let (mut client, _) = workspace
        .start_with(
            workspace.settings(),
            json!({"workspace": {"configuration": true}, "window": {"workDoneProgress": true}}),
            behaviour,
        )
        .await;
    let uri = workspace.uri(ORDER_TEST);
    client
        .open(&uri, "java", 1, &fixture("OrderServiceTest.java"))
        .await;
    let published = client.diagnostics(&uri, Some(1)).await;
    let message = &messages(&published)[0];
    // Five neighbours vote: the fifth nearest of the shipment test is a stable one.
    assert!(message.contains("of 5 nearest"), "{message}");

    let excluded = workspace.uri("generated/FlakyTest.java");
    client
        .open(&excluded, "java", 1, &fixture("OrderServiceTest.java"))
        .await;
    assert_eq!(
        client.diagnostics(&excluded, Some(1)).await["diagnostics"],
        json!([])
    );

    // Long work was reported as progress, begun and ended.
    let progress = client.take("$/progress");
    let kinds: Vec<&str> = progress
        .iter()
        .filter_map(|message| message["params"]["value"]["kind"].as_str())
        .collect();
    assert!(
        kinds.contains(&"begin") && kinds.contains(&"end"),
        "{progress:#?}"
    );

    // A change of settings re-judges open documents: the server asks for the new settings
    // (k = 2 and a lower warning threshold) when told they changed.
    client.set_configuration(json!({"k": 2}));
    client
        .notify(
            "workspace/didChangeConfiguration",
            json!({"settings": null}),
        )
        .await;
    let republished = client.diagnostics(&uri, Some(1)).await;
    assert!(
        messages(&republished)[0].contains("2 of 2 nearest"),
        "{republished:#}"
    );
}

/// Writes `flakesense.toml` (removes it for `None`), then sends the document's `text` again as
/// `version` and returns the messages of the diagnostics judged after.
async fn judged_after_settings_file(
    client: &mut LspClient,
    workspace: &Workspace,
    (uri, text, version): (&str, &str, i64),
    toml: Option<&str>,
) -> Vec<String> {
    match toml {
        Some(toml) => workspace.write("flakesense.toml", toml),
        None => std::fs::remove_file(workspace.path("flakesense.toml")).unwrap(),
    }
    client
        .notify(
            "textDocument/didChange",
            json!({
                "textDocument": {"uri": uri, "version": version},
                "contentChanges": [{"text": text}],
            }),
        )
        .await;
    messages(&client.diagnostics(uri, Some(version)).await)
}

#[tokio::test]
async fn an_edited_settings_file_takes_effect_without_a_restart_and_a_broken_one_loses_nothing() {
    let workspace = Workspace::new();
    let mut client = workspace.start().await;
    let uri = workspace.uri(ORDER_TEST);
    let text = fixture("OrderServiceTest.java");
    client.open(&uri, "java", 1, &text).await;
    assert!(!messages(&client.diagnostics(&uri, Some(1)).await).is_empty());

    let excluded = "exclude = [\"src/test/java/org/example/**\"]\n";
    let judged =
        judged_after_settings_file(&mut client, &workspace, (&uri, &text, 2), Some(excluded));
    assert_eq!(judged.await, Vec::<String>::new());

    // Half written: said so, and the exclusion stays.
    let half = Some("exclude = [\"src/");
    let judged = judged_after_settings_file(&mut client, &workspace, (&uri, &text, 3), half);
    assert_eq!(judged.await, Vec::<String>::new());
    let said = client
        .wait_for(
            "the warning about flakesense.toml",
            |message| {
                message["method"] == "window/showMessage"
                    && message["params"]["message"]
                        .as_str()
                        .is_some_and(|text| text.contains("keeping its previous settings"))
            },
            Duration::from_secs(20),
        )
        .await;
    assert!(
        said["params"]["message"]
            .as_str()
            .is_some_and(|text| text.contains("flakesense.toml")),
        "{said}"
    );

    // Gone: the defaults again.
    let judged = judged_after_settings_file(&mut client, &workspace, (&uri, &text, 4), None);
    assert!(!judged.await.is_empty());
}
