//! A broad phase with a skin: any method run on boxes grown by a margin and kept while the
//! real boxes stay inside them, the real overlaps found among the pairs of grown boxes.
//!
//! This is the neighbour list with a skin of molecular dynamics (Verlet 1967; LAMMPS'
//! `neighbor` skin), applied per box. Each slot's box is handed to the inner method grown
//! by [`Skinned::skin`] times its largest extent on every side, and that grown box is
//! handed again, unchanged, at every update while the real box lies inside it; only a box
//! that leaves its grown box gets a new one around where it is now. The inner method's pairs
//! (the candidates) are then a superset of the real overlaps, since boxes that overlap lie
//! inside grown boxes that do; each candidate is tested with [`Aabb::intersects`] at every
//! update, and the events are those of the tests.
//!
//! In a settled or slowly moving bed no box leaves its grown box for many steps: the inner
//! method is then not called at all (it would see the same boxes and report nothing; one box
//! that left is enough to call it, and the sweep and prune then visits every box), and an
//! update costs one containment test per box and one overlap test per candidate, both in one
//! pass over the slots, the candidates read in pair order: the same work per candidate at any
//! size of the bed (the memory it streams through aside: in the broad-phase benchmark's bed,
//! 23 ns a box at 10³ boxes, whose arrays stay in the core's cache, and 53 ns at 10⁵, where
//! a box also has 1.2 times the candidates, fewer boxes lying on the bed's surface). Where
//! grains flow, the boxes that left are brought up to date in the inner method (for the
//! incremental sweep and prune: only their ends move), and the cost is about that of the
//! inner method alone.
//!
//! The pairs and events are exactly the inner method's on the real boxes: the skin changes
//! what an update costs, never what it reports.

use talus_geom::Aabb;

use super::brute::{live, slot_count};
use super::{BroadPhase, PairEvents, ProxyPair, permute_in_place};

/// The skin of the engine's broad phase, in largest box extents per side. A box must move a
/// twentieth of its size (or turn enough to grow its box as much) before the inner method
/// sees it move: a grain of a hopper's discharge moving at 1 m/s, 5 mm across, with a step of
/// 10 µs, every 25 steps. A larger skin saves nothing where grains rest and costs where every
/// box moves at every update (the inner method's lists hold larger boxes): in the broad-phase
/// benchmark's falling cloud of 10³ boxes, one update costs 139 µs without the wrapper and
/// 151, 166, 180, 189 µs with skins of 0, 0.05, 0.1, 0.2; in its jiggling bed, 266 µs
/// without and 36 µs with any skin from 0.05 up.
pub const DEFAULT_SKIN: f64 = 0.05;

/// The pairs of grown boxes, sorted, each with whether the real boxes overlap, kept by the
/// smaller proxy: per proxy `a` the larger proxies it pairs with lie at
/// `others[first[a]..first[a + 1]]` (5 bytes a pair with its flag, read in order at every
/// update).
#[derive(Debug, Clone, Default)]
struct Candidates {
    /// Per proxy up to the last with pairs, where its pairs start in `others`, and one more
    /// entry, the end (proxies past it have none).
    first: Vec<u32>,
    /// The larger proxy of each pair.
    others: Vec<u32>,
    /// Per pair, whether the real boxes overlap.
    overlapping: Vec<bool>,
}

impl Candidates {
    /// Empties the list, keeping its memory.
    fn clear(&mut self) {
        self.first.clear();
        self.first.push(0);
        self.others.clear();
        self.overlapping.clear();
    }

    /// Empties the list and makes room for `pairs` pairs of proxies below `rows`, with half
    /// again as many, so that the count of a settled bed's candidates wandering up and down
    /// does not reallocate at every new high.
    fn clear_with_room(&mut self, pairs: usize, rows: usize) {
        fn room<T>(v: &mut Vec<T>, n: usize) {
            if v.capacity() < n {
                v.reserve(n + n / 2);
            }
        }
        self.clear();
        room(&mut self.first, rows + 1);
        room(&mut self.others, pairs);
        room(&mut self.overlapping, pairs);
    }

    /// Appends a pair, its smaller proxy not below that of the last one appended.
    fn push(&mut self, pair: ProxyPair, overlapping: bool) {
        self.extend_row(pair.a as usize, &[pair.b], &[overlapping]);
    }

