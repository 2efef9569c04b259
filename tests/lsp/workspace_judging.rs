//! Judging with the whole workspace in view: a signal weighed against the workspace's tests, a
//! document judged again once they are read, a file of many tests, and editing a helper.

use std::time::Duration;

use serde_json::{Value, json};

use flakesense::index::Index;
use flakesense::prior::SignalPrior;

use crate::lsp_client::{ClientBehaviour, LspClient, read_the_workspace};
use crate::{ORDER_TEST, REFUND_TEST, Workspace, edit, messages};

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
        .save(
            flakesense::files::write::Place::Named,
            &workspace.path("prior.idx"),
        )
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

/// A server started on a workspace of 29 other tests, `sleeping` of which sleep, with a sleeping
/// test opened once the server has read the workspace: the workspace, the client, the log line
/// of the count, the opened test's URI and its text.
async fn opened_among(sleeping: usize) -> (Workspace, LspClient, Value, String, String) {
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
    let uri = workspace.uri("src/test/java/OpenedTest.java");
    client.open(&uri, "java", 1, &opened).await;
    (workspace, client, read, uri, opened)
}

/// A sleeping test opened where the 29 other tests sleep too: a sleep is common there, so it is
/// not warned. The workspace, the client, the opened test's URI and its text.
async fn a_sleeping_test_among_sleepers() -> (Workspace, LspClient, String, String) {
    let (workspace, mut client, _, uri, opened) = opened_among(29).await;
    assert_eq!(
        messages(&client.diagnostics(&uri, Some(1)).await),
        Vec::<String>::new()
    );
    (workspace, client, uri, opened)
}

/// The first publication with a warning for `uri`.
async fn first_warning(client: &mut LspClient, uri: &str) -> Value {
    client
        .wait_for(
            "a warning on the opened test",
            |message| {
                message["method"] == "textDocument/publishDiagnostics"
                    && message["params"]["uri"] == uri
                    && !messages(&message["params"]).is_empty()
            },
            Duration::from_secs(20),
        )
        .await
}

/// Opens a sleeping test once the server has read the workspace (29 other tests, `sleeping` of
/// which sleep) and returns its diagnostics.
async fn judged_in_a_workspace_where(sleeping: usize) -> Value {
    let (_workspace, mut client, read, uri, _) = opened_among(sleeping).await;
    assert!(
        read["params"]["message"]
            .as_str()
            .unwrap()
            .starts_with("read the 30 tests of the workspace"),
        "{read}"
    );
    client.diagnostics(&uri, Some(1)).await
}

#[tokio::test]
async fn a_signal_every_workspace_test_has_is_weighed_against_the_workspace() {
    // Where sleeping is rare, the sleeping test is flagged; where every test sleeps, not. A sleep
    // alone is no mechanism, so it is information, never a warning.
    let rare = judged_in_a_workspace_where(1).await;
    assert_eq!(messages(&rare).len(), 1, "{rare:#}");
    assert_eq!(
        rare["diagnostics"][0]["severity"], 3,
        "information: {rare:#}"
    );
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
async fn excluding_files_in_the_settings_file_counts_the_workspace_again() {
    // Every other test sleeps, so a sleep is common here and the opened test is not warned; once
    // flakesense.toml excludes them, the sleep is rare among the tests left, as `check` would
    // count them, and the warning comes.
    let (workspace, mut client, uri, opened) = a_sleeping_test_among_sleepers().await;
    workspace.write(
        "flakesense.toml",
        "exclude = [\"src/test/java/OthersTest.java\"]\n",
    );
    // The settings file is looked at when a document is next judged.
    client
        .notify(
            "textDocument/didChange",
            json!({
                "textDocument": {"uri": uri, "version": 2},
                "contentChanges": [{"text": format!("{opened}\n")}],
            }),
        )
        .await;
    let recounted = client
        .wait_for(
            "the log line of the second count",
            read_the_workspace,
            Duration::from_secs(20),
        )
        .await;
    assert!(
        recounted["params"]["message"]
            .as_str()
            .unwrap()
            .starts_with("read the 1 tests of the workspace"),
        "{recounted}"
    );
    let warned = first_warning(&mut client, &uri).await;
    assert_eq!(warned["params"]["version"], 2, "{warned:#}");
}

#[tokio::test]
async fn saving_test_files_counts_the_workspace_again() {
    // Every other test sleeps, so the opened sleeping test is not warned. The user rewrites them
    // without sleeps and saves: the sleep is now rare among the tests on disk, as `check` would
    // count them, and the warning comes without a restart.
    let (workspace, mut client, uri, _) = a_sleeping_test_among_sleepers().await;
    workspace.write(
        "src/test/java/OthersTest.java",
        &java_tests("OthersTest", 29, 0),
    );
    client
        .notify(
            "textDocument/didSave",
            json!({"textDocument": {"uri": workspace.uri("src/test/java/OthersTest.java")}}),
        )
        .await;
    client
        .wait_for(
            "the log line of the count after the save",
            read_the_workspace,
            Duration::from_secs(20),
        )
        .await;
    let warned = first_warning(&mut client, &uri).await;
    let warnings = messages(&warned["params"]);
    assert_eq!(warnings.len(), 1, "{warned:#}");
    assert!(
        warnings[0].starts_with("likely flaky")
            && warnings[0].contains("fixed sleep `Thread.sleep"),
        "{warned:#}"
    );
}

#[tokio::test]
async fn a_file_of_many_tests_gets_a_diagnostic_on_each_flagged_test_and_keeps_them_on_edit() {
    // Forty tests are judged together (on every core); each warning must land on its own test.
    let workspace = Workspace::new();
    sleep_prior_model()
        .save(
            flakesense::files::write::Place::Named,
            &workspace.path("prior.idx"),
        )
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
        .save(
            flakesense::files::write::Place::Named,
            &workspace.path("prior.idx"),
        )
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
