//! `flakesense train --repo`: labels a repository's tests from its own flaky history (flaky
//! lists, annotations, JUnit reports) and builds its index, keeping the labels set by hand.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};

use super::TrainArgs;
use crate::category::Category;
use crate::cli::progress_bar;
use crate::history::{self, IndexPlan, Repository, SourceReport};
use crate::index::{BuildSettings, Index};
use crate::terminal::escape;
use crate::workspace::{self, ProjectIndex};

/// `train --repo`: labels a repository's tests from its flaky history and writes its index.
pub(super) fn run_repo(args: &TrainArgs, root: &Path) -> Result<ExitCode> {
    if args.embedding.keep_duplicates {
        bail!("--keep-duplicates applies to --data only");
    }
    if args.flaky_lists.is_empty() && !args.from_annotations && args.junit_xml.is_empty() {
        if !args.update {
            bail!(
                "name at least one source of labels: --flaky-list FILE, --from-annotations or --junit-xml DIR..."
            );
        }
        eprintln!(
            "no label source given: refreshing the tests' code and keeping the index's labels"
        );
    }
    if !root.is_dir() {
        bail!("{}: not a directory", root.display());
    }
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| workspace::index_path(root));
    // The repository's own index is written through no link; a file the user named, where
    // they said.
    let place = match args.out {
        None => crate::files::write::Place::Below(root),
        Some(_) => crate::files::write::Place::Named,
    };
    crate::files::write::check(place, &out)
        .with_context(|| format!("cannot write index {}", out.display()))?;
    // Read before the long work: a file that cannot be updated stops everything. The index is
    // read again under its lock when the new one is written.
    check_previous(&out, args.update)?;

    let (files, problems) = history::find_test_files(root)?;
    let bar = progress_bar(files.len() as u64, "reading tests");
    let repository = history::read_repository(root, &files, &|| bar.inc(1))?;
    bar.finish_and_clear();
    print_repository(&repository, &problems);
    if repository.tests.is_empty() {
        bail!(
            "found no Java, Python or Rust test under {}",
            root.display()
        );
    }

    let catalogue = repository.catalogue();
    let mut reports = Vec::new();
    for list in &args.flaky_lists {
        reports.push(history::label_from_flaky_list(
            &repository,
            &catalogue,
            list,
        )?);
    }
    if args.from_annotations {
        reports.push(history::label_from_annotations(&repository));
    }
    if !args.junit_xml.is_empty() {
        reports.push(history::label_from_junit(
            &repository,
            &catalogue,
            &args.junit_xml,
        )?);
    }
    for report in &reports {
        print_report(report);
    }
    let marked = history::marked_tests(&repository);
    if !args.from_annotations && marked > 0 {
        eprintln!(
            "note: {marked} test{} carr{} a flakiness marker; --from-annotations would label {} flaky",
            plural(marked),
            if marked == 1 { "ies" } else { "y" },
            if marked == 1 { "it" } else { "them" }
        );
    }

    let labels = history::combine(&reports);
    let settings = BuildSettings {
        tokenizer: args.embedding.tokenizer,
        dims: args.embedding.dims(),
        seed: args.embedding.seed,
        description: describe_repo(args, &repository),
    };
    // Under the index's lock, from the index as it is now: labels another process (the editor)
    // recorded while the repository was read are kept.
    let (summary, _) = crate::labels::update(place, &out, |current| {
        let previous = previous_under_lock(current)?;
        let plan = IndexPlan {
            settings,
            previous: previous.as_ref(),
            update: args.update,
            keep_manual: !args.override_manual,
        };
        let (index, summary) = history::build_index(&repository, &labels, &plan);
        if summary.flaky == 0 {
            bail!(
                "no test is labelled flaky, and an index without flaky tests flags nothing; not writing {} (see above for what each source found)",
                out.display()
            );
        }
        Ok((Some(index), summary))
    })?;
    let kept = match (summary.manual_kept, args.override_manual) {
        (0, _) => String::new(),
        (kept, _) => format!("; kept {kept} label{} set by hand", plural(kept)),
    };
    let overridden = match summary.manual_overridden {
        0 => String::new(),
        count => format!("; replaced {count} label{} set by hand", plural(count)),
    };
    let carried = match summary.carried_over {
        0 => String::new(),
        count => format!(
            "; kept {count} entr{} of tests not in the repository",
            if count == 1 { "y" } else { "ies" }
        ),
    };
    let from_previous = match summary.flaky_from_previous {
        0 => String::new(),
        count => format!("; {count} still flaky from earlier labels"),
    };
    let stable = match summary.stable {
        0 => String::new(),
        count => format!(", {count} stable"),
    };
    eprintln!(
        "wrote {}: {} tests, {} flaky ({}){stable}, {} unlabelled{kept}{overridden}{carried}{from_previous}",
        out.display(),
        summary.entries,
        summary.flaky,
        describe_categories(&summary.categories),
        summary.entries - summary.flaky - summary.stable,
    );
    if summary.dropped > 0 {
        eprintln!(
            "warning: dropped {} label{} set by hand on tests no longer in the repository: the index's tokenizer changed and their code was not kept",
            summary.dropped,
            plural(summary.dropped)
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// Checks the index already at `out`, whose hand-set labels (and, for an update, all labels) are
/// kept, before the long work.
///
/// A file that is not a flakesense index, or is from a newer release, is never overwritten. A
/// damaged index is not updated either; rebuilding moves it aside first, as the language server
/// does, so nothing is lost.
fn check_previous(out: &Path, update: bool) -> Result<()> {
    if !out.exists() {
        if update {
            eprintln!("no index at {} yet: building a new one", out.display());
        }
        return Ok(());
    }
    if update {
        return match Index::load(out) {
            Ok(_) => Ok(()),
            Err(error) if error.is_corruption() => bail!(
                "{error}; it cannot be updated and was left as it is: run without --update to rebuild it (the damaged file is kept beside the new one)"
            ),
            Err(error) => {
                bail!("{error}; not touching it: move it away or choose another --out")
            }
        };
    }
    let loaded = workspace::load_index(out);
    match loaded {
        ProjectIndex::Missing | ProjectIndex::Loaded(_) => Ok(()),
        ProjectIndex::Corrupt { error, moved_to } => {
            eprintln!(
                "warning: {error}; moved it to {} and building a new one",
                moved_to.display()
            );
            Ok(())
        }
        ProjectIndex::Unusable(error) => {
            bail!("{error}; not overwriting it: move it away or choose another --out")
        }
    }
}

/// The index to build on, as the label store read it under its lock (see [`check_previous`]
/// for what was refused before the long work).
fn previous_under_lock(current: ProjectIndex) -> Result<Option<Index>> {
    match current {
        ProjectIndex::Missing => Ok(None),
        ProjectIndex::Loaded(index) => Ok(Some(*index)),
        ProjectIndex::Corrupt { error, moved_to } => {
            eprintln!(
                "warning: {error}; moved it to {} and building a new one",
                moved_to.display()
            );
            Ok(None)
        }
        ProjectIndex::Unusable(error) => {
            bail!("{error}; not overwriting it: move it away or choose another --out")
        }
    }
}

fn print_repository(repository: &Repository, problems: &[String]) {
    eprintln!(
        "read {} test{} in {} of {} source file{} under {}",
        repository.tests.len(),
        plural(repository.tests.len()),
        repository.files_with_tests,
        repository.files,
        plural(repository.files),
        repository.root.display()
    );
    for problem in problems.iter().chain(&repository.problems) {
        eprintln!("  skipped {}", escape(problem));
    }
    if !repository.files_with_syntax_errors.is_empty() {
        eprintln!(
            "  warning: syntax errors in {}; their intact tests are kept",
            escape(&first_few(&repository.files_with_syntax_errors))
        );
    }
    if !repository.duplicate_ids.is_empty() {
        eprintln!(
            "  warning: defined more than once, the last definition kept: {}",
            escape(&first_few(&repository.duplicate_ids))
        );
    }
}

/// A list for one line of output: a large repository can have hundreds of such files.
fn first_few(items: &[String]) -> String {
    const SHOWN: usize = 5;
    let shown = items[..items.len().min(SHOWN)].join(", ");
    match items.len().saturating_sub(SHOWN) {
        0 => shown,
        more => format!("{shown} and {more} more"),
    }
}

fn print_report(report: &SourceReport) {
    eprintln!(
        "{}: {} test{}, {} flaky ({})",
        escape(&report.title),
        report.tests,
        plural(report.tests),
        report.flaky.len(),
        describe_categories(&report.categories())
    );
    if !report.unmatched.is_empty() {
        eprintln!("  matching no test of the repository:");
    }
    for unmatched in &report.unmatched {
        let closest = if unmatched.closest.is_empty() {
            String::new()
        } else {
            format!("; closest: {}", escape(&first_few(&unmatched.closest)))
        };
        eprintln!(
            "    `{}` ({}){closest}",
            escape(&unmatched.name),
            escape(&unmatched.context)
        );
    }
    if !report.ambiguous.is_empty() {
        eprintln!(
            "  matching several tests, so labelling none (qualify them with a package, module or path):"
        );
    }
    for ambiguous in &report.ambiguous {
        eprintln!(
            "    `{}` ({}): {}",
            escape(&ambiguous.name),
            escape(&ambiguous.context),
            escape(&first_few(&ambiguous.candidates))
        );
    }
    for note in &report.notes {
        eprintln!("  note: {}", escape(note));
    }
}

fn describe_categories(categories: &BTreeMap<Category, usize>) -> String {
    if categories.is_empty() {
        return "no category".to_string();
    }
    categories
        .iter()
        .map(|(category, count)| format!("{category} {count}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn plural(count: usize) -> &'static str {
    if count == 1 { "" } else { "s" }
}

/// The training command as a user could retype it, kept in the index.
fn describe_repo(args: &TrainArgs, repository: &Repository) -> String {
    let file_name = |path: &PathBuf| {
        path.file_name().map_or_else(
            || path.display().to_string(),
            |name| name.to_string_lossy().into_owned(),
        )
    };
    let mut command = format!(
        "flakesense {} train --repo {}",
        env!("CARGO_PKG_VERSION"),
        repository.name
    );
    for list in &args.flaky_lists {
        command.push_str(&format!(" --flaky-list {}", file_name(list)));
    }
    if args.from_annotations {
        command.push_str(" --from-annotations");
    }
    if !args.junit_xml.is_empty() {
        command.push_str(" --junit-xml");
        for run in &args.junit_xml {
            command.push(' ');
            command.push_str(&file_name(run));
        }
    }
    if args.update {
        command.push_str(" --update");
    }
    command
}
