//! `flakesense fix`: the mechanical fixes of the tests `check` warns about, applied to the files
//! or printed as a unified diff (`--diff`), like `ruff check --fix`. A warned test without a
//! fix is listed with its hint; a test without a warning is never touched.

use std::collections::{BTreeMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};

use crate::analysis::Severity;
use crate::autofix::{self, Fix};
use crate::check::{self, CheckArgs, Finding};
use crate::files;
use crate::workspace;

#[derive(Debug, Args)]
pub struct FixArgs {
    /// Files or directories to fix (default: the whole repository of the current directory)
    #[arg(value_name = "PATH")]
    paths: Vec<PathBuf>,
    /// Print the fixes as a unified diff instead of applying them (exit 1 when there is one)
    #[arg(long)]
    diff: bool,
    /// Only the test with this id, as `check` prints it (repeatable)
    #[arg(long = "test", value_name = "ID")]
    tests: Vec<String>,
    /// How to report what was fixed
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    /// The diff or a summary, for people
    Human,
    /// Each fix with its diff, and each warning left without one, as JSON
    Json,
}

/// At most this many fixes are made one after the other in a test (one per mechanism).
const MAX_FIXES_PER_TEST: usize = 8;

/// The fixes of one file.
struct FileFixes {
    display: String,
    path: String,
    before: String,
    after: String,
    fixes: Vec<Fix>,
}

pub fn run(args: FixArgs) -> Result<ExitCode> {
    let report = check::judge(&CheckArgs::selection(args.paths.clone(), false, None, None))?;
    let wanted: HashSet<&str> = args.tests.iter().map(String::as_str).collect();
    let warned: Vec<&Finding> = report
        .findings
        .iter()
        .filter(|finding| finding.severity == Severity::Warning && !finding.mechanisms.is_empty())
        .filter(|finding| wanted.is_empty() || wanted.contains(finding.id.as_str()))
        .collect();
    for id in &args.tests {
        if !warned.iter().any(|finding| finding.id == *id) {
            eprintln!("note: `{id}` has no warning to fix (check its id with `flakesense check`)");
        }
    }
    let mut by_file: BTreeMap<&str, Vec<&Finding>> = BTreeMap::new();
    for finding in &warned {
        by_file
            .entry(finding.display_path.as_str())
            .or_default()
            .push(finding);
    }
    let current = std::env::current_dir().context("cannot read the current directory")?;
    let root = workspace::find_root(
        &args
            .paths
            .first()
            .map_or(current.clone(), |path| current.join(path)),
    );
    let reader = workspace::SurroundingsReader::new(&root);
    let mut fixed = Vec::new();
    for (display, findings) in &by_file {
        fixed.push(fix_file(
            &current.join(display),
            display,
            findings,
            &reader,
        )?);
    }
    let fixed_ids: HashSet<(&str, &str)> = fixed
        .iter()
        .flat_map(|file| {
            file.fixes
                .iter()
                .map(move |fix| (file.display.as_str(), fix.test_id.as_str()))
        })
        .collect();
    let unfixed: Vec<&&Finding> = warned
        .iter()
        .filter(|finding| {
            !fixed_ids.contains(&(finding.display_path.as_str(), finding.id.as_str()))
        })
        .collect();
    let changed: Vec<&FileFixes> = fixed.iter().filter(|file| !file.fixes.is_empty()).collect();
    if !args.diff {
        for file in &changed {
            autofix::write_file(&current.join(&file.display), &file.before, &file.after)?;
        }
    }
    let mut out = std::io::stdout().lock();
    match args.format {
        Format::Json => {
            let json = serde_json::json!({
                "applied": !args.diff,
                "fixes": changed.iter().flat_map(|file| file.fixes.iter().map(move |fix| serde_json::json!({
                    "path": file.path,
                    "test": fix.test_id,
                    "name": fix.test_name,
                    "fix": fix.id,
                    "kind": fix.kind.name(),
                    "mechanism": fix.mechanism,
                    "title": fix.title,
                }))).collect::<Vec<_>>(),
                "diffs": changed.iter().map(|file| serde_json::json!({
                    "path": file.path,
                    "diff": autofix::unified_diff(&file.path, &file.before, &file.after),
                })).collect::<Vec<_>>(),
                "unfixed": unfixed.iter().map(|finding| serde_json::json!({
                    "path": finding.path,
                    "test": finding.id,
                    "mechanisms": finding.mechanisms.iter().map(|m| m.id).collect::<Vec<_>>(),
                    "hint": finding.hint,
                })).collect::<Vec<_>>(),
            });
            writeln!(out, "{}", serde_json::to_string_pretty(&json)?)?;
        }
        Format::Human => {
            if args.diff {
                for file in &changed {
                    write!(
                        out,
                        "{}",
                        autofix::unified_diff(&file.display, &file.before, &file.after)
                    )?;
                }
            }
            let verb = if args.diff { "would fix" } else { "fixed" };
            for file in &changed {
                for fix in &file.fixes {
                    eprintln!("{verb} {} ({}): {}", fix.test_id, fix.mechanism, fix.title);
                }
            }
            for finding in &unfixed {
                let mechanisms: Vec<&str> = finding.mechanisms.iter().map(|m| m.id).collect();
                eprintln!(
                    "no mechanical fix for {} ({}): {}",
                    finding.id,
                    mechanisms.join(", "),
                    finding.hint
                );
            }
            let count: usize = changed.iter().map(|file| file.fixes.len()).sum();
            eprintln!(
                "{verb} {} of {} warned tests in {} files ({count} fix{})",
                fixed_ids.len(),
                warned.len(),
                changed.len(),
                if count == 1 { "" } else { "es" }
            );
        }
    }
    Ok(if args.diff && !changed.is_empty() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// The fixes of one file's warned tests, made one after the other, each on the text the last
/// one left.
fn fix_file(
    absolute: &Path,
    display: &str,
    findings: &[&Finding],
    reader: &workspace::SurroundingsReader,
) -> Result<FileFixes> {
    let file = files::read_source(absolute)
        .map_err(|reason| anyhow::anyhow!("cannot fix {display}: {reason}"))?;
    let path = findings[0].path.clone();
    let surroundings = reader.for_file(file.language, absolute);
    let mut text = file.text.clone();
    let mut fixes: Vec<Fix> = Vec::new();
    // Test by test, each fix on the text the last one left: a fix reads the file again to check
    // itself, so offering one test's fixes at a time keeps the work linear in the warnings.
    for finding in findings {
        let id = finding.id.as_str();
        for _ in 0..MAX_FIXES_PER_TEST {
            let offered = autofix::offer(file.language, &path, &text, &surroundings, &|other| {
                other == id
            });
            let Some(fix) = offered.into_iter().next() else {
                break;
            };
            text = fix.apply(&text);
            fixes.push(fix);
        }
    }
    Ok(FileFixes {
        display: display.to_string(),
        path,
        before: file.text,
        after: text,
        fixes,
    })
}
