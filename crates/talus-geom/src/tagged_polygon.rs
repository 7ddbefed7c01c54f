//! A polygon whose corners carry tags, clipped by half-spaces: the parts of the faces that
//! bound an overlap (see `overlap.rs`), each corner tagged with where it came from (a
//! vertex of its own grain, or the plane of the other grain's face that cut it out), so that
//! each corner can be checked against the right feature afterwards.

use glam::DVec3;

/// Polygons of up to this many corners are clipped without branches (see [`TaggedPolygon`]).
const BRANCH_FREE_UP_TO: usize = 6;

/// A convex polygon with a tag per corner, and the buffer its next clip writes into.
///
/// The buffers only grow (a clip can at most double a polygon's corner count), so that a
/// warm polygon clips without allocating, and the clip writes every corner and every cut
/// point unconditionally, advancing the output by whether it is kept: the keep-or-drop
/// decisions follow the data, and a branch per corner would be mispredicted about as often
/// as it is taken. A polygon of many corners, which only two of its edges cross, is clipped
/// with branches instead.
#[derive(Default)]
pub(crate) struct TaggedPolygon {
    points: Vec<DVec3>,
    tags: Vec<u32>,
    len: usize,
    scratch_points: Vec<DVec3>,
    scratch_tags: Vec<u32>,
    distances: Vec<f64>,
}

impl TaggedPolygon {
    /// Starts a polygon with the corners `corners`, in order.
    pub fn start(&mut self, corners: impl Iterator<Item = (DVec3, u32)>) {
        self.points.clear();
        self.tags.clear();
        for (x, tag) in corners {
            self.points.push(x);
            self.tags.push(tag);
        }
        self.len = self.points.len();
    }

    /// The corners, in order.
    #[inline]
    pub fn points(&self) -> &[DVec3] {
        &self.points[..self.len]
    }

    /// The corners' tags, in the order of [`TaggedPolygon::points`].
    #[inline]
    pub fn tags(&self) -> &[u32] {
        &self.tags[..self.len]
    }

    /// Keeps the part of the polygon where `distance(x) ≤ tolerance` (a corner within the
    /// tolerance beyond the plane counts as on it); new corners, where an edge crosses the
    /// plane, get `tag`. Returns whether a polygon with area (three corners or more) is left.
    /// A polygon no corner of which lies beyond the plane is left exactly as it is.
    pub fn clip(&mut self, distance: impl Fn(DVec3) -> f64, tag: u32, tolerance: f64) -> bool {
        let n = self.len;
        self.distances.clear();
        let mut beyond = 0usize;
        for &p in &self.points[..n] {
            let d = distance(p);
            beyond += usize::from(d > tolerance);
            self.distances.push(d);
        }
        if beyond == 0 {
            return true;
        }
        if beyond == n {
            self.len = 0;
            return false;
        }
        // At most one corner and one cut point per edge.
        if self.scratch_points.len() < 2 * n {
            self.scratch_points.resize(2 * n, DVec3::ZERO);
            self.scratch_tags.resize(2 * n, 0);
        }
        let (out_points, out_tags) = (
            &mut self.scratch_points[..2 * n],
            &mut self.scratch_tags[..2 * n],
        );
        let (points, tags, distances) = (&self.points[..n], &self.tags[..n], &self.distances[..n]);
        let crossing =
            |p: DVec3, q: DVec3, dp: f64, dq: f64| p + (q - p) * (dp / (dp - dq)).clamp(0.0, 1.0);
        let mut m = 0;
        if n <= BRANCH_FREE_UP_TO {
            for k in 0..n {
                let l = if k + 1 == n { 0 } else { k + 1 };
                let (dp, dq) = (distances[k], distances[l]);
                let (p_in, q_in) = (dp <= tolerance, dq <= tolerance);
                out_points[m] = points[k];
                out_tags[m] = tags[k];
                m += usize::from(p_in);
                // Where the edge crosses the plane; computed for every edge and kept for
                // those that cross (for the others it may be a NaN, never read).
                out_points[m] = crossing(points[k], points[l], dp, dq);
                out_tags[m] = tag;
                m += usize::from(p_in != q_in);
            }
        } else {
            // Many corners, of which only two edges cross: a division per edge would cost
            // more than the branches it saves.
            for k in 0..n {
                let l = if k + 1 == n { 0 } else { k + 1 };
                let (dp, dq) = (distances[k], distances[l]);
                let (p_in, q_in) = (dp <= tolerance, dq <= tolerance);
                if p_in {
                    out_points[m] = points[k];
                    out_tags[m] = tags[k];
                    m += 1;
                }
                if p_in != q_in {
                    out_points[m] = crossing(points[k], points[l], dp, dq);
                    out_tags[m] = tag;
                    m += 1;
                }
            }
        }
        std::mem::swap(&mut self.points, &mut self.scratch_points);
        std::mem::swap(&mut self.tags, &mut self.scratch_tags);
        self.len = m;
        m >= 3
    }
}

