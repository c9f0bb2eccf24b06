//! Specification of `mmr.rs`: openclaw-memory.md §7 TV5, the Jaccard rules of §3.6, a
//! hand-worked benchmark (embedding) example, ties and the rejected inputs.

use super::*;

/// TV5: A 0.80 `Alice prefers green tea.`, B 0.79 `alice prefers GREEN tea`, C 0.75 `Bob fixed
/// the build`, D 0.60 `weather was cold`.
const TV5_SCORES: [f64; 4] = [0.80, 0.79, 0.75, 0.60];
const TV5_SNIPPETS: [&str; 4] =
    ["Alice prefers green tea.", "alice prefers GREEN tea", "Bob fixed the build", "weather was cold"];

fn tv5(lambda: f64) -> Vec<char> {
    let options = MmrOptions { lambda, ..MmrOptions::default() };
    let order = rerank_by_text(&TV5_SCORES, &TV5_SNIPPETS, &options).unwrap();
    order.into_iter().map(|index| ['A', 'B', 'C', 'D'][index]).collect()
}

fn set(tokens: &[&str]) -> HashSet<String> {
    tokens.iter().map(|token| token.to_string()).collect()
}

// TV5: relevance 1, 0.95, 0.75, 0; pick A; then B = 0.365, C = 0.525, D = 0 → C; then B, D.
#[test]
fn tv5_lambda_0_7_picks_a_c_b_d() {
    assert_eq!(tv5(0.7), ['A', 'C', 'B', 'D']);
}

// TV5: "With λ = 0.5: [A, C, D, B]."
#[test]
fn tv5_lambda_0_5_picks_a_c_d_b() {
    assert_eq!(tv5(0.5), ['A', 'C', 'D', 'B']);
}

// TV5: "With λ = 1 (or MMR off): [A, B, C, D]"; §3.6: λ = 1 means plain sort.
#[test]
fn tv5_lambda_1_is_the_plain_order() {
    assert_eq!(tv5(1.0), ['A', 'B', 'C', 'D']);
    assert_eq!(tv5(7.0), ['A', 'B', 'C', 'D'], "λ is clamped to [0, 1]");
}

// TV5: "Jaccard({a,b,c,d,e}, {a,b,c,d}) = 0.8."
#[test]
fn tv5_jaccard_of_five_and_four_shared_tokens_is_0_8() {
    assert!((jaccard(&set(&["a", "b", "c", "d", "e"]), &set(&["a", "b", "c", "d"])) - 0.8).abs() < 1e-12);
}

// §3.6: Jaccard(∅,∅) = 1; Jaccard(∅, X) = 0.
#[test]
fn jaccard_of_empty_sets() {
    assert_eq!(jaccard(&set(&[]), &set(&[])), 1.0);
    assert_eq!(jaccard(&set(&[]), &set(&["x"])), 0.0);
}

// §3.6: lowercase, runs of [a-z0-9_]; accented Latin letters separate; CJK unigrams + bigrams.
#[test]
fn token_set_follows_openclaw_rules() {
    assert_eq!(token_set("Alice prefers GREEN tea."), set(&["alice", "prefers", "green", "tea"]));
    assert_eq!(token_set("café memory_search"), set(&["caf", "memory_search"]));
    assert_eq!(token_set("東京タワー x"), set(&["東", "京", "タ", "ワ", "ー", "東京", "京タ", "タワ", "ワー", "x"]));
    assert_eq!(token_set("我a你"), set(&["我", "你", "a"]), "no bigram across a non-CJK character");
    assert!(token_set("  ?! ").is_empty());
}

// §3.6: "If all scores are equal, relevance = 1 for every item."
#[test]
fn equal_scores_give_full_relevance_and_diversity_decides() {
    let scores = [0.5, 0.5, 0.5];
    let texts = ["red apple", "red apple pie", "blue sky"];
    assert_eq!(rerank_by_text(&scores, &texts, &MmrOptions::default()).unwrap(), [0, 2, 1]);
}

