//! Specification of `bm25.rs`: the §7 TV2 vectors of openclaw-memory.md, a hand-computed
//! example for the Cortex benchmark's variant, and the edge cases.

use super::super::tokenize::{QueryTokenPattern, fts_query};
use super::*;

const TOLERANCE: f64 = 1e-6;

fn close(actual: f64, expected: f64) -> bool {
    (actual - expected).abs() < TOLERANCE
}

/// openclaw-memory.md §7 TV2: eight chunks, one model, unicode61. N = 8, avgdl = 34/8 = 4.25.
fn tv2_index() -> Bm25Index {
    let chunks = [
        "alice prefers green tea",
        "bob prefers black coffee",
        "the weather was cold",
        "project deadline is friday",
        "tea with alice again and again",
        "bob fixed the build",
        "paris trip planned for may",
        "coffee machine broke",
    ];
    Bm25Index::build(&chunks, Tokenizer::Unicode61)
}

fn openclaw_search(index: &Bm25Index, raw: &str) -> Vec<Bm25Hit> {
    match fts_query(raw, QueryTokenPattern::Unicode, Tokenizer::Unicode61) {
        Some(query) => index.search(&query.into(), &Bm25Params::fts5(), None).unwrap(),
        None => Vec::new(),
    }
}

#[test]
fn tv2_corpus_statistics() {
    let index = tv2_index();
    assert_eq!(index.len(), 8);
    assert!(close(index.average_length(), 4.25));
    assert_eq!(index.document_frequency("alice"), 2);
    // "For n = 2: idf = ln(6.5/2.5) = 0.955511."
    assert!(close(idf(IdfVariant::Fts5, 8, 2), 0.955511));
}

// TV2: `"alice" AND "tea"` matches D1 and D5 only; D1 bm25 −1.958144, D5 −1.635521.
#[test]
fn tv2_alice_tea_matches_d1_and_d5_with_fts5_ranks() {
    let hits = openclaw_search(&tv2_index(), "alice tea");
    assert_eq!(hits.iter().map(|hit| hit.doc).collect::<Vec<_>>(), [0, 4]);
    assert!(close(hits[0].fts5_rank(), -1.958144), "D1: {}", hits[0].fts5_rank());
    assert!(close(hits[1].fts5_rank(), -1.635521), "D5: {}", hits[1].fts5_rank());
}

// TV2: per term, D1 contributes 0.979072 (one term of the two-term sum).
#[test]
fn tv2_single_term_contribution_of_d1() {
    let index = tv2_index();
    let hits = index.search(&Bm25Query::from_text("alice", Tokenizer::Unicode61), &Bm25Params::fts5(), None).unwrap();
    assert!(close(hits[0].score, 0.979072));
}

// TV2: query `coffee`: D8 (dl = 3) −1.086204 ranks above D2 −0.979072; the shorter chunk wins.
#[test]
fn tv2_coffee_prefers_the_shorter_chunk() {
    let hits = openclaw_search(&tv2_index(), "coffee");
    assert_eq!(hits.iter().map(|hit| hit.doc).collect::<Vec<_>>(), [7, 1]);
    assert!(close(hits[0].fts5_rank(), -1.086204));
    assert!(close(hits[1].fts5_rank(), -0.979072));
}

// TV2: the six-word question needs every word in one chunk, so the keyword leg is empty.
#[test]
fn tv2_question_matches_nothing_under_and() {
    assert!(openclaw_search(&tv2_index(), "What did Alice say about tea?").is_empty());
}

// TV2 edge case: a term present in ≥ N/2 chunks gets idf 1e-6. Four rows of equal length put
// dl/avgdl = 1, so a single occurrence scores 1e-6 · 2.2 / (1 + 1.2) = 1e-6.
#[test]
fn tv2_term_in_half_the_rows_gets_the_idf_floor() {
    assert_eq!(idf(IdfVariant::Fts5, 8, 4), FTS5_IDF_FLOOR);
    assert_eq!(idf(IdfVariant::Fts5, 8, 7), FTS5_IDF_FLOOR);
    let index = Bm25Index::build(&["x a", "x b", "c d", "e f"], Tokenizer::Unicode61);
    let hits = index.search(&Bm25Query::from_text("x", Tokenizer::Unicode61), &Bm25Params::fts5(), None).unwrap();
    assert_eq!(hits.len(), 2);
    assert!((hits[0].score - 1e-6).abs() < 1e-15);
}

