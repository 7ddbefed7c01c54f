//! Incremental sweep and prune (thesis §4.1.1–4.1.2, Baraff's method [Bar93]).
//!
//! Per axis, the lower and upper ends of all boxes form one list, kept sorted from update to
//! update by insertion sort (app. B): boxes move little per step, so last step's list is
//! "fast richtig" and the sort costs O(n + c) for c exchanges (§4.1.1). Two boxes change their
//! overlap on an axis exactly when an end of one passes an end of the other, so the pairs are
//! brought up to date during the sort, on the exchanges themselves (§4.1.1: the matrix O_ij
//! is changed "schon während des Sortierens"; §4.1.2 for three axes):
//! * a lower end moving left past an upper end starts the two boxes' overlap on this axis;
//! * an upper end moving left past a lower end ends it.
//!
//! The pair overlaps in the lists (on all three axes) just after the first kind of exchange,
//! or just before the second, exactly when it overlaps in the lists on the two other axes at
//! that moment: on the axes already sorted in this update that is the boxes' current values,
//! on those still to be sorted their values of the last update. With both sets of values
//! kept, each exchange is decided by comparing keys, and the pair enters or leaves the
//! overlapping set exactly when its overlap in the lists does. (Testing only the current
//! values on an entering exchange and removing "if present" on a leaving one, as table 4.2's
//! matrix allows, finds the same set; the exact rule is what lets a pair be counted in
//! several regions, below, and it spares a hash look-up on every leaving exchange.) A pair
//! that starts and stops overlapping within one update, as the axes are sorted one after the
//! other, produces no event: events compare the set at the end of an update with the set at
//! its start. Touching boxes overlap: equal values order lower ends before upper ends.
//!
//! # Regions
//!
//! On one list per axis a box's end is passed, in a step, by every end within its step
//! length, and in a dense bed the ends of a whole slab of the bed lie within a box length on
//! each axis: the exchanges per box grow like `n^(2/3)` (like the slab's area), and the
//! thesis' O(n + c) becomes O(n^(5/3)) in a settled bed that jiggles. So space is cut into
//! cubic regions of edge [`DEFAULT_REGION_FACTOR`] mean box extents, each holding the three
//! lists of the boxes that touch it; a box in several regions is in each of their lists, and
//! each pair has a count of the regions whose lists show it overlapping, present while the
//! count is positive. A region's lists hold a bounded number of boxes, so the exchanges per
//! box stay bounded as the bed grows. A box entering a region is appended at the end of its
//! lists (after everything, as if its values were above all others) and sorted in; a box
//! leaving one gets values above every real value (a "sentinel") and is sorted out to the
//! end, ending its overlaps there on the way, then cut off. Many boxes entering or leaving at
//! once (the first update) make the region rebuild by full sort. Regions left empty are
//! recycled. [`SweepAndPrune::with_region_size`]`(f64::INFINITY)` gives the thesis' single set
//! of lists.
//!
//! Each region keeps its members' keys of the last update and copies in this update's once
//! per member, so the sort and the decisions on the exchanges read only the region's own
//! memory, not arrays indexed by proxy all over the heap. The counts are kept per proxy,
//! near those of its neighbours in space (see `pair_counts.rs`); a pair's entry is touched
//! only when it starts or stops overlapping in some region, and removed when its count
//! reaches zero.
//!
//! A box that would touch more than [`MAX_REGIONS_PER_BOX`] regions (a box much larger than
//! the rest, an infinite one) is kept out of the regions and tested against every box at
//! every update, the pairs it finds diffed against the previous update's.
//!
//! # Values and keys
//!
//! Coordinates are compared as integer keys: the bits of an `f64` mapped to a `u64` in the
//! same order (`-0.0` first made `+0.0`, so that they compare equal, as `≤` on `f64` has
//! them). Keys above that of `+∞` are free for the sentinels, one per box so that two leaving
//! boxes never overlap in the lists' order.

use rustc_hash::FxHashMap;
use talus_geom::Aabb;

use super::brute::{PairList, live, slot_count};
use super::pair_counts::{PairCounts, pair_key, unpack};
use super::{BroadPhase, PairEvents, ProxyPair, permute_in_place};

/// Region edge, in mean box extents (the largest edge of each box, averaged), when the region
/// size is automatic. Larger regions hold more boxes per list (more exchanges per box),
/// smaller ones put more boxes in several regions (more lists to sort, more counts to keep).
/// In the benchmark, the jiggling bed is cheapest at about 4 and the sparse falling cloud at
/// 5 to 6 (4 costs it some 20 % more); 8 or more costs both clearly more at 10^5 boxes.
pub const DEFAULT_REGION_FACTOR: f64 = 4.0;

