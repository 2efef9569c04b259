//! The README's snippets, run as written where a test can run them: the quick start's check of
//! the demo and the `flakesense` steps of the GitHub Actions workflow. (The pre-commit
//! configuration is run by the real pre-commit in `check_pre_commit.rs`.)

mod common;

use std::path::Path;

use common::{binary, command, fixtures, readme_block, run_ok, write};

/// Runs a README command line with `sh`, the freshly built flakesense first on `PATH`.
fn shell(line: &str, directory: &Path) -> std::process::Output {
    let binary_directory = Path::new(binary()).parent().unwrap();
    let path = std::env::join_paths(std::iter::once(binary_directory.to_path_buf()).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))
    .unwrap();
    command("sh", directory)
        .args(["-c", line])
        .env("PATH", path)
        .output()
        .unwrap_or_else(|error| panic!("cannot run `{line}`: {error}"))
}

fn text(output: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// Every file under `root` but git's directory, with its content.
fn working_tree(root: &Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut found = Vec::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(directory) = pending.pop() {
        for entry in std::fs::read_dir(&directory).unwrap() {
            let path = entry.unwrap().path();
            if path == root.join(".git") {
                continue;
            }
            if path.is_dir() {
                pending.push(path.clone());
                found.push((path, Vec::new()));
            } else {
                found.push((path.clone(), std::fs::read(&path).unwrap()));
            }
        }
    }
    found.sort();
    found
}

#[test]
fn the_quick_start_checks_the_demo_as_a_project_of_its_own_and_writes_nothing() {
    let block = readme_block("## Quick start", "sh");
    let first = block
        .lines()
        .next()
        .expect("the quick start's first command");
    let check = first
        .split("&&")
        .map(str::trim)
        .find(|part| part.starts_with("flakesense check"))
        .unwrap_or_else(|| panic!("the quick start checks the demo: {first}"));
    // The demo's own flakesense.toml makes it the workspace: its signals are weighed against its
    // six tests, not against every test of a flakesense checkout.
    let demo = fixtures().join("demo");
    assert_eq!(flakesense::workspace::find_root(&demo), demo);

    // A checkout as the quick start finds it: the demo inside a git working tree.
    let directory = tempfile::tempdir().unwrap();
    let checkout = directory.path().canonicalize().unwrap();
    run_ok("git", &["init", "-q"], &checkout);
    for path in [
        "src/test/java/demo/NotificationTest.java",
        "tests/test_status_page.py",
        "tests/server.rs",
        "flakesense.toml",
    ] {
        let text = std::fs::read_to_string(demo.join(path)).unwrap();
        write(&checkout, &format!("tests/fixtures/demo/{path}"), &text);
    }
    let before = working_tree(&checkout);
    let output = shell(check, &checkout);
    assert!(
        output.status.success(),
        "`{check}` failed:\n{}",
        text(&output)
    );
    assert!(
        text(&output).contains("6 tests in 3 files"),
        "the demo's three files are judged:\n{}",
        text(&output)
    );
    assert_eq!(
        working_tree(&checkout),
        before,
        "check never writes to the working tree"
    );
}

#[test]
fn the_github_workflows_flakesense_steps_run_as_written() {
    let workflow = readme_block("**GitHub Actions.**", "yaml");
    assert!(
        workflow.contains("cargo install --locked --git"),
        "flakesense is installed from its repository, not a registry:\n{workflow}"
    );
    let steps: Vec<String> = workflow
        .lines()
        .filter_map(|line| {
            line.trim()
                .strip_prefix("- run: ")
                .or_else(|| line.trim().strip_prefix("run: "))
        })
        .filter(|command| command.starts_with("flakesense "))
        .map(|command| command.replace("${{ github.base_ref }}", "main"))
        .collect();
    assert_eq!(steps.len(), 2, "{workflow}");

    // A pull request's branch and its base, fetched as actions/checkout with fetch-depth 0 does.
    let directory = tempfile::tempdir().unwrap();
    let origin = directory.path().join("origin.git");
    let project = directory.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    run_ok(
        "git",
        &[
            "init",
            "-q",
            "--bare",
            "-b",
            "main",
            &origin.to_string_lossy(),
        ],
        directory.path(),
    );
    run_ok("git", &["init", "-q", "-b", "main"], &project);
    write(
        &project,
        "tests/test_math.py",
        "def test_adds():\n    assert 1 + 1 == 2\n",
    );
    run_ok("git", &["add", "-A"], &project);
    run_ok("git", &["commit", "-q", "-m", "base"], &project);
    run_ok(
        "git",
        &["remote", "add", "origin", &origin.to_string_lossy()],
        &project,
    );
    run_ok("git", &["push", "-q", "origin", "main"], &project);
    run_ok("git", &["checkout", "-q", "-b", "feature"], &project);
    let flaky = std::fs::read_to_string(fixtures().join("demo/tests/test_status_page.py")).unwrap();
    write(&project, "tests/test_status_page.py", &flaky);
    run_ok("git", &["add", "-A"], &project);
    run_ok(
        "git",
        &["commit", "-q", "-m", "a status page test"],
        &project,
    );
    run_ok("git", &["fetch", "-q", "origin"], &project);

    // The whole tree's SARIF, whatever is flagged.
    let sarif = shell(&steps[0], &project);
    assert!(
        sarif.status.success(),
        "`{}` failed:\n{}",
        steps[0],
        text(&sarif)
    );
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(project.join("flakesense.sarif")).unwrap()).unwrap();
    assert_eq!(report["version"], "2.1.0");

    // The pull request's added test fails the job, as an annotation.
    let annotations = shell(&steps[1], &project);
    assert_eq!(annotations.status.code(), Some(1), "{}", text(&annotations));
    assert!(
        String::from_utf8_lossy(&annotations.stdout)
            .contains("::warning file=tests/test_status_page.py"),
        "{}",
        text(&annotations)
    );
}
