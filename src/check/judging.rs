//! Judging the files of a check: the models it consults, each file read and its tests judged
//! (all of them, or those its change adds or modifies), and the progress bar.

use super::*;

/// What judging one file gave.
#[derive(Debug, Default)]
pub(super) struct FileOutcome {
    pub(super) findings: Vec<Finding>,
    pub(super) tests: usize,
    pub(super) unchanged_tests: usize,
    pub(super) skipped: Option<SkippedFile>,
    pub(super) has_syntax_errors: bool,
    /// Tests past the per-file bound were left out.
    pub(super) too_many_tests: Option<Incomplete>,
}

/// The models consulted: the shipped default of each language (unless left out), the project's
/// own index and the configured and named extra models.
pub(super) struct ModelSet {
    pub(super) defaults: bool,
    pub(super) project: Option<Arc<Index>>,
    pub(super) extra: Vec<Arc<Index>>,
    pub(super) prevalence: Arc<Prevalence>,
}

impl ModelSet {
    pub(super) fn load(
        args: &CheckArgs,
        config: &Config,
        workspace_root: &Path,
    ) -> Result<ModelSet> {
        let project = workspace::read_project_index(workspace_root)?;
        let extra = config
            .models
            .iter()
            .chain(&args.models)
            .map(|path| {
                Index::load(path)
                    .map(Arc::new)
                    .map_err(|error| anyhow::anyhow!("cannot use --model: {error}"))
            })
            .collect::<Result<Vec<_>>>()?;
        if args.no_default_models && project.is_none() && extra.is_empty() {
            bail!("--no-default-models leaves no model: add --model or a .flakesense/index");
        }
        Ok(ModelSet {
            defaults: !args.no_default_models,
            project,
            extra,
            prevalence: Arc::default(),
        })
    }

    /// Whether a model weighs signals by how common they are in the project: the shipped ones
    /// do, and models trained on many projects.
    pub(super) fn has_prior(&self) -> bool {
        self.defaults
            || self
                .project
                .iter()
                .chain(&self.extra)
                .any(|model| !model.params().priors.is_empty())
    }

    pub(super) fn for_language(&self, language: Language) -> Result<Models> {
        let defaults = if self.defaults {
            let model = crate::models::embedded(language).map_err(|error| {
                anyhow::anyhow!("the shipped {language} model is unreadable: {error}")
            })?;
            vec![model]
        } else {
            Vec::new()
        };
        Ok(Models {
            defaults,
            project: self.project.clone(),
            extra: self.extra.clone(),
            prevalence: self.prevalence.clone(),
        })
    }
}

/// A file read and its tests found by the project's rules, or what became of it when it cannot
/// be judged (`None`: a file of a change that is not Java, Python or Rust after all, or a Python
/// file found by walking that pytest would not collect: not worth a word).
pub(super) enum Loaded {
    Tests(SourceFile, ReadTests, Arc<Discovery>),
    Done(Option<FileOutcome>),
}

/// Reads a file and finds its tests.
pub(super) fn load_file(target: &Target, surroundings: &workspace::SurroundingsReader) -> Loaded {
    let skip = |kind: SkipKind, reason: String| FileOutcome {
        skipped: Some(SkippedFile {
            path: target.relative.clone(),
            display_path: target.display.clone(),
            kind,
            reason,
        }),
        ..FileOutcome::default()
    };
    let read = match &target.source {
        Source::Disk => files::read_source(&target.absolute),
        Source::Blob(Blob::Content(bytes)) => files::source_from_bytes(&target.absolute, bytes),
        Source::Blob(Blob::TooLarge(size)) => Err(Skipped::TooLarge { size: *size }),
    };
    let file = match read {
        Ok(file) => file,
        Err(Skipped::NotSource) if !target.named => return Loaded::Done(None),
        Err(reason) => {
            let kind = match reason {
                Skipped::NotSource => SkipKind::NotSource,
                Skipped::TooLarge { .. } => SkipKind::TooLarge,
                Skipped::Binary => SkipKind::Binary,
                Skipped::Unreadable(_) => SkipKind::Unreadable,
            };
            return Loaded::Done(Some(skip(kind, reason.to_string())));
        }
    };
    if file.lossy {
        // Columns and tokens of repaired text would not match the file; the user converts it.
        return Loaded::Done(Some(skip(
            SkipKind::NotUtf8,
            "not valid UTF-8 (convert it to UTF-8 to have it checked)".to_string(),
        )));
    }
    let surroundings = surroundings.for_file(file.language, &target.absolute);
    if let Some(walked_from) = &target.walked_from
        && !surroundings
            .discovery
            .collects_walked(file.language, &target.absolute, walked_from)
    {
        return Loaded::Done(None);
    }
    let read = analysis::read_tests(file.language, &target.relative, &file.text, &surroundings);
    match read.incomplete {
        Some(
            reason @ (Incomplete::ParseTime { .. }
            | Incomplete::ParseMemory { .. }
            | Incomplete::TooDeep { .. }),
        ) => Loaded::Done(Some(skip(SkipKind::TooComplex, reason.to_string()))),
        _ => Loaded::Tests(file, read, surroundings.discovery),
    }
}

