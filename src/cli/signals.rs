//! `flakesense signals`: the catalogue, documented the way a linter lists its rules: the
//! mechanisms a warning rests on, then the signals, each with what it matches, why it makes tests
//! flaky, an example and how to fix it.

use std::io::Write;
use std::process::ExitCode;

use anyhow::{Result, bail};
use clap::{Args, ValueEnum};
use serde::Serialize;

use crate::language::Language;
use crate::signals::{Kind, catalogue};

#[derive(Debug, Args)]
pub struct SignalsArgs {
    /// Show only the mechanism or signal with this id (`asserts-after-sleep`, `fixed-sleep`), in
    /// every language unless --language says
    #[arg(value_name = "ID")]
    id: Option<String>,
    /// Show only the mechanisms and signals of this language
    #[arg(long, value_parser = parse_language)]
    language: Option<Language>,
    /// Also list the mitigations (patterns that count against flakiness), the conditions (what
    /// some signals need to count) and the parts mechanisms are made of; none is ever shown as
    /// evidence alone
    #[arg(long)]
    mitigations: bool,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Format {
    Text,
    Json,
}

fn parse_language(name: &str) -> Result<Language, String> {
    Language::from_name(name).ok_or_else(|| format!("unknown language `{name}`"))
}

#[derive(Debug, Serialize)]
struct SignalView<'a> {
    id: &'a str,
    language: Language,
    kind: &'static str,
    category: Option<crate::category::Category>,
    message: &'a str,
    what: &'a str,
    why: &'a str,
    fix: &'a str,
    /// Mitigations whose presence makes the signal no risk.
    unless: &'a [String],
    /// For a mechanism: what the test expects that makes it no risk, counted in the test's own
    /// file only.
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    expects: &'a [String],
    /// Conditions the signal needs to count.
    requires: &'a [String],
    /// For a mechanism: the entries it is made of, by role (`start`, `wait`, `check`, `write`,
    /// `restore`, `cures`, `unless`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    parts: Vec<(&'static str, &'a str)>,
    example: Option<&'a str>,
}

pub fn run(args: SignalsArgs) -> Result<ExitCode> {
    let mut views = Vec::new();
    for language in Language::ALL {
        if args.language.is_some_and(|wanted| wanted != language) {
            continue;
        }
        // The mechanisms first: what a warning rests on.
        for mechanism in &catalogue(language).mechanisms {
            let entry = &mechanism.entry;
            if args.id.as_deref().is_some_and(|id| id != entry.id) {
                continue;
            }
            views.push(SignalView {
                id: &entry.id,
                language,
                kind: "mechanism",
                category: Some(entry.category),
                message: &entry.message,
                what: &entry.what,
                why: &entry.why,
                fix: &entry.fix,
                unless: &entry.unless,
                expects: &entry.expects,
                requires: &[],
                parts: entry.named_ids().collect(),
                example: entry.matches.first().map(String::as_str),
            });
        }
        for entry in &catalogue(language).entries {
            let kind = entry.kind();
            if args.id.as_deref().is_some_and(|id| id != entry.id)
                || (kind != Kind::Risk && !args.mitigations && args.id.is_none())
            {
                continue;
            }
            views.push(SignalView {
                id: &entry.id,
                language,
                kind: match kind {
                    Kind::Risk => "signal",
                    Kind::Mitigation => "mitigation",
                    Kind::Condition => "condition",
                    Kind::Part => "part",
                },
                category: entry.category,
                message: &entry.message,
                what: &entry.what,
                why: &entry.why,
                fix: &entry.fix,
                unless: &entry.unless,
                expects: &[],
                requires: &entry.requires,
                parts: Vec::new(),
                example: entry.matches.first().map(String::as_str),
            });
        }
    }
    if views.is_empty() {
        bail!(
            "no mechanism or signal has the id `{}` (run `flakesense signals` for the list)",
            args.id.unwrap_or_default()
        );
    }
    let mut out = std::io::stdout().lock();
    match args.format {
        Format::Json => {
            serde_json::to_writer_pretty(&mut out, &views)?;
            writeln!(out)?;
        }
        Format::Text => {
            for view in &views {
                let category = match view.category {
                    Some(category) if view.kind == "mechanism" => {
                        format!("{}, warns", category.name())
                    }
                    Some(category) => category.name().to_string(),
                    None if view.kind == "condition" => "a condition of other signals".to_string(),
                    None if view.kind == "part" => "a part of mechanisms".to_string(),
                    None => "counts against flakiness".to_string(),
                };
                writeln!(
                    out,
                    "{} {} ({category}): {}",
                    view.language, view.id, view.message
                )?;
                if args.id.is_some() {
                    writeln!(out, "\n  What it matches: {}", view.what)?;
                    if !view.parts.is_empty() {
                        let mut roles: Vec<String> = Vec::new();
                        let made_of = view
                            .parts
                            .iter()
                            .filter(|(role, _)| !["unless", "expects"].contains(role));
                        for (role, id) in made_of {
                            match roles.iter_mut().find(|line| line.starts_with(role)) {
                                Some(line) => line.push_str(&format!(", {id}")),
                                None => roles.push(format!("{role}: {id}")),
                            }
                        }
                        writeln!(out, "\n  Made of: {}", roles.join("; "))?;
                    }
                    writeln!(out, "\n  Why: {}", view.why)?;
                    writeln!(out, "\n  Fix: {}", view.fix)?;
                    for (rule, ids) in [
                        ("Not counted in a test that also has", view.unless),
                        ("Not counted in a test whose own file has", view.expects),
                        ("Counted only in a test that also has", view.requires),
                    ] {
                        if !ids.is_empty() {
                            writeln!(out, "\n  {rule}: {}", ids.join(", "))?;
                        }
                    }
                    if let Some(example) = view.example {
                        writeln!(out, "\n  Example:\n")?;
                        for line in example.lines() {
                            writeln!(out, "    {line}")?;
                        }
                    }
                    writeln!(out)?;
                }
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