/// A corpus worked by hand for the benchmark variant (k1 1.5, b 0.75, `+1` IDF):
/// d0 `cat sat mat` (dl 3), d1 `cat cat dog` (dl 3), d2 `dog barks loudly today` (dl 4).
/// N = 3, avgdl = 10/3. `cat` and `dog` each occur in 2 documents:
/// idf = ln((3 − 2 + 0.5)/(2 + 0.5) + 1) = ln 1.6 = 0.470004.
/// cat in d0 (tf 1, dl 3): 0.470004 · 2.5 / (1 + 1.5 · (0.25 + 0.75 · 0.9)) = 0.470004 · 2.5/2.3875 = 0.492150.
/// cat in d1 (tf 2, dl 3): 0.470004 · 5 / (2 + 1.3875) = 0.693732.
/// dog in d2 (tf 1, dl 4): 0.470004 · 2.5 / (1 + 1.5 · (0.25 + 0.75 · 1.2)) = 0.470004 · 2.5/2.725 = 0.431196.
fn benchmark_index() -> Bm25Index {
    Bm25Index::build(&["cat sat mat", "cat cat dog", "dog barks loudly today"], Tokenizer::Benchmark)
}

#[test]
fn benchmark_variant_matches_the_hand_computed_example() {
    let index = benchmark_index();
    assert!(close(idf(IdfVariant::Plus1, 3, 2), 0.470004));
    let query = Bm25Query::from_text("cat dog", Tokenizer::Benchmark);
    let scores = index.scores(&query, &Bm25Params::benchmark()).unwrap();
    assert!(close(scores[0], 0.492150));
    assert!(close(scores[1], 0.693732 + 0.492150));
    assert!(close(scores[2], 0.431196));
}

// cortex-benchmark-original.md §2 Phase 3: "repeated query terms count repeatedly".
#[test]
fn benchmark_variant_counts_repeated_query_terms_repeatedly() {
    let index = benchmark_index();
    let once = index.scores(&Bm25Query::from_text("cat", Tokenizer::Benchmark), &Bm25Params::benchmark()).unwrap();
    let twice = index.scores(&Bm25Query::from_text("cat CAT", Tokenizer::Benchmark), &Bm25Params::benchmark()).unwrap();
    assert!(close(twice[1], 2.0 * once[1]));
    assert!(close(twice[0], 2.0 * 0.492150));
}

// cortex-benchmark-original.md §2 Phase 3: all docs are scored and sorted, ties (including the
// zero-score docs) keep index order.
#[test]
fn rank_all_lists_every_document_with_zero_scores_in_index_order() {
    let index = Bm25Index::build(&["zzz", "cat", "yyy", "cat", "xxx"], Tokenizer::Benchmark);
    let ranked = index.rank_all(&Bm25Query::from_text("cat", Tokenizer::Benchmark), &Bm25Params::benchmark()).unwrap();
    assert_eq!(ranked.iter().map(|hit| hit.doc).collect::<Vec<_>>(), [1, 3, 0, 2, 4]);
    assert_eq!(ranked[0].score, ranked[1].score);
    assert_eq!(ranked[2].score, 0.0);
}

#[test]
fn and_mode_requires_every_term_and_or_mode_any() {
    let index = benchmark_index();
    let query = Bm25Query::from_text("cat dog", Tokenizer::Benchmark);
    let and = Bm25Params { mode: QueryMode::And, ..Bm25Params::benchmark() };
    let or = Bm25Params::benchmark();
    assert_eq!(index.search(&query, &and, None).unwrap().iter().map(|hit| hit.doc).collect::<Vec<_>>(), [1]);
    assert_eq!(index.search(&query, &or, None).unwrap().iter().map(|hit| hit.doc).collect::<Vec<_>>(), [1, 0, 2]);
}

