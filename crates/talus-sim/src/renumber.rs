//! Grains numbered in space: every so many steps the broad-phase proxies (the numbers the
//! hot arrays of the contact stage are indexed by) are put in the order of their boxes'
//! centres along a Morton (Z-order) curve, so that grains near each other in space sit near
//! each other in the body array, the box array, the broad phase's lists and the contact list,
//! and the contact stage reads memory in nearly sequential runs rather than all over it.
//!
//! Grain ids ([`crate::GrainId`]) and slots do not change: they are what users hold. Only
//! the proxies move, with everything indexed by them: the boxes, the proxy of each grain and
//! wall, the contact list (re-sorted, each pair's state kept in the order its bodies were met
//! in, see `Contact::flipped`) and the broad phase (its proxies renamed in place, so it
//! reports the same pairs). Every pair computes what it computed before, and each body's
//! loads are summed in the order of its partners' ids (`crate::load_sums`), not of the
//! pair list: a renumbering changes no bit of a run. The new order depends on the boxes and shapes alone, so it is the same for any thread
//! count, and a checkpoint keeps it.
//!
//! # Shapes
//!
//! A contact reads the data of both grains' shapes (some kilobytes each). While the shapes
//! in use fit in a core's cache beside the rest ([`SHAPE_CACHE_BYTES`]) the order of space
//! alone is best. When they do not, and many grains share each shape, the grains are
//! grouped by shape first and put in the order of space within each group: consecutive
//! pairs then start from the same shape, which stays cached. On a bed of 112,500 grains
//! sharing 500 shapes (26 vertices, 9 MB of shape data) the step takes 0.51 s grouped by
//! shape, 0.96 s in the order of space alone and 1.26 s numbered at random.

use talus_geom::Aabb;
use talus_geom::glam::DVec3;

use crate::contact::ContactForce;
use crate::shape::ShapeId;
use crate::world::{Body, World};

/// Bits per axis of the Morton key (3 × 21 = 63 bits).
const MORTON_BITS: u32 = 21;

/// Shape data that stays in a core's cache beside the bodies and contacts it works on: the
/// shapes in use are grouped when theirs is larger (half this machine class's 1.25 MiB L2).
pub const SHAPE_CACHE_BYTES: usize = 640 * 1024;

/// Grains per shape from which grouping the grains by shape pays: fewer, and the groups are
/// too short for a shape to be met again while it is cached.
pub const GROUP_MIN_GRAINS_PER_SHAPE: usize = 8;

/// The bits of `x` (its lowest 21) spread out to every third bit.
fn spread_bits(x: u64) -> u64 {
    let mut x = x & ((1 << MORTON_BITS) - 1);
    x = (x | x << 32) & 0x001f_0000_0000_ffff;
    x = (x | x << 16) & 0x001f_0000_ff00_00ff;
    x = (x | x << 8) & 0x100f_00f0_0f00_f00f;
    x = (x | x << 4) & 0x10c3_0c30_c30c_30c3;
    (x | x << 2) & 0x1249_2492_4924_9249
}

/// The Morton key of a point given by its cell on each axis (each below 2^21): the bits of
/// the three cell numbers interleaved, x lowest.
#[must_use]
pub fn morton_key(cell: [u64; 3]) -> u64 {
    spread_bits(cell[0]) | spread_bits(cell[1]) << 1 | spread_bits(cell[2]) << 2
}

/// The centre of a box.
fn centre(b: &Aabb) -> DVec3 {
    b.min * 0.5 + b.max * 0.5
}

/// The cells of the Morton curve: the region of the centres cut into 2^21 cubic cells per
/// axis (the same edge on every axis, so that the curve's blocks are cubes).
struct MortonGrid {
    origin: DVec3,
    inv_cell: f64,
}

impl MortonGrid {
    /// The grid over the centres of `boxes`.
    fn over(boxes: impl Iterator<Item = Aabb>) -> MortonGrid {
        let (mut lo, mut hi) = (DVec3::INFINITY, DVec3::NEG_INFINITY);
        for b in boxes {
            let c = centre(&b);
            lo = lo.min(c);
            hi = hi.max(c);
        }
        let extent = (hi - lo).max_element();
        let cells = f64::from(1u32 << MORTON_BITS);
        MortonGrid {
            origin: lo,
            inv_cell: if extent.is_finite() && extent > 0.0 {
                // Just under 2^21 cells across, so the highest centre falls in the last cell.
                (cells - 1.0) / extent
            } else {
                0.0
            },
        }
    }

    /// The key of the centre of `b` (0 for a centre that is not finite).
    fn key(&self, b: &Aabb) -> u64 {
        let d = (centre(b) - self.origin) * self.inv_cell;
        // `as` saturates and maps NaN to 0: every key is a valid one.
        morton_key([d.x as u64, d.y as u64, d.z as u64])
    }
}

