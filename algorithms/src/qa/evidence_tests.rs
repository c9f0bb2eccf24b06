//! Specification of `evidence.rs`: evidence recall at turn and at session level.

use super::*;

#[test]
fn turn_level_recall_is_the_share_of_evidence_turns_retrieved() {
    assert_eq!(evidence_recall(&["D1:3", "D2:8"], &["D1:3", "D5:1"]), 0.5);
    assert_eq!(evidence_recall(&["D1:3"], &["D1:30", "d1:3", "D1:3 "]), 0.0);
}

#[test]
fn session_level_recall_is_the_share_of_evidence_whose_session_was_retrieved() {
    // Sessions 2 and 7 retrieved: D2:8 and D2:9 are covered, D3:1 is not.
    assert!((evidence_recall(&["D2:8", "D2:9", "D3:1"], &["S2", "S7"]) - 2.0 / 3.0).abs() < 1e-12);
    // Sessions compare as text: S1 does not cover session 10.
    assert_eq!(evidence_recall(&["D10:2"], &["S1"]), 0.0);
}

#[test]
fn the_first_retrieved_id_decides_the_level() {
    // The first id is a turn, so S1 is compared as a turn id and covers nothing.
    assert_eq!(evidence_recall(&["D1:4"], &["D9:1", "S1"]), 0.0);
    // The first id is a session, so evidence is matched by session: session 1 is covered.
    assert_eq!(evidence_recall(&["D1:4"], &["S1", "D1:4"]), 1.0);
}

#[test]
fn repeated_evidence_counts_each_time() {
    assert!((evidence_recall(&["D1:1", "D1:1", "D2:2"], &["D1:1"]) - 2.0 / 3.0).abs() < 1e-12);
}

#[test]
fn no_evidence_scores_one_and_nothing_retrieved_scores_zero() {
    let none: [&str; 0] = [];
    assert_eq!(evidence_recall(&none, &["D1:1"]), 1.0);
    assert_eq!(evidence_recall(&["D1:1"], &none), 0.0);
}
