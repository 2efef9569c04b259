//! Reads labelled tests from the canonical CSV format of `../shared/data/README.md`.

use std::collections::HashMap;
use std::io::Read;
use std::path::Path;

use anyhow::{Context, Result, bail};

use crate::category::Category;
use crate::language::Language;

/// One labelled test method: a row of a canonical `labeled.csv`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LabeledTest {
    pub id: String,
    pub project: String,
    pub language: Language,
    pub flaky: bool,
    pub categories: Vec<Category>,
    pub source: String,
    pub code: String,
}

/// The rows read from one or more CSV files.
#[derive(Debug, Default)]
pub struct Dataset {
    pub tests: Vec<LabeledTest>,
    /// Rows without code (name-only datasets), which cannot be embedded.
    pub skipped_without_code: usize,
}

const REQUIRED_COLUMNS: [&str; 7] = [
    "id", "project", "language", "flaky", "category", "source", "code",
];

/// Reads a canonical CSV file. A malformed row is an error that names its line.
pub fn read_csv_file(path: &Path) -> Result<Dataset> {
    // Only a regular file: `/dev/zero` would be one endless record.
    crate::files::regular_metadata(path)
        .with_context(|| format!("cannot open {}", path.display()))?;
    let file =
        std::fs::File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    read_csv(file).with_context(|| format!("in {}", path.display()))
}

/// Reads canonical CSV from any reader; see [`read_csv_file`].
pub fn read_csv(reader: impl Read) -> Result<Dataset> {
    let mut csv = csv::ReaderBuilder::new()
        .has_headers(true)
        .flexible(false)
        .from_reader(reader);
    let headers = csv
        .headers()
        .context("cannot read the header line")?
        .clone();
    let mut column = HashMap::new();
    for name in REQUIRED_COLUMNS {
        let Some(position) = headers.iter().position(|header| header.trim() == name) else {
            bail!(
                "line 1: the header has no `{name}` column (expected {})",
                REQUIRED_COLUMNS.join(",")
            );
        };
        column.insert(name, position);
    }
    let mut dataset = Dataset::default();
    let mut record = csv::StringRecord::new();
    loop {
        let line = csv.position().line();
        match csv.read_record(&mut record) {
            Ok(false) => break,
            Ok(true) => {}
            Err(error) => {
                let line = error.position().map_or(line, |position| position.line());
                bail!("line {line}: malformed row: {}", csv_error_reason(&error));
            }
        }
        let line = record.position().map_or(line, |position| position.line());
        let field = |name: &str| record.get(column[name]).unwrap_or("");
        let code = field("code");
        if code.trim().is_empty() {
            dataset.skipped_without_code += 1;
            continue;
        }
        let Some(language) = Language::from_name(field("language")) else {
            bail!(
                "line {line}: unknown language `{}` (expected java, python or rust)",
                field("language")
            );
        };
        let flaky = match field("flaky").trim() {
            "1" | "true" => true,
            "0" | "false" => false,
            other => bail!("line {line}: `flaky` must be 1 or 0, found `{other}`"),
        };
        let id = field("id").trim();
        let project = field("project").trim();
        if id.is_empty() || project.is_empty() {
            bail!("line {line}: `id` and `project` must not be empty");
        }
        dataset.tests.push(LabeledTest {
            id: id.to_string(),
            project: project.to_string(),
            language,
            flaky,
            categories: Category::parse_list(field("category")),
            source: field("source").trim().to_string(),
            code: code.to_string(),
        });
    }
    Ok(dataset)
}

fn csv_error_reason(error: &csv::Error) -> String {
    match error.kind() {
        csv::ErrorKind::UnequalLengths {
            expected_len, len, ..
        } => {
            format!("{len} fields where the header has {expected_len}")
        }
        csv::ErrorKind::Utf8 { .. } => "invalid UTF-8".to_string(),
        _ => error.to_string(),
    }
}