// Tie on the objective goes to the higher original score even when it comes later in the list.
// λ = 0.5, P picked first; Q: 0.5·0.5 − 0.5·J({a,b},{a,b,c,d}) = 0.25 − 0.25 = 0; R: 0 − 0 = 0.
#[test]
fn objective_ties_go_to_the_higher_score_then_the_earlier_item() {
    let scores = [1.0, 0.0, 0.5];
    let texts = ["a b", "x", "a b c d"];
    let options = MmrOptions { lambda: 0.5, ..MmrOptions::default() };
    assert_eq!(rerank_by_text(&scores, &texts, &options).unwrap(), [0, 2, 1]);
    let same = rerank_by_text(&[0.4, 0.4], &["same", "same"], &MmrOptions::default()).unwrap();
    assert_eq!(same, [0, 1]);
}

/// The benchmark variant by hand: A 0.5 [1,0], B 0.45 [1,0] (same direction as A), C 0.3 [0,1];
/// λ 0.7 on raw scores, top 2. Pick A (0.35); then B = 0.315 − 0.3·1 = 0.015, C = 0.21 − 0 = 0.21.
#[test]
fn benchmark_variant_uses_raw_scores_cosine_and_stops_at_the_limit() {
    let vectors: [&[f32]; 3] = [&[1.0, 0.0], &[2.0, 0.0], &[0.0, 1.0]];
    let options = MmrOptions { limit: Some(2), ..MmrOptions::benchmark() };
    assert_eq!(rerank_by_embedding(&[0.5, 0.45, 0.3], &vectors, &options).unwrap(), [0, 2]);
    let six = rerank_by_embedding(&[0.5, 0.45, 0.3], &vectors, &MmrOptions::benchmark()).unwrap();
    assert_eq!(six, [0, 2, 1], "a limit above the list length returns the whole list");
}

#[test]
fn negative_cosine_lowers_the_penalty_below_zero() {
    // B points away from A, so its penalty is negative and it beats the more relevant C.
    let vectors: [&[f32]; 3] = [&[1.0, 0.0], &[-1.0, 0.0], &[1.0, 0.1]];
    let options = MmrOptions { lambda: 0.5, ..MmrOptions::benchmark() };
    assert_eq!(rerank_by_embedding(&[0.9, 0.1, 0.5], &vectors, &options).unwrap()[..2], [0, 1]);
}

#[test]
fn empty_and_single_item_lists() {
    assert!(rerank_by_text(&[], &[], &MmrOptions::default()).unwrap().is_empty());
    assert_eq!(rerank_by_text(&[0.3], &["only"], &MmrOptions::default()).unwrap(), [0]);
    assert!(rerank_by_embedding(&[], &[], &MmrOptions::benchmark()).unwrap().is_empty());
}

#[test]
fn invalid_inputs_are_rejected() {
    let options = MmrOptions::default();
    assert_eq!(rerank_by_text(&[0.1], &[], &options), Err(MmrError::LengthMismatch { scores: 1, items: 0 }));
    assert!(matches!(
        rerank_by_text(&[0.1, f64::NAN], &["a", "b"], &options),
        Err(MmrError::NonFiniteScore { index: 1, .. })
    ));
    let nan_lambda = MmrOptions { lambda: f64::NAN, ..options };
    assert!(matches!(rerank_by_text(&[0.1], &["a"], &nan_lambda), Err(MmrError::InvalidLambda { .. })));
    let vectors: [&[f32]; 2] = [&[1.0, 0.0], &[1.0]];
    assert!(matches!(rerank_by_embedding(&[0.2, 0.1], &vectors, &options), Err(MmrError::Vector(_))));
}

#[test]
fn options_deserialize_with_openclaw_defaults() {
    let options: MmrOptions = serde_json::from_str(r#"{"lambda": 0.5}"#).unwrap();
    assert_eq!(options, MmrOptions { lambda: 0.5, ..MmrOptions::default() });
    assert!(serde_json::from_str::<MmrOptions>(r#"{"lamda": 0.5}"#).is_err());
}
