//! Marking a test flaky or not: the workspace index it writes, the similar tests it flags, the
//! diagnostics it publishes before it answers, and showing the similar tests.

use std::time::Duration;

use serde_json::{Value, json};

use flakesense::index::{Index, Label, Origin};

use crate::lsp_client::{ClientBehaviour, LspClient};
use crate::{
    ORDER_TEST, ORDER_TOTAL, REFUND_TEST, REFUND_TOTAL, SHIPMENT, Workspace, diagnostic_for,
    fixture, range_of,
};

#[tokio::test]
async fn marking_a_test_flaky_flags_a_similar_test_and_survives_a_restart() {
    let workspace = Workspace::new();
    let mut client = workspace.start().await;
    let order_text = fixture("OrderServiceTest.java");
    let refund_text = fixture("RefundTest.java");
    let order_uri = workspace.uri(ORDER_TEST);
    let refund_uri = workspace.uri(REFUND_TEST);
    client.open(&order_uri, "java", 1, &order_text).await;
    client.open(&refund_uri, "java", 1, &refund_text).await;
    client.diagnostics(&order_uri, Some(1)).await;
    let refund = client.diagnostics(&refund_uri, Some(1)).await;
    assert_eq!(
        refund["diagnostics"],
        json!([]),
        "the refund test looks stable at first"
    );

    let response = client
        .request(
            "workspace/executeCommand",
            json!({"command": "flakesense.markFlaky", "arguments": [order_uri, ORDER_TOTAL, "order-dependency"]}),
        )
        .await;
    assert_eq!(response["result"]["flaky"], true, "{response}");
    let index_path = workspace.path(".flakesense/index");
    let index = Index::load(&index_path).expect("the workspace index was written");
    let entry = index.entry(index.position(ORDER_TOTAL).expect("marked"));
    assert_eq!(entry.label(), Label::Flaky);
    assert_eq!(entry.origin(), Origin::Manual);
    assert_eq!(
        entry.project(),
        workspace.root().file_name().unwrap().to_str().unwrap()
    );
    assert_eq!(entry.path(), Some(ORDER_TEST));
    assert_eq!(
        entry.categories(),
        [flakesense::category::Category::OrderDependency]
    );

    // Both open documents are judged again at once: the marked test, and the similar one in
    // the other file, whose nearest neighbour is now a flaky test of this workspace.
    let order = client.diagnostics(&order_uri, Some(1)).await;
    let marked = diagnostic_for(&order, ORDER_TOTAL).expect("the marked test is flagged");
    assert!(
        marked["message"]
            .as_str()
            .unwrap()
            .contains("marked flaky in this workspace"),
        "{marked}"
    );
    let refund = client.diagnostics(&refund_uri, Some(1)).await;
    let similar = diagnostic_for(&refund, REFUND_TOTAL).expect("the similar test is flagged now");
    assert_eq!(similar["code"], "order-dependency");
    assert!(
        similar["message"]
            .as_str()
            .unwrap()
            .contains("1 of 3 nearest known tests are flaky"),
        "{similar}"
    );
    // Its evidence points at the marked test in the workspace.
    let related = &similar["relatedInformation"][0];
    assert_eq!(related["location"]["uri"], order_uri.as_str());
    assert_eq!(
        related["location"]["range"],
        range_of(&order_text, "computesOrderTotal", true)
    );
    assert!(related["message"].as_str().unwrap().contains(ORDER_TOTAL));

    // The label survives a restart: a new server on the same workspace flags the similar test.
    client.shutdown_and_exit().await;
    let mut client = workspace.start().await;
    client.open(&refund_uri, "java", 1, &refund_text).await;
    let refund = client.diagnostics(&refund_uri, Some(1)).await;
    assert!(
        diagnostic_for(&refund, REFUND_TOTAL).is_some(),
        "{refund:#}"
    );

    // Marking it not flaky (the marked test is not open in this server: it is read from disk)
    // clears the similar test again.
    client.open(&order_uri, "java", 1, &order_text).await;
    client.diagnostics(&order_uri, Some(1)).await;
    let response = client
        .request(
            "workspace/executeCommand",
            json!({"command": "flakesense.markNotFlaky", "arguments": [order_uri, ORDER_TOTAL]}),
        )
        .await;
    assert_eq!(response["result"]["flaky"], false, "{response}");
    let refund = loop {
        let refund = client.diagnostics(&refund_uri, Some(1)).await;
        if diagnostic_for(&refund, REFUND_TOTAL).is_none() {
            break refund;
        }
    };
    assert_eq!(refund["diagnostics"], json!([]));
    let index = Index::load(&index_path).expect("still readable");
    assert_eq!(index.len(), 1, "relabelled, not added twice");
    assert_eq!(index.entry(0).label(), Label::Stable);
}

