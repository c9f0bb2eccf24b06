//! Combining a query's posting lists: per phrase, the `(document, occurrences)` pairs in
//! ascending document order, into each matching document's BM25 sum. OR takes the union, AND
//! the intersection; either way a query costs its postings, not the corpus.
//!
//! Every score is `0.0 + term₁ + term₂ + …` with the terms in query order, the sum FTS5 forms,
//! so the result does not depend on which list is walked first. Knows nothing of BM25's formula:
//! the caller passes it as `term(phrase, document, occurrences)`.

/// One phrase's postings, ascending by document.
pub type Postings<'a> = &'a [(usize, usize)];

/// The documents in every list, ascending, with their sums. Walks the shortest list and
/// gallops through the others, so a rare word with a common one costs about the rare one.
pub fn intersection(lists: &[Postings<'_>], term: impl Fn(usize, usize, usize) -> f64) -> Vec<(usize, f64)> {
    let Some(shortest) = lists.iter().min_by_key(|list| list.len()) else {
        return Vec::new();
    };
    let mut cursors = vec![0usize; lists.len()];
    let mut found = Vec::new();
    'documents: for &(doc, _) in shortest.iter() {
        let mut score = 0.0;
        for (phrase, (list, cursor)) in lists.iter().zip(cursors.iter_mut()).enumerate() {
            *cursor = seek(list, *cursor, doc);
            match list.get(*cursor) {
                Some(&(found_doc, occurrences)) if found_doc == doc => score += term(phrase, doc, occurrences),
                _ => continue 'documents,
            }
        }
        found.push((doc, score));
    }
    found
}

/// The documents in any list, ascending, with their sums (a merge per list).
pub fn union(lists: &[Postings<'_>], term: impl Fn(usize, usize, usize) -> f64) -> Vec<(usize, f64)> {
    let mut sums: Vec<(usize, f64)> = Vec::new();
    for (phrase, list) in lists.iter().enumerate() {
        let mut merged = Vec::with_capacity(sums.len() + list.len());
        let mut earlier = sums.iter().copied().peekable();
        for &(doc, occurrences) in list.iter() {
            merged.extend(std::iter::from_fn(|| earlier.next_if(|&(before, _)| before < doc)));
            let sum = earlier.next_if(|&(same, _)| same == doc).map_or(0.0, |(_, sum)| sum);
            merged.push((doc, sum + term(phrase, doc, occurrences)));
        }
        merged.extend(earlier);
        sums = merged;
    }
    sums
}

/// The first position at or after `from` whose document is ≥ `doc` (`list.len()` if none):
/// doubling steps, then a binary search inside the last step.
fn seek(list: Postings<'_>, from: usize, doc: usize) -> usize {
    let before = |position: usize| list.get(position).is_some_and(|&(at, _)| at < doc);
    if !before(from) {
        return from;
    }
    let mut step = 1;
    while before(from + step) {
        step *= 2;
    }
    // Everything up to `from + step / 2` is before `doc`; the answer is in the rest of the step.
    let low = from + step / 2 + 1;
    let high = (from + step).min(list.len());
    low + list.get(low..high).map_or(0, |window| window.partition_point(|&(at, _)| at < doc))
}

#[cfg(test)]
#[path = "postings_tests.rs"]
mod tests;
