//! Sorted distances (seed 003, §2.2, algorithm 1), rebuilt at every update.
//!
//! Each box is replaced by its bounding sphere: centre `c_i`, radius `r_i` half its diagonal.
//! With a reference point `x0`, `l_i = |c_i − x0| − r_i` (seed 003, eq. 3) is the distance
//! from `x0` to the near side of sphere i. Sorted by `l`, every sphere j overlapping sphere i
//! and coming after it satisfies `l_j − l_i ≤ 2 r_i`: by the triangle inequality
//! `l_j − l_i = |c_j − x0| − |c_i − x0| − r_j + r_i ≤ |c_j − c_i| − r_j + r_i`, and overlap
//! means `|c_j − c_i| ≤ r_i + r_j`. So the scan after i stops at the first j with
//! `l_j − l_i > 2 r_i` (algorithm 1, step 3) and misses nothing, whatever `x0`; the boxes lie
//! inside their spheres, so no overlapping pair of boxes is missed either, and each candidate
//! is decided by the exact box test.
//!
//! The seed takes `x0` so that all positions have the same sign; here it is the lower corner
//! of all boxes, which does that. Round-off in `l` and `r` could turn an exact touching of two
//! spheres (two boxes meeting corner to corner along their diagonals) into a miss, so the
//! stopping bound gets a slack [`SLACK`] far above the round-off; coordinates are first scaled
//! by a power of two (exact) to order 1, so that the slack is relative to the scene and the
//! squares in `|·|` neither overflow nor underflow. A box with an infinite coordinate has no
//! sphere; it is tested against every box instead.
//!
//! The cost is the sort plus the candidates, about `n` times the number of boxes in a shell of
//! thickness `2 r` around `x0`: small for a sparse cloud, large for a dense bed (the seed's
//! own caveat: "efficiency … decreases for dense packing of particles").

use talus_geom::Aabb;
use talus_geom::glam::DVec3;

use super::brute::{PairList, live, slot_count};
use super::{BroadPhase, PairEvents, ProxyPair};

/// Slack on the stopping bound `l_j − l_i ≤ 2 r_i`, in the scaled coordinates (all of
/// magnitude below 4, so `l` and `r` below 16): some 2^7 times the round-off, a few ulps of
/// 16, of the few operations that compute them.
pub const SLACK: f64 = 1.0 / (1u64 << 40) as f64;

/// One box in the sorted list.
#[derive(Debug, Clone, Copy)]
struct Item {
    /// `l = |c − x0| − r`, scaled.
    l: f64,
    /// The scan bound `2 r + SLACK`, scaled.
    reach: f64,
    /// The box (unscaled), copied for locality in the scan.
    bbox: Aabb,
    /// Its proxy.
    proxy: u32,
}

/// Seed 003's algorithm 1: boxes sorted by the distance of their bounding spheres from a
/// reference point, candidates scanned while `l_j − l_i ≤ 2 r_i`, each tested exactly.
///
/// Its cost does not depend on the spread of box sizes (seed 003, tables 1–3), unlike the
/// grid's, but grows for dense packings. Events come from diffing each update's pair list
/// against the previous one.
#[derive(Debug, Clone, Default)]
pub struct SortedDistance {
    /// The pair set and its diff.
    list: PairList,
    /// The boxes with a bounding sphere, sorted by `l`.
    items: Vec<Item>,
    /// Slots of boxes with an infinite coordinate, tested against every box.
    unbounded: Vec<u32>,
    /// Per slot, whether its box is in `unbounded`.
    is_unbounded: Vec<bool>,
}

/// The power of two that brings `m` (positive, finite) to `[1, 2)`: exact scaling.
fn scale_for(m: f64) -> f64 {
    if m > 0.0 && m.is_finite() {
        // log2 may round across a power of two: the result is then in [1/2, 4), as good.
        let exp = m.log2().floor() as i32;
        // 2^-exp built from two halves so that neither factor overflows or underflows.
        let half = f64::powi(2.0, -exp / 2);
        half * f64::powi(2.0, -exp - (-exp / 2))
    } else {
        1.0
    }
}

impl BroadPhase for SortedDistance {
    fn update(&mut self, boxes: &[Option<Aabb>], events: &mut PairEvents) {
        let boxes = &boxes[..slot_count(boxes)];

        // The reference point and the scale, from the boxes with finite coordinates.
        self.unbounded.clear();
        self.is_unbounded.clear();
        let mut x0 = DVec3::INFINITY;
        let mut magnitude = 0.0f64;
        for (k, slot) in boxes.iter().enumerate() {
            let finite = live(slot).is_none_or(|b| b.min.is_finite() && b.max.is_finite());
            self.is_unbounded.push(!finite);
            if !finite {
                self.unbounded.push(k as u32);
            } else if let Some(b) = live(slot) {
                x0 = x0.min(b.min);
                magnitude = magnitude.max(b.min.abs().max(b.max.abs()).max_element());
            }
        }
        let s = scale_for(magnitude);
        let x0 = x0 * s;

        // Step 1: distances l_i (eq. 3); step 2: sort.
        self.items.clear();
        for (k, slot) in boxes.iter().enumerate() {
            let Some(b) = live(slot) else { continue };
            if self.is_unbounded[k] {
                continue;
            }
            let (lo, hi) = (b.min * s, b.max * s);
            // Halves first: `lo + hi` could overflow before scaling is applied to huge boxes;
            // after scaling it cannot, but the form costs nothing.
            let c = lo * 0.5 + hi * 0.5;
            let r = (hi * 0.5 - lo * 0.5).length();
            self.items.push(Item {
                l: (c - x0).length() - r,
                reach: 2.0 * r + SLACK,
                bbox: *b,
                proxy: k as u32,
            });
        }
        self.items.sort_unstable_by(|p, q| p.l.total_cmp(&q.l));

        // Step 3: scan while l_j − l_i ≤ 2 r_i, test the boxes exactly.
        let next = self.list.begin();
        for (i, p) in self.items.iter().enumerate() {
            for q in &self.items[i + 1..] {
                if q.l - p.l > p.reach {
                    break;
                }
                if p.bbox.intersects(&q.bbox) {
                    next.push(ProxyPair::new(p.proxy, q.proxy));
                }
            }
        }

        // Boxes without a sphere against every box; two of them once, from the lower.
        for &u in &self.unbounded {
            let bu = boxes[u as usize].as_ref();
            for (k, slot) in boxes.iter().enumerate() {
                let k32 = k as u32;
                if k32 == u || (self.is_unbounded[k] && k32 < u) {
                    continue;
                }
                if let (Some(bu), Some(bk)) = (bu, live(slot))
                    && bu.intersects(bk)
                {
                    next.push(ProxyPair::new(u, k32));
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