#[test]
fn and_query_with_a_missing_term_matches_nothing() {
    let index = benchmark_index();
    let query = Bm25Query::from_text("cat unicorn", Tokenizer::Benchmark);
    let and = Bm25Params { mode: QueryMode::And, ..Bm25Params::benchmark() };
    assert!(index.search(&query, &and, None).unwrap().is_empty());
    assert_eq!(index.scores(&query, &and).unwrap(), [0.0, 0.0, 0.0]);
}

#[test]
fn equal_scores_are_ordered_by_document_index() {
    let index = Bm25Index::build(&["same text", "other", "same text"], Tokenizer::Unicode61);
    let hits = index.search(&Bm25Query::from_text("same", Tokenizer::Unicode61), &Bm25Params::fts5(), None).unwrap();
    assert_eq!(hits.iter().map(|hit| hit.doc).collect::<Vec<_>>(), [0, 2]);
}

#[test]
fn limit_keeps_the_best_hits() {
    let hits = openclaw_search(&tv2_index(), "coffee");
    let limited =
        tv2_index().search(&Bm25Query::from_text("coffee", Tokenizer::Unicode61), &Bm25Params::fts5(), Some(1));
    assert_eq!(limited.unwrap(), hits[..1]);
}

#[test]
fn filtered_search_keeps_whole_corpus_statistics() {
    let index = tv2_index();
    let query = Bm25Query::from_text("coffee", Tokenizer::Unicode61);
    let hits = index.search_filtered(&query, &Bm25Params::fts5(), None, |doc| doc != 7).unwrap();
    assert_eq!(hits.len(), 1);
    assert!(close(hits[0].fts5_rank(), -0.979072), "idf still uses n = 2 of N = 8");
}

#[test]
fn underscored_query_token_is_a_phrase_of_adjacent_terms() {
    let index = Bm25Index::build(
        &["memory search tool", "search the memory", "memory search memory search"],
        Tokenizer::Unicode61,
    );
    let query: Bm25Query = fts_query("memory_search", QueryTokenPattern::Unicode, Tokenizer::Unicode61).unwrap().into();
    let hits = index.search(&query, &Bm25Params::fts5(), None).unwrap();
    assert_eq!(hits.iter().map(|hit| hit.doc).collect::<Vec<_>>(), [2, 0], "two occurrences beat one");
}

#[test]
fn empty_phrase_fails_an_and_query_and_is_ignored_by_or() {
    let index = benchmark_index();
    let query = Bm25Query { phrases: vec![vec!["cat".into()], vec![]] };
    let or = Bm25Params::benchmark();
    let and = Bm25Params { mode: QueryMode::And, ..or };
    assert!(index.search(&query, &and, None).unwrap().is_empty());
    assert_eq!(index.search(&query, &or, None).unwrap().len(), 2);
}

#[test]
fn empty_corpus_gives_empty_results() {
    let index = Bm25Index::build::<&str>(&[], Tokenizer::Unicode61);
    assert!(index.is_empty());
    assert_eq!(index.average_length(), 0.0);
    let query = Bm25Query::from_text("anything", Tokenizer::Unicode61);
    assert!(index.search(&query, &Bm25Params::fts5(), None).unwrap().is_empty());
    assert!(index.rank_all(&query, &Bm25Params::benchmark()).unwrap().is_empty());
}

#[test]
fn empty_query_matches_nothing_and_ranks_everything_at_zero() {
    let index = benchmark_index();
    let query = Bm25Query::default();
    assert!(index.search(&query, &Bm25Params::benchmark(), None).unwrap().is_empty());
    assert!(index.search(&query, &Bm25Params::fts5(), None).unwrap().is_empty());
    let ranked = index.rank_all(&query, &Bm25Params::benchmark()).unwrap();
    assert_eq!(ranked.iter().map(|hit| (hit.doc, hit.score)).collect::<Vec<_>>(), [(0, 0.0), (1, 0.0), (2, 0.0)]);
}

