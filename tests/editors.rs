//! The editors' side of the server's contract: the VS Code extension declares every setting the
//! server reads, with its defaults; and Emacs, through the configuration in `editors/emacs/`,
//! shows what the server says, by its checks (`editors/emacs/check/run.sh`), which drive eglot
//! alone, eglot through the multiplexer rassumfrassum, and lsp-mode against this build of the
//! server as a user would. The Neovim client is tested in `tests/lsp/real_clients.rs`; the VS
//! Code extension inside VS Code by `editors/vscode/e2e/`.
//!
//! Without Emacs its test says so and passes; `.ci/run` installs it with eglot, lsp-mode and rass.

mod common;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use serde::de::{self, Deserializer, Visitor};
use serde_json::{Value, json};

use flakesense::analysis::Thresholds;
use flakesense::config::{Config, DEFAULT_DEBOUNCE_MS};

/// A deserializer that only asks a struct for the names of its fields, which serde hands to
/// `deserialize_struct`: the keys of `flakesense.toml`, in kebab-case.
struct FieldNames<'a>(&'a mut Vec<&'static str>);

impl<'de> Deserializer<'de> for FieldNames<'_> {
    type Error = de::value::Error;

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        _visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.0.extend(fields);
        Err(de::Error::custom("only the field names were asked for"))
    }

    fn deserialize_any<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value, Self::Error> {
        Err(de::Error::custom("not a struct"))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
        ignored_any
    }
}

/// The server's settings as editors send them: the fields of [`Config`] in camelCase.
fn server_setting_keys() -> BTreeSet<String> {
    let mut fields = Vec::new();
    let _ = <Config as serde::Deserialize>::deserialize(FieldNames(&mut fields));
    assert!(!fields.is_empty(), "Config is read as a struct");
    fields
        .iter()
        .map(|field| {
            let mut words = field.split('-');
            let first = words.next().unwrap_or_default().to_string();
            words.fold(first, |mut camel, word| {
                let mut letters = word.chars();
                camel.extend(letters.next().map(|letter| letter.to_ascii_uppercase()));
                camel.extend(letters);
                camel
            })
        })
        .collect()
}

/// The VS Code extension declares every setting of the server, with the server's default, and
/// sends them under the server's names (its unit tests tie its list of keys to package.json).
#[test]
fn the_vs_code_extension_declares_every_server_setting_with_its_default() {
    let manifest: Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("editors/vscode/package.json"),
        )
        .expect("editors/vscode/package.json"),
    )
    .expect("JSON");
    let properties = manifest["contributes"]["configuration"]["properties"]
        .as_object()
        .expect("configuration properties");
    let declared: BTreeSet<String> = properties
        .keys()
        .filter_map(|key| key.strip_prefix("flakesense."))
        .filter(|key| !["path", "trace.server"].contains(key))
        .map(str::to_string)
        .collect();
    assert_eq!(declared, server_setting_keys());

    let thresholds = Thresholds::default();
    let defaults = json!({
        "warningThreshold": thresholds.warning,
        "informationThreshold": thresholds.information,
        "k": thresholds.k,
        "models": [],
        "exclude": [],
        "defaultModels": Config::default().uses_default_models(),
        "debounceMs": DEFAULT_DEBOUNCE_MS,
    });
    for key in server_setting_keys() {
        assert_eq!(
            properties[&format!("flakesense.{key}")]["default"],
            defaults[&key],
            "the default of flakesense.{key}"
        );
    }
}

#[test]
fn emacs_shows_the_warning_and_a_mark_through_eglot_rass_and_lsp_mode() {
    if !common::tool_available("emacs") {
        println!(
            "skipped: Emacs is not installed (`.ci/run` installs emacs-nox, elpa-eglot, elpa-lsp-mode and rassumfrassum)"
        );
        return;
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("editors/emacs/check/run.sh");
    let output = Command::new("bash")
        .arg(&script)
        .env("FLAKESENSE", common::binary())
        .output()
        .expect("bash runs the Emacs checks");
    let stdout = String::from_utf8_lossy(&output.stdout);
    // The checks' own lines (ok, skipped, FAIL), so that a skipped client shows in the test's output.
    println!("{stdout}");
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}