/// Judges one file's tests: all of them, or those its change adds or modifies.
pub(super) fn judge_file(
    target: &Target,
    file: SourceFile,
    read: ReadTests,
    discovery: &Discovery,
    models: &ModelSet,
    settings: &Settings,
) -> Result<FileOutcome> {
    let has_syntax_errors = read.has_syntax_errors;
    let too_many_tests = read.incomplete;
    let before = read.tests.len();
    let (tests, signals): (Vec<TestMethod>, Vec<Signals>) = changed_tests(
        read.tests.into_iter().zip(read.signals).collect(),
        file.language,
        target,
        discovery,
    )
    .into_iter()
    .unzip();
    let unchanged_tests = before - tests.len();
    let judged = tests.len();
    let models = models.for_language(file.language)?;
    let thresholds = Thresholds {
        k: settings.k,
        warning: settings.warning,
        information: settings.sigma,
    };
    let reports = analysis::judge_tests(&models, &thresholds, tests, &signals);
    let lines = LineIndex::new(&file.text);
    let position = |offset: usize| {
        let (line, column) = lines.position(&file.text, offset, ColumnUnit::Char);
        let (_, column_utf16) = lines.position(&file.text, offset, ColumnUnit::Utf16);
        Position {
            line: line + 1,
            column: column + 1,
            column_utf16: column_utf16 + 1,
        }
    };
    let findings = reports
        .into_iter()
        .filter(|report| !report.test.ignored && report.prediction.score > settings.sigma)
        .map(|report| {
            let prediction = report.prediction;
            let hint = crate::analysis::hint(file.language, &prediction);
            Finding {
                path: target.relative.clone(),
                display_path: target.display.clone(),
                language: file.language,
                start: position(report.test.name_range.start),
                end: position(report.test.name_range.end),
                id: report.test.id,
                name: report.test.name,
                score: prediction.score,
                severity: if prediction.score >= settings.warning {
                    Severity::Warning
                } else {
                    Severity::Information
                },
                category: prediction.category,
                mechanisms: prediction.mechanisms,
                signals: prediction.signals,
                shared_tokens: prediction.shared_tokens,
                neighbors: prediction.neighbors,
                examples: prediction.examples,
                hint,
            }
        })
        .collect();
    Ok(FileOutcome {
        findings,
        tests: judged,
        unchanged_tests,
        skipped: None,
        has_syntax_errors,
        too_many_tests,
    })
}

/// A progress bar on standard error, drawn only when it is a terminal and the work has taken
/// more than [`PROGRESS_DELAY`].
pub(super) struct Progress {
    pub(super) bar: indicatif::ProgressBar,
    pub(super) started: Instant,
    pub(super) terminal: bool,
    pub(super) shown: AtomicBool,
}

impl Progress {
    pub(super) fn new(total: u64, started: Instant) -> Progress {
        let bar = indicatif::ProgressBar::with_draw_target(
            Some(total),
            indicatif::ProgressDrawTarget::hidden(),
        );
        if let Ok(style) =
            indicatif::ProgressStyle::with_template("checking [{bar:30}] {pos}/{len} files")
        {
            bar.set_style(style.progress_chars("=> "));
        }
        Progress {
            bar,
            started,
            terminal: std::io::stderr().is_terminal(),
            shown: AtomicBool::new(false),
        }
    }

    pub(super) fn advance(&self) {
        self.bar.inc(1);
        if self.terminal
            && self.started.elapsed() >= PROGRESS_DELAY
            && !self.shown.swap(true, Ordering::Relaxed)
        {
            self.bar
                .set_draw_target(indicatif::ProgressDrawTarget::stderr());
        }
    }

    pub(super) fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