/// Most regions a box may touch; a larger box is tested against every box instead.
pub const MAX_REGIONS_PER_BOX: u64 = 27;

/// Margin, in region edges, by which a box's regions may reach beyond it, so that a box
/// moving to and fro across a region boundary does not enter and leave at every update (see
/// [`SweepAndPrune`]'s `place_of`): 4 % of a mean box extent with the automatic size, more
/// than the benchmark bed's jiggle of up to 2 % per update.
const REGION_HYSTERESIS: f64 = 0.01;

/// Key of the first sentinel: one above the key of `+∞`.
const SENTINEL: u64 = 0xFFF0_0000_0000_0001;

/// A region rebuilds by full sort when at least this many boxes enter or leave it and they
/// are at least half of its boxes: insertion from the end costs O(m) per box then.
const REBUILD_MIN_CHANGES: usize = 16;

/// The automatic region size is chosen again when the mean box extent has changed by more
/// than this factor since it was chosen.
const REGRID_DRIFT: f64 = 4.0;

/// The ordered integer key of a coordinate.
#[inline]
fn key(v: f64) -> u64 {
    // -0.0 + 0.0 = +0.0: the two zeros get one key.
    let bits = (v + 0.0).to_bits();
    if bits >> 63 == 0 {
        bits | (1 << 63)
    } else {
        !bits
    }
}

/// The six keys of a box: lower x, y, z, then upper x, y, z.
type Keys = [u64; 6];

/// The keys of a slot without a box: a sentinel interval of its own.
#[inline]
fn absent_keys(k: usize) -> Keys {
    [SENTINEL + k as u64; 6]
}

/// The keys of a box.
#[inline]
fn box_keys(b: &Aabb) -> Keys {
    [
        key(b.min.x),
        key(b.min.y),
        key(b.min.z),
        key(b.max.x),
        key(b.max.y),
        key(b.max.z),
    ]
}

/// Whether two boxes overlap on `axis` (touching counts).
#[inline]
fn overlap_on(a: &Keys, b: &Keys, axis: usize) -> bool {
    a[axis] <= b[axis + 3] && b[axis] <= a[axis + 3]
}

/// Whether two boxes overlap on all three axes (touching counts), as [`Aabb::intersects`].
#[inline]
fn overlap(a: &Keys, b: &Keys) -> bool {
    overlap_on(a, b, 0) && overlap_on(a, b, 1) && overlap_on(a, b, 2)
}

/// `floor(x)` as `i64`, saturating (NaN to 0): non-decreasing in `x`, and without the call
/// to `floor` that the baseline x86-64 target makes.
#[inline]
fn floor_i64(x: f64) -> i64 {
    let i = x as i64;
    if (i as f64) > x {
        i.saturating_sub(1)
    } else {
        i
    }
}

/// One end of a box on one axis of a region.
#[derive(Debug, Clone, Copy)]
struct Endpoint {
    /// Its key (a sentinel for a box leaving the region).
    key: u64,
    /// The box's member slot in the region.
    slot: u32,
    /// Upper end.
    is_max: bool,
}

impl Endpoint {
    /// Whether `self` belongs before `other`: by key, lower ends first among equal keys, so
    /// that touching boxes overlap in the order.
    #[inline]
    fn before(self, other: Endpoint) -> bool {
        self.key < other.key || (self.key == other.key && !self.is_max && other.is_max)
    }

    /// The same order as [`Endpoint::before`], for `sort`.
    fn order(a: &Endpoint, b: &Endpoint) -> std::cmp::Ordering {
        (a.key, a.is_max).cmp(&(b.key, b.is_max))
    }
}

/// A member's status in its region during an update.
mod status {
    /// It entered this update: in the lists' old order it is at the end.
    pub const ENTERING: u8 = 1;
    /// It leaves this update: its keys are sentinels.
    pub const LEAVING: u8 = 2;
}

/// Where a slot's box is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    /// No live box.
    Absent,
    /// In the regions `lo..=hi` (per axis).
    Regions {
        /// Lowest region index per axis.
        lo: [i64; 3],
        /// Highest region index per axis.
        hi: [i64; 3],
    },
    /// Too large for the regions: tested against every box.
    Oversized,
}

impl Place {
    /// Whether the box is in region `cell`.
    #[inline]
    fn contains(&self, cell: [i64; 3]) -> bool {
        match self {
            Place::Regions { lo, hi } => (0..3).all(|a| lo[a] <= cell[a] && cell[a] <= hi[a]),
            _ => false,
        }
    }

