//! The shipped models: each loads from the binary, has the parameters its README states, tells
//! a test that sleeps and polls from a plainly deterministic one, and never counts mocks for
//! flakiness.

use std::sync::Arc;

use flakesense::analysis::{self, Models, Thresholds};
use flakesense::embed::{TokenBag, Tokenizer};
use flakesense::index::{BuildSettings, Dims, Entry, Index, Label, NewEntry, Origin};
use flakesense::language::Language;
use flakesense::models;
use flakesense::prevalence::Prevalence;
use flakesense::signals;

fn shipped(language: Language) -> Models {
    let model = models::embedded(language).expect("the shipped model decodes");
    Models {
        defaults: vec![model],
        ..Models::default()
    }
}

fn score(language: Language, code: &str) -> f64 {
    analysis::judge_code(&shipped(language), &Thresholds::default(), language, code).score
}

#[test]
fn every_shipped_model_loads_with_its_documented_parameters() {
    for language in Language::ALL {
        let model = models::embedded(language).expect("the shipped model decodes");
        let params = model.params();
        assert_eq!(params.tokenizer, Tokenizer::Code, "{language}");
        assert_eq!(params.projection.seed, 42, "{language}");
        // The Johnson-Lindenstrauss bound at eps 0.5 for 10,000 to 30,000 tests, as the README
        // says: half of eps 0.33's, so a search reads and maps half as much.
        assert!(
            (430..=500).contains(&params.projection.dims),
            "{language}: {}",
            params.projection.dims
        );
        assert!(model.len() > 10_000, "{language}: {} tests", model.len());
        assert!(
            model.entries().all(|entry| entry.language() == language),
            "{language}"
        );
        let flaky = model.entries().filter(|entry| entry.is_flaky()).count();
        assert!(flaky > 500, "{language}: {flaky} flaky tests");
        let prior = model
            .prior(language)
            .expect("a shipped model has a signal prior");
        assert!(
            prior.warning_probability > 0.5 && prior.warning_probability < 1.0,
            "{language}"
        );
        assert!(
            prior.weights.iter().any(|(_, weight)| *weight > 0.0),
            "{language}"
        );
    }
}

#[test]
fn a_java_test_that_sleeps_before_asserting_is_flagged_and_a_pure_one_is_not() {
    let sleepy = r#"@Test
public void deliversTheMessageAsynchronously() throws Exception {
    final List<String> received = new ArrayList<>();
    client.subscribe("orders", received::add);
    client.publish("orders", "hello");
    Thread.sleep(1000);
    assertEquals(List.of("hello"), received);
}"#;
    // The same sleep, but the test then waits on a latch with a generous bound: no mechanism
    // can fail it, so the sleep is information at most.
    let waits = r#"@Test
public void deliversTheMessageAsynchronously() throws Exception {
    final CountDownLatch received = new CountDownLatch(1);
    client.subscribe("orders", message -> received.countDown());
    client.publish("orders", "hello");
    Thread.sleep(1000);
    assertTrue(received.await(20, TimeUnit.SECONDS));
}"#;
    let pure = r#"@Test
public void addsTwoNumbers() {
    assertEquals(4, Calculator.add(2, 2));
    assertEquals(-1, Calculator.add(2, -3));
}"#;
    let thresholds = Thresholds::default();
    assert!(
        score(Language::Java, sleepy) >= thresholds.warning,
        "{}",
        score(Language::Java, sleepy)
    );
    assert!(
        score(Language::Java, pure) <= thresholds.information,
        "{}",
        score(Language::Java, pure)
    );
    assert!(
        score(Language::Java, waits) < thresholds.warning,
        "{}",
        score(Language::Java, waits)
    );
}

#[test]
fn a_python_test_that_waits_on_a_server_is_flagged_and_a_pure_one_is_not() {
    let sleepy = r#"def test_server_answers_after_restart(server):
    server.restart()
    time.sleep(2)
    response = requests.get("http://example.org/health", timeout=5)
    assert response.status_code == 200
"#;
    let pure = r#"def test_parses_integers():
    assert parse("42") == 42
    assert parse("-7") == -7
"#;
    let thresholds = Thresholds::default();
    assert!(
        score(Language::Python, sleepy) > thresholds.information,
        "{}",
        score(Language::Python, sleepy)
    );
    assert!(
        score(Language::Python, pure) <= thresholds.information,
        "{}",
        score(Language::Python, pure)
    );
}

#[test]
fn a_rust_test_that_spawns_and_sleeps_is_flagged_and_a_pure_one_is_not() {
    let sleepy = r#"#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_accepts_connections_after_start() {
    let child = Command::new(env!("CARGO_BIN_EXE_server")).spawn().unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let stream = TcpStream::connect("127.0.0.1:8080").await.unwrap();
    assert!(stream.peer_addr().is_ok());
    drop(child);
}"#;
    let pure = r#"#[test]
