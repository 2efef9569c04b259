//! Unit tests of the index: building, searching, editing and persisting.

use super::*;

fn entry(id: &str, flaky: bool) -> Entry {
    Entry {
        id: id.to_string(),
        project: "demo".to_string(),
        source: "test".to_string(),
        language: Language::Java,
        flaky,
        categories: if flaky {
            vec![Category::AsyncWait]
        } else {
            vec![]
        },
        origin: Origin::Dataset,
        path: None,
        code: None,
    }
}

const SLEEPY: &str = "@Test void waits() throws Exception { server.start(); Thread.sleep(500); assertTrue(server.isUp()); }";
const PURE: &str = "@Test void adds() { assertEquals(4, Calculator.add(2, 2)); }";
const PARSE: &str = "@Test void parses() { assertEquals(3, Parser.parse(\"1+2\").evaluate()); }";

fn settings() -> BuildSettings {
    BuildSettings {
        tokenizer: Tokenizer::Code,
        dims: Dims::Fixed(256),
        seed: 7,
        description: "unit test".into(),
    }
}

pub(super) fn small_index() -> Index {
    let tests = [
        ("a#waits", true, SLEEPY),
        ("a#adds", false, PURE),
        ("a#parses", false, PARSE),
    ];
    Index::build(
        &settings(),
        tests.iter().map(|&(id, flaky, code)| {
            (
                entry(id, flaky),
                TokenBag::from_code(Tokenizer::Code, Language::Java, code),
            )
        }),
    )
}

fn nearest_ids(index: &Index, code: &str, k: usize) -> Vec<String> {
    let query = index.embed(&index.bag(Language::Java, code));
    index
        .nearest(&query, k, |_| true)
        .into_iter()
        .map(|(position, _)| index.entries()[position].id.clone())
        .collect()
}

#[test]
fn a_test_finds_itself_first_at_similarity_one() {
    let index = small_index();
    let query = index.embed(&index.bag(Language::Java, SLEEPY));
    let nearest = index.nearest(&query, 3, |_| true);
    assert_eq!(nearest[0], (0, 1.0));
    assert!(nearest[1].1 < 1.0);
}

#[test]
fn similar_code_is_nearer_than_unrelated_code() {
    let index = small_index();
    let nearest = nearest_ids(
        &index,
        "@Test void waitsToo() { client.start(); Thread.sleep(100); assertTrue(client.isUp()); }",
        3,
    );
    assert_eq!(nearest[0], "a#waits");
}

#[test]
fn the_dimension_follows_the_bound_or_the_setting() {
    assert_eq!(small_index().params().projection.dims, 256);
    let by_eps = Index::build(
        &BuildSettings {
            dims: Dims::Eps(0.33),
            ..settings()
        },
        std::iter::empty(),
    );
    assert_eq!(
        by_eps.params().projection.dims,
        Projection::johnson_lindenstrauss_dims(0, 0.33)
    );
}

#[test]
fn tokens_unseen_in_training_do_not_move_the_query() {
    let index = small_index();
    let plain = index.embed(&index.bag(Language::Java, PURE));
    let with_unknown =
        index.embed(&index.bag(Language::Java, &format!("{PURE} zebraQuokkaWombat();")));
    let a = index.nearest(&plain, 3, |_| true);
    let b = index.nearest(&with_unknown, 3, |_| true);
    assert_eq!(a, b);
    let nothing_known = index.embed(&index.bag(Language::Java, "zebra quokka"));
    assert!(nothing_known.is_empty());
    assert!(index.nearest(&nothing_known, 3, |_| true).is_empty());
}

#[test]
fn shared_tokens_list_the_rarest_first() {
    let index = small_index();
    let query = index.embed(&index.bag(
        Language::Java,
        "@Test void other() { Thread.sleep(1); assertEquals(1, 1); }",
    ));
    let shared = index.shared_tokens(&query, 0);
    assert!(shared.contains(&"thread.sleep"), "{shared:?}");
    // `test` is in every entry, `thread.sleep` in one: the rare one comes first.
    let position = |token| shared.iter().position(|t| *t == token).unwrap();
    assert!(position("thread.sleep") < position("test"), "{shared:?}");
}