#[test]
fn query_of_only_one_character_tokens_is_empty_for_the_benchmark_tokenizer() {
    let query = Bm25Query::from_text("a b c ? 1", Tokenizer::Benchmark);
    assert!(query.phrases.is_empty());
    assert!(benchmark_index().search(&query, &Bm25Params::benchmark(), None).unwrap().is_empty());
}

#[test]
fn corpus_of_empty_documents_matches_nothing() {
    let index = Bm25Index::build(&["", "  ", "!"], Tokenizer::Unicode61);
    assert_eq!(index.average_length(), 0.0);
    assert!(
        index.search(&Bm25Query::from_text("x", Tokenizer::Unicode61), &Bm25Params::fts5(), None).unwrap().is_empty()
    );
}

#[test]
fn invalid_parameters_are_rejected() {
    let index = benchmark_index();
    let query = Bm25Query::from_text("cat", Tokenizer::Benchmark);
    let negative_k1 = Bm25Params { k1: -1.0, ..Bm25Params::benchmark() };
    let large_b = Bm25Params { b: 1.5, ..Bm25Params::benchmark() };
    let nan_b = Bm25Params { b: f64::NAN, ..Bm25Params::benchmark() };
    assert_eq!(index.search(&query, &negative_k1, None), Err(Bm25Error::InvalidK1 { value: -1.0 }));
    assert_eq!(index.search(&query, &large_b, None), Err(Bm25Error::InvalidB { value: 1.5 }));
    assert!(index.scores(&query, &nan_b).is_err());
}

#[test]
fn non_ascii_documents_match_folded_queries() {
    let index = Bm25Index::build(&["Ünïcödé café", "東京 タワー", "plain"], Tokenizer::Unicode61);
    let hits = openclaw_search(&index, "CAFE unicode");
    assert_eq!(hits.iter().map(|hit| hit.doc).collect::<Vec<_>>(), [0]);
    assert_eq!(openclaw_search(&index, "東京").iter().map(|hit| hit.doc).collect::<Vec<_>>(), [1]);
}