/// A server with both fixture documents open and judged, and no publication left queued.
async fn two_documents_judged(workspace: &Workspace) -> (LspClient, String, String) {
    let mut client = workspace.start().await;
    let order_uri = workspace.uri(ORDER_TEST);
    let refund_uri = workspace.uri(REFUND_TEST);
    client
        .open(&order_uri, "java", 1, &fixture("OrderServiceTest.java"))
        .await;
    client
        .open(&refund_uri, "java", 1, &fixture("RefundTest.java"))
        .await;
    client.diagnostics(&order_uri, Some(1)).await;
    client.diagnostics(&refund_uri, Some(1)).await;
    client.take("textDocument/publishDiagnostics");
    (client, order_uri, refund_uri)
}

/// The mark command of a round: flaky in even rounds, not flaky in odd ones.
fn mark_of_round(round: usize, order_uri: &str) -> (bool, Value) {
    let flaky = round.is_multiple_of(2);
    let command = if flaky {
        "flakesense.markFlaky"
    } else {
        "flakesense.markNotFlaky"
    };
    (
        flaky,
        json!({"command": command, "arguments": [order_uri, ORDER_TOTAL]}),
    )
}

/// Checks that the latest publication of each document among those that came before a mark's
/// reply shows the mark: the marked test flagged when it is flaky, and the similar test in the
/// other document flagged exactly while the marked test is flaky.
fn assert_published_before_the_reply(
    published: &[Value],
    round: usize,
    flaky: bool,
    order_uri: &str,
    refund_uri: &str,
) {
    let latest = |uri: &str| {
        published
            .iter()
            .rev()
            .find(|message| message["params"]["uri"] == uri)
            .unwrap_or_else(|| {
                panic!("round {round}: no publication of {uri} before the reply: {published:#?}")
            })
    };
    let order = latest(order_uri);
    if flaky {
        assert!(
            diagnostic_for(&order["params"], ORDER_TOTAL).is_some(),
            "round {round}: {order:#}"
        );
    }
    let refund = latest(refund_uri);
    assert_eq!(
        diagnostic_for(&refund["params"], REFUND_TOTAL).is_some(),
        flaky,
        "round {round}: {refund:#}"
    );
}

/// The new diagnostics of a mark reach the client before the reply to the command, so that a
/// client that handles the reply and drops what came with it (Emacs 28's jsonrpc.el) is not left
/// with the old ones until the next edit. tower-lsp-server lets a reply overtake notifications
/// now and then (about half the time when the server does not wait for the transport to relay
/// them), so the test marks the test flaky and not flaky in turn, many times; in each round the
/// latest publications before the reply must show that round's label.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_mark_publishes_the_new_diagnostics_before_it_answers() {
    let workspace = Workspace::new();
    let (mut client, order_uri, refund_uri) = two_documents_judged(&workspace).await;
    for round in 0..20 {
        let (flaky, params) = mark_of_round(round, &order_uri);
        let response = client.request("workspace/executeCommand", params).await;
        assert_eq!(response["result"]["flaky"], flaky, "{response}");
        let published = client.take("textDocument/publishDiagnostics");
        assert_published_before_the_reply(&published, round, flaky, &order_uri, &refund_uri);
    }
}

