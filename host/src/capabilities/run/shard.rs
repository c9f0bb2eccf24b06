//! Splitting a run's units of work (prompts, evals, sets, scenarios) between shards, and what
//! a run records of it so that `host merge` can check that its shards belong together.
//!
//! A shard `I/N` takes the I-th of N contiguous, balanced blocks of the items the script hands
//! to `run::shard`: sizes differ by at most one (the first shards take the extra items), and
//! the shards' blocks, in shard order, are the items in their order, so the shards' tables
//! joined in shard order hold their rows in the order one unsharded run writes them.

use std::ops::Range;
use std::str::FromStr;
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

/// `--shard I/N`: this run is shard I (1-based) of N.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ShardError {
    #[error("`{given}` is not a shard; hint: write I/N with 1 ≤ I ≤ N, e.g. `--shard 2/8`")]
    Syntax { given: String },
    #[error(
        "the units differ from the ones the shards split: call {call} of `run::shard` got {total} items (sha256 {sha256}), the shards got {expected_total} (sha256 {expected_sha256}); hint: merge with the inputs and arguments the shards ran with"
    )]
    UnitsDiffer { call: usize, total: usize, sha256: String, expected_total: usize, expected_sha256: String },
    #[error(
        "`run::shard` is called more often than in the runs being reported ({calls} calls there); hint: report with the script that produced them"
    )]
    ExtraCall { calls: usize },
}

impl FromStr for Shard {
    type Err = ShardError;

    fn from_str(given: &str) -> Result<Self, Self::Err> {
        let syntax = || ShardError::Syntax { given: given.to_owned() };
        let (index, count) = given.split_once('/').ok_or_else(syntax)?;
        let index: usize = index.trim().parse().map_err(|_| syntax())?;
        let count: usize = count.trim().parse().map_err(|_| syntax())?;
        if index == 0 || count == 0 || index > count {
            return Err(syntax());
        }
        Ok(Shard { index, count })
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl Shard {
    /// This shard's block of `items` items.
    pub fn range(&self, items: usize) -> Range<usize> {
        let (base, extra) = (items / self.count, items % self.count);
        let before = self.index - 1;
        let start = before * base + before.min(extra);
        let len = base + usize::from(before < extra);
        start..start + len
    }
}

/// One call of `run::shard`: how many items it got, which block this run took, and the items'
/// sha256 (of their JSON), so that a merge can tell that every shard split the same list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnitsRecord {
    pub total: usize,
    /// The block's first item, 0-based, and its length.
    pub first: usize,
    pub count: usize,
    pub sha256: String,
}

/// How a run treats `run::shard`: a run does its block of the units; a report (`host merge`,
/// `host report`) takes the block of the runs it reports (all units for a merge), checked
/// against what they split.
#[derive(Debug, Clone, Default)]
pub enum Sharding {
    #[default]
    Whole,
    Part(Shard),
    Report {
        /// What the reported runs recorded, call by call.
        expected: Vec<UnitsRecord>,
        /// The one shard reported alone (`host report` of a shard's run); `None`: all units.
        part: Option<Shard>,
    },
}

/// The calls of `run::shard` a run made, for its manifest.
#[derive(Debug, Clone, Default)]
pub struct Units(Arc<Mutex<Vec<UnitsRecord>>>);

impl Units {
    pub fn records(&self) -> Vec<UnitsRecord> {
        self.0.lock().map(|records| records.clone()).unwrap_or_default()
    }

    /// The block of `total` items (hashed as `sha256`) this run takes, recorded.
    pub fn take(&self, sharding: &Sharding, total: usize, sha256: String) -> Result<Range<usize>, ShardError> {
        let mut records = match self.0.lock() {
            Ok(records) => records,
            Err(poisoned) => poisoned.into_inner(),
        };
        let range = match sharding {
            Sharding::Whole => 0..total,
            Sharding::Part(shard) => shard.range(total),
            Sharding::Report { expected, part } => {
                let call = records.len();
                let wanted = expected.get(call).ok_or(ShardError::ExtraCall { calls: expected.len() })?;
                if wanted.total != total || wanted.sha256 != sha256 {
                    return Err(ShardError::UnitsDiffer {
                        call: call + 1,
                        total,
                        sha256,
                        expected_total: wanted.total,
                        expected_sha256: wanted.sha256.clone(),
                    });
                }
                part.map_or(0..total, |shard| shard.range(total))
            }
        };
        records.push(UnitsRecord { total, first: range.start, count: range.len(), sha256 });
        Ok(range)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blocks(count: usize, items: usize) -> Vec<Range<usize>> {
        (1..=count).map(|index| Shard { index, count }.range(items)).collect()
    }

    #[test]
    fn shards_take_contiguous_balanced_blocks_that_cover_every_item_once_in_order() {
        for count in 1..=7 {
            for items in 0..=30 {
                let blocks = blocks(count, items);
                let joined: Vec<usize> = blocks.iter().flat_map(Clone::clone).collect();
                assert_eq!(joined, (0..items).collect::<Vec<_>>(), "{count} shards of {items}");
                let sizes: Vec<usize> = blocks.iter().map(ExactSizeIterator::len).collect();
                let (min, max) = (sizes.iter().min().copied(), sizes.iter().max().copied());
                assert!(max.zip(min).is_some_and(|(max, min)| max - min <= 1), "balanced: {sizes:?}");
            }
        }
        assert_eq!(blocks(3, 10), vec![0..4, 4..7, 7..10], "the first shards take the extra items");
        assert_eq!(blocks(4, 2), vec![0..1, 1..2, 2..2, 2..2], "more shards than items leaves some empty");
    }

    #[test]
    fn a_shard_is_written_i_of_n() {
        assert_eq!("2/8".parse(), Ok(Shard { index: 2, count: 8 }));
        for bad in ["0/3", "4/3", "1/0", "3", "a/b", "1/2/3", ""] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
    }

    #[test]
    fn a_report_takes_every_unit_but_only_of_the_list_the_shards_split() {
        let expected = vec![UnitsRecord { total: 3, first: 0, count: 1, sha256: "abc".into() }];
        let report = Sharding::Report { expected, part: None };
        let units = Units::default();
        assert_eq!(units.take(&report, 3, "abc".into()), Ok(0..3));
        let other = Units::default();
        assert!(matches!(other.take(&report, 4, "abd".into()), Err(ShardError::UnitsDiffer { call: 1, .. })));
        assert_eq!(units.take(&report, 3, "abc".into()), Err(ShardError::ExtraCall { calls: 1 }));
    }

    #[test]
    fn a_report_of_one_shard_takes_that_shards_block() {
        let expected = vec![UnitsRecord { total: 10, first: 4, count: 3, sha256: "abc".into() }];
        let report = Sharding::Report { expected, part: Some(Shard { index: 2, count: 3 }) };
        assert_eq!(Units::default().take(&report, 10, "abc".into()), Ok(4..7));
    }
}
