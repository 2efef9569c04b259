//! Builds the canonical test identifiers of the labelled data, so predictions match its labels.

use crate::language::Language;

/// The canonical id of a test.
///
/// `scopes` are the enclosing classes (Java, Python) or inline modules (Rust), outermost first.
/// Java ids are the ones JUnit reports: `pkg.Outer$Inner#method`, no path. Python ids are pytest's
/// node ids, `path::Class::test`; Rust ids follow the same shape with module names.
pub(super) fn test_id(
    language: Language,
    path: &str,
    package: Option<&str>,
    scopes: &[&str],
    name: &str,
) -> String {
    match language {
        Language::Java => {
            let classes = if scopes.is_empty() {
                // A syntax error cost the tree its class; Java names the file after that class.
                let file = path.rsplit('/').next().unwrap_or(path);
                file.strip_suffix(".java").unwrap_or(file).to_owned()
            } else {
                scopes.join("$")
            };
            match package.filter(|package| !package.is_empty()) {
                Some(package) => format!("{package}.{classes}#{name}"),
                None => format!("{classes}#{name}"),
            }
        }
        Language::Python | Language::Rust => {
            let mut id = String::from(path);
            for part in scopes.iter().chain([&name]) {
                id.push_str("::");
                id.push_str(part);
            }
            id
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_ids_join_nested_classes_with_a_dollar_and_omit_the_path() {
        let id = test_id(
            Language::Java,
            "src/test/java/org/ex/OuterTest.java",
            Some("org.ex"),
            &["OuterTest", "Inner"],
            "works",
        );
        assert_eq!(id, "org.ex.OuterTest$Inner#works");
    }

    #[test]
    fn java_ids_without_a_package_start_at_the_class() {
        assert_eq!(test_id(Language::Java, "A.java", None, &["A"], "t"), "A#t");
        assert_eq!(
            test_id(Language::Java, "A.java", Some(""), &["A"], "t"),
            "A#t"
        );
    }

    #[test]
    fn python_ids_are_pytest_node_ids() {
        let top_level = test_id(Language::Python, "tests/test_x.py", None, &[], "test_y");
        assert_eq!(top_level, "tests/test_x.py::test_y");
        let nested = test_id(
            Language::Python,
            "tests/test_x.py",
            None,
            &["TestA", "TestB"],
            "test_y",
        );
        assert_eq!(nested, "tests/test_x.py::TestA::TestB::test_y");
    }

    #[test]
    fn rust_ids_list_inline_modules() {
        let id = test_id(
            Language::Rust,
            "src/lib.rs",
            None,
            &["tests", "parsing"],
            "empty_input",
        );
        assert_eq!(id, "src/lib.rs::tests::parsing::empty_input");
    }
}
