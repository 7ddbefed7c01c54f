//! Uniform grid: the linked-cell method (seed 003, §2.1), rebuilt at every update.
//!
//! Seed 003 files each particle in the one cell holding its centre and, with cells at least
//! as large as the largest particle (its eq. 2, `min_k a_k ≥ d_max`), finds every contact in
//! the 27 cells around it. That rule breaks when one box is much larger than the cell (the
//! seed's table 3: one big particle among small ones). Here a box is filed in *every* cell it
//! covers instead, so two boxes that overlap share a cell whatever their sizes, and each pair
//! is reported only in the one cell holding the lower corner of the two boxes' intersection
//! (`max(min_a, min_b)`), so no pair is found twice and no pair set is needed to deduplicate.
//!
//! The seed's "header matrix" of `n_cell` list heads becomes a hash table with a power-of-two
//! number of buckets, about twice the number of (cell, box) entries, filled by a counting
//! sort: its size follows the number of boxes, not the extent of space, so far-flung or huge
//! coordinates cost nothing extra. Cell indices are `floor(x / h)` saturated to `i64`, a
//! non-decreasing map of `x`, which is all the covering argument needs: saturated cells merge
//! far regions (slower there, never wrong). A box that would cover more than
//! [`MAX_CELLS_PER_BOX`] cells (a cell size much smaller than the box, or an infinite box) is
//! not filed at all but tested against every box, which bounds the memory by
//! `MAX_CELLS_PER_BOX · n` entries.

use talus_geom::Aabb;

use super::brute::{PairList, live, slot_count};
use super::{BroadPhase, PairEvents, ProxyPair};

/// Most cells a box is filed in; larger boxes are tested against all others instead. With the
/// automatic cell size (the largest box extent) a box covers at most 2 cells per axis, 8 in
/// all, a few more only through round-off.
pub const MAX_CELLS_PER_BOX: u64 = 64;

/// One box filed in one cell.
#[derive(Debug, Clone, Copy)]
struct Entry {
    /// Cell index per axis.
    cell: [i64; 3],
    /// The box's proxy.
    proxy: u32,
    /// Hash-table bucket of `cell`.
    bucket: u32,
}

/// Where a slot's box is this update.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Filing {
    /// No live box.
    Absent,
    /// Filed in the cells from `lo` on; `lo` is kept to deduplicate pairs.
    Cells {
        /// Lowest cell index per axis.
        lo: [i64; 3],
    },
    /// Too large to file: tested against every box.
    Oversized,
}

/// The linked-cell method (seed 003) with boxes filed in every cell they cover: O(n) per
/// update for boxes of similar size, correct for any mix of sizes.
///
/// The cell size is fixed at construction or, with `None`, the largest box extent of each
/// update (seed 003, eq. 2), so that a box covers at most two cells per axis. One box much
/// larger than the rest then makes the cells large and the method slow (seed 003, table 3),
/// never wrong. Events come from diffing each update's pair list against the previous one.
#[derive(Debug, Clone)]
pub struct UniformGrid {
    /// The cell size asked for, `None` for automatic.
    cell_size: Option<f64>,
    /// The pair set and its diff.
    list: PairList,
    /// Per slot, where its box was filed this update.
    filing: Vec<Filing>,
    /// Slots of oversized boxes.
    oversized: Vec<u32>,
    /// (cell, box) entries in slot order.
    entries: Vec<Entry>,
    /// The entries grouped by bucket (counting sort of `entries`).
    grouped: Vec<Entry>,
    /// Bucket ends in `grouped` (after the counting sort's scatter).
    bucket_end: Vec<u32>,
}

impl Default for UniformGrid {
    fn default() -> Self {
        Self::new(None)
    }
}

impl UniformGrid {
    /// A grid with cells of edge `cell_size`, or with `None` the largest box extent of each
    /// update. A size that is not positive and finite is treated as `None`.
    #[must_use]
    pub fn new(cell_size: Option<f64>) -> Self {
        UniformGrid {
            cell_size: cell_size.filter(|h| h.is_finite() && *h > 0.0),
            list: PairList::default(),
            filing: Vec::new(),
            oversized: Vec::new(),
            entries: Vec::new(),
            grouped: Vec::new(),
            bucket_end: Vec::new(),
        }
    }

    /// The cell size for this update: the fixed one, or the largest finite box extent (1 if
    /// every box is a point or infinite, when any size is as good as another).
    fn cell_size_for(&self, boxes: &[Option<Aabb>]) -> f64 {
        if let Some(h) = self.cell_size {
            return h;
        }
        let largest = boxes
            .iter()
            .filter_map(live)
            .map(|b| b.extents().max_element())
            .filter(|e| e.is_finite())
            .fold(0.0, f64::max);
        if largest > 0.0 { largest } else { 1.0 }
    }
}

/// The cell index of coordinate `x`: non-decreasing in `x`, saturating (`as` casts saturate;
/// `-0.0` lands with `0.0`).
fn cell_of(x: f64, inv_h: f64) -> i64 {
    (x * inv_h).floor() as i64
}

