//! Brute force: every pair of boxes tested at every update, O(n²) (thesis §4, the "einfacher
//! Algorithmus" whose cost §4.1 sets out to avoid). The oracle the other methods are tested
//! against, and the home of the pieces they share: which slots hold a box, and turning a
//! freshly computed pair list into events.

use talus_geom::Aabb;

use super::{BroadPhase, PairEvents, ProxyPair};

/// The box in a slot, if it is one the broad phase takes part: `None` for an empty slot, for
/// a box with a NaN coordinate and for an inverted box (`min > max` on some axis).
///
/// Boxes must not contain NaN (see [`BroadPhase::update`]); treating such a box, and an
/// inverted one, as absent is the one rule all four methods agree on without testing it
/// specially, and an inverted box holds no point, so it overlaps nothing. `cmple` is false
/// for NaN, so the single comparison covers both.
pub(super) fn live(slot: &Option<Aabb>) -> Option<&Aabb> {
    slot.as_ref().filter(|b| b.min.cmple(b.max).all())
}

/// The number of slots a method looks at: proxies are `u32`, so slots past `u32::MAX`
/// (a slice of over 200 GB) are ignored rather than wrapped.
pub(super) fn slot_count(boxes: &[Option<Aabb>]) -> usize {
    boxes.len().min(u32::MAX as usize)
}

/// The pair set of the last update as a sorted list, and the diff that turns a freshly
/// computed list into events: what the non-incremental methods (brute force, grid, sorted
/// distance, sweep and prune with a full re-sort) share.
#[derive(Debug, Default, Clone)]
pub(super) struct PairList {
    /// Pairs after the last update, sorted, no duplicates.
    current: Vec<ProxyPair>,
    /// The pairs being collected for the running update (any order, no duplicates); kept
    /// between updates only for its memory.
    next: Vec<ProxyPair>,
}

impl PairList {
    /// Empties the list being collected.
    pub(super) fn begin(&mut self) -> &mut Vec<ProxyPair> {
        self.next.clear();
        &mut self.next
    }

    /// Sorts the collected pairs, appends to `events` what differs from the previous set (one
    /// merge of two sorted lists, so both event lists come out sorted) and makes them the
    /// current set. The collected pairs must be distinct.
    pub(super) fn commit(&mut self, events: &mut PairEvents) {
        self.next.sort_unstable();
        debug_assert!(self.next.windows(2).all(|w| w[0] < w[1]));
        let (old, new) = (&self.current, &self.next);
        let (mut i, mut j) = (0, 0);
        while i < old.len() && j < new.len() {
            match old[i].cmp(&new[j]) {
                std::cmp::Ordering::Less => {
                    events.ended.push(old[i]);
                    i += 1;
                }
                std::cmp::Ordering::Greater => {
                    events.started.push(new[j]);
                    j += 1;
                }
                std::cmp::Ordering::Equal => {
                    i += 1;
                    j += 1;
                }
            }
        }
        events.ended.extend_from_slice(&old[i..]);
        events.started.extend_from_slice(&new[j..]);
        std::mem::swap(&mut self.current, &mut self.next);
    }

    /// The current pairs, sorted.
    pub(super) fn pairs(&self) -> &[ProxyPair] {
        &self.current
    }

    /// The current pairs under new proxy names, sorted again.
    pub(super) fn renumber(&mut self, new_of: &[u32]) {
        for p in &mut self.current {
            *p = p.renamed(new_of);
        }
        self.current.sort_unstable();
    }
}

/// Every pair of live boxes tested with [`Aabb::intersects`] at every update: O(n²), the
/// oracle for the other methods.
///
/// Events come from diffing the new pair list against the previous one.
#[derive(Debug, Default, Clone)]
pub struct BruteForce {
    /// The pair set and its diff.
    list: PairList,
}

impl BroadPhase for BruteForce {
    fn update(&mut self, boxes: &[Option<Aabb>], events: &mut PairEvents) {
        let boxes = &boxes[..slot_count(boxes)];
        let next = self.list.begin();
        for (i, a) in boxes.iter().enumerate() {
            let Some(a) = live(a) else { continue };
            for (j, b) in boxes.iter().enumerate().skip(i + 1) {
                if live(b).is_some_and(|b| a.intersects(b)) {
                    // Both indices fit in u32: `slot_count` cut the slice.
                    next.push(ProxyPair {
                        a: i as u32,
                        b: j as u32,
                    });
                }
            }
        }
        self.list.commit(events);
    }

    fn pairs(&self) -> Vec<ProxyPair> {
        self.list.pairs().to_vec()
    }

    fn pair_count(&self) -> usize {
        self.list.pairs().len()
    }

    fn renumber(&mut self, new_of: &[u32]) {
        // Everything else is rebuilt at every update.
        self.list.renumber(new_of);
    }
}
