//! A list of known flaky tests: one test per line in any spelling of [`super::names`], optionally
//! followed by categories after a comma or a tab (`pkg.ATest#waits, async-wait;network`).
//! Blank lines and lines starting with `#` are skipped.

use std::path::Path;

use anyhow::{Context, Result};

use crate::category::Category;

/// One test named by the list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// 1-based line number in the file.
    pub number: usize,
    pub name: String,
    pub categories: Vec<Category>,
    /// Category names that are not in the taxonomy, as written.
    pub unknown_categories: Vec<String>,
}

pub fn read(path: &Path) -> Result<Vec<Line>> {
    let bytes = crate::files::read_regular(path, super::MAX_HISTORY_FILE_BYTES)
        .with_context(|| format!("cannot read {}", path.display()))?;
    Ok(parse(&String::from_utf8_lossy(&bytes)))
}

pub fn parse(text: &str) -> Vec<Line> {
    text.lines()
        .enumerate()
        .filter_map(|(index, line)| {
            let line = line.trim_start_matches('\u{feff}').trim();
            if line.is_empty() || line.starts_with('#') {
                return None;
            }
            let (name, rest) = split_name(line);
            let mut categories = Vec::new();
            let mut unknown_categories = Vec::new();
            for part in rest
                .split([',', ';', '\t'])
                .map(str::trim)
                .filter(|part| !part.is_empty())
            {
                match Category::from_name(part) {
                    Some(category) => categories.push(category),
                    None => unknown_categories.push(part.to_string()),
                }
            }
            categories.sort();
            categories.dedup();
            Some(Line {
                number: index + 1,
                name: name.trim().to_string(),
                categories,
                unknown_categories,
            })
        })
        .collect()
}

/// Splits a line at the first comma or tab outside brackets: pytest parameters
/// (`test_x[1,2]`) and Java parameter lists (`m(String, int)`) hold commas of their own.
fn split_name(line: &str) -> (&str, &str) {
    let mut depth = 0usize;
    for (at, c) in line.char_indices() {
        match c {
            '[' | '(' => depth += 1,
            ']' | ')' => depth = depth.saturating_sub(1),
            ',' | '\t' if depth == 0 => return (&line[..at], &line[at + 1..]),
            _ => {}
        }
    }
    (line, "")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_categories_and_comments() {
        let text = "\u{feff}# exported from the tracker\n\ncom.ex.ATest#waits, async-wait\ntests/test_x.py::test_y[1,2]\tnetwork;time\n  crate::a::tests::b  \nx.Y#z(String, int),timing,Order dependency\n";
        let lines = parse(text);
        let summary: Vec<(usize, &str, &[Category], &[String])> = lines
            .iter()
            .map(|line| {
                (
                    line.number,
                    line.name.as_str(),
                    line.categories.as_slice(),
                    line.unknown_categories.as_slice(),
                )
            })
            .collect();
        assert_eq!(
            summary,
            [
                (3, "com.ex.ATest#waits", &[Category::AsyncWait][..], &[][..]),
                (
                    4,
                    "tests/test_x.py::test_y[1,2]",
                    &[Category::Network, Category::Time][..],
                    &[][..]
                ),
                (5, "crate::a::tests::b", &[][..], &[][..]),
                (
                    6,
                    "x.Y#z(String, int)",
                    &[Category::OrderDependency][..],
                    &["timing".to_string()][..]
                ),
            ]
        );
    }
}