fn adds_two_numbers() {
    assert_eq!(add(2, 2), 4);
    assert_eq!(add(2, -3), -1);
}"#;
    let thresholds = Thresholds::default();
    assert!(
        score(Language::Rust, sleepy) > thresholds.information,
        "{}",
        score(Language::Rust, sleepy)
    );
    assert!(
        score(Language::Rust, pure) <= thresholds.information,
        "{}",
        score(Language::Rust, pure)
    );
}

#[test]
fn the_rust_model_weighs_a_signal_against_how_common_it_is_in_the_project() {
    let sleeper = "#[test]\nfn reconnects() {\n    let server = start_server();\n    std::thread::sleep(Duration::from_millis(200));\n    assert!(server.is_up());\n}";
    let pure = "#[test]\nfn adds() {\n    assert_eq!(add(2, 2), 4);\n}";
    let (sleeps, plain) = (
        signals::detect(Language::Rust, sleeper),
        signals::detect(Language::Rust, pure),
    );
    // A workspace of 200 tests, `sleeping` of which sleep.
    let judged = |sleeping: usize| {
        let prevalence: Prevalence = (0..200)
            .map(|i| (Language::Rust, if i < sleeping { &sleeps } else { &plain }))
            .collect();
        let models = Models {
            prevalence: Arc::new(prevalence),
            ..shipped(Language::Rust)
        };
        analysis::judge_code(&models, &Thresholds::default(), Language::Rust, sleeper).score
    };
    let (rare, common) = (judged(2), judged(200));
    assert!(
        common < rare - 0.03,
        "sleeping in 1% of the tests: {rare}; in all of them: {common}"
    );
}

#[test]
fn a_flagged_test_names_its_signals_and_category() {
    let code = "@Test public void waits() throws Exception { service.start(); Thread.sleep(500); assertTrue(service.isRunning()); }";
    let prediction = analysis::judge_code(
        &shipped(Language::Java),
        &Thresholds::default(),
        Language::Java,
        code,
    );
    assert!(
        prediction
            .signals
            .iter()
            .any(|hit| hit.text.starts_with("Thread.sleep")),
        "{:?}",
        prediction.signals
    );
    assert_eq!(
        prediction.category,
        Some(flakesense::category::Category::AsyncWait)
    );
    assert_eq!(
        prediction.neighbors.len(),
        7,
        "the nearest known tests are shown as evidence"
    );
}

#[test]
fn mocking_a_tests_collaborators_never_raises_its_prior_and_is_never_shown_as_evidence() {
    let mut lowered = 0;
    let cases = [
        (
            Language::Java,
            "@Test public void fetches() throws Exception { Thread.sleep(100); assertEquals(1, service.fetch()); }",
            "@Test public void fetches() throws Exception { Service service = mock(Service.class); when(service.fetch()).thenReturn(1); Thread.sleep(100); assertEquals(1, service.fetch()); }",
        ),
        (
            Language::Python,
            "def test_fetch():\n    time.sleep(1)\n    assert fetch() == 1\n",
            "@patch('app.fetch')\ndef test_fetch(fetch):\n    fetch.return_value = 1\n    time.sleep(1)\n    assert fetch() == 1\n",
        ),
        (
            Language::Rust,
            "#[test]\nfn fetches() {\n    std::thread::sleep(Duration::from_millis(10));\n    assert_eq!(fetch(), 1);\n}",
            "#[test]\nfn fetches() {\n    let mut mock = MockService::new();\n    mock.expect_fetch().returning(|| 1);\n    std::thread::sleep(Duration::from_millis(10));\n    assert_eq!(mock.fetch(), 1);\n}",
        ),
    ];
    for (language, real, mocked) in cases {
        let model = models::embedded(language).expect("the shipped model decodes");
        let prior = model.prior(language).expect("a signal prior");
        let real_probability =
            prior.probability(&signals::detect(language, real), &Prevalence::default());
        let mocked_probability =
            prior.probability(&signals::detect(language, mocked), &Prevalence::default());
        // A mitigation is never weighed for flakiness; where the data shows none of its
        // effect (Rust's), it weighs nothing.
        assert!(
            mocked_probability <= real_probability,
            "{language}: {mocked_probability} with mocks, {real_probability} without"
        );
        lowered += usize::from(mocked_probability < real_probability);
        let prediction =
            analysis::judge_code(&shipped(language), &Thresholds::default(), language, mocked);
        assert!(
            prediction.signals.iter().all(|hit| hit.id != "mocks"),
            "{language}: {:?}",
            prediction.signals
        );
        assert!(
            !prediction.signals.is_empty(),
            "{language}: the sleep is still shown"
        );
    }
    assert!(lowered >= 1, "mocks lower the prior of no shipped model");
}

