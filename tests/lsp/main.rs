//! The language server end to end: a client speaking JSON-RPC to it over an in-memory pipe, a
//! test of the real binary over its standard input and output, and one with Neovim as the
//! client.
//!
//! The workspaces use a small model built from `tests/fixtures/lsp/known_tests.csv` (four flaky
//! async-wait tests, five stable ones) with the shipped default models turned off, so every
//! expected verdict follows from that file.

#[path = "../lsp_client/mod.rs"]
mod lsp_client;

mod diagnostics;
mod hover_and_code_actions;
mod index_and_settings;
mod marks;
mod real_clients;
mod surroundings;
mod workspace_judging;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};

use flakesense::dataset::read_csv_file;
use flakesense::embed::{TokenBag, Tokenizer};
use flakesense::index::{BuildSettings, Dims, Entry, Index, Label};
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
            .save(
                flakesense::files::write::Place::Named,
                &workspace.path("known.idx"),
            )
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

const SHIPMENT: &str = "org.example.OrderServiceTest#waitsForShipment";
const ORDER_TOTAL: &str = "org.example.OrderServiceTest#computesOrderTotal";
const REFUND_TOTAL: &str = "org.example.RefundTest#computesRefundTotal";