    /// Calls `f` for each region of `self` that is not one of `other`'s.
    fn for_each_not_in(&self, other: &Place, mut f: impl FnMut([i64; 3])) {
        if let Place::Regions { lo, hi } = *self {
            for x in lo[0]..=hi[0] {
                for y in lo[1]..=hi[1] {
                    for z in lo[2]..=hi[2] {
                        if !other.contains([x, y, z]) {
                            f([x, y, z]);
                        }
                    }
                }
            }
        }
    }
}

/// One region: the thesis' three sorted lists for the boxes touching it, with its members'
/// keys copied in, so that the sort reads only the region's own memory.
#[derive(Debug, Clone, Default)]
struct Region {
    /// Region index per axis.
    cell: [i64; 3],
    /// Ends per axis, sorted after each update.
    axes: [Vec<Endpoint>; 3],
    /// Proxy per member slot.
    members: Vec<u32>,
    /// Per member slot, its keys in the lists' order as they were before this update: the
    /// last update's keys, a sentinel for a box that just entered.
    before: Vec<Keys>,
    /// Per member slot, this update's keys (a sentinel for a box leaving).
    now: Vec<Keys>,
    /// Per member slot, [`status`] flags of this update.
    status: Vec<u8>,
    /// Boxes appended this update.
    entering: usize,
    /// Boxes leaving this update.
    leaving: usize,
    /// New slot per old slot, for compaction.
    remap: Vec<u32>,
    /// In use (else on the free list).
    live: bool,
}

impl Region {
    /// Copies this update's keys of the members in, marking those that leave; whether any
    /// member's keys differ from those before (or a member enters or leaves).
    fn gather(&mut self, keys: &[Keys], places: &[Place], moved: &[bool]) -> bool {
        let some_leave = self.leaving > 0;
        let mut changed = self.entering > 0 || some_leave;
        self.now.clear();
        for (s, &p) in self.members.iter().enumerate() {
            let p = p as usize;
            // A member whose place did not change is still in the region: the place is looked
            // at only for the few that moved.
            if some_leave && moved[p] && !places[p].contains(self.cell) {
                self.now.push(absent_keys(p));
                self.status[s] |= status::LEAVING;
            } else {
                self.now.push(keys[p]);
                // Element by element: an array comparison calls `memcmp`.
                let (k, b) = (&keys[p], &self.before[s]);
                changed |= (0..6).any(|i| k[i] != b[i]);
            }
        }
        changed
    }

    /// Brings the region up to date: insertion sort of its lists with the overlaps changed
    /// on the exchanges, or a rebuild when many boxes came or went.
    fn update(
        &mut self,
        keys: &[Keys],
        places: &[Place],
        moved: &[bool],
        counts: &mut PairCounts,
        scratch: &mut Scratch,
    ) {
        // A region whose boxes all stand where they stood (those behind a broad phase's skin,
        // [`super::Skinned`]) has nothing to sort.
        if self.gather(keys, places, moved) {
            let changes = self.entering + self.leaving;
            let staying = self.members.len() - self.entering;
            if changes >= REBUILD_MIN_CHANGES && 2 * changes >= staying {
                self.rebuild(counts, scratch);
            } else {
                self.sort(counts);
            }
        }
        self.compact();
    }

    /// Insertion sort of the lists (app. B), handling each exchange (§4.1.1–4.1.2).
    fn sort(&mut self, counts: &mut PairCounts) {
        let (now, before, members) = (&self.now, &self.before, &self.members);
        for (axis, list) in self.axes.iter_mut().enumerate() {
            let end = axis + 3;
            for i in 0..list.len() {
                // Refresh the key as the sort reaches the end: everything to its left is
                // sorted on current keys, everything to its right still in the old order.
                let mut e = list[i];
                let s = e.slot as usize;
                e.key = now[s][if e.is_max { end } else { axis }];
                let mut j = i;
                while j > 0 {
                    let f = list[j - 1];
                    if !e.before(f) {
                        break;
                    }
                    if e.is_max != f.is_max {
                        let t = f.slot as usize;
                        if overlap_elsewhere(axis, &now[s], &now[t], &before[s], &before[t]) {
                            // The pair overlaps on the other axes, so this exchange is the
                            // moment it starts (a lower end passing an upper one) or stops
                            // (an upper end passing a lower one) overlapping in the lists.
                            let pk = pair_key(members[s], members[t]);
                            if e.is_max {
                                counts.dec(pk);
                            } else {
                                counts.inc(pk);
                            }
                        }
                    }
                    list[j] = f;
                    j -= 1;
                }
                list[j] = e;
            }
            // The leaving boxes' sentinels are now at the end.
            let kept = list.len() - 2 * self.leaving;
            debug_assert!(list[kept..].iter().all(|e| e.key >= SENTINEL));
            debug_assert!(list[..kept].iter().all(|e| e.key < SENTINEL));
            list.truncate(kept);
        }
    }

