//! A broad phase across periodic boundaries: any method, given the boxes and their images.
//!
//! A box that crosses a periodic face also stands, shifted by a period, at the opposite face
//! (and at the opposite edge and corner when it crosses two or three faces): LAMMPS calls
//! these images ghosts. The inner method sees every proxy `p` as `K = 2^k` slots (`k`
//! periodic axes), `p·K + code`, slot `code` holding image `code` of the box
//! ([`Periodic::image_of`]) or nothing; interleaving the slots this way keeps a proxy's
//! slots fixed when proxies are added. The inner method's pairs of slots are pairs of
//! proxies seen through some images; a pair of proxies overlaps while at least one pair of
//! their slots does, so each keeps a count of its slot pairs, and the events are those of
//! the counts that rise from zero or fall to it. The same pair can be seen through several
//! slot pairs (two boxes crossing the same face overlap both as themselves and as their
//! images), and a grain that wraps trades the overlap of its box for that of its image in
//! one update, which leaves the count positive: its contacts go on, their caches and
//! histories with them.
//!
//! Which image of the other body a pair meets is not kept here: with every box narrower
//! than half a period ([`Periodic::check_fits`]) it is the nearest one, found from the two
//! boxes' centres.

use rustc_hash::FxHashMap;
use talus_geom::Aabb;

use super::{BroadPhase, PairEvents, ProxyPair};
use crate::periodic::Periodic;

/// A broad-phase method run on the boxes and their periodic images.
pub struct PeriodicBroad {
    inner: Box<dyn BroadPhase>,
    periodic: Periodic,
    /// Slots per proxy.
    slots: usize,
    /// The inner method's boxes, rebuilt at each update (kept for its memory).
    images: Vec<Option<Aabb>>,
    /// The inner method's events of an update.
    inner_events: PairEvents,
    /// Slot pairs seen overlapping per pair of proxies.
    counts: FxHashMap<ProxyPair, u32>,
    /// Scratch of an update's events and of renaming.
    started: Vec<ProxyPair>,
    ended: Vec<ProxyPair>,
    slot_names: Vec<u32>,
}

impl PeriodicBroad {
    /// `inner` run across the periodic axes of `periodic`.
    #[must_use]
    pub fn new(inner: Box<dyn BroadPhase>, periodic: Periodic) -> Self {
        PeriodicBroad {
            inner,
            slots: periodic.image_slots(),
            periodic,
            images: Vec::new(),
            inner_events: PairEvents::default(),
            counts: FxHashMap::default(),
            started: Vec::new(),
            ended: Vec::new(),
            slot_names: Vec::new(),
        }
    }

    /// The pair of proxies a pair of slots stands for, `None` for two images of one box.
    fn proxies_of(&self, pair: ProxyPair) -> Option<ProxyPair> {
        let k = self.slots as u32;
        let (a, b) = (pair.a / k, pair.b / k);
        (a != b).then(|| ProxyPair::new(a, b))
    }
}

impl BroadPhase for PeriodicBroad {
    fn update(&mut self, boxes: &[Option<Aabb>], events: &mut PairEvents) {
        let k = self.slots;
        // Proxy numbers are u32, and so are the slots.
        let proxies = boxes.len().min(u32::MAX as usize / k);
        self.images.clear();
        self.images.reserve(proxies * k);
        for b in &boxes[..proxies] {
            let live = b.filter(|b| b.min.cmple(b.max).all());
            for code in 0..k {
                self.images
                    .push(live.and_then(|b| self.periodic.image_of(b, code)));
            }
        }
        self.inner_events.clear();
        self.inner.update(&self.images, &mut self.inner_events);
        // Rises first, then falls: a count passes through zero only when it ends there.
        self.started.clear();
        self.ended.clear();
        for i in 0..self.inner_events.started.len() {
            let Some(pair) = self.proxies_of(self.inner_events.started[i]) else {
                continue;
            };
            let count = self.counts.entry(pair).or_insert(0);
            if *count == 0 {
                self.started.push(pair);
            }
            *count += 1;
        }
        for i in 0..self.inner_events.ended.len() {
            let Some(pair) = self.proxies_of(self.inner_events.ended[i]) else {
                continue;
            };
            // Every ended slot pair was counted when it started.
            if let Some(count) = self.counts.get_mut(&pair) {
                *count -= 1;
                if *count == 0 {
                    self.counts.remove(&pair);
                    self.ended.push(pair);
                }
            }
        }
        // A pair that ended had a count before this update, so it is not among the started
        // ones; each list holds each pair once.
        self.started.sort_unstable();
        self.ended.sort_unstable();
        events.started.extend_from_slice(&self.started);
        events.ended.extend_from_slice(&self.ended);
    }

    fn pairs(&self) -> Vec<ProxyPair> {
        let mut pairs: Vec<ProxyPair> = self.counts.keys().copied().collect();
        pairs.sort_unstable();
        pairs
    }

