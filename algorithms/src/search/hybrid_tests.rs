//! Specification of `hybrid.rs`: openclaw-memory.md §7 TV2 (score mapping), TV7 (K), the worked
//! consequences of §3.4, and the §3.1 selection rules.

use super::*;

fn leg(entries: &[(usize, f64)]) -> Vec<LegHit> {
    entries.iter().map(|&(doc, score)| LegHit { doc, score }).collect()
}

fn docs(hits: &[FusedHit]) -> Vec<usize> {
    hits.iter().map(|hit| hit.doc).collect()
}

fn close(actual: f64, expected: f64) -> bool {
    (actual - expected).abs() < 1e-6
}

// TV2: t = 1.958144/2.958144 = 0.661950 (D1), 0.620568 (D5); coffee: 0.520661 (D8), 0.494713 (D2).
#[test]
fn tv2_text_scores_after_the_2026_3_7_fix() {
    let mapping = TextScoreMapping::Saturating;
    assert!(close(text_score(-1.958144, mapping), 0.661950));
    assert!(close(text_score(-1.635521, mapping), 0.620568));
    assert!(close(text_score(-1.086204, mapping), 0.520661));
    assert!(close(text_score(-0.979072, mapping), 0.494713));
}

// TV2: "Pre-fix (≤2026.3.2): both t = 1.0."
#[test]
fn tv2_text_scores_before_the_fix_are_all_one() {
    assert_eq!(text_score(-1.958144, TextScoreMapping::Constant), 1.0);
    assert_eq!(text_score(-1.635521, TextScoreMapping::Constant), 1.0);
}

#[test]
fn rank_mapping_edge_cases() {
    // §3.2 trigram: "If only LIKE terms remain, rank = 0 and textScore = 1."
    assert_eq!(text_score(0.0, TextScoreMapping::Saturating), 1.0);
    assert_eq!(text_score(f64::NAN, TextScoreMapping::Saturating), 1.0 / 1000.0);
    assert_eq!(text_score(f64::NEG_INFINITY, TextScoreMapping::Constant), 1.0 / 1000.0);
    assert!(text_score(-1e-6, TextScoreMapping::Saturating) < 1e-5, "a floored-idf term gives t ≈ 0");
}

// TV7: "Tool maxResults = 10 gives K = 40 per leg." §3.1: default K = 24.
#[test]
fn tv7_candidate_pool_is_max_results_times_multiplier() {
    assert_eq!(HybridOptions::default().candidate_pool(), 24);
    assert_eq!(HybridOptions { max_results: 10, ..HybridOptions::default() }.candidate_pool(), 40);
}

#[test]
fn candidate_pool_is_capped_at_200_and_multiplier_clamped_to_1_through_20() {
    assert_eq!(HybridOptions { max_results: 100, ..HybridOptions::default() }.candidate_pool(), 200);
    assert_eq!(HybridOptions { candidate_multiplier: 0, ..HybridOptions::default() }.candidate_pool(), 6);
    assert_eq!(
        HybridOptions { candidate_multiplier: 50, max_results: 2, ..HybridOptions::default() }.candidate_pool(),
        40
    );
    assert_eq!(HybridOptions { max_results: 0, ..HybridOptions::default() }.candidate_pool(), 1);
}

// §3.4: "defaults exactly 0.7 / 0.3"; §6: each clamped to [0, 1], then normalised to sum 1.
#[test]
fn weights_are_clamped_then_normalised() {
    assert_eq!(HybridOptions::default().weights(), HybridWeights { vector: 0.7, text: 0.3 });
    let clamped = HybridOptions { vector_weight: 1.4, text_weight: 0.6, ..HybridOptions::default() }.weights();
    assert!(close(clamped.vector, 0.625) && close(clamped.text, 0.375));
    let doubled = HybridOptions { vector_weight: 0.2, text_weight: 0.2, ..HybridOptions::default() }.weights();
    assert_eq!(doubled, HybridWeights { vector: 0.5, text: 0.5 });
    let zero = HybridOptions { vector_weight: 0.0, text_weight: -3.0, ..HybridOptions::default() }.weights();
    assert_eq!(zero, HybridWeights { vector: 0.7, text: 0.3 });
}

#[test]
fn min_score_is_clamped_to_the_unit_interval() {
    assert_eq!(HybridOptions { min_score: 1.5, ..HybridOptions::default() }.min_score(), 1.0);
    assert_eq!(HybridOptions { min_score: -0.5, ..HybridOptions::default() }.min_score(), 0.0);
}