#[cfg(test)]
mod tests {
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    use super::*;
    use crate::polyhedron::polygon_area_vector;

    const TOLERANCE: f64 = 1e-12;

    /// A convex polygon of `n` corners on a circle in the plane z = 0, counter-clockwise,
    /// tagged 0..n.
    fn polygon(n: usize, r: &mut ChaCha8Rng) -> TaggedPolygon {
        let mut angles: Vec<f64> = (0..n)
            .map(|_| r.random_range(0.0..std::f64::consts::TAU))
            .collect();
        angles.sort_by(f64::total_cmp);
        let mut p = TaggedPolygon::default();
        p.start(
            angles
                .iter()
                .enumerate()
                .map(|(k, &t)| (DVec3::new(t.cos(), t.sin(), 0.0), k as u32)),
        );
        p
    }

    fn area(p: &TaggedPolygon) -> f64 {
        if p.points().len() < 3 {
            0.0
        } else {
            polygon_area_vector(p.points()).z
        }
    }

    #[test]
    fn a_square_cut_in_half_keeps_its_inner_corners_and_tags_the_new_ones() {
        let mut p = TaggedPolygon::default();
        let square = [(0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0)];
        p.start(
            square
                .iter()
                .enumerate()
                .map(|(k, &(x, y))| (DVec3::new(x, y, 0.0), k as u32)),
        );
        assert!(p.clip(|x| x.x - 0.25, 7, TOLERANCE));
        let expected = [
            (DVec3::new(0.0, 0.0, 0.0), 0),
            (DVec3::new(0.25, 0.0, 0.0), 7),
            (DVec3::new(0.25, 1.0, 0.0), 7),
            (DVec3::new(0.0, 1.0, 0.0), 3),
        ];
        assert_eq!(p.points().len(), 4);
        for ((&x, &tag), (y, t)) in p.points().iter().zip(p.tags()).zip(expected) {
            assert_eq!((x, tag), (y, t));
        }
        // A plane nothing lies beyond leaves it as it is; one everything lies beyond empties it.
        assert!(p.clip(|x| x.y - 2.0, 8, TOLERANCE));
        assert_eq!(p.points().len(), 4);
        assert!(!p.clip(|x| 3.0 - x.x, 9, TOLERANCE));
        assert!(p.points().is_empty());
    }

    /// The two halves a plane cuts a convex polygon into have the areas of the whole; every
    /// kept corner lies within the half-space, the original ones keep their tags, and the
    /// cut ones lie on the plane.
    #[test]
    fn the_two_sides_of_a_cut_add_up_to_the_whole() {
        let mut r = ChaCha8Rng::seed_from_u64(11);
        for _ in 0..2_000 {
            let n = r.random_range(3..40);
            let whole = polygon(n, &mut r);
            let total = area(&whole);
            let angle: f64 = r.random_range(0.0..std::f64::consts::TAU);
            let normal = DVec3::new(angle.cos(), angle.sin(), 0.0);
            let offset = r.random_range(-1.2..1.2);
            let mut sides = [0.0; 2];
            for (side, sign) in sides.iter_mut().zip([1.0, -1.0]) {
                let mut p = TaggedPolygon::default();
                p.start(
                    whole
                        .points()
                        .iter()
                        .copied()
                        .zip(whole.tags().iter().copied()),
                );
                let distance = |x: DVec3| sign * (normal.dot(x) - offset);
                let left = p.clip(distance, 99, TOLERANCE);
                assert_eq!(left, p.points().len() >= 3);
                for (&x, &tag) in p.points().iter().zip(p.tags()) {
                    assert!(distance(x) <= 1e-12, "corner beyond the plane");
                    if tag == 99 {
                        assert!(distance(x).abs() <= 1e-12, "cut corner off the plane");
                    } else {
                        assert_eq!(x, whole.points()[tag as usize]);
                    }
                }
                *side = area(&p);
            }
            assert!(
                (sides[0] + sides[1] - total).abs() <= 1e-12,
                "{sides:?} {total}"
            );
        }
    }
}