    fn pair_count(&self) -> usize {
        self.counts.len()
    }

    fn renumber(&mut self, new_of: &[u32]) {
        let k = self.slots as u32;
        self.slot_names.clear();
        self.slot_names.extend(
            new_of
                .iter()
                .flat_map(|&p| (0..k).map(move |code| p * k + code)),
        );
        self.inner.renumber(&self.slot_names);
        let renamed: FxHashMap<ProxyPair, u32> = self
            .counts
            .drain()
            .map(|(pair, count)| (pair.renamed(new_of), count))
            .collect();
        self.counts = renamed;
    }
}

#[cfg(test)]
mod tests {
    use talus_geom::glam::DVec3;

    use super::*;
    use crate::broad::BruteForce;
    use crate::periodic::Period;

    fn cube(center: DVec3, half: f64) -> Option<Aabb> {
        Some(Aabb::from_center_half_extents(center, DVec3::splat(half)))
    }

    /// Whether two boxes overlap through some image, by trying every shift.
    fn overlap_any_image(p: &Periodic, a: Aabb, b: Aabb) -> bool {
        let length = |i: usize| p.axes[i].map_or(0.0, |q| q.length());
        for sx in -1..=1 {
            for sy in -1..=1 {
                for sz in -1..=1 {
                    let s = DVec3::new(
                        f64::from(sx) * length(0),
                        f64::from(sy) * length(1),
                        f64::from(sz) * length(2),
                    );
                    let (min, max) = (b.min + s, b.max + s);
                    if a.min.cmple(max).all() && min.cmple(a.max).all() {
                        return true;
                    }
                }
            }
        }
        false
    }

    #[test]
    fn pairs_through_images_match_every_shift_tried() {
        let periodic = Periodic {
            axes: [
                Some(Period {
                    lower: 0.0,
                    upper: 1.0,
                }),
                Some(Period {
                    lower: -0.5,
                    upper: 0.5,
                }),
                None,
            ],
        };
        let mut broad = PeriodicBroad::new(Box::new(BruteForce::default()), periodic);
        let mut events = PairEvents::default();
        // Boxes of half-width 0.1 scattered over the box, moving each update; wrapped
        // into it as the step wraps grains.
        let mut centers: Vec<DVec3> = (0..40)
            .map(|i| {
                let t = f64::from(i);
                DVec3::new(
                    (t * 0.618).fract(),
                    (t * 0.414).fract() - 0.5,
                    0.05 * (t * 0.3).sin(),
                )
            })
            .collect();
        let mut expected_prev: Vec<ProxyPair> = Vec::new();
        for update in 0..30 {
            let boxes: Vec<Option<Aabb>> = centers.iter().map(|&c| cube(c, 0.1)).collect();
            events.clear();
            broad.update(&boxes, &mut events);
            let mut expected = Vec::new();
            for i in 0..boxes.len() {
                for j in i + 1..boxes.len() {
                    if overlap_any_image(&periodic, boxes[i].unwrap(), boxes[j].unwrap()) {
                        expected.push(ProxyPair::new(i as u32, j as u32));
                    }
                }
            }
            assert_eq!(broad.pairs(), expected, "update {update}");
            let started: Vec<ProxyPair> = expected
                .iter()
                .filter(|p| !expected_prev.contains(p))
                .copied()
                .collect();
            let ended: Vec<ProxyPair> = expected_prev
                .iter()
                .filter(|p| !expected.contains(p))
                .copied()
                .collect();
            assert_eq!(events.started, started, "update {update}");
            assert_eq!(events.ended, ended, "update {update}");
            expected_prev = expected;
            for (i, c) in centers.iter_mut().enumerate() {
                let v = DVec3::new(0.037, -0.023, 0.0) * (1.0 + 0.1 * i as f64);
                *c = periodic.wrap(*c + v).0;
            }
        }
    }

    #[test]
    fn a_wrapping_box_keeps_its_pair() {
        let periodic = Periodic {
            axes: [
                Some(Period {
                    lower: 0.0,
                    upper: 1.0,
                }),
                None,
                None,
            ],
        };
        let mut broad = PeriodicBroad::new(Box::new(BruteForce::default()), periodic);
        let mut events = PairEvents::default();
        let still = cube(DVec3::new(0.05, 0.0, 0.0), 0.1);
        broad.update(&[still, cube(DVec3::new(0.97, 0.0, 0.0), 0.1)], &mut events);
        assert_eq!(events.started, [ProxyPair::new(0, 1)]);
        events.clear();
        // The second box crosses x = 1 and comes back in at x = 0.01.
        broad.update(&[still, cube(DVec3::new(0.01, 0.0, 0.0), 0.1)], &mut events);
        assert_eq!(events, PairEvents::default(), "no event: the pair goes on");
        assert_eq!(broad.pair_count(), 1);
    }
}
