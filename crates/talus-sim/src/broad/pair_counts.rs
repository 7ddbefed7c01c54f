//! How many regions of the sweep and prune show each pair overlapping (see
//! [`super::SweepAndPrune`]), and the crossings of zero in one update.
//!
//! The counts are looked up on every exchange that starts or stops an overlap in some
//! region, and those come from boxes that are neighbours in space. A hash map scatters the
//! pairs of neighbouring boxes over its whole table, so that at 10⁵ boxes nearly every
//! look-up misses the cache and the broad phase's cost per box grows with the bed. Here the
//! pairs are kept by their smaller proxy, in a row of a few entries per proxy (two cache
//! lines): once the proxies are numbered along a space-filling curve ([`crate::renumber`]),
//! the boxes of one region have nearby numbers and their rows lie close together. A proxy
//! with more pairs than its row holds keeps the rest in a hash map (a fixed hasher: runs
//! are reproducible).
//!
//! Nothing read from the store depends on where a pair is kept: the events are read off the
//! crossings sorted by pair, and [`PairCounts::keys`] is sorted by its callers.

use std::collections::hash_map::Entry;

use rustc_hash::FxHashMap;

use super::{PairEvents, ProxyPair};

/// Entries per row: a box of a dense bed overlaps its 26 neighbours' boxes, on average half
/// of them numbered above it but, along a space-filling curve, up to nearly all (12 entries
/// sent half the rows of a 10⁵-box bed to the overflow map).
const ROW: usize = 24;

/// No pair in this entry.
const EMPTY: u32 = u32::MAX;

/// The pairs of one proxy with larger proxies: the other proxy and the count of each (at
/// most [`super::sap::MAX_REGIONS_PER_BOX`], the regions a box may touch), and how many more
/// are kept in the overflow map. 128 bytes, two cache lines.
#[derive(Debug, Clone, Copy)]
#[repr(C, align(64))]
struct Row {
    other: [u32; ROW],
    count: [u8; ROW],
    spilled: u32,
}

impl Row {
    const VACANT: Row = Row {
        other: [EMPTY; ROW],
        count: [0; ROW],
        spilled: 0,
    };

    /// The entry holding the pair with `b`.
    #[inline]
    fn find(&self, b: u32) -> Option<usize> {
        self.other.iter().position(|&o| o == b)
    }
}

/// A pair as one integer, smaller index in the high half: orders like [`ProxyPair`].
#[inline]
pub(super) fn pair_key(x: u32, y: u32) -> u64 {
    let (a, b) = if x < y { (x, y) } else { (y, x) };
    (u64::from(a) << 32) | u64::from(b)
}

/// The pair of a [`pair_key`].
pub(super) fn unpack(k: u64) -> ProxyPair {
    ProxyPair {
        a: (k >> 32) as u32,
        b: k as u32,
    }
}

/// The count of every pair shown by some region, and the crossings of zero this update.
///
/// Each event costs one look-up: a count reaching zero is removed where it is found, and
/// the events are read off the crossings sorted by pair, not looked up again.
#[derive(Debug, Clone, Default)]
pub(super) struct PairCounts {
    /// Per proxy, its pairs with larger proxies.
    rows: Vec<Row>,
    /// The pairs a full row could not take.
    overflow: FxHashMap<u64, u32>,
    /// Pairs with a positive count.
    len: usize,
    /// The crossings of zero this update: +1 for a count leaving zero, −1 for one reaching
    /// it. A pair's crossings alternate, so their sum is its event: +1 started, −1 ended, 0
    /// none (it started and stopped, or stopped and started again, within the update).
    crossings: Vec<(u64, i8)>,
}

impl PairCounts {
    /// The row of proxy `a`, made when it is new.
    #[inline]
    fn row(&mut self, a: u32) -> &mut Row {
        let a = a as usize;
        if a >= self.rows.len() {
            self.rows.resize(a + 1, Row::VACANT);
        }
        &mut self.rows[a]
    }

    /// Makes a row for every proxy below `proxies`, and room in the overflow map for a
    /// quarter of them (few proxies have more than a row of pairs with larger ones), so that
    /// an update allocates nothing once the proxies are known.
    pub(super) fn fit(&mut self, proxies: usize) {
        if self.rows.len() < proxies {
            self.rows.resize(proxies, Row::VACANT);
            let room = (proxies / 4).max(16);
            if self.overflow.capacity() < room {
                self.overflow.reserve(room - self.overflow.len());
            }
        }
    }

    /// Adds `by` to the count of pair `k`; whether the pair is new.
    fn add(&mut self, k: u64, by: u32) -> bool {
        // A pair is counted by the regions both boxes touch.
        debug_assert!(u64::from(by) <= super::sap::MAX_REGIONS_PER_BOX);
        let (a, b) = ((k >> 32) as u32, k as u32);
        let row = self.row(a);
        if let Some(e) = row.find(b) {
            row.count[e] += by as u8;
            return false;
        }
        if row.spilled > 0 {
            if let Some(count) = self.overflow.get_mut(&k) {
                *count += by;
                return false;
            }
        }
        let row = self.row(a);
        if let Some(e) = row.find(EMPTY) {
            row.other[e] = b;
            row.count[e] = by as u8;
        } else {
            row.spilled += 1;
            self.overflow.insert(k, by);
        }
        self.len += 1;
        true
    }

    /// One more region shows pair `k`.
    #[inline]
    pub(super) fn inc(&mut self, k: u64) {
        if self.add(k, 1) {
            self.crossings.push((k, 1));
        }
    }

