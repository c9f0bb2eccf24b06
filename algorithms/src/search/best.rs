//! The best `k` of a list under a total order, best first: a linear-time selection of the k,
//! then a sort of only those. With a total order the chosen set is unique, so this picks what
//! sorting the whole list and cutting it would. Every top-k of the search legs goes through it.

use std::cmp::Ordering;

pub fn best_k<T>(mut items: Vec<T>, k: usize, mut order: impl FnMut(&T, &T) -> Ordering) -> Vec<T> {
    if k == 0 {
        return Vec::new();
    }
    if k < items.len() {
        items.select_nth_unstable_by(k - 1, &mut order);
        items.truncate(k);
    }
    items.sort_unstable_by(order);
    items
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_best_k_come_first_in_order_and_a_k_past_the_end_keeps_everything() {
        let descending = |a: &i32, b: &i32| b.cmp(a);
        assert_eq!(best_k(vec![3, 9, 1, 7, 5], 3, descending), [9, 7, 5]);
        assert_eq!(best_k(vec![3, 9, 1], 10, descending), [9, 3, 1]);
        assert!(best_k(vec![3, 9, 1], 0, descending).is_empty());
    }
}
