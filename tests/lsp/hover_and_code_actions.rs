//! What the server offers on a test's name: the hover (score, neighbours, shared tokens) and the
//! code actions (mark, ignore, fix hint, confirm).

use std::time::Duration;

use serde_json::{Value, json};

use crate::lsp_client::LspClient;
use crate::{ORDER_TEST, SHIPMENT, Workspace, fixture, range_of};

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
    // Every action has the kind the server advertises: VS Code drops an action without one when
    // it asks for quick fixes only.
    for offered in &actions {
        assert_eq!(offered["kind"], "quickfix", "{offered}");
    }
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

/// Applies LSP text edits (ASCII text: characters are bytes) to `text`, last first.
fn apply_edits(text: &str, edits: &[Value]) -> String {
    let offset = |position: &Value| -> usize {
        let line = position["line"].as_u64().unwrap() as usize;
        let character = position["character"].as_u64().unwrap() as usize;
        text.split_inclusive('\n')
            .take(line)
            .map(str::len)
            .sum::<usize>()
            + character
    };
    let mut sorted: Vec<&Value> = edits.iter().collect();
    sorted.sort_by_key(|edit| std::cmp::Reverse(offset(&edit["range"]["start"])));
    let mut fixed = text.to_string();
    for edit in sorted {
        let (start, end) = (
            offset(&edit["range"]["start"]),
            offset(&edit["range"]["end"]),
        );
        fixed.replace_range(start..end, edit["newText"].as_str().unwrap());
    }
    fixed
}

#[tokio::test]
async fn a_warning_with_a_mechanical_cure_offers_its_fix_and_the_fix_cures_it() {
    let workspace = Workspace::new();
    let path = "src/test/java/fixes/FixesTest.java";
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/fix/src/test/java/fixes/FixesTest.java"),
    )
    .expect("the fixture reads");
    workspace.write(path, &text);
    // The shipped models, whose prior weighs mechanisms: the fixture model has none.
    let settings = json!({"k": 3, "debounceMs": 10});
    let mut client = workspace
        .start_with(settings, json!({}), Default::default())
        .await
        .0;
    let uri = workspace.uri(path);
    client.open(&uri, "java", 1, &text).await;
    let published = client.diagnostics(&uri, Some(1)).await;
    let warned = |published: &Value, id: &str| {
        published["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .any(|diagnostic| diagnostic["data"]["testId"] == id && diagnostic["severity"] == 2)
    };
    assert!(
        warned(&published, "fixes.FixesTest#receivesAfterSleep"),
        "{published:#}"
    );

    let actions = code_actions(
        &mut client,
        &uri,
        &text,
        "receivesAfterSleep",
        published["diagnostics"].clone(),
    )
    .await;
    // The fix comes first and is the preferred one; the hint in words is still there.
    let fix = &actions[0];
    assert_eq!(
        fix["title"],
        "Fix: Wait for the assertion to hold (up to 30 s) instead of a fixed sleep"
    );
    assert_eq!(fix["isPreferred"], true);
    assert_eq!(fix["kind"], "quickfix");
    action(&actions, "How to fix async-wait flakiness");
    let edits = fix["edit"]["changes"][uri.as_str()].as_array().unwrap();
    let fixed = apply_edits(&text, edits);
    assert!(!fixed.contains("Thread.sleep(100);\n        assertEquals(1, received.size());"));
    assert!(fixed.contains("catch (AssertionError notYet)"), "{fixed}");

    // Once the editor applies the edit, the warning goes (the poll's own sleep and clock read
    // may leave a note below the warning threshold); the other tests keep theirs.
    client
        .notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": fixed}]}),
        )
        .await;
    let published = client.diagnostics(&uri, Some(2)).await;
    assert!(
        !warned(&published, "fixes.FixesTest#receivesAfterSleep"),
        "{published:#}"
    );
    assert!(
        warned(&published, "fixes.FixesTest#readsBeforeAsserting"),
        "{published:#}"
    );

    // A test whose cure is not mechanical has no fix, only the hint.
    let actions = code_actions(
        &mut client,
        &uri,
        &fixed,
        "readsBeforeAsserting",
        published["diagnostics"].clone(),
    )
    .await;
    assert!(
        !titles(&actions)
            .iter()
            .any(|title| title.starts_with("Fix:")),
        "{:?}",
        titles(&actions)
    );
}