    /// Rebuilds the lists from scratch: the pairs of the old lists (one sweep on the keys
    /// before), full sort, the new pairs (one sweep, §4.1.1), and the counts changed by the
    /// difference.
    fn rebuild(&mut self, counts: &mut PairCounts, scratch: &mut Scratch) {
        // The old lists are sorted on the keys before, the entering boxes at the end.
        scratch.items.clear();
        for e in self.axes[0].iter().filter(|e| !e.is_max) {
            let s = e.slot as usize;
            if self.status[s] & status::ENTERING == 0 {
                scratch.items.push(SweepItem {
                    keys: self.before[s],
                    proxy: self.members[s],
                });
            }
        }
        let found_old = &mut scratch.found_old;
        found_old.clear();
        sweep_sorted(&scratch.items, 0, |a, b| found_old.push(pair_key(a, b)));

        for (axis, list) in self.axes.iter_mut().enumerate() {
            let (now, status) = (&self.now, &self.status);
            list.retain_mut(|e| {
                let s = e.slot as usize;
                e.key = now[s][axis + 3 * usize::from(e.is_max)];
                status[s] & status::LEAVING == 0
            });
            list.sort_unstable_by(Endpoint::order);
        }
        scratch.items.clear();
        for e in self.axes[0].iter().filter(|e| !e.is_max) {
            let s = e.slot as usize;
            scratch.items.push(SweepItem {
                keys: self.now[s],
                proxy: self.members[s],
            });
        }
        let found = &mut scratch.found;
        found.clear();
        sweep_sorted(&scratch.items, 0, |a, b| found.push(pair_key(a, b)));

        found_old.sort_unstable();
        found.sort_unstable();
        let (mut i, mut j) = (0, 0);
        while i < found_old.len() || j < found.len() {
            if j == found.len() || (i < found_old.len() && found_old[i] < found[j]) {
                counts.dec(found_old[i]);
                i += 1;
            } else if i == found_old.len() || found[j] < found_old[i] {
                counts.inc(found[j]);
                j += 1;
            } else {
                i += 1;
                j += 1;
            }
        }
    }

    /// Drops the members that left (renumbering the slots in the lists) and makes this
    /// update's keys the keys before the next.
    fn compact(&mut self) {
        if self.leaving > 0 {
            self.remap.clear();
            let mut w = 0usize;
            for s in 0..self.members.len() {
                if self.status[s] & status::LEAVING != 0 {
                    self.remap.push(u32::MAX);
                } else {
                    self.remap.push(w as u32);
                    self.members[w] = self.members[s];
                    self.now[w] = self.now[s];
                    w += 1;
                }
            }
            self.members.truncate(w);
            self.now.truncate(w);
            for list in &mut self.axes {
                for e in list.iter_mut() {
                    e.slot = self.remap[e.slot as usize];
                }
            }
        }
        std::mem::swap(&mut self.before, &mut self.now);
        self.status.clear();
        self.status.resize(self.members.len(), 0);
        self.entering = 0;
        self.leaving = 0;
    }

    /// Calls `emit` for each pair the lists show overlapping, between updates.
    fn for_each_pair(&self, scratch: &mut Scratch, emit: impl FnMut(u32, u32)) {
        scratch.items.clear();
        for e in self.axes[0].iter().filter(|e| !e.is_max) {
            let s = e.slot as usize;
            scratch.items.push(SweepItem {
                keys: self.before[s],
                proxy: self.members[s],
            });
        }
        sweep_sorted(&scratch.items, 0, emit);
    }
}

/// The regions, by index, with a free list so that a falling cloud, leaving regions behind,
/// does not grow memory without bound.
#[derive(Debug, Clone, Default)]
struct Regions {
    /// All regions, live or free.
    list: Vec<Region>,
    /// Live regions by cell.
    index: FxHashMap<[i64; 3], u32>,
    /// Indices of free regions.
    free: Vec<u32>,
}

impl Regions {
    /// Appends box `k` to the lists of region `cell`, making the region if needed.
    fn enter(&mut self, cell: [i64; 3], k: u32) {
        let r = match self.index.get(&cell) {
            Some(&r) => r as usize,
            None => {
                let r = match self.free.pop() {
                    Some(r) => r as usize,
                    None => {
                        self.list.push(Region::default());
                        self.list.len() - 1
                    }
                };
                self.index.insert(cell, r as u32);
                let region = &mut self.list[r];
                region.cell = cell;
                region.live = true;
                r
            }
        };
        let region = &mut self.list[r];
        let slot = region.members.len() as u32;
        region.members.push(k);
        // At the end of the lists, after everything, as a sentinel would be.
        region.before.push(absent_keys(k as usize));
        region.status.push(status::ENTERING);
        for axis in &mut region.axes {
            // Keys are set when the region is swept; lower end first keeps the order valid.
            for is_max in [false, true] {
                axis.push(Endpoint {
                    key: SENTINEL,
                    slot,
                    is_max,
                });
            }
        }
        region.entering += 1;
    }