    /// Appends the pairs of row `a` (its larger proxies and their overlaps), `a` above the
    /// rows appended before.
    fn extend_row(&mut self, a: usize, others: &[u32], overlapping: &[bool]) {
        if others.is_empty() {
            return;
        }
        while self.first.len() <= a + 1 {
            self.first.push(self.others.len() as u32);
        }
        self.others.extend_from_slice(others);
        self.overlapping.extend_from_slice(overlapping);
        if let Some(end) = self.first.last_mut() {
            *end = self.others.len() as u32;
        }
    }

    /// The range of row `a`'s pairs (empty past the last row).
    fn row(&self, a: usize) -> std::ops::Range<usize> {
        match (self.first.get(a), self.first.get(a + 1)) {
            (Some(&start), Some(&end)) => start as usize..end as usize,
            _ => 0..0,
        }
    }

    /// Number of pairs.
    fn len(&self) -> usize {
        self.others.len()
    }

    /// The smaller proxies with pairs, each with the range of its pairs.
    fn rows(&self) -> impl Iterator<Item = (u32, std::ops::Range<usize>)> + '_ {
        self.first
            .windows(2)
            .enumerate()
            .filter(|(_, w)| w[0] < w[1])
            .map(|(a, w)| (a as u32, w[0] as usize..w[1] as usize))
    }

    /// Every pair in order, with its overlap.
    fn pairs(&self) -> impl Iterator<Item = (ProxyPair, bool)> + '_ {
        self.rows().flat_map(move |(a, range)| {
            range.map(move |k| {
                (
                    ProxyPair {
                        a,
                        b: self.others[k],
                    },
                    self.overlapping[k],
                )
            })
        })
    }
}

/// Whether the real boxes of `pair` overlap (both present, touching counts).
#[inline]
fn real_overlap(boxes: &[Option<Aabb>], pair: ProxyPair) -> bool {
    let a = boxes.get(pair.a as usize).and_then(live);
    let b = boxes.get(pair.b as usize).and_then(live);
    matches!((a, b), (Some(a), Some(b)) if a.intersects(b))
}

/// Any broad-phase method run on boxes grown by a skin (see the module documentation).
pub struct Skinned {
    /// The method run on the grown boxes.
    inner: Box<dyn BroadPhase>,
    /// Growth per side, in largest box extents.
    skin: f64,
    /// Per slot, the grown box the inner method was last given.
    grown: Vec<Option<Aabb>>,
    /// The inner method's pairs, each with its real overlap.
    candidates: Candidates,
    /// Candidates whose real boxes overlap.
    overlapping: usize,
    /// The inner method's events of an update.
    inner_events: PairEvents,
    /// The candidates of an update being merged (kept for its memory).
    merged: Candidates,
    /// Scratch of renaming: the pairs, and the slots visited.
    renamed: Vec<(ProxyPair, bool)>,
    visited: Vec<bool>,
}

impl Skinned {
    /// `inner` run on boxes grown by `skin` largest extents per side (a skin that is not a
    /// finite non-negative number means none).
    #[must_use]
    pub fn new(inner: Box<dyn BroadPhase>, skin: f64) -> Self {
        let mut candidates = Candidates::default();
        candidates.clear();
        Skinned {
            inner,
            skin: if skin.is_finite() && skin >= 0.0 {
                skin
            } else {
                0.0
            },
            grown: Vec::new(),
            candidates,
            overlapping: 0,
            inner_events: PairEvents::default(),
            merged: Candidates::default(),
            renamed: Vec::new(),
            visited: Vec::new(),
        }
    }

    /// The growth per side, in largest box extents.
    #[must_use]
    pub fn skin(&self) -> f64 {
        self.skin
    }

    /// Number of pairs of grown boxes: the pairs tested at every update.
    #[must_use]
    pub fn candidate_count(&self) -> usize {
        self.candidates.len()
    }

    /// The grown box for real box `b`. A box whose extent is not finite is not grown (an
    /// infinite margin would make `∞ − ∞`): it is kept while the real box stays inside it.
    fn grow(skin: f64, b: &Aabb) -> Aabb {
        let margin = skin * b.extents().max_element();
        if margin.is_finite() {
            b.inflated(margin)
        } else {
            *b
        }
    }

    /// Whether grown box `g` is more than twice as large as a fresh one around `b` would be
    /// (the slot's box shrank, as a half-space wall's, cut to the grains' region, does when
    /// the grains fall): it would only add candidates. A grain's box, whose largest extent a
    /// turn changes by less than a factor √3, keeps its grown box.
    fn much_larger(skin: f64, g: &Aabb, b: &Aabb) -> bool {
        let kept = g.extents().max_element();
        // Measured on the fresh box itself when the estimate says so: near the largest floats
        // its growth overflows to an infinite extent, which then equals the kept one's.
        kept > 2.0 * b.extents().max_element() * (1.0 + 2.0 * skin)
            && kept > 2.0 * Self::grow(skin, b).extents().max_element()
    }

