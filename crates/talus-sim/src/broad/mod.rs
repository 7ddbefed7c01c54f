//! Broad phase (thesis §4.1): which grains' bounding boxes overlap, kept up to date step by
//! step, with the pairs that start and stop overlapping reported as events.
//!
//! Boxes are addressed by proxy index: slot `i` of the slice given to
//! [`BroadPhase::update`] is proxy `i`, `None` meaning no proxy in that slot (a removed
//! grain). Touching boxes (a shared face, edge or corner) overlap. Every method reports the
//! same pairs and the same events; they differ in cost:
//! * [`SweepAndPrune`]: endpoint lists per axis kept sorted by insertion sort, pairs updated
//!   on the swaps (§4.1.1–4.1.2, table 4.2): O(n + swaps) per step;
//! * [`BruteForce`]: every pair, O(n²): the oracle;
//! * [`UniformGrid`]: linked cells (seed 003): O(n) for boxes of similar size;
//! * [`SortedDistance`]: boxes sorted by the distance of their bounding spheres from a
//!   reference point (seed 003, algorithm 1).
//!
//! [`PeriodicBroad`] runs any of them across periodic boundaries, on the boxes and their
//! images; [`Skinned`] runs any of them on boxes grown by a skin and kept while the real
//! boxes stay inside, so that grains that barely move cost the inner method nothing. The
//! engine's methods ([`BroadPhaseKind::build`]) run with the skin, all but the brute-force
//! oracle.

mod brute;
mod grid;
mod pair_counts;
mod periodic;
mod sap;
mod skin;
mod sorted;

pub use brute::BruteForce;
pub use grid::UniformGrid;
pub use periodic::PeriodicBroad;
pub use sap::SweepAndPrune;
pub use skin::{DEFAULT_SKIN, Skinned};
pub use sorted::SortedDistance;

use talus_geom::Aabb;

/// Two proxies whose boxes overlap, the smaller index first.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub struct ProxyPair {
    /// The smaller proxy index.
    pub a: u32,
    /// The larger proxy index.
    pub b: u32,
}

impl ProxyPair {
    /// The pair under the new proxy names `new_of`, the smaller first again.
    #[must_use]
    pub fn renamed(self, new_of: &[u32]) -> Self {
        ProxyPair::new(new_of[self.a as usize], new_of[self.b as usize])
    }

    /// The two proxies, the larger first when `flipped`.
    #[must_use]
    pub fn oriented(self, flipped: bool) -> (u32, u32) {
        if flipped {
            (self.b, self.a)
        } else {
            (self.a, self.b)
        }
    }

    /// The pair of two distinct proxies, in either order.
    #[must_use]
    pub fn new(x: u32, y: u32) -> Self {
        if x < y {
            ProxyPair { a: x, b: y }
        } else {
            ProxyPair { a: y, b: x }
        }
    }
}

/// The pairs that started and stopped overlapping in one update, each list sorted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PairEvents {
    /// Pairs overlapping now that did not before.
    pub started: Vec<ProxyPair>,
    /// Pairs that overlapped before and do not now (including those of removed proxies).
    pub ended: Vec<ProxyPair>,
}

impl PairEvents {
    /// Empties both lists, keeping their memory.
    pub fn clear(&mut self) {
        self.started.clear();
        self.ended.clear();
    }
}

/// A broad-phase method.
pub trait BroadPhase: Send + Sync {
    /// Brings the method up to date with `boxes` and appends the pair changes since the last
    /// update to `events` (each list sorted when `events` was empty). A box with a NaN
    /// coordinate or `min > max` counts as absent; slots missing from a shorter slice too.
    fn update(&mut self, boxes: &[Option<Aabb>], events: &mut PairEvents);

    /// The pairs overlapping after the last update, sorted.
    fn pairs(&self) -> Vec<ProxyPair>;

    /// Number of pairs overlapping after the last update.
    fn pair_count(&self) -> usize;

    /// Renames the proxies between updates: proxy `p` of the last update is proxy
    /// `new_of[p]` from now on (`new_of` a permutation of `0..new_of.len()`, the caller's
    /// boxes moved with their proxies). The pairs are the same, renamed, and the next
    /// update's events are what they would have been under the new names. No allocation
    /// once the method has renamed a set of this size before.
    fn renumber(&mut self, new_of: &[u32]);
}

/// Puts `values[p]` at `values[new_of[p]]` for every `p` below `new_of.len()` (a
/// permutation of those indices), following its cycles in place; `values` and `visited`
/// (scratch) are at least that long.
pub(crate) fn permute_in_place<T: Copy>(values: &mut [T], new_of: &[u32], visited: &mut [bool]) {
    let n = new_of.len();
    visited[..n].fill(false);
    for start in 0..n {
        if visited[start] {
            continue;
        }
        // Carry the value of `at` to its place, picking up the one found there.
        let mut carried = values[start];
        let mut at = start;
        loop {
            let to = new_of[at] as usize;
            std::mem::swap(&mut values[to], &mut carried);
            visited[to] = true;
            if to == start {
                break;
            }
            at = to;
        }
    }
}

/// The broad-phase methods, for choosing one by value (a scenario file's setting).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum BroadPhaseKind {
    /// Incremental sweep and prune.
    #[default]
    SweepAndPrune,
    /// All pairs.
    BruteForce,
    /// Linked cells; `None` sizes the cells from the largest box.
    UniformGrid {
        /// Edge length of a cell.
        cell_size: Option<f64>,
    },
    /// Sorted distances from a reference point.
    SortedDistance,
}

impl BroadPhaseKind {
    /// A new, empty broad phase of this kind, across the periodic axes of `periodic`.
    #[must_use]
    pub fn build(self, periodic: crate::periodic::Periodic) -> Box<dyn BroadPhase> {
        let inner = self.build_plain();
        if periodic.is_none() {
            inner
        } else {
            Box::new(PeriodicBroad::new(inner, periodic))
        }
    }

    fn build_plain(self) -> Box<dyn BroadPhase> {
        let skinned = |inner: Box<dyn BroadPhase>| -> Box<dyn BroadPhase> {
            Box::new(Skinned::new(inner, DEFAULT_SKIN))
        };
        match self {
            BroadPhaseKind::SweepAndPrune => skinned(Box::<SweepAndPrune>::default()),
            // The oracle stays as plain as it is.
            BroadPhaseKind::BruteForce => Box::new(BruteForce::default()),
            BroadPhaseKind::UniformGrid { cell_size } => {
                skinned(Box::new(UniformGrid::new(cell_size)))
            }
            BroadPhaseKind::SortedDistance => skinned(Box::<SortedDistance>::default()),
        }
    }
}