    /// Counts a box as leaving region `cell` (the sweep finds which by its place).
    fn leave(&mut self, cell: [i64; 3]) {
        if let Some(&r) = self.index.get(&cell) {
            self.list[r as usize].leaving += 1;
        }
    }

    /// Moves box `k` from the regions of `old` to those of `new`.
    fn relocate(&mut self, k: u32, old: &Place, new: &Place) {
        old.for_each_not_in(new, |cell| self.leave(cell));
        new.for_each_not_in(old, |cell| self.enter(cell, k));
    }

    /// Empties region `r` and puts it on the free list.
    fn retire(&mut self, r: usize) {
        let region = &mut self.list[r];
        self.index.remove(&region.cell);
        for axis in &mut region.axes {
            axis.clear();
        }
        region.members.clear();
        region.before.clear();
        region.now.clear();
        region.status.clear();
        region.entering = 0;
        region.leaving = 0;
        region.live = false;
        self.free.push(r as u32);
    }
}

/// A box in a from-scratch sweep.
#[derive(Debug, Clone, Copy)]
struct SweepItem {
    /// Its keys.
    keys: Keys,
    /// Its proxy.
    proxy: u32,
}

/// The thesis' one-axis sweep (§4.1.1, table 4.2) over boxes sorted by their lower end on
/// `axis`: each box is met by the boxes whose lower end lies in its interval on that axis,
/// and those are tested on all three axes. O(n + k) for k pairs overlapping on `axis`.
fn sweep_sorted(items: &[SweepItem], axis: usize, mut emit: impl FnMut(u32, u32)) {
    for (i, p) in items.iter().enumerate() {
        let end = p.keys[axis + 3];
        for q in &items[i + 1..] {
            if q.keys[axis] > end {
                break;
            }
            if overlap(&p.keys, &q.keys) {
                emit(p.proxy, q.proxy);
            }
        }
    }
}

/// Buffers reused across updates.
#[derive(Debug, Clone, Default)]
struct Scratch {
    /// Boxes of a from-scratch sweep.
    items: Vec<SweepItem>,
    /// Pairs found by a from-scratch sweep.
    found: Vec<u64>,
    /// Pairs of the previous update found by a from-scratch sweep.
    found_old: Vec<u64>,
}

/// Whether two boxes overlap on the axes other than `axis` in the lists as they stand while
/// `axis` is being sorted: axes before it are sorted on this update's keys (`*_now`), axes
/// after it still hold the old order (`*_before`).
#[inline]
fn overlap_elsewhere(
    axis: usize,
    a_now: &Keys,
    b_now: &Keys,
    a_before: &Keys,
    b_before: &Keys,
) -> bool {
    match axis {
        0 => overlap_on(a_before, b_before, 1) && overlap_on(a_before, b_before, 2),
        1 => overlap_on(a_now, b_now, 0) && overlap_on(a_before, b_before, 2),
        _ => overlap_on(a_now, b_now, 0) && overlap_on(a_now, b_now, 1),
    }
}

/// Which algorithm a [`SweepAndPrune`] runs.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Mode {
    /// Lists kept sorted by insertion sort, overlaps changed on the exchanges; regions of the
    /// given edge, `None` for automatic.
    Incremental(Option<f64>),
    /// Sort from scratch and sweep at every update (the benchmark's baseline).
    FullResort,
}

/// Incremental sweep and prune (thesis §4.1.1–4.1.2): per axis the box ends kept sorted by
/// insertion sort, the overlapping pairs changed on the exchanges. O(n + exchanges) per
/// update.
///
/// The default cuts space into cubic regions of 4 mean box extents, each
/// with its own lists, so that the exchanges per box do not grow with the size of a dense
/// bed (see the module documentation); [`SweepAndPrune::with_region_size`] sets the region
/// edge, `f64::INFINITY` for the thesis' single set of lists. [`SweepAndPrune::full_resort`]
/// is the non-incremental baseline.
#[derive(Debug, Clone)]
pub struct SweepAndPrune {
    /// The algorithm.
    mode: Mode,
    /// Region edge in use; `None` until an update chooses it.
    region_size: Option<f64>,
    /// Per slot, its keys (sentinels for no box).
    keys: Vec<Keys>,
    /// Per slot, where its box is kept this update.
    places: Vec<Place>,
    /// Per slot, where its box was kept the last update.
    prev_places: Vec<Place>,
    /// Per slot, whether its place changed this update.
    moved: Vec<bool>,
    /// The regions.
    regions: Regions,
    /// How many regions show each pair.
    counts: PairCounts,
    /// Slots of oversized boxes this update.
    oversized: Vec<u32>,
    /// Pairs of oversized boxes found last update, sorted.
    oversized_pairs: Vec<u64>,
    /// Pairs of oversized boxes found this update.
    oversized_next: Vec<u64>,
    /// Sweep buffers.
    scratch: Scratch,
    /// The counts while they are renamed.
    renamed_counts: Vec<(u64, u32)>,
    /// The pair set of the full re-sort mode.
    list: PairList,
}

