//! What a Python test runs and how pytest finds it live in other files (`conftest.py`, pytest's
//! settings): saving one of them, or a change the client watched on disk, judges the open tests
//! again; a change no client reported applies when the test file is next judged.

use std::time::Duration;

use serde_json::{Value, json};

use flakesense::index::Index;
use flakesense::language::Language;
use flakesense::prior::SignalPrior;

use crate::lsp_client::{ClientBehaviour, LspClient};
use crate::{ORDER_TEST, REFUND_TEST, Workspace, messages};

/// A workspace of no Java tests judged by a model of no tests whose Python prior warns on a
/// fixed sleep, in the test's own code or in what it runs, holding `files` (path, text); a client
/// of these `capabilities` attached to it.
async fn sleepy_python_workspace(
    capabilities: Value,
    files: &[(&str, &str)],
) -> (Workspace, LspClient) {
    let workspace = Workspace::new();
    std::fs::remove_file(workspace.path(ORDER_TEST)).unwrap();
    std::fs::remove_file(workspace.path(REFUND_TEST)).unwrap();
    for (path, text) in files {
        workspace.write(path, text);
    }
    let mut model = Index::empty(flakesense::workspace::new_index_params());
    model.set_priors(vec![SignalPrior {
        language: Language::Python,
        bias: -3.0,
        weights: vec![
            ("fixed-sleep".to_string(), 6.0),
            ("fixed-sleep@context".to_string(), 6.0),
        ],
        share_weights: Vec::new(),
        typical_shares: Vec::new(),
        information_probability: 0.5,
        warning_probability: 0.8,
        category_evidence: Vec::new(),
    }]);
    model
        .save(
            flakesense::files::write::Place::Named,
            &workspace.path("prior.idx"),
        )
        .expect("the model saves");
    let settings = json!({"defaultModels": false, "models": ["prior.idx"], "debounceMs": 0});
    let (client, _) = workspace
        .start_with(settings, capabilities, ClientBehaviour::default())
        .await;
    (workspace, client)
}

async fn saved(client: &LspClient, uri: &str) {
    client
        .notify(
            "textDocument/didSave",
            json!({"textDocument": {"uri": uri}}),
        )
        .await;
}

/// The one diagnostic message published for `uri` at `version`.
async fn the_one_warning(client: &mut LspClient, uri: &str, version: i64) -> String {
    let mut published = messages(&client.diagnostics(uri, Some(version)).await);
    assert_eq!(published.len(), 1, "{published:?}");
    published.remove(0)
}

/// Asserts that `uri` is published at `version` without a diagnostic.
async fn assert_unwarned(client: &mut LspClient, uri: &str, version: i64, why: &str) {
    assert_eq!(
        messages(&client.diagnostics(uri, Some(version)).await),
        Vec::<String>::new(),
        "{why}"
    );
}

#[tokio::test]
async fn saving_a_conftest_judges_again_the_tests_that_take_its_fixtures() {
    let (workspace, mut client) = sleepy_python_workspace(json!({}), &[]).await;
    let fixture = |body: &str| {
        format!("import pytest\nimport time\n\n@pytest.fixture\ndef server():\n    {body}\n")
    };
    workspace.write("tests/conftest.py", &fixture("return 1"));
    let text = "def test_order(server):\n    assert server == 1\n";
    let uri = workspace.uri("tests/test_shop.py");
    client.open(&uri, "python", 1, text).await;
    assert_unwarned(&mut client, &uri, 1, "").await;

    // The fixture now waits, written by the editor (or by a checkout) and saved.
    workspace.write("tests/conftest.py", &fixture("time.sleep(2)"));
    saved(&client, &workspace.uri("tests/conftest.py")).await;
    let warning = the_one_warning(&mut client, &uri, 1).await;
    assert!(
        warning.contains("fixed sleep `time.sleep(2)` in fixture `server`"),
        "{warning}"
    );

    // And back: the warning goes with the sleep.
    workspace.write("tests/conftest.py", &fixture("return 1"));
    saved(&client, &workspace.uri("tests/conftest.py")).await;
    assert_unwarned(&mut client, &uri, 1, "").await;
}