#[test]
fn a_warning_shows_the_nearest_known_flaky_tests_that_share_its_strongest_risk() {
    let sleeper = "@Test public void waits() throws Exception { service.start(); Thread.sleep(500); assertTrue(service.isRunning()); }";
    // A flaky test of the project with the same code but no sleep is the nearest by tokens; it
    // still votes, but a warning about a sleep shows flaky tests that sleep.
    let without_sleep = "@Test public void waits() throws Exception { service.start(); service.awaitRunning(); assertTrue(service.isRunning()); }";
    let models = Models {
        extra: vec![one_test_index(
            Language::Java,
            "ServiceTest#waits",
            without_sleep,
            Label::Flaky,
        )],
        ..shipped(Language::Java)
    };
    let prediction = analysis::judge_code(&models, &Thresholds::default(), Language::Java, sleeper);
    assert!(prediction.flaky);
    assert_eq!(prediction.signals[0].id, "fixed-sleep");
    assert_eq!(prediction.neighbors[0].id, "ServiceTest#waits");
    assert!(!prediction.examples.is_empty());
    let indexes = models.for_language(Language::Java);
    for example in &prediction.examples {
        let entry = indexes[example.model].entry(example.entry);
        assert!(entry.is_flaky(), "{}", example.id);
        assert!(
            entry.signals().contains(&"fixed-sleep"),
            "{} has {:?}",
            example.id,
            entry.signals()
        );
    }
    let distances: Vec<f64> = prediction.examples.iter().map(|e| e.distance).collect();
    assert!(distances.is_sorted(), "nearest first: {distances:?}");
    // A test no model flags shows none.
    let pure = "@Test public void adds() { assertEquals(4, Calculator.add(2, 2)); }";
    let pure = analysis::judge_code(&models, &Thresholds::default(), Language::Java, pure);
    assert!(!pure.flaky && pure.examples.is_empty());
}

/// An index of a project holding one test with `label` (its code kept if flaky), embedded as the
/// shipped model of `language` embeds tests.
fn one_test_index(language: Language, id: &str, code: &str, label: Label) -> Arc<Index> {
    let shipped = models::embedded(language).expect("the shipped model decodes");
    let params = shipped.params();
    let settings = BuildSettings {
        tokenizer: params.tokenizer,
        dims: Dims::Fixed(params.projection.dims),
        seed: params.projection.seed,
        description: format!("one test, {id}"),
    };
    let entry = Entry::new(NewEntry {
        id,
        project: "this",
        source: "test",
        language,
        label,
        categories: &[],
        origin: Origin::Dataset,
        path: None,
        code: Some(code),
    });
    let bag = TokenBag::from_code(params.tokenizer, language, code);
    Arc::new(Index::build(&settings, [(entry, bag)]))
}

#[test]
fn an_unlabelled_twin_does_not_erase_the_evidence_but_a_stable_one_does() {
    let sleeper = "#[test]\nfn reconnects() {\n    let server = start_server();\n    std::thread::sleep(Duration::from_millis(200));\n    assert!(server.is_up());\n}";
    let alone = score(Language::Rust, sleeper);
    let with_twin = |label| {
        let models = Models {
            extra: vec![one_test_index(Language::Rust, "twin", sleeper, label)],
            ..shipped(Language::Rust)
        };
        analysis::judge_code(&models, &Thresholds::default(), Language::Rust, sleeper).score
    };
    // A mined "not flaky", or a test no source named, is "not known to be flaky": the sleep
    // still counts.
    assert_eq!(with_twin(Label::Unlabelled), alone);
    // A person who marked the test "not flaky" (or a list of stable tests) decides.
    assert_eq!(with_twin(Label::Stable), 0.0);
}

#[test]
fn a_test_with_no_risk_is_never_flagged_whatever_its_mitigations_weigh() {
    // Every mitigation's own examples: waits on a condition, mocks, fixed clocks, seeded random
    // generators. Where the catalogue finds no risk in one, there is no evidence to show, so no
    // shipped model may flag it.
    let thresholds = Thresholds::default();
    let mut judged = 0;
    for language in Language::ALL {
        let models = shipped(language);
        for mitigation in signals::catalogue(language).mitigations() {
            for code in &mitigation.matches {
                if !signals::detect(language, code).risks.is_empty() {
                    continue;
                }
                let judgement = analysis::judge_code(&models, &thresholds, language, code);
                assert!(
                    judgement.score < 0.5,
                    "{language} {}: {} for\n{code}",
                    mitigation.id,
                    judgement.score
                );
                judged += 1;
            }
        }
    }
    assert!(judged >= 5, "only {judged} examples without a risk");
}