#[test]
fn params_deserialize_with_defaults_and_reject_unknown_fields() {
    let params: Bm25Params = serde_json::from_str(r#"{"k1": 1.5}"#).unwrap();
    assert_eq!(params, Bm25Params { k1: 1.5, ..Bm25Params::fts5() });
    let benchmark: Bm25Params = serde_json::from_str(r#"{"k1":1.5,"b":0.75,"idf":"plus1","mode":"or"}"#).unwrap();
    assert_eq!(benchmark, Bm25Params::benchmark());
    assert!(serde_json::from_str::<Bm25Params>(r#"{"k2": 1}"#).is_err());
}

#[test]
fn a_megabyte_document_is_indexed_and_scored() {
    let text = "alpha beta gamma delta ".repeat(45_000);
    assert!(text.len() > 1_000_000);
    let index = Bm25Index::build(&[text.as_str(), "alpha"], Tokenizer::Unicode61);
    assert_eq!(index.document_length(0), Some(180_000));
    let hits = index.search(&Bm25Query::from_text("alpha", Tokenizer::Unicode61), &Bm25Params::fts5(), None).unwrap();
    assert_eq!(hits.len(), 2);
    assert_eq!(hits[0].doc, 0, "term frequency saturates but still beats one occurrence");
}

/// The accumulation as it was before it visited only postings: a dense array of sums over the
/// whole corpus, matches filtered after. The sparse one must give the same hits, bit for bit.
fn dense_hits(index: &Bm25Index, query: &Bm25Query, params: &Bm25Params) -> Vec<(usize, u64)> {
    let count = index.len();
    let (mut scores, mut matched) = (vec![0.0f64; count], vec![0usize; count]);
    for phrase in &query.phrases {
        let frequencies = index.phrase_frequencies(phrase);
        let phrase_idf = idf(params.idf, count, frequencies.len());
        for &(doc, frequency) in frequencies.iter() {
            let relative_length = index.document_length(doc).unwrap() as f64 / index.average_length();
            let frequency = frequency as f64;
            scores[doc] += phrase_idf * (frequency * (params.k1 + 1.0))
                / (frequency + params.k1 * (1.0 - params.b + params.b * relative_length));
            matched[doc] += 1;
        }
    }
    let needed = query.phrases.len();
    let mut hits: Vec<(usize, f64)> = (0..count)
        .filter(|&doc| match params.mode {
            QueryMode::Or => matched[doc] > 0,
            QueryMode::And => needed > 0 && matched[doc] == needed,
        })
        .map(|doc| (doc, scores[doc]))
        .collect();
    hits.sort_by(|left, right| right.1.total_cmp(&left.1).then(left.0.cmp(&right.0)));
    hits.into_iter().map(|(doc, score)| (doc, score.to_bits())).collect()
}

mod sparse {
    use proptest::prelude::*;

    use super::*;

    const WORDS: [&str; 7] = ["alpha", "beta", "gamma", "delta", "eps", "zeta", "unseen"];

    fn words(count: std::ops::RangeInclusive<usize>) -> impl Strategy<Value = Vec<&'static str>> {
        prop::collection::vec(prop::sample::select(&WORDS[..6]), count)
    }

    proptest! {
        #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::with_cases(512) })]

        #[test]
        fn visiting_only_postings_gives_the_dense_accumulations_hits(
            documents in prop::collection::vec(words(0..=12), 0..=40),
            phrases in prop::collection::vec(prop::collection::vec(prop::sample::select(&WORDS[..]), 1..=2), 0..=4),
            and in any::<bool>(),
            fts5 in any::<bool>(),
            limit in prop::option::of(0usize..=10),
        ) {
            let texts: Vec<String> = documents.iter().map(|words| words.join(" ")).collect();
            let index = Bm25Index::build(&texts, Tokenizer::Unicode61);
            let query = Bm25Query { phrases: phrases.iter().map(|p| p.iter().map(|w| w.to_string()).collect()).collect() };
            let base = if fts5 { Bm25Params::fts5() } else { Bm25Params::benchmark() };
            let params = Bm25Params { mode: if and { QueryMode::And } else { QueryMode::Or }, ..base };
            let mut expected = dense_hits(&index, &query, &params);
            let all: Vec<(usize, u64)> =
                index.search(&query, &params, None).unwrap().iter().map(|hit| (hit.doc, hit.score.to_bits())).collect();
            prop_assert_eq!(&all, &expected);
            if let Some(limit) = limit {
                expected.truncate(limit);
                let limited: Vec<(usize, u64)> =
                    index.search(&query, &params, Some(limit)).unwrap().iter().map(|hit| (hit.doc, hit.score.to_bits())).collect();
                prop_assert_eq!(limited, expected);
            }
        }
    }
}

#[test]
fn an_index_rebuilt_from_its_parts_scores_exactly_as_the_original() {
    let index = tv2_index();
    let (terms, documents) = index.parts();
    let rebuilt = Bm25Index::from_parts(
        index.tokenizer(),
        terms.iter().map(|term| term.to_string()).collect(),
        documents.to_vec(),
    )
    .unwrap();
    assert_eq!(rebuilt.len(), index.len());
    assert_eq!(rebuilt.average_length(), index.average_length());
    for query in ["alice tea", "coffee", "alice", "tea OR coffee", "missing"] {
        let query = Bm25Query::from_text(query, index.tokenizer());
        for params in [Bm25Params::fts5(), Bm25Params::benchmark()] {
            assert_eq!(rebuilt.search(&query, &params, None).unwrap(), index.search(&query, &params, None).unwrap());
            assert_eq!(rebuilt.rank_all(&query, &params).unwrap(), index.rank_all(&query, &params).unwrap());
        }
    }
}

#[test]
fn parts_that_name_a_missing_term_or_repeat_one_are_refused() {
    let error = Bm25Index::from_parts(Tokenizer::Benchmark, vec!["a".into()], vec![vec![0, 1]]).unwrap_err();
    assert_eq!(error, "document 0 has term 1 of a vocabulary of 1");
    let error = Bm25Index::from_parts(Tokenizer::Benchmark, vec!["a".into(), "a".into()], vec![vec![0]]).unwrap_err();
    assert_eq!(error, "the vocabulary repeats a term");
}