/// Buffers of a renumbering, kept so that one allocates nothing once the world has been
/// renumbered at its size before.
#[derive(Debug, Default)]
pub(crate) struct RenumberScratch {
    /// Per proxy: its class, its shape group, its key and its old number, sorted into the new
    /// order.
    keyed: Vec<(u8, u32, u64, u32)>,
    /// New number per old number.
    new_of: Vec<u32>,
    /// The proxies, their boxes and the contact list in the new order, before they change
    /// places with the world's.
    bodies: Vec<Body>,
    boxes: Vec<Option<Aabb>>,
    order: Vec<u32>,
    /// Grains per shape.
    shape_grains: Vec<u32>,
}

/// A grain's box, when it has a finite one.
fn placed(body: Body, b: Option<Aabb>) -> Option<Aabb> {
    match (body, b) {
        (Body::Grain(..), Some(b)) if b.min.is_finite() && b.max.is_finite() => Some(b),
        _ => None,
    }
}

/// The new order of the proxies into `keyed`: the grains with a finite box by group
/// (`group` of the proxy) and Morton key of its centre, then the walls, then the grains
/// without a box (removed, or not yet stepped), ties kept in the old order.
fn space_order(
    proxies: &[Body],
    boxes: &[Option<Aabb>],
    group: impl Fn(usize) -> u32,
    keyed: &mut Vec<(u8, u32, u64, u32)>,
) {
    let grid = MortonGrid::over(
        proxies
            .iter()
            .zip(boxes)
            .filter_map(|(p, b)| placed(*p, *b)),
    );
    keyed.clear();
    keyed.extend(
        proxies
            .iter()
            .zip(boxes)
            .enumerate()
            .map(|(p, (&body, &b))| match (placed(body, b), body) {
                (Some(b), _) => (0, group(p), grid.key(&b), p as u32),
                (None, Body::Wall(_)) => (1, 0, 0, p as u32),
                (None, Body::Grain(..)) => (2, 0, 0, p as u32),
            }),
    );
    keyed.sort_unstable();
}

/// Whether grains of `grains` per shape (indexed by shape) with the shapes' data sizes
/// `bytes` are grouped by shape: their data exceed [`SHAPE_CACHE_BYTES`] and the shapes in
/// use average at least [`GROUP_MIN_GRAINS_PER_SHAPE`] grains.
fn group_by_shape(grains: &[u32], bytes: impl Fn(usize) -> usize) -> bool {
    let (mut shapes, mut total_grains, mut total_bytes) = (0usize, 0usize, 0usize);
    for (shape, &count) in grains.iter().enumerate() {
        if count > 0 {
            shapes += 1;
            total_grains += count as usize;
            total_bytes += bytes(shape);
        }
    }
    total_bytes > SHAPE_CACHE_BYTES && total_grains >= GROUP_MIN_GRAINS_PER_SHAPE * shapes
}

impl World {
    /// Renumbers the broad-phase proxies along a Morton curve through the centres of the
    /// grains' boxes (see the module documentation). Between steps; the step calls it every
    /// [`crate::SimParams::renumber_every`] steps. Nothing a pair computes changes, nor any
    /// sum of loads (summed in the order of the bodies' ids).
    pub fn renumber(&mut self) {
        let mut scratch = std::mem::take(&mut self.renumbering);
        let shape_of = |proxy: usize| match self.proxies[proxy] {
            Body::Grain(slot, _) => self.slots[slot as usize]
                .and_then(|e| self.ecs.get::<&ShapeId>(e).ok().map(|id| id.0)),
            Body::Wall(_) => None,
        };
        scratch.shape_grains.clear();
        scratch.shape_grains.resize(self.shapes.shapes().len(), 0);
        for shape in (0..self.proxies.len()).filter_map(shape_of) {
            scratch.shape_grains[shape as usize] += 1;
        }
        let grouped = group_by_shape(&scratch.shape_grains, |shape| {
            self.shapes
                .get(ShapeId(shape as u32))
                .map_or(0, |s| s.body.data_bytes())
        });
        let group = |proxy: usize| {
            if grouped {
                shape_of(proxy).unwrap_or(0)
            } else {
                0
            }
        };
        space_order(&self.proxies, &self.boxes, group, &mut scratch.keyed);
        scratch.new_of.clear();
        scratch.new_of.resize(scratch.keyed.len(), 0);
        for (new, &(_, _, _, old)) in scratch.keyed.iter().enumerate() {
            scratch.new_of[old as usize] = new as u32;
        }
        let old_numbers = scratch.keyed.iter().map(|k| k.3 as usize);
        scratch.bodies.clear();
        scratch
            .bodies
            .extend(old_numbers.clone().map(|o| self.proxies[o]));
        std::mem::swap(&mut self.proxies, &mut scratch.bodies);
        scratch.boxes.clear();
        scratch.boxes.extend(old_numbers.map(|o| self.boxes[o]));
        std::mem::swap(&mut self.boxes, &mut scratch.boxes);
        for p in self.grain_proxy.iter_mut().chain(&mut self.wall_proxy) {
            *p = scratch.new_of[*p as usize];
        }
        self.renumber_contacts(&scratch.new_of, &mut scratch.order);
        self.broad.renumber(&scratch.new_of);
        self.renumbering = scratch;
    }