    /// Brings the grown boxes up to date with `boxes` and tests the candidates on the real
    /// boxes, in one pass over the slots (each slot's box is read once, for both, while it is
    /// in the cache: at 10⁵ boxes the arrays no longer fit in it); whether any grown box
    /// changed. The candidates' events are those of the real boxes, whatever the inner
    /// method then reports (see [`Skinned::take_inner_events`]).
    fn regrow_and_test(&mut self, boxes: &[Option<Aabb>], events: &mut PairEvents) -> bool {
        let total = boxes.len().max(self.grown.len());
        self.grown.resize(total, None);
        let skin = self.skin;
        let c = &mut self.candidates;
        let rows = c.first.len() - 1;
        let mut changed = false;
        let mut overlapping = 0;
        for (k, grown) in self.grown.iter_mut().enumerate() {
            let now = boxes.get(k).and_then(live);
            let kept = match (now, &*grown) {
                (None, None) => true,
                (Some(b), Some(g)) => g.contains(b) && !Self::much_larger(skin, g, b),
                _ => false,
            };
            if !kept {
                *grown = now.map(|b| Self::grow(skin, b));
                changed = true;
            }
            if k < rows {
                overlapping += test_row(c, k, now, boxes, events);
            }
        }
        // Rows past the slots (their boxes gone) test nothing: their pairs end.
        for a in total..rows {
            overlapping += test_row(c, a, None, boxes, events);
        }
        self.overlapping = overlapping;

        changed
    }

    /// Takes the inner method's events into the candidates: the pairs it ended dropped (their
    /// real boxes were tested apart already, or their slots emptied), the pairs it started
    /// added and tested on the real boxes, those that overlap appended to `events.started`.
    /// Rows without events are copied whole.
    fn take_inner_events(&mut self, boxes: &[Option<Aabb>], events: &mut PairEvents) {
        let (started, ended) = (&self.inner_events.started, &self.inner_events.ended);
        let old = &self.candidates;
        let merged = &mut self.merged;
        let rows = started
            .last()
            .map_or(0, |p| p.a as usize + 1)
            .max(old.first.len() - 1);
        merged.clear_with_room(old.len() + started.len(), rows);
        let (mut s, mut e) = (0, 0);
        for a in 0..rows {
            let range = old.row(a);
            let s_end = s + started[s..]
                .iter()
                .take_while(|p| p.a as usize == a)
                .count();
            let e_end = e + ended[e..].iter().take_while(|p| p.a as usize == a).count();
            if s == s_end && e == e_end {
                merged.extend_row(a, &old.others[range.clone()], &old.overlapping[range]);
                continue;
            }
            // Both the row and the events are sorted by the larger proxy.
            let mut k = range.start;
            loop {
                let take_old = match ((k < range.end), (s < s_end)) {
                    (false, false) => break,
                    (true, true) => old.others[k] < started[s].b,
                    (old_left, _) => old_left,
                };
                if take_old {
                    let pair = ProxyPair {
                        a: a as u32,
                        b: old.others[k],
                    };
                    while e < e_end && ended[e] < pair {
                        e += 1;
                    }
                    if e < e_end && ended[e] == pair {
                        e += 1;
                    } else {
                        merged.push(pair, old.overlapping[k]);
                    }
                    k += 1;
                } else {
                    let pair = started[s];
                    let now = real_overlap(boxes, pair);
                    if now {
                        events.started.push(pair);
                        self.overlapping += 1;
                    }
                    merged.push(pair, now);
                    s += 1;
                }
            }
            e = e_end;
        }
        std::mem::swap(&mut self.candidates, &mut self.merged);
    }
}

