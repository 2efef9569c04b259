//! Diagnostics and their positions: a warning on a test's name in UTF-16 or UTF-8 columns, the
//! announced capabilities, incremental edits, bursts of edits and the debounce, and closing a
//! document.

use std::time::Duration;

use serde_json::{Value, json};

use crate::lsp_client::{self, ClientBehaviour};
use crate::{ORDER_TEST, SHIPMENT, Workspace, diagnostic_for, edit, fixture, messages, range_of};

#[tokio::test]
async fn a_flaky_looking_test_gets_a_warning_on_its_name_in_utf16_columns() {
    let workspace = Workspace::new();
    let mut client = workspace.start().await;
    let text = fixture("OrderServiceTest.java");
    let uri = workspace.uri(ORDER_TEST);
    client.open(&uri, "java", 1, &text).await;
    let published = client.diagnostics(&uri, Some(1)).await;

    let diagnostics = published["diagnostics"].as_array().expect("a list");
    assert_eq!(diagnostics.len(), 1, "{published:#}");
    let warning = &diagnostics[0];
    // The name follows a string with a two-unit emoji and an accented letter on the same line,
    // so UTF-16 columns differ from byte columns.
    assert_eq!(warning["range"], range_of(&text, "waitsForShipment", true));
    assert_ne!(warning["range"], range_of(&text, "waitsForShipment", false));
    assert_eq!(warning["severity"], 2, "warning");
    assert_eq!(warning["source"], "flakesense");
    assert_eq!(warning["code"], "async-wait");
    let message = warning["message"].as_str().unwrap();
    assert!(
        message.starts_with(
            "likely flaky (1.00, async-wait): 3 of 3 nearest known tests are flaky; shares "
        ),
        "{message}"
    );
    let data = &warning["data"];
    assert_eq!(data["testId"], SHIPMENT);
    assert_eq!(data["category"], "async-wait");
    assert_eq!(
        data["neighbors"][0]["id"],
        "org.known.ShipTest#waitsForDispatch"
    );
    assert_eq!(data["neighbors"][0]["project"], "known-flaky");
    assert!(
        data["sharedTokens"]
            .as_array()
            .is_some_and(|tokens| !tokens.is_empty())
    );
}

#[tokio::test]
async fn columns_count_bytes_when_the_client_offers_utf8() {
    let workspace = Workspace::new();
    let (mut client, result) = workspace
        .start_with(
            workspace.settings(),
            json!({"general": {"positionEncodings": ["utf-8", "utf-16"]}}),
            ClientBehaviour::default(),
        )
        .await;
    assert_eq!(result["capabilities"]["positionEncoding"], "utf-8");
    let text = fixture("OrderServiceTest.java");
    let uri = workspace.uri(ORDER_TEST);
    client.open(&uri, "java", 1, &text).await;
    let published = client.diagnostics(&uri, Some(1)).await;
    assert_eq!(
        published["diagnostics"][0]["range"],
        range_of(&text, "waitsForShipment", false)
    );

    // An edit in UTF-8 columns: insert right after the emoji (byte column, not UTF-16).
    let line = text.lines().position(|line| line.contains('😀')).unwrap();
    let column = text.lines().nth(line).unwrap().find(" shipment").unwrap();
    client
        .notify(
            "textDocument/didChange",
            json!({
                "textDocument": {"uri": uri, "version": 2},
                "contentChanges": [{"range": {"start": {"line": line, "character": column}, "end": {"line": line, "character": column}}, "text": "🚚"}],
            }),
        )
        .await;
    let edited = text.replacen(" shipment", "🚚 shipment", 1);
    let published = client.diagnostics(&uri, Some(2)).await;
    assert_eq!(
        published["diagnostics"][0]["range"],
        range_of(&edited, "waitsForShipment", false)
    );
}