impl Default for SweepAndPrune {
    /// Incremental, with automatic regions.
    fn default() -> Self {
        Self::with_mode(Mode::Incremental(None))
    }
}

impl SweepAndPrune {
    /// Incremental sweep and prune with automatic regions (the default).
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Incremental sweep and prune with regions of edge `size`; `f64::INFINITY` keeps one set
    /// of lists for all of space (the thesis' method as written). A size that is not positive
    /// (or NaN) means automatic.
    #[must_use]
    pub fn with_region_size(size: f64) -> Self {
        Self::with_mode(Mode::Incremental(Some(size).filter(|s| *s > 0.0)))
    }

    /// Sort and sweep from scratch at every update, keeping nothing but the pair set for the
    /// events: the thesis' O(n log n + k) method of §4.1.1 (sort the lower ends on the axis
    /// where the box centres spread most, sweep, test the three axes), the baseline against
    /// which the incremental update is benchmarked.
    #[must_use]
    pub fn full_resort() -> Self {
        Self::with_mode(Mode::FullResort)
    }

    /// An empty broad phase running `mode`.
    fn with_mode(mode: Mode) -> Self {
        SweepAndPrune {
            mode,
            region_size: None,
            keys: Vec::new(),
            places: Vec::new(),
            prev_places: Vec::new(),
            moved: Vec::new(),
            regions: Regions::default(),
            counts: PairCounts::default(),
            oversized: Vec::new(),
            oversized_pairs: Vec::new(),
            oversized_next: Vec::new(),
            scratch: Scratch::default(),
            renamed_counts: Vec::new(),
            list: PairList::default(),
        }
    }

    /// The region edge in use (`None` before the first update, or in the full re-sort mode).
    #[must_use]
    pub fn region_size(&self) -> Option<f64> {
        self.region_size
    }

    /// Number of regions in use.
    #[must_use]
    pub fn region_count(&self) -> usize {
        self.regions.index.len()
    }

    /// The regions `lo..=hi` touched by box `b` grown by `margin` on every side, with
    /// regions of edge `size`.
    fn region_range(b: &Aabb, size: f64, margin: f64) -> ([i64; 3], [i64; 3]) {
        // floor(x / size) is non-decreasing in x (saturating, and with an infinite size every
        // finite x maps to 0, ±∞ to NaN, cast to 0): overlapping boxes share a region.
        let inv = 1.0 / size;
        let lo = [0, 1, 2].map(|a| floor_i64((b.min[a] - margin) * inv));
        let hi = [0, 1, 2].map(|a| floor_i64((b.max[a] + margin) * inv));
        (lo, hi)
    }

    /// Number of regions in a range, saturating (three spans of up to 2^64 overflow even
    /// i128).
    fn region_count_of(lo: [i64; 3], hi: [i64; 3]) -> i128 {
        (0..3)
            .map(|a| i128::from(hi[a]) - i128::from(lo[a]) + 1)
            .fold(1, i128::saturating_mul)
    }

    /// Where box `b` is kept with regions of edge `size`, given where it was (`old`).
    ///
    /// A box must be in every region it touches, so that two overlapping boxes share one;
    /// being in a few more is harmless (its overlaps there are real ones). So the regions are
    /// chosen with hysteresis: a box is put in the regions its box grown by
    /// [`REGION_HYSTERESIS`] region edges touches, and kept there while they still hold it
    /// and lie within its box grown by twice that. A box jiggling on a region boundary then
    /// does not enter and leave the region at every update.
    fn place_of(b: &Aabb, size: f64, old: &Place) -> Place {
        let margin = REGION_HYSTERESIS * size;
        let (lo, hi) = Self::region_range(b, size, 0.0);
        if let Place::Regions {
            lo: old_lo,
            hi: old_hi,
        } = *old
        {
            let (far_lo, far_hi) = Self::region_range(b, size, 2.0 * margin);
            if (0..3).all(|a| {
                far_lo[a] <= old_lo[a]
                    && old_lo[a] <= lo[a]
                    && hi[a] <= old_hi[a]
                    && old_hi[a] <= far_hi[a]
            }) {
                return *old;
            }
        }
        if Self::region_count_of(lo, hi) > i128::from(MAX_REGIONS_PER_BOX) {
            return Place::Oversized;
        }
        let (near_lo, near_hi) = Self::region_range(b, size, margin);
        if Self::region_count_of(near_lo, near_hi) <= i128::from(MAX_REGIONS_PER_BOX) {
            Place::Regions {
                lo: near_lo,
                hi: near_hi,
            }
        } else {
            Place::Regions { lo, hi }
        }
    }