/// Tests the candidates of row `a` (real box `box_a`, `None` when gone) on the real boxes,
/// recording the pairs whose overlap changed in `events`; how many overlap.
#[inline]
fn test_row(
    c: &mut Candidates,
    a: usize,
    box_a: Option<&Aabb>,
    boxes: &[Option<Aabb>],
    events: &mut PairEvents,
) -> usize {
    let range = c.row(a);
    let others = &c.others[range.clone()];
    let flags = &mut c.overlapping[range];
    let mut overlapping = 0;
    for (&b, flag) in others.iter().zip(flags.iter_mut()) {
        // `live` and `Aabb::intersects` as one mask. Written out here, not shared with
        // `real_overlap`: the shared helper measured 40 µs instead of 30 at 10³ boxes. Its
        // `all` branches on the first two axes (a mask without any branch, `bitmask() == 7`,
        // measured 38 µs instead of 24 at 10³ boxes, 5.6 ms instead of 5.2 at 10⁵).
        let now = match (box_a, boxes.get(b as usize)) {
            (Some(x), Some(Some(y))) => {
                (y.min.cmple(y.max) & x.min.cmple(y.max) & y.min.cmple(x.max)).all()
            }
            _ => false,
        };
        if now != *flag {
            let pair = ProxyPair { a: a as u32, b };
            if now {
                events.started.push(pair);
            } else {
                events.ended.push(pair);
            }
            *flag = now;
        }
        overlapping += usize::from(now);
    }
    overlapping
}

impl BroadPhase for Skinned {
    fn update(&mut self, boxes: &[Option<Aabb>], events: &mut PairEvents) {
        let boxes = &boxes[..slot_count(boxes)];
        // Unchanged grown boxes would give the inner method nothing to report.
        self.inner_events.clear();
        // Room for the burst of pairs a few boxes leaving their grown boxes bring, so that a
        // settled bed's rare bursts do not reallocate.
        let burst = (self.candidates.len() / 8).max(256);
        for list in [&mut self.inner_events.started, &mut self.inner_events.ended] {
            if list.capacity() < burst {
                list.reserve(burst);
            }
        }
        // Every candidate (those the inner method will end too: their real boxes are apart
        // or gone), then the new ones.
        let started_before = events.started.len();
        if self.regrow_and_test(boxes, events) {
            self.inner.update(&self.grown, &mut self.inner_events);
        }
        if !(self.inner_events.started.is_empty() && self.inner_events.ended.is_empty()) {
            let tested = events.started.len();
            self.take_inner_events(boxes, events);
            if events.started.len() > tested && tested > started_before {
                // Two sorted runs: old candidates that started, new ones that do.
                events.started[started_before..].sort_unstable();
            }
        }
    }

    fn pairs(&self) -> Vec<ProxyPair> {
        self.candidates
            .pairs()
            .filter(|(_, overlapping)| *overlapping)
            .map(|(pair, _)| pair)
            .collect()
    }

    fn pair_count(&self) -> usize {
        self.overlapping
    }