/// Something that judges every document again while a mark's own analyses run (the workspace's
/// tests read at start-up, in the Emacs checks; a change of settings here) replaces those
/// analyses; the mark still answers only after the documents' new diagnostics. The settings
/// change is sent as soon as the server logs the mark, just before it judges the documents.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mark_whose_analyses_are_replaced_still_publishes_before_it_answers() {
    let workspace = Workspace::new();
    let (mut client, order_uri, refund_uri) = two_documents_judged(&workspace).await;
    for round in 0..20 {
        let (flaky, params) = mark_of_round(round, &order_uri);
        let id = format!("mark-{round}");
        client
            .send(json!({"jsonrpc": "2.0", "id": id, "method": "workspace/executeCommand", "params": params}))
            .await;
        client
            .collect_until(
                "the log line of the mark",
                |message| {
                    message["method"] == "window/logMessage"
                        && message["params"]["message"]
                            .as_str()
                            .is_some_and(|text| text.starts_with("marked "))
                },
                Duration::from_secs(20),
            )
            .await;
        client
            .notify(
                "workspace/didChangeConfiguration",
                json!({"settings": null}),
            )
            .await;
        let response = client
            .wait_for(
                "the reply to the mark",
                |message| message["id"] == id.as_str() && message.get("method").is_none(),
                Duration::from_secs(20),
            )
            .await;
        assert_eq!(response["result"]["flaky"], flaky, "{response}");
        let published = client.take("textDocument/publishDiagnostics");
        assert_published_before_the_reply(&published, round, flaky, &order_uri, &refund_uri);
        client.take("window/logMessage");
    }
}

#[tokio::test]
async fn show_similar_opens_workspace_neighbours_and_describes_known_ones() {
    let workspace = Workspace::new();
    let (mut client, _) = workspace
        .start_with(
            workspace.settings(),
            json!({"window": {"showDocument": {"support": true}}}),
            ClientBehaviour::default(),
        )
        .await;
    let order_text = fixture("OrderServiceTest.java");
    let refund_text = fixture("RefundTest.java");
    let order_uri = workspace.uri(ORDER_TEST);
    let refund_uri = workspace.uri(REFUND_TEST);
    client.open(&order_uri, "java", 1, &order_text).await;
    client.diagnostics(&order_uri, Some(1)).await;

    // A known flaky neighbour from a model: described in a message, with what it shares.
    let response = client
        .request(
            "workspace/executeCommand",
            json!({"command": "flakesense.showSimilar", "arguments": [order_uri, SHIPMENT]}),
        )
        .await;
    let known = &response["result"]["known"];
    assert_eq!(known[0]["id"], "org.known.ShipTest#waitsForDispatch");
    assert!(
        known[0]["code"]
            .as_str()
            .unwrap()
            .contains("Thread.sleep(500)")
    );
    let shown = client
        .wait_for(
            "the similar tests",
            |message| message["method"] == "window/showMessage",
            Duration::from_secs(5),
        )
        .await;
    let message = shown["params"]["message"].as_str().unwrap();
    assert!(
        message.contains("org.known.ShipTest#waitsForDispatch (known-flaky; flaky; async-wait;"),
        "{message}"
    );
    assert!(message.contains("shares "), "{message}");

    // A workspace neighbour: marked flaky in another file, opened at its name.
    client
        .request(
            "workspace/executeCommand",
            json!({"command": "flakesense.markFlaky", "arguments": [order_uri, ORDER_TOTAL]}),
        )
        .await;
    client.open(&refund_uri, "java", 1, &refund_text).await;
    client.diagnostics(&refund_uri, Some(1)).await;
    let response = client
        .request(
            "workspace/executeCommand",
            json!({"command": "flakesense.showSimilar", "arguments": [refund_uri, REFUND_TOTAL]}),
        )
        .await;
    assert_eq!(
        response["result"]["workspace"][0]["id"], ORDER_TOTAL,
        "{response}"
    );
    let request = client
        .wait_for(
            "window/showDocument",
            |message| message["method"] == "window/showDocument",
            Duration::from_secs(5),
        )
        .await;
    assert_eq!(request["params"]["uri"], order_uri.as_str());
    assert_eq!(
        request["params"]["selection"],
        range_of(&order_text, "computesOrderTotal", true)
    );

    // Bad arguments are an error for the client, not a crash.
    let response = client
        .request(
            "workspace/executeCommand",
            json!({"command": "flakesense.showSimilar", "arguments": [refund_uri, "no#such"]}),
        )
        .await;
    assert!(
        response["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no test `no#such`"),
        "{response}"
    );
    let response = client
        .request(
            "workspace/executeCommand",
            json!({"command": "flakesense.markFlaky", "arguments": []}),
        )
        .await;
    assert!(response.get("error").is_some(), "{response}");
}