    /// Mean of the largest finite edge of the live boxes (0 without any).
    fn mean_extent(boxes: &[Option<Aabb>]) -> f64 {
        let (mut sum, mut count) = (0.0, 0usize);
        for b in boxes.iter().filter_map(live) {
            let e = b.extents().max_element();
            if e.is_finite() {
                sum += e;
                count += 1;
            }
        }
        if count == 0 { 0.0 } else { sum / count as f64 }
    }

    /// The automatic region edge for boxes of mean extent `mean`.
    fn auto_size(mean: f64) -> f64 {
        let size = DEFAULT_REGION_FACTOR * mean;
        if size.is_finite() && size > 0.0 {
            size
        } else {
            // Points only (or no boxes): any size is correct; a later update that sees boxes
            // with extent chooses again.
            1.0
        }
    }

    /// Empties every region (the pairs its lists show counted down) and chooses the region
    /// size anew; every box enters its new regions in the update that follows.
    fn regrid(&mut self, boxes: &[Option<Aabb>], fixed: Option<f64>) {
        for r in 0..self.regions.list.len() {
            let region = &self.regions.list[r];
            if !region.live {
                continue;
            }
            let counts = &mut self.counts;
            region.for_each_pair(&mut self.scratch, |a, b| counts.dec(pair_key(a, b)));
            self.regions.retire(r);
        }
        for place in &mut self.places {
            if matches!(place, Place::Regions { .. }) {
                *place = Place::Absent;
            }
        }
        self.region_size = Some(fixed.unwrap_or_else(|| Self::auto_size(Self::mean_extent(boxes))));
    }

    /// The incremental update.
    fn update_incremental(
        &mut self,
        boxes: &[Option<Aabb>],
        events: &mut PairEvents,
        fixed: Option<f64>,
    ) {
        if self.region_size.is_none() {
            self.regrid(boxes, fixed);
        }
        let size = self.region_size.unwrap_or(1.0);

        // This update's keys and places; boxes that change regions are appended to or
        // counted as leaving them.
        std::mem::swap(&mut self.places, &mut self.prev_places);
        let total = boxes.len().max(self.keys.len());
        while self.keys.len() < total {
            self.keys.push(absent_keys(self.keys.len()));
            self.prev_places.push(Place::Absent);
        }
        self.places.resize(total, Place::Absent);
        self.moved.resize(total, false);
        self.counts.fit(total);
        self.oversized.clear();
        let (mut extent_sum, mut extent_count) = (0.0, 0usize);
        for k in 0..total {
            let (keys, place) = match boxes.get(k).and_then(live) {
                None => (absent_keys(k), Place::Absent),
                Some(b) => {
                    let e = b.extents().max_element();
                    if e.is_finite() {
                        extent_sum += e;
                        extent_count += 1;
                    }
                    (box_keys(b), Self::place_of(b, size, &self.prev_places[k]))
                }
            };
            self.keys[k] = keys;
            self.places[k] = place;
            let old = self.prev_places[k];
            self.moved[k] = old != place;
            if old != place {
                self.regions.relocate(k as u32, &old, &place);
            }
            if place == Place::Oversized {
                self.oversized.push(k as u32);
            }
        }

        // Each region: insertion sort with the exchanges, or rebuild.
        for r in 0..self.regions.list.len() {
            let region = &mut self.regions.list[r];
            if !region.live {
                continue;
            }
            region.update(
                &self.keys,
                &self.places,
                &self.moved,
                &mut self.counts,
                &mut self.scratch,
            );
            if region.members.is_empty() {
                self.regions.retire(r);
            }
        }

        self.update_oversized();
        self.counts.finish(events);

        // Box sizes drifted far from those the regions were made for: choose again next time.
        if fixed.is_none() && extent_count > 0 {
            let mean = extent_sum / extent_count as f64;
            let ratio = Self::auto_size(mean) / size;
            if !(1.0 / REGRID_DRIFT..=REGRID_DRIFT).contains(&ratio) {
                self.region_size = None;
            }
        }
    }