#[test]
fn entries_are_added_relabelled_and_removed_without_a_rebuild() {
    let mut index = small_index();
    let vocabulary_before = index.vocabulary_len();
    let newcomer =
        "@Test void polls() { Awaitility.await().atMost(Duration.ofSeconds(1)).until(done::get); }";
    let position = index.upsert(entry("b#polls", true), &index.bag(Language::Java, newcomer));
    assert_eq!(position, 3);
    assert!(index.vocabulary_len() > vocabulary_before);
    assert_eq!(nearest_ids(&index, newcomer, 1), ["b#polls"]);
    assert_eq!(index.document_frequency("awaitility"), 1);

    // Replacing by id keeps one entry.
    index.upsert(
        entry("b#polls", false),
        &index.bag(Language::Java, newcomer),
    );
    assert_eq!(index.len(), 4);
    assert!(!index.entries()[index.position("b#polls").unwrap()].flaky);

    assert!(index.relabel("a#adds", true, vec![Category::Time], Origin::Manual));
    let adds = &index.entries()[index.position("a#adds").unwrap()];
    assert!(adds.flaky && adds.categories == [Category::Time] && adds.origin == Origin::Manual);
    assert!(!index.relabel("missing", true, vec![], Origin::Manual));

    assert!(index.remove("a#waits"));
    assert!(!index.remove("a#waits"));
    assert_eq!(index.len(), 3);
    assert_ne!(nearest_ids(&index, SLEEPY, 1), ["a#waits"]);
    assert_eq!(index.document_frequency("sleep"), 0);
}

#[test]
fn the_file_round_trips_to_the_same_searches_and_bytes() {
    let mut index = small_index();
    index.upsert(
        entry("b#new", true),
        &index.bag(
            Language::Java,
            "@Test void x() { new Socket(\"example.com\", 80); }",
        ),
    );
    let bytes = index.to_bytes().unwrap();
    let loaded = Index::from_bytes(&bytes).unwrap();
    assert_eq!(loaded.entries(), index.entries());
    assert_eq!(loaded.params(), index.params());
    for code in [
        SLEEPY,
        PURE,
        PARSE,
        "@Test void y() { new Socket(\"a\", 1); }",
    ] {
        let a = index.nearest(&index.embed(&index.bag(Language::Java, code)), 4, |_| true);
        let b = loaded.nearest(&loaded.embed(&loaded.bag(Language::Java, code)), 4, |_| {
            true
        });
        assert_eq!(a, b);
    }
    assert_eq!(
        loaded.to_bytes().unwrap(),
        bytes,
        "saving a loaded index changes nothing"
    );
    assert_eq!(
        small_index().to_bytes().unwrap(),
        small_index().to_bytes().unwrap(),
        "builds are deterministic"
    );
}

#[test]
fn a_payload_breaking_the_invariants_is_rejected() {
    let index = small_index();
    let mut stored = index.stored();
    stored.bags[0].push((u32::MAX, 1));
    let bytes = file::encode(&stored).unwrap();
    assert!(matches!(
        Index::from_bytes(&bytes),
        Err(FormatError::Undecodable(_))
    ));
    let mut stored = index.stored();
    stored.params.projection.dims = 0;
    assert!(Index::from_bytes(&file::encode(&stored).unwrap()).is_err());
}

#[test]
fn saving_and_loading_a_file() {
    let directory = tempfile::tempdir().unwrap();
    let path = directory.path().join(".flakesense").join("index");
    small_index().save(&path).unwrap();
    let loaded = Index::load(&path).unwrap();
    assert_eq!(loaded.len(), 3);
    std::fs::write(&path, b"FLKSNSIX\x01\x00").unwrap();
    let error = Index::load(&path).unwrap_err();
    assert!(error.is_corruption(), "{error}");
    assert!(error.to_string().contains("truncated"), "{error}");
}

#[test]
fn an_entry_bag_rebuilds_an_equal_index() {
    let index = small_index();
    assert_eq!(
        index.entry_bag(0),
        Some(TokenBag::from_code(Tokenizer::Code, Language::Java, SLEEPY))
    );
    assert_eq!(index.entry_bag(3), None);
    let rebuilt = Index::build(
        &settings(),
        index.entries().iter().enumerate().map(|(position, entry)| {
            (entry.clone(), index.entry_bag(position).unwrap_or_default())
        }),
    );
    assert_eq!(
        nearest_ids(&rebuilt, SLEEPY, 3),
        nearest_ids(&index, SLEEPY, 3)
    );
}

#[test]
fn kept_code_is_cut_on_a_character_boundary() {
    assert_eq!(kept_code("short"), "short");
    let long = "é".repeat(MAX_KEPT_CODE);
    let kept = kept_code(&long);
    assert!(kept.ends_with("\n...") && kept.len() <= MAX_KEPT_CODE + 4);
}
