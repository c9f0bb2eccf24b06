//! Specification of `postings.rs`: the union and the intersection of sorted lists, each sum
//! formed in query order, and the galloping seek agreeing with a plain binary search.

use proptest::prelude::*;

use super::*;

/// A term that tells phrases, documents and occurrences apart, and rounds (so order matters).
fn term(phrase: usize, doc: usize, occurrences: usize) -> f64 {
    (phrase as f64 + 1.0) / 3.0 + doc as f64 * 1e-3 + occurrences as f64 / 7.0
}

/// Each document's sum over the lists holding it, in list order: `0.0 + term₁ + …`.
fn naive(lists: &[Vec<(usize, usize)>], all: bool) -> Vec<(usize, u64)> {
    let mut docs: Vec<usize> = lists.iter().flatten().map(|&(doc, _)| doc).collect();
    docs.sort_unstable();
    docs.dedup();
    docs.into_iter()
        .filter_map(|doc| {
            let mut sum = 0.0;
            let mut holding = 0;
            for (phrase, list) in lists.iter().enumerate() {
                if let Some(&(_, occurrences)) = list.iter().find(|&&(at, _)| at == doc) {
                    sum += term(phrase, doc, occurrences);
                    holding += 1;
                }
            }
            (holding == lists.len() || !all).then_some((doc, sum.to_bits()))
        })
        .collect()
}

fn bits(found: Vec<(usize, f64)>) -> Vec<(usize, u64)> {
    found.into_iter().map(|(doc, sum)| (doc, sum.to_bits())).collect()
}

fn lists() -> impl Strategy<Value = Vec<Vec<(usize, usize)>>> {
    let list = prop::collection::btree_map(0usize..200, 1usize..4, 0..80)
        .prop_map(|entries| entries.into_iter().collect::<Vec<_>>());
    prop::collection::vec(list, 0..5)
}

proptest! {
    #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::with_cases(512) })]

    #[test]
    fn the_intersection_holds_the_documents_in_every_list(lists in lists()) {
        let slices: Vec<Postings<'_>> = lists.iter().map(Vec::as_slice).collect();
        let expected = if lists.is_empty() { Vec::new() } else { naive(&lists, true) };
        prop_assert_eq!(bits(intersection(&slices, term)), expected);
    }

    #[test]
    fn the_union_holds_the_documents_in_any_list(lists in lists()) {
        let slices: Vec<Postings<'_>> = lists.iter().map(Vec::as_slice).collect();
        prop_assert_eq!(bits(union(&slices, term)), naive(&lists, false));
    }

    #[test]
    fn seeking_finds_what_a_binary_search_finds(
        list in prop::collection::btree_set(0usize..1000, 0..300),
        from in 0usize..320,
        doc in 0usize..1100,
    ) {
        let list: Vec<(usize, usize)> = list.into_iter().map(|doc| (doc, 1)).collect();
        let from = from.min(list.len());
        let expected = from + list[from..].partition_point(|&(at, _)| at < doc);
        prop_assert_eq!(seek(&list, from, doc), expected);
    }
}

#[test]
fn a_phrase_listed_twice_counts_twice() {
    let list = [(2, 1), (5, 3)];
    let found = intersection(&[&list, &list], term);
    assert_eq!(found.iter().map(|&(doc, _)| doc).collect::<Vec<_>>(), [2, 5]);
    assert_eq!(found[0].1, 0.0 + term(0, 2, 1) + term(1, 2, 1));
}

#[test]
fn an_empty_list_empties_the_intersection_but_not_the_union() {
    let list = [(1, 1), (4, 2)];
    assert!(intersection(&[&list, &[]], term).is_empty());
    assert_eq!(union(&[&list, &[]], term).len(), 2);
    assert!(intersection(&[], term).is_empty());
}