    /// The pairs of oversized boxes, found by testing each against every box and diffed
    /// against the previous update's.
    fn update_oversized(&mut self) {
        if self.oversized.is_empty() && self.oversized_pairs.is_empty() {
            return;
        }
        self.oversized_next.clear();
        for &o in &self.oversized {
            let ko = &self.keys[o as usize];
            for (k, kk) in self.keys.iter().enumerate() {
                let k32 = k as u32;
                if k32 == o || (self.places[k] == Place::Oversized && k32 < o) {
                    continue;
                }
                if overlap(ko, kk) {
                    self.oversized_next.push(pair_key(o, k32));
                }
            }
        }
        self.oversized_next.sort_unstable();
        let (old, new) = (&self.oversized_pairs, &self.oversized_next);
        let (mut i, mut j) = (0, 0);
        while i < old.len() || j < new.len() {
            if j == new.len() || (i < old.len() && old[i] < new[j]) {
                self.counts.dec(old[i]);
                i += 1;
            } else if i == old.len() || new[j] < old[i] {
                self.counts.inc(new[j]);
                j += 1;
            } else {
                i += 1;
                j += 1;
            }
        }
        std::mem::swap(&mut self.oversized_pairs, &mut self.oversized_next);
    }

    /// Renames the proxies of the incremental mode: the per-proxy arrays permuted, the
    /// regions' members and the pair counts renamed. The regions' lists refer to their
    /// members by slot, so they stay as they are.
    fn renumber_incremental(&mut self, new_of: &[u32]) {
        // Slots the broad phase has not seen yet are absent, as the next update would have
        // them; `moved` is rebuilt at every update: scratch until then.
        while self.keys.len() < new_of.len() {
            self.keys.push(absent_keys(self.keys.len()));
        }
        self.places.resize(self.keys.len(), Place::Absent);
        self.moved.resize(self.keys.len(), false);
        permute_in_place(&mut self.keys, new_of, &mut self.moved);
        permute_in_place(&mut self.places, new_of, &mut self.moved);
        for region in self.regions.list.iter_mut().filter(|r| r.live) {
            for m in &mut region.members {
                *m = new_of[*m as usize];
            }
        }
        self.counts.renumber(new_of, &mut self.renamed_counts);
        for k in &mut self.oversized_pairs {
            let pair = unpack(*k).renamed(new_of);
            *k = pair_key(pair.a, pair.b);
        }
        self.oversized_pairs.sort_unstable();
    }

    /// The full re-sort update: sort, sweep, diff.
    fn update_full(&mut self, boxes: &[Option<Aabb>], events: &mut PairEvents) {
        // Sweep along the axis where the centres spread most: the fewest boxes overlap on it.
        let (mut sum, mut sum_sq, mut count) = ([0.0f64; 3], [0.0f64; 3], 0.0);
        let items = &mut self.scratch.items;
        items.clear();
        for (k, b) in boxes.iter().enumerate() {
            let Some(b) = live(b) else { continue };
            let c = b.min * 0.5 + b.max * 0.5;
            for a in 0..3 {
                sum[a] += c[a];
                sum_sq[a] += c[a] * c[a];
            }
            count += 1.0;
            items.push(SweepItem {
                keys: box_keys(b),
                proxy: k as u32,
            });
        }
        let spread = |a: usize| {
            let v = sum_sq[a] / count - (sum[a] / count).powi(2);
            if v.is_nan() { 0.0 } else { v }
        };
        let axis = (0..3)
            .max_by(|&a, &b| spread(a).total_cmp(&spread(b)).then(b.cmp(&a)))
            .unwrap_or(0);
        items.sort_unstable_by_key(|it| it.keys[axis]);
        let next = self.list.begin();
        sweep_sorted(items, axis, |a, b| next.push(ProxyPair::new(a, b)));
        self.list.commit(events);
    }
}

impl BroadPhase for SweepAndPrune {
    fn update(&mut self, boxes: &[Option<Aabb>], events: &mut PairEvents) {
        let boxes = &boxes[..slot_count(boxes)];
        match self.mode {
            Mode::Incremental(fixed) => self.update_incremental(boxes, events, fixed),
            Mode::FullResort => self.update_full(boxes, events),
        }
    }

    fn pairs(&self) -> Vec<ProxyPair> {
        match self.mode {
            Mode::Incremental(_) => {
                let mut pairs: Vec<ProxyPair> = self.counts.keys().map(unpack).collect();
                pairs.sort_unstable();
                pairs
            }
            Mode::FullResort => self.list.pairs().to_vec(),
        }
    }

    fn pair_count(&self) -> usize {
        match self.mode {
            Mode::Incremental(_) => self.counts.len(),
            Mode::FullResort => self.list.pairs().len(),
        }
    }

    fn renumber(&mut self, new_of: &[u32]) {
        match self.mode {
            Mode::Incremental(_) => self.renumber_incremental(new_of),
            Mode::FullResort => self.list.renumber(new_of),
        }
    }
}