#[tokio::test]
async fn the_server_defaults_to_utf16_and_announces_its_capabilities() {
    let workspace = Workspace::new();
    let (_client, result) = workspace
        .start_with(workspace.settings(), json!({}), ClientBehaviour::default())
        .await;
    let capabilities = &result["capabilities"];
    assert_eq!(capabilities["positionEncoding"], "utf-16");
    assert_eq!(capabilities["textDocumentSync"]["change"], 2, "incremental");
    assert_eq!(capabilities["hoverProvider"], true);
    let commands = capabilities["executeCommandProvider"]["commands"].clone();
    for command in [
        "flakesense.markFlaky",
        "flakesense.markNotFlaky",
        "flakesense.showSimilar",
    ] {
        assert!(
            commands.as_array().unwrap().contains(&json!(command)),
            "{commands}"
        );
    }
}

#[tokio::test]
async fn incremental_edits_move_add_and_remove_diagnostics() {
    let workspace = Workspace::new();
    let mut client = workspace.start().await;
    let mut text = fixture("OrderServiceTest.java");
    let uri = workspace.uri(ORDER_TEST);
    client.open(&uri, "java", 1, &text).await;
    assert_eq!(messages(&client.diagnostics(&uri, Some(1)).await).len(), 1);

    // Two changes in one notification, the second against the text the first left: two lines
    // above the class, then a new flaky-looking test at the end of the class body.
    let new_test = "\n    @Test\n    void waitsForRefund() throws Exception {\n        Thread.sleep(500);\n        assertTrue(latch.await(1, TimeUnit.SECONDS));\n    }\n";
    text.insert_str(text.find("class").unwrap(), "// orders\n// and shipments\n");
    let last_brace_line = text.lines().count() - 1;
    let closing = text.rfind("}\n").unwrap();
    text.insert_str(closing, &new_test[1..]);
    let class_line = fixture("OrderServiceTest.java")
        .lines()
        .position(|line| line.starts_with("class"))
        .unwrap();
    client
        .notify(
            "textDocument/didChange",
            json!({
                "textDocument": {"uri": uri, "version": 2},
                "contentChanges": [
                    edit((class_line, 0), (class_line, 0), "// orders\n// and shipments\n"),
                    edit((last_brace_line, 0), (last_brace_line, 0), &new_test[1..]),
                ],
            }),
        )
        .await;
    let published = client.diagnostics(&uri, Some(2)).await;
    let shipment = diagnostic_for(&published, SHIPMENT).expect("still flagged");
    assert_eq!(shipment["range"], range_of(&text, "waitsForShipment", true));
    let refund = diagnostic_for(&published, "org.example.OrderServiceTest#waitsForRefund")
        .expect("the new test is flagged");
    assert_eq!(refund["range"], range_of(&text, "waitsForRefund", true));

    // Replacing the sleep and the latch of the first test with plain arithmetic clears its
    // diagnostic.
    let body_start = text.find("        CountDownLatch latch").unwrap();
    let body_end = text[body_start..].find("    }\n").unwrap() + body_start;
    let first_line = text[..body_start].matches('\n').count();
    let last_line = text[..body_end].matches('\n').count();
    let replacement =
        "        Order order = new Order();\n        assertEquals(0.0, order.total(), 0.001);\n";
    text.replace_range(body_start..body_end, replacement);
    client
        .notify(
            "textDocument/didChange",
            json!({
                "textDocument": {"uri": uri, "version": 3},
                "contentChanges": [edit((first_line, 0), (last_line, 0), replacement)],
            }),
        )
        .await;
    let published = client.diagnostics(&uri, Some(3)).await;
    assert!(
        diagnostic_for(&published, SHIPMENT).is_none(),
        "{published:#}"
    );
    assert!(diagnostic_for(&published, "org.example.OrderServiceTest#waitsForRefund").is_some());
}

/// Fifty didChange notifications in one write, as fast as a client can send them: each inserts a
/// space at the start of the flagged test's line, so each version puts its name one column
/// further right. Returns the frames and the name's column at version 1.
fn burst_of_fifty_edits(uri: &str, text: &str) -> (Vec<u8>, u64) {
    let name = range_of(text, "waitsForShipment", true);
    let line = name["start"]["line"].as_u64().unwrap() as usize;
    let mut burst = Vec::new();
    for version in 2..=51 {
        let change = json!({
            "jsonrpc": "2.0",
            "method": "textDocument/didChange",
            "params": {
                "textDocument": {"uri": uri, "version": version},
                "contentChanges": [edit((line, 0), (line, 0), " ")],
            },
        });
        burst.extend(lsp_client::frame(&change));
    }
    (burst, name["start"]["character"].as_u64().unwrap())
}