    fn renumber(&mut self, new_of: &[u32]) {
        self.inner.renumber(new_of);
        // Slots past the grown boxes have none yet: they move like empty slots.
        let n = new_of.len();
        if self.grown.len() < n {
            self.grown.resize(n, None);
        }
        if self.visited.len() < n {
            self.visited.resize(n, false);
        }
        permute_in_place(&mut self.grown, new_of, &mut self.visited);
        self.renamed.clear();
        let pairs = self.candidates.len();
        if self.renamed.capacity() < pairs {
            self.renamed.reserve(pairs + pairs / 2);
        }
        self.renamed.extend(
            self.candidates
                .pairs()
                .map(|(pair, overlapping)| (pair.renamed(new_of), overlapping)),
        );
        self.renamed.sort_unstable_by_key(|(pair, _)| *pair);
        self.candidates.clear();
        for &(pair, overlapping) in &self.renamed {
            self.candidates.push(pair, overlapping);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use talus_geom::glam::DVec3;

    use super::*;
    use crate::broad::BruteForce;

    /// Brute force that records the boxes of every update it is given.
    struct Recording {
        inner: BruteForce,
        seen: Arc<Mutex<Vec<Vec<Option<Aabb>>>>>,
    }

    impl BroadPhase for Recording {
        fn update(&mut self, boxes: &[Option<Aabb>], events: &mut PairEvents) {
            self.seen.lock().unwrap().push(boxes.to_vec());
            self.inner.update(boxes, events);
        }
        fn pairs(&self) -> Vec<ProxyPair> {
            self.inner.pairs()
        }
        fn pair_count(&self) -> usize {
            self.inner.pair_count()
        }
        fn renumber(&mut self, new_of: &[u32]) {
            self.inner.renumber(new_of);
        }
    }

    /// Unit boxes on a row, spaced `gap` apart, box `k` shifted by `shift[k]` along the row.
    fn row(gap: f64, shift: &[f64]) -> Vec<Option<Aabb>> {
        shift
            .iter()
            .enumerate()
            .map(|(k, s)| {
                let x = k as f64 * (1.0 + gap) + s;
                Some(Aabb {
                    min: DVec3::new(x, 0.0, 0.0),
                    max: DVec3::new(x + 1.0, 1.0, 1.0),
                })
            })
            .collect()
    }

    #[test]
    fn boxes_moving_inside_their_skin_are_not_shown_to_the_inner_method() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let mut skinned = Skinned::new(
            Box::new(Recording {
                inner: BruteForce::default(),
                seen: Arc::clone(&seen),
            }),
            0.1,
        );
        let mut oracle = BruteForce::default();
        // Neighbours 0.02 apart: a shift of 0.02 toward each other makes them touch, and
        // every shift below stays inside the skin of 0.1.
        let shifts: [&[f64]; 5] = [
            &[0.0, 0.0, 0.0, 0.0],
            &[0.02, 0.0, 0.0, 0.0],
            &[0.02, -0.02, 0.05, 0.0],
            &[0.0, -0.03, 0.0, -0.07],
            &[-0.09, 0.09, -0.09, 0.09],
        ];
        for (t, shift) in shifts.iter().enumerate() {
            let boxes = row(0.02, shift);
            let (mut got, mut want) = (PairEvents::default(), PairEvents::default());
            skinned.update(&boxes, &mut got);
            oracle.update(&boxes, &mut want);
            assert_eq!(got, want, "update {t}");
            assert_eq!(skinned.pairs(), oracle.pairs(), "update {t}");
            assert_eq!(skinned.pair_count(), oracle.pair_count());
            // Every pair of neighbours is a candidate: their grown boxes overlap.
            assert_eq!(skinned.candidate_count(), 3);
        }
        // The first update only: each later box lay inside its grown box.
        assert_eq!(seen.lock().unwrap().len(), 1);
        let first = seen.lock().unwrap()[0].clone();

        // Box 3 leaves its grown box: only its box is new to the inner method.
        let boxes = row(0.02, &[0.0, 0.0, 0.0, 0.5]);
        let (mut got, mut want) = (PairEvents::default(), PairEvents::default());
        skinned.update(&boxes, &mut got);
        oracle.update(&boxes, &mut want);
        assert_eq!(got, want);
        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), 2);
        assert_eq!(seen[1][..3], first[..3]);
        assert_ne!(seen[1][3], first[3]);
        let grown = seen[1][3].unwrap();
        let real = boxes[3].unwrap();
        assert!(grown.contains(&real));
        // A tenth of its largest extent on every side.
        let margin = 0.1 * real.extents().max_element();
        assert!((margin - 0.1).abs() < 1e-15);
        assert_eq!(grown.min, real.min - DVec3::splat(margin));
        assert_eq!(grown.max, real.max + DVec3::splat(margin));
        // Boxes 2 and 3 are 0.52 apart: even their grown boxes no longer meet.
        assert_eq!(skinned.candidate_count(), 2);
    }

    #[test]
    fn renaming_more_slots_than_seen_and_after_the_slice_shrank() {
        let mut skinned = Skinned::new(Box::new(BruteForce::default()), 0.1);
        let mut oracle = BruteForce::default();
        let check = |skinned: &mut Skinned, oracle: &mut BruteForce, boxes: &[Option<Aabb>]| {
            let (mut got, mut want) = (PairEvents::default(), PairEvents::default());
            skinned.update(boxes, &mut got);
            oracle.update(boxes, &mut want);
            assert_eq!(got, want);
            assert_eq!(skinned.pairs(), oracle.pairs());
            assert_eq!(skinned.pair_count(), oracle.pair_count());
        };
        let mut boxes = row(-0.1, &[0.0; 4]);
        check(&mut skinned, &mut oracle, &boxes);
        // Six slots renamed where four were seen: the new ones hold no box yet.
        let new_of = [5u32, 0, 3, 1, 2, 4];
        skinned.renumber(&new_of);
        oracle.renumber(&new_of);
        let mut renamed = vec![None; 6];
        for (p, b) in boxes.iter().enumerate() {
            renamed[new_of[p] as usize] = *b;
        }
        boxes = renamed;
        check(&mut skinned, &mut oracle, &boxes);
        boxes[4] = boxes[1];
        check(&mut skinned, &mut oracle, &boxes);
        // The slice shrinks to three slots: the pairs of the cut ones end.
        boxes.truncate(3);
        check(&mut skinned, &mut oracle, &boxes);
        let new_of = [2u32, 1, 0];
        skinned.renumber(&new_of);
        oracle.renumber(&new_of);
        boxes.reverse();
        check(&mut skinned, &mut oracle, &boxes);
    }
}