#[tokio::test]
async fn saving_pytest_settings_judges_again_which_functions_are_tests() {
    let (workspace, mut client) = sleepy_python_workspace(json!({}), &[]).await;
    let text = "import time\n\ndef check_refund():\n    time.sleep(1)\n";
    let uri = workspace.uri("tests/test_refund.py");
    client.open(&uri, "python", 1, text).await;
    assert_unwarned(
        &mut client,
        &uri,
        1,
        "pytest collects `test*` functions by default",
    )
    .await;

    workspace.write("pytest.ini", "[pytest]\npython_functions = check_*\n");
    saved(&client, &workspace.uri("pytest.ini")).await;
    let warning = the_one_warning(&mut client, &uri, 1).await;
    assert!(warning.contains("fixed sleep `time.sleep(1)`"), "{warning}");
}

#[tokio::test]
async fn pytest_settings_edited_unseen_by_the_client_apply_at_the_next_edit() {
    // A client that neither saves nor watches the configuration file: the server learns of the
    // change only by looking, the next time it judges the test file.
    let (workspace, mut client) = sleepy_python_workspace(json!({}), &[]).await;
    let text = "import time\n\ndef check_refund():\n    time.sleep(1)\n";
    let uri = workspace.uri("tests/test_refund.py");
    client.open(&uri, "python", 1, text).await;
    assert_unwarned(&mut client, &uri, 1, "").await;

    workspace.write("tests/pytest.ini", "[pytest]\npython_functions = check_*\n");
    client
        .notify(
            "textDocument/didChange",
            json!({
                "textDocument": {"uri": uri, "version": 2},
                "contentChanges": [{"text": format!("{text}\n")}],
            }),
        )
        .await;
    let warning = the_one_warning(&mut client, &uri, 2).await;
    assert!(warning.contains("fixed sleep `time.sleep(1)`"), "{warning}");
}

#[tokio::test]
async fn a_conftest_changed_on_disk_judges_again_the_tests_of_a_client_that_watches_files() {
    let text = "def test_order(server):\n    assert server\n";
    let (workspace, mut client) =
        sleepy_python_workspace(watching(), &[("tests/test_shop.py", text)]).await;
    let registration = client
        .wait_for(
            "the registration of the file watchers",
            |message| message["method"] == "client/registerCapability",
            Duration::from_secs(20),
        )
        .await;
    let registered = &registration["params"]["registrations"][0];
    assert_eq!(registered["method"], "workspace/didChangeWatchedFiles");
    let globs: Vec<&str> = registered["registerOptions"]["watchers"]
        .as_array()
        .expect("watchers")
        .iter()
        .filter_map(|watcher| watcher["globPattern"].as_str())
        .collect();
    assert!(globs.contains(&"**/conftest.py"), "{globs:?}");
    assert!(globs.contains(&"**/pyproject.toml"), "{globs:?}");

    let uri = workspace.uri("tests/test_shop.py");
    client.open(&uri, "python", 1, text).await;
    assert_unwarned(&mut client, &uri, 1, "").await;
    // A checkout brings a conftest.py whose fixture sleeps; the editor never opened it.
    workspace.write(
        "tests/conftest.py",
        "import pytest\nimport time\n\n@pytest.fixture\ndef server():\n    time.sleep(3)\n    return 1\n",
    );
    client
        .notify(
            "workspace/didChangeWatchedFiles",
            json!({"changes": [{"uri": workspace.uri("tests/conftest.py"), "type": 1}]}),
        )
        .await;
    let warning = the_one_warning(&mut client, &uri, 1).await;
    assert!(
        warning.contains("fixed sleep `time.sleep(3)` in fixture `server`"),
        "{warning}"
    );
}

#[tokio::test]
async fn no_file_watchers_are_asked_of_a_client_that_cannot_register_them_nor_without_python_tests()
{
    let python = [("tests/test_shop.py", "def test_a():\n    pass\n")];
    let (_workspace, mut client) = sleepy_python_workspace(json!({}), &python).await;
    client.collect_for(Duration::from_millis(300)).await;
    assert!(client.take("client/registerCapability").is_empty());

    let java = [(
        "src/test/java/ATest.java",
        "class ATest {\n    @Test\n    void a() {}\n}\n",
    )];
    let (_workspace, mut client) = sleepy_python_workspace(watching(), &java).await;
    client.collect_for(Duration::from_millis(300)).await;
    assert!(
        client.take("client/registerCapability").is_empty(),
        "a project without Python tests has no conftest.py to watch"
    );
}

/// The capabilities of a client that lets the server register file watchers.
fn watching() -> Value {
    json!({"workspace": {"didChangeWatchedFiles": {"dynamicRegistration": true}}})
}