    /// One region fewer shows pair `k`.
    #[inline]
    pub(super) fn dec(&mut self, k: u64) {
        let (a, b) = ((k >> 32) as u32, k as u32);
        let row = self.row(a);
        let gone = if let Some(e) = row.find(b) {
            row.count[e] -= 1;
            let gone = row.count[e] == 0;
            if gone {
                row.other[e] = EMPTY;
            }
            gone
        } else {
            match self.overflow.entry(k) {
                Entry::Occupied(mut o) => {
                    *o.get_mut() -= 1;
                    let gone = *o.get() == 0;
                    if gone {
                        o.remove();
                        self.rows[a as usize].spilled -= 1;
                    }
                    gone
                }
                Entry::Vacant(_) => {
                    debug_assert!(false, "pair {k:#x} removed but never added");
                    false
                }
            }
        };
        if gone {
            self.len -= 1;
            self.crossings.push((k, -1));
        }
    }

    /// How many pairs have a positive count.
    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// The pairs with a positive count, in no particular order.
    pub(super) fn keys(&self) -> impl Iterator<Item = u64> + '_ {
        let in_rows = self.rows.iter().enumerate().flat_map(|(a, row)| {
            row.other
                .iter()
                .filter(|&&b| b != EMPTY)
                .map(move |&b| (a as u64) << 32 | u64::from(b))
        });
        in_rows.chain(self.overflow.keys().copied())
    }

    /// The counts under new proxy names, through `scratch` (no allocation once it has held
    /// as many counts).
    pub(super) fn renumber(&mut self, new_of: &[u32], scratch: &mut Vec<(u64, u32)>) {
        debug_assert!(self.crossings.is_empty());
        scratch.clear();
        // Half again as many: a count that wanders up in a settled bed does not reallocate at
        // every new high.
        if scratch.capacity() < self.len {
            scratch.reserve(self.len + self.len / 2);
        }
        for (a, row) in self.rows.iter_mut().enumerate() {
            for (other, &count) in row.other.iter_mut().zip(&row.count) {
                if *other != EMPTY {
                    scratch.push(((a as u64) << 32 | u64::from(*other), u32::from(count)));
                    *other = EMPTY;
                }
            }
            row.spilled = 0;
        }
        scratch.extend(self.overflow.drain());
        self.len = 0;
        for &(k, count) in scratch.iter() {
            let pair = unpack(k).renamed(new_of);
            self.add(pair_key(pair.a, pair.b), count);
        }
    }

    /// Ends an update: appends the net change of each pair that crossed zero to `events`,
    /// sorted.
    pub(super) fn finish(&mut self, events: &mut PairEvents) {
        self.crossings.sort_unstable_by_key(|c| c.0);
        let mut i = 0;
        while i < self.crossings.len() {
            let k = self.crossings[i].0;
            let mut net = 0i32;
            while i < self.crossings.len() && self.crossings[i].0 == k {
                net += i32::from(self.crossings[i].1);
                i += 1;
            }
            debug_assert!((-1..=1).contains(&net));
            match net {
                1 => events.started.push(unpack(k)),
                -1 => events.ended.push(unpack(k)),
                _ => {}
            }
        }
        self.crossings.clear();
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    use super::*;

    /// The store against a plain map, for proxies with many pairs (rows overflowing) and
    /// few, through increments, decrements, renumbering and the events of each update.
    #[test]
    fn counts_and_events_match_a_map() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let mut counts = PairCounts::default();
        let mut oracle: BTreeMap<u64, u32> = BTreeMap::new();
        let n = 40u32;
        for update in 0..200 {
            let before: Vec<u64> = oracle.keys().copied().collect();
            for _ in 0..60 {
                // Proxy 0 pairs with everyone (its row overflows); the others with a few.
                let a = if rng.random_bool(0.3) {
                    0
                } else {
                    rng.random_range(1..n)
                };
                let b = rng.random_range(0..n);
                if a == b {
                    continue;
                }
                let k = pair_key(a, b);
                let present = oracle.get(&k).copied().unwrap_or(0);
                if present > 0 && rng.random_bool(0.5) {
                    counts.dec(k);
                    if present == 1 {
                        oracle.remove(&k);
                    } else {
                        oracle.insert(k, present - 1);
                    }
                } else {
                    counts.inc(k);
                    oracle.insert(k, present + 1);
                }
            }
            let mut events = PairEvents::default();
            counts.finish(&mut events);
            let after: Vec<u64> = oracle.keys().copied().collect();
            let started: Vec<ProxyPair> = after
                .iter()
                .filter(|k| before.binary_search(k).is_err())
                .map(|&k| unpack(k))
                .collect();
            let ended: Vec<ProxyPair> = before
                .iter()
                .filter(|k| after.binary_search(k).is_err())
                .map(|&k| unpack(k))
                .collect();
            assert_eq!(events.started, started, "update {update}");
            assert_eq!(events.ended, ended, "update {update}");
            let mut keys: Vec<u64> = counts.keys().collect();
            keys.sort_unstable();
            assert_eq!(keys, after);
            assert_eq!(counts.len(), oracle.len());
            if update % 50 == 49 {
                // Reverse the proxy numbers.
                let new_of: Vec<u32> = (0..n).rev().collect();
                let mut scratch = Vec::new();
                counts.renumber(&new_of, &mut scratch);
                oracle = oracle
                    .into_iter()
                    .map(|(k, c)| {
                        let p = unpack(k).renamed(&new_of);
                        (pair_key(p.a, p.b), c)
                    })
                    .collect();
            }
        }
        assert!(!counts.overflow.is_empty(), "the test must overflow a row");
    }
}