/// §3.4 with TV2's keyword leg: vector leg [chunk 2 cos 0.6, D1 cos 0.4], keyword leg [D1, D5].
/// D1 = 0.7·0.4 + 0.3·0.661950 = 0.478585; chunk 2 = 0.42; D5 = 0.3·0.620568 = 0.186170.
#[test]
fn merge_unions_by_chunk_in_leg_order_with_weighted_scores() {
    let vector = leg(&[(2, 0.6), (0, 0.4)]);
    let keyword = leg(&[(0, -1.958144), (4, -1.635521)]);
    let merged = merge(&vector, &keyword, &HybridOptions::default());
    assert_eq!(docs(&merged), [2, 0, 4]);
    assert!(close(merged[0].score, 0.42));
    assert!(close(merged[1].score, 0.478585));
    assert!(close(merged[2].score, 0.186170));
    assert_eq!(merged[2].vector, None, "keyword-only: vectorScore counts as 0");
    assert_eq!(merged[1].keyword.map(|leg| leg.raw), Some(-1.958144));
}

#[test]
fn merge_keeps_the_first_position_and_last_value_of_a_repeated_chunk() {
    let merged = merge(&leg(&[(1, 0.2), (1, 0.6)]), &leg(&[(1, -1.0), (1, -3.0)]), &HybridOptions::default());
    assert_eq!(merged.len(), 1);
    assert!(close(merged[0].score, 0.7 * 0.6 + 0.3 * 0.75));
}

// §3.4: "A vector-only hit needs cos ≥ 0.5 to reach minScore 0.35."
#[test]
fn vector_only_hit_passes_at_cosine_one_half() {
    let options = HybridOptions::default();
    let merged = merge(&leg(&[(0, 0.5), (1, 0.4999)]), &[], &options);
    assert_eq!(docs(&select(&merged, &options)), [0]);
}

// §3.4: a keyword-only hit never passes the strict threshold (0.3·t < 0.35), and after the
// 2026.3.7 fix not the relaxed 0.30 floor either (t < 1).
#[test]
fn keyword_only_hit_fails_both_thresholds_after_the_fix() {
    let options = HybridOptions::default();
    let merged = merge(&[], &leg(&[(0, -50.0)]), &options);
    assert!(merged[0].score < 0.30);
    assert!(select(&merged, &options).is_empty());
}

// §3.4 / TV6: before the fix a keyword-only hit passed the relaxed floor at exactly 0.30.
#[test]
fn keyword_only_hit_passes_the_relaxed_floor_before_the_fix() {
    let options = HybridOptions { text_score: TextScoreMapping::Constant, ..HybridOptions::default() };
    let merged = merge(&leg(&[(3, 0.1)]), &leg(&[(0, -0.2), (1, -9.0)]), &options);
    assert_eq!(merged.iter().map(|hit| hit.score).collect::<Vec<_>>()[1..], [0.3, 0.3]);
    assert_eq!(docs(&select(&merged, &options)), [0, 1], "vector-only chunk 3 (0.07) stays out");
}

#[test]
fn strict_hits_win_over_the_relaxed_floor_and_are_cut_to_max_results() {
    let options = HybridOptions { max_results: 2, text_score: TextScoreMapping::Constant, ..HybridOptions::default() };
    let merged = merge(&leg(&[(0, 0.9), (1, 0.8), (2, 0.7)]), &leg(&[(5, -1.0)]), &options);
    assert_eq!(docs(&select(&merged, &options)), [0, 1]);
}

#[test]
fn relaxed_floor_is_not_used_without_a_keyword_leg() {
    let options = HybridOptions::default();
    let merged = merge(&leg(&[(0, 0.45)]), &[], &options);
    assert!(select(&merged, &options).is_empty());
}

#[test]
fn vector_only_path_filters_raw_cosines() {
    let options = HybridOptions { max_results: 2, ..HybridOptions::default() };
    let hits = vector_only(&leg(&[(0, 0.9), (1, 0.2), (2, 0.35), (3, 0.8)]), &options);
    assert_eq!(hits.iter().map(|hit| hit.doc).collect::<Vec<_>>(), [0, 2]);
}

#[test]
fn empty_legs_select_nothing() {
    let options = HybridOptions::default();
    assert!(merge(&[], &[], &options).is_empty());
    assert!(select(&[], &options).is_empty());
}

#[test]
fn options_deserialize_with_openclaw_defaults() {
    let options: HybridOptions = serde_json::from_str(r#"{"max_results": 10}"#).unwrap();
    assert_eq!(options, HybridOptions { max_results: 10, ..HybridOptions::default() });
    let legacy: HybridOptions = serde_json::from_str(r#"{"text_score": "constant"}"#).unwrap();
    assert_eq!(legacy.text_score, TextScoreMapping::Constant);
    assert!(serde_json::from_str::<HybridOptions>(r#"{"maxResults": 10}"#).is_err());
}
