use super::*;

#[test]
fn reads_text_and_reports_repaired_bytes() {
    let directory = tempfile::tempdir().unwrap();
    let path = directory.path().join("test_x.py");
    fs::write(&path, b"def test_a():\n    s = '\xff'\n").unwrap();
    let file = read_source(&path).unwrap();
    assert_eq!(file.language, Language::Python);
    assert!(file.lossy);
    assert!(file.text.contains('\u{fffd}'));
}

#[test]
fn refuses_binary_huge_and_foreign_files() {
    let directory = tempfile::tempdir().unwrap();
    let binary = directory.path().join("Blob.java");
    fs::write(&binary, b"\x00\x01class X {}").unwrap();
    assert!(matches!(read_source(&binary), Err(Skipped::Binary)));
    let huge = directory.path().join("huge.rs");
    fs::write(&huge, vec![b' '; MAX_FILE_BYTES + 1]).unwrap();
    assert!(matches!(read_source(&huge), Err(Skipped::TooLarge { .. })));
    let text = directory.path().join("notes.txt");
    fs::write(&text, "hello").unwrap();
    assert!(matches!(read_source(&text), Err(Skipped::NotSource)));
    assert!(matches!(
        read_source(&directory.path().join("missing.py")),
        Err(Skipped::Unreadable(_))
    ));
}

#[test]
fn walking_honours_gitignore_excludes_and_reports_loops() {
    let root = tempfile::tempdir().unwrap();
    let base = root.path();
    for file in [
        "src/test/FooTest.java",
        "tests/test_a.py",
        "target/gen/GenTest.java",
        "vendor/x_test.rs",
        "README.md",
    ] {
        let path = base.join(file);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, "").unwrap();
    }
    fs::write(base.join(".gitignore"), "target/\n").unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(base, base.join("src/loop")).unwrap();
    let mut exclude = globset::GlobSetBuilder::new();
    exclude.add(globset::Glob::new("vendor/**").unwrap());
    let (found, problems) = walk_sources(&[base.to_path_buf()], base, &exclude.build().unwrap());
    let relative: Vec<_> = found
        .iter()
        .map(|path| path.strip_prefix(base).unwrap().to_path_buf())
        .collect();
    assert_eq!(
        relative,
        [
            Path::new("src/test/FooTest.java"),
            Path::new("tests/test_a.py")
        ]
    );
    #[cfg(unix)]
    assert!(
        problems.iter().any(
            |problem| problem.kind == WalkProblemKind::Loop && problem.message.contains("loop")
        ),
        "{problems:?}"
    );
}

#[test]
fn scripts_without_extension_are_recognised_by_their_first_line() {
    assert_eq!(
        detect_language(Path::new("bin/run_tests"), b"#!/usr/bin/env python3\n"),
        Some(Language::Python)
    );
    assert_eq!(detect_language(Path::new("bin/run"), b"#!/bin/sh\n"), None);
    assert_eq!(
        detect_language(Path::new("x.sh"), b"#!/usr/bin/env python3\n"),
        None
    );
}