/// Bucket of a cell in a table of `mask + 1` buckets: a multiplicative hash, fixed so that
/// runs are reproducible.
fn bucket_of(cell: [i64; 3], mask: u64) -> u32 {
    let mut h = (cell[0] as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    h ^= (cell[1] as u64).wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
    h ^= (cell[2] as u64).wrapping_mul(0x1656_67B1_9E37_79F9);
    h ^= h >> 32;
    // Fits: a table of 2^32 buckets would follow from 2^31 entries of 32 bytes, more memory
    // than the machine has.
    (h & mask) as u32
}

impl BroadPhase for UniformGrid {
    fn update(&mut self, boxes: &[Option<Aabb>], events: &mut PairEvents) {
        let boxes = &boxes[..slot_count(boxes)];
        let h = self.cell_size_for(boxes);
        let inv_h = 1.0 / h;

        // File every box in the cells it covers (seed 003's "grouping of particles").
        self.filing.clear();
        self.oversized.clear();
        self.entries.clear();
        for (k, slot) in boxes.iter().enumerate() {
            let Some(b) = live(slot) else {
                self.filing.push(Filing::Absent);
                continue;
            };
            let lo = [0, 1, 2].map(|a| cell_of(b.min[a], inv_h));
            let hi = [0, 1, 2].map(|a| cell_of(b.max[a], inv_h));
            // Saturating: three spans of up to 2^64 overflow even i128.
            let count: i128 = (0..3)
                .map(|a| i128::from(hi[a]) - i128::from(lo[a]) + 1)
                .fold(1, i128::saturating_mul);
            if count > i128::from(MAX_CELLS_PER_BOX) {
                self.filing.push(Filing::Oversized);
                self.oversized.push(k as u32);
                continue;
            }
            self.filing.push(Filing::Cells { lo });
            for x in lo[0]..=hi[0] {
                for y in lo[1]..=hi[1] {
                    for z in lo[2]..=hi[2] {
                        self.entries.push(Entry {
                            cell: [x, y, z],
                            proxy: k as u32,
                            bucket: 0,
                        });
                    }
                }
            }
        }

        // Group the entries by bucket with a counting sort: O(entries), stable, so each
        // bucket lists its boxes in slot order.
        let buckets = (2 * self.entries.len()).next_power_of_two().max(1);
        let mask = buckets as u64 - 1;
        self.bucket_end.clear();
        self.bucket_end.resize(buckets, 0);
        for e in &mut self.entries {
            e.bucket = bucket_of(e.cell, mask);
            self.bucket_end[e.bucket as usize] += 1;
        }
        let mut start = 0u32;
        for end in &mut self.bucket_end {
            let count = *end;
            *end = start;
            start += count;
        }
        self.grouped.clear();
        self.grouped.resize(
            self.entries.len(),
            Entry {
                cell: [0; 3],
                proxy: 0,
                bucket: 0,
            },
        );
        for e in &self.entries {
            let slot = &mut self.bucket_end[e.bucket as usize];
            self.grouped[*slot as usize] = *e;
            *slot += 1;
        }

        // Test the boxes sharing a cell (seed 003's second step), each pair in one cell only.
        let next = self.list.begin();
        let mut begin = 0usize;
        for &end in &self.bucket_end {
            let end = end as usize;
            let bucket = &self.grouped[begin..end];
            for (i, ei) in bucket.iter().enumerate() {
                for ej in &bucket[i + 1..] {
                    if ei.cell != ej.cell {
                        continue; // another cell hashed to the same bucket
                    }
                    let (a, b) = (ei.proxy as usize, ej.proxy as usize);
                    let (Some(ba), Some(bb)) = (boxes[a].as_ref(), boxes[b].as_ref()) else {
                        continue;
                    };
                    if !ba.intersects(bb) {
                        continue;
                    }
                    // The cell of the intersection's lower corner max(min_a, min_b) is
                    // max(lo_a, lo_b), the cell map being non-decreasing: report the pair
                    // there only.
                    if let (Filing::Cells { lo: la }, Filing::Cells { lo: lb }) =
                        (self.filing[a], self.filing[b])
                        && (0..3).all(|ax| ei.cell[ax] == la[ax].max(lb[ax]))
                    {
                        next.push(ProxyPair::new(ei.proxy, ej.proxy));
                    }
                }
            }
            begin = end;
        }

        // Oversized boxes against every live box; two oversized boxes once, from the lower.
        for &o in &self.oversized {
            let bo = boxes[o as usize].as_ref();
            for (k, slot) in boxes.iter().enumerate() {
                let k32 = k as u32;
                if k32 == o || (self.filing[k] == Filing::Oversized && k32 < o) {
                    continue;
                }
                if let (Some(bo), Some(bk)) = (bo, live(slot))
                    && bo.intersects(bk)
                {
                    next.push(ProxyPair::new(o, k32));
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
