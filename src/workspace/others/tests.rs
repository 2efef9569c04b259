//! Finding the other files a test file reaches: by path and by the symbols, nearest first,
//! bounded, and never outside the workspace.

use super::*;

#[test]
fn candidates_are_resolved_within_the_workspace() {
    assert_eq!(
        normalized("tests/./common/../common/mod.rs").as_deref(),
        Some("tests/common/mod.rs")
    );
    assert_eq!(normalized("a/b.py").as_deref(), Some("a/b.py"));
    assert_eq!(normalized("../outside.py"), None);
    assert_eq!(normalized("a/../../outside.py"), None);
    assert_eq!(normalized("/etc/passwd"), None);
    assert_eq!(normalized("."), None);
}