    /// The contact list and its forces under the new proxy numbers `new_of`, sorted again;
    /// a pair whose order the renumbering reverses is flipped, so that it is still met in the
    /// order its state was made in.
    fn renumber_contacts(&mut self, new_of: &[u32], order: &mut Vec<u32>) {
        self.merge_contacts();
        self.contact_forces.resize(self.contacts.len(), None);
        for (c, f) in self.contacts.iter_mut().zip(&mut self.contact_forces) {
            let pair = c.pair.renamed(new_of);
            let swapped = new_of[c.pair.a as usize] > new_of[c.pair.b as usize];
            c.pair = pair;
            c.flipped ^= swapped;
            if let Some(force) = f {
                let renamed = ContactForce {
                    pair,
                    flipped: c.flipped,
                    ..*force
                };
                *force = if swapped { renamed.reversed() } else { renamed };
            }
        }
        order.clear();
        order.extend(0..self.contacts.len() as u32);
        order.sort_unstable_by_key(|&i| self.contacts[i as usize].pair);
        // Into the spare lists, which then change places with the lists.
        self.spare_contacts.clear();
        self.spare_contacts
            .extend(order.iter().map(|&i| self.contacts[i as usize]));
        self.spare_forces.clear();
        self.spare_forces
            .extend(order.iter().map(|&i| self.contact_forces[i as usize]));
        std::mem::swap(&mut self.contacts, &mut self.spare_contacts);
        std::mem::swap(&mut self.contact_forces, &mut self.spare_forces);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The key by interleaving bit by bit, the definition.
    fn morton_by_bits(cell: [u64; 3]) -> u64 {
        let mut key = 0;
        for bit in 0..MORTON_BITS {
            for (axis, c) in cell.iter().enumerate() {
                key |= ((c >> bit) & 1) << (3 * bit + axis as u32);
            }
        }
        key
    }

    #[test]
    fn shapes_are_grouped_when_large_and_shared() {
        let kib = |k: usize| move |_: usize| k * 1024;
        // 500 shapes of 20 KiB (10 MB), 64 grains each: grouped.
        assert!(group_by_shape(&[64; 500], kib(20)));
        // The same shapes, 2 grains each: not worth it.
        assert!(!group_by_shape(&[2; 500], kib(20)));
        // 32 shapes of 20 KiB (640 KiB) fit: the order of space alone.
        assert!(!group_by_shape(&[1000; 32], kib(20)));
        // Shapes without grains do not count.
        let mut grains = vec![0; 500];
        grains[..8].fill(5000);
        assert!(!group_by_shape(&grains, kib(20)));
    }

    #[test]
    fn morton_keys_interleave_the_bits() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..1000 {
            // xorshift: cells over the whole range.
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let cell = [x & 0x1f_ffff, (x >> 21) & 0x1f_ffff, (x >> 42) & 0x1f_ffff];
            assert_eq!(morton_key(cell), morton_by_bits(cell), "{cell:?}");
        }
        let top = (1 << MORTON_BITS) - 1;
        assert_eq!(morton_key([top; 3]), (1 << 63) - 1);
    }

    #[test]
    fn order_puts_grains_by_curve_then_walls_then_boxless() {
        let unit = |x: f64, y: f64, z: f64| {
            let c = DVec3::new(x, y, z);
            Some(Aabb {
                min: c - 0.5,
                max: c + 0.5,
            })
        };
        let proxies = [
            Body::Grain(0, 0),
            Body::Wall(0),
            Body::Grain(1, 1),
            Body::Grain(2, 2),
            Body::Grain(3, 3),
            Body::Grain(4, 4),
        ];
        let boxes = [
            unit(1.0, 1.0, 1.0),
            unit(0.0, 0.0, 0.0),
            None,
            unit(0.0, 0.0, 0.0),
            unit(1.0, 0.0, 0.0),
            unit(0.0, 1.0, 0.0),
        ];
        // Z-order of the unit cube's corners: (0,0,0), (1,0,0), (0,1,0), …, (1,1,1).
        let mut keyed = Vec::new();
        space_order(&proxies, &boxes, |_| 0, &mut keyed);
        let order: Vec<u32> = keyed.iter().map(|k| k.3).collect();
        assert_eq!(order, [3, 4, 5, 0, 1, 2]);
        // Grouped by shape (grains 0 and 3 of one, 2 and 4 of another): groups first.
        let group = |p: usize| [1, 0, 0, 1, 0, 0][p];
        space_order(&proxies, &boxes, group, &mut keyed);
        let order: Vec<u32> = keyed.iter().map(|k| k.3).collect();
        assert_eq!(order, [4, 5, 3, 0, 1, 2]);
    }
}