/// The code with all whitespace runs collapsed, the key of near-verbatim duplicates.
pub fn normalised_code(code: &str) -> String {
    code.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Collapses tests whose whitespace-normalised code is identical into one (the first), flaky when
/// any copy is flaky, with the categories of all copies. Returns how many rows were removed.
///
/// Overlapping sets (FlakyCat and IDoFT share tests) and copied test bodies would otherwise let a
/// test find itself among its neighbours and inflate every measurement.
pub fn deduplicate(tests: &mut Vec<LabeledTest>) -> usize {
    let before = tests.len();
    let mut first_by_code: HashMap<String, usize> = HashMap::with_capacity(before);
    let mut kept: Vec<LabeledTest> = Vec::with_capacity(before);
    for test in tests.drain(..) {
        let key = normalised_code(&test.code);
        match first_by_code.get(&key) {
            Some(&position) => {
                let first = &mut kept[position];
                first.flaky |= test.flaky;
                first.categories.extend(test.categories);
                first.categories.sort();
                first.categories.dedup();
            }
            None => {
                first_by_code.insert(key, kept.len());
                kept.push(test);
            }
        }
    }
    *tests = kept;
    before - tests.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = "id,project,language,flaky,category,source,code,marker\n";

    #[test]
    fn reads_multiline_code_and_categories() {
        let csv = format!(
            "{HEADER}a.B#c,proj,java,1,async-wait;time,set,\"@Test\nvoid c() {{\n  Thread.sleep(1);\n}}\",\nx.py::test_y,p2,python,0,,set,\"def test_y():\n    pass\n\",\n"
        );
        let dataset = read_csv(csv.as_bytes()).unwrap();
        assert_eq!(dataset.tests.len(), 2);
        let first = &dataset.tests[0];
        assert!(first.flaky);
        assert_eq!(first.categories, vec![Category::AsyncWait, Category::Time]);
        assert!(first.code.contains("Thread.sleep(1);"));
        assert_eq!(dataset.tests[1].language, Language::Python);
    }

    #[test]
    fn a_row_with_missing_fields_names_its_line() {
        // The second data row starts on line 5 because the first one spans three lines.
        let csv = format!("{HEADER}a#b,p,java,0,,s,\"x\ny\nz\",\nc#d,p,java,0\n");
        let error = format!("{:#}", read_csv(csv.as_bytes()).unwrap_err());
        assert!(error.contains("line 5"), "{error}");
        assert!(error.contains("4 fields where the header has 8"), "{error}");
    }

    #[test]
    fn a_bad_label_names_its_line() {
        let csv = format!("{HEADER}a#b,p,java,0,,s,code,\na#c,p,java,maybe,,s,code,\n");
        let error = format!("{:#}", read_csv(csv.as_bytes()).unwrap_err());
        assert!(
            error.contains("line 3") && error.contains("maybe"),
            "{error}"
        );
        let csv = format!("{HEADER}a#b,p,cobol,0,,s,code,\n");
        let error = format!("{:#}", read_csv(csv.as_bytes()).unwrap_err());
        assert!(
            error.contains("line 2") && error.contains("cobol"),
            "{error}"
        );
    }

    #[test]
    fn invalid_utf8_names_its_line() {
        let mut csv = format!("{HEADER}a#b,p,java,0,,s,code,\n").into_bytes();
        csv.extend_from_slice(b"a#c,p,java,0,,s,\xff\xfe,\n");
        let error = format!("{:#}", read_csv(csv.as_slice()).unwrap_err());
        assert!(
            error.contains("line 3") && error.contains("UTF-8"),
            "{error}"
        );
    }

    #[test]
    fn a_missing_column_is_named() {
        let error = format!(
            "{:#}",
            read_csv("id,project,flaky\n".as_bytes()).unwrap_err()
        );
        assert!(error.contains("`language`"), "{error}");
    }

    #[test]
    fn rows_without_code_are_counted_not_kept() {
        let csv = format!("{HEADER}a#b,p,java,1,,idoft,,\na#c,p,java,1,,s,code,\n");
        let dataset = read_csv(csv.as_bytes()).unwrap();
        assert_eq!(dataset.tests.len(), 1);
        assert_eq!(dataset.skipped_without_code, 1);
    }

    #[test]
    fn duplicates_merge_labels_and_categories() {
        let test = |id: &str, flaky: bool, categories: Vec<Category>, code: &str| LabeledTest {
            id: id.into(),
            project: "p".into(),
            language: Language::Java,
            flaky,
            categories,
            source: "s".into(),
            code: code.into(),
        };
        let mut tests = vec![
            test("a", false, vec![], "void a() {\n  x();\n}"),
            test("b", true, vec![Category::Time], "void a() { x(); }"),
            test("c", false, vec![], "void c() { y(); }"),
        ];
        assert_eq!(deduplicate(&mut tests), 1);
        assert_eq!(tests.len(), 2);
        assert_eq!(tests[0].id, "a");
        assert!(tests[0].flaky);
        assert_eq!(tests[0].categories, vec![Category::Time]);
    }
}