/// The published versions and the column of the flagged test's name in each.
fn published_columns(published: &[Value]) -> Vec<(i64, u64)> {
    published
        .iter()
        .map(|message| {
            let params = &message["params"];
            let diagnostic = diagnostic_for(params, SHIPMENT).expect("the test stays flagged");
            (
                params["version"].as_i64().unwrap(),
                diagnostic["range"]["start"]["character"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[tokio::test]
async fn a_burst_of_fifty_edits_is_judged_once_after_the_debounce() {
    let workspace = Workspace::new();
    let mut settings = workspace.settings();
    settings["debounceMs"] = json!(300);
    let (mut client, _) = workspace
        .start_with(settings, json!({}), ClientBehaviour::default())
        .await;
    let text = fixture("OrderServiceTest.java");
    let uri = workspace.uri(ORDER_TEST);
    client.open(&uri, "java", 1, &text).await;
    client.diagnostics(&uri, Some(1)).await;

    let (burst, column) = burst_of_fifty_edits(&uri, &text);
    client.send_raw(&burst).await;
    let last = client.diagnostics(&uri, Some(51)).await;
    let shipment = diagnostic_for(&last, SHIPMENT).expect("still flagged");
    assert_eq!(shipment["range"]["start"]["character"], column + 50);
    client.collect_for(Duration::from_millis(100)).await;
    let others = published_columns(&client.take("textDocument/publishDiagnostics"));
    assert!(
        others.is_empty(),
        "intermediate versions published: {others:?}"
    );
}

// Two worker threads, as the real server has on this machine: analyses and edits interleave.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_result_of_an_overtaken_version_is_published_during_a_burst() {
    let workspace = Workspace::new();
    let mut settings = workspace.settings();
    // No debounce: every edit starts an analysis, and most are overtaken while they run.
    settings["debounceMs"] = json!(0);
    let (mut client, _) = workspace
        .start_with(settings, json!({}), ClientBehaviour::default())
        .await;
    let text = fixture("OrderServiceTest.java");
    let uri = workspace.uri(ORDER_TEST);
    client.open(&uri, "java", 1, &text).await;
    client.diagnostics(&uri, Some(1)).await;

    let (burst, column) = burst_of_fifty_edits(&uri, &text);
    client.send_raw(&burst).await;
    client
        .collect_until(
            "version 51's diagnostics",
            |message| message["params"]["version"] == 51,
            Duration::from_secs(20),
        )
        .await;
    client.collect_for(Duration::from_millis(100)).await;
    let columns = published_columns(&client.take("textDocument/publishDiagnostics"));
    assert!(columns.len() <= 50, "{columns:?}");
    // A version may be published twice: the workspace's tests, read in the background at start,
    // change the prior's shares and re-judge the open document at its current version.
    for pair in columns.windows(2) {
        assert!(
            pair[0].0 <= pair[1].0,
            "published out of order: {columns:?}"
        );
    }
    for (version, published_column) in &columns {
        assert_eq!(
            *published_column,
            column + (*version as u64 - 1),
            "the diagnostics of version {version} describe another version's text"
        );
    }
    assert_eq!(columns.last().map(|(version, _)| *version), Some(51));
}

#[tokio::test]
async fn closing_a_document_clears_its_diagnostics() {
    let workspace = Workspace::new();
    let mut client = workspace.start().await;
    let uri = workspace.uri(ORDER_TEST);
    client
        .open(&uri, "java", 1, &fixture("OrderServiceTest.java"))
        .await;
    assert_eq!(messages(&client.diagnostics(&uri, Some(1)).await).len(), 1);
    client
        .notify(
            "textDocument/didClose",
            json!({"textDocument": {"uri": uri}}),
        )
        .await;
    let cleared = client.diagnostics(&uri, None).await;
    assert_eq!(cleared["diagnostics"], json!([]));
}
