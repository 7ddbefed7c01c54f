//! A polygon whose corners carry tags, clipped by half-spaces: the parts of the faces that
//! bound an overlap (see `overlap.rs`), each corner tagged with where it came from (a
//! vertex of its own grain, or the plane of the other grain's face that cut it out), so that
//! each corner can be checked against the right feature afterwards, and each side labelled
//! with the line it runs along (an edge of its face, or the plane that cut it).

use glam::DVec3;

/// A convex polygon with a tag per corner and a label per side (the side from corner `i` to
/// corner `i + 1`), and the buffers its next clip writes into.
///
/// The buffers only grow, so that a warm polygon clips without allocating. A plane crosses a
/// convex polygon at two sides (where its corners pass from inside to beyond and back), so a
/// clip keeps one run of corners and adds two: it finds the two sides from the corners'
/// distances as bits, and computes two cut points, whatever the number of corners. Corners
/// within round-off of the plane can make the run of inside corners look broken; such a
/// polygon is clipped side by side instead.
#[derive(Default)]
pub(crate) struct TaggedPolygon {
    points: Vec<DVec3>,
    tags: Vec<u32>,
    labels: Vec<u32>,
    len: usize,
    scratch_points: Vec<DVec3>,
    scratch_tags: Vec<u32>,
    scratch_labels: Vec<u32>,
    distances: Vec<f64>,
}

/// Where the side from `p` to `q` (at distances `dp` and `dq` from a plane, on either side of
/// it) crosses the plane.
#[inline]
fn crossing(p: DVec3, q: DVec3, dp: f64, dq: f64) -> DVec3 {
    p + (q - p) * (dp / (dp - dq)).clamp(0.0, 1.0)
}

impl TaggedPolygon {
    /// Starts a polygon with the corners `corners`, in order, with their tags.
    pub fn start(&mut self, corners: impl Iterator<Item = (DVec3, u32)>) {
        self.start_labelled(corners.map(|(x, tag)| (x, tag, 0)));
    }

    /// Starts a polygon with the corners `corners`, in order, with their tags and the labels
    /// of the sides leaving them.
    pub fn start_labelled(&mut self, corners: impl Iterator<Item = (DVec3, u32, u32)>) {
        // Into the buffers as they are (they only grow): the polygon is their first `len`.
        let mut n = 0;
        for (x, tag, label) in corners {
            if n == self.points.len() {
                self.points.push(x);
                self.tags.push(tag);
                self.labels.push(label);
            } else {
                self.points[n] = x;
                self.tags[n] = tag;
                self.labels[n] = label;
            }
            n += 1;
        }
        self.len = n;
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

    /// The labels of the sides leaving the corners, in the order of
    /// [`TaggedPolygon::points`].
    #[inline]
    pub fn labels(&self) -> &[u32] {
        &self.labels[..self.len]
    }

    /// Keeps the part of the polygon where `distance(x) ≤ tolerance` (a corner within the
    /// tolerance beyond the plane counts as on it); new corners, where an edge crosses the
    /// plane, get `tag`, and the new side that runs along the plane gets `tag` as its label.
    /// Returns whether a polygon with area (three corners or more) is left. A polygon no
    /// corner of which lies beyond the plane is left exactly as it is.
    pub fn clip(&mut self, distance: impl Fn(DVec3) -> f64, tag: u32, tolerance: f64) -> bool {
        let n = self.len;
        if self.distances.len() < n {
            self.distances.resize(n, 0.0);
        }
        // Bit k: corner k lies beyond (for up to 64 corners; more are clipped side by side).
        let mut beyond = 0u64;
        let mut count = 0;
        for (k, (&p, d)) in self.points[..n].iter().zip(&mut self.distances).enumerate() {
            *d = distance(p);
            let out = *d > tolerance;
            count += usize::from(out);
            beyond |= u64::from(out) << (k & 63);
        }
        if count == 0 {
            return true;
        }
        if count == n {
            self.len = 0;
            return false;
        }
        if self.scratch_points.len() < n + 2 {
            self.scratch_points.resize(n + 2, DVec3::ZERO);
            self.scratch_tags.resize(n + 2, 0);
            self.scratch_labels.resize(n + 2, 0);
        }
        let all = if n == 64 { u64::MAX } else { (1 << n) - 1 };
        // Bit k of `next`: corner k + 1 lies beyond. Side k leaves the half-space where
        // corner k is inside and k + 1 beyond, and enters it the other way round.
        let next = (beyond >> 1) | ((beyond & 1) << (n - 1));
        let (leaves, enters) = (!beyond & next & all, beyond & !next & all);
        let m = if n <= 64 && leaves.count_ones() == 1 && enters.count_ones() == 1 {
            self.two_crossings(
                leaves.trailing_zeros() as usize,
                enters.trailing_zeros() as usize,
                tag,
            )
        } else {
            self.side_by_side(tag, tolerance)
        };
        std::mem::swap(&mut self.points, &mut self.scratch_points);
        std::mem::swap(&mut self.tags, &mut self.scratch_tags);
        std::mem::swap(&mut self.labels, &mut self.scratch_labels);
        self.len = m;
        m >= 3
    }

    /// The clip of a polygon that leaves the half-space along side `out` and enters it along
    /// side `back`, into the scratch buffers: the corners from `back + 1` to `out`, then the
    /// cut points on sides `out` and `back`. Returns the number of corners.
    fn two_crossings(&mut self, out: usize, back: usize, tag: u32) -> usize {
        let n = self.len;
        let after = |k: usize| if k + 1 == n { 0 } else { k + 1 };
        let (points, tags, labels, d) = (
            &self.points[..n],
            &self.tags[..n],
            &self.labels[..n],
            &self.distances[..n],
        );
        let mut m = 0;
        let mut k = after(back);
        loop {
            self.scratch_points[m] = points[k];
            self.scratch_tags[m] = tags[k];
            self.scratch_labels[m] = labels[k];
            m += 1;
            if k == out {
                break;
            }
            k = after(k);
        }
        let (o, b) = (after(out), after(back));
        self.scratch_points[m] = crossing(points[out], points[o], d[out], d[o]);
        self.scratch_tags[m] = tag;
        self.scratch_labels[m] = tag;
        self.scratch_points[m + 1] = crossing(points[back], points[b], d[back], d[b]);
        self.scratch_tags[m + 1] = tag;
        self.scratch_labels[m + 1] = labels[back];
        m + 2
    }

    /// The clip side by side (Sutherland–Hodgman), into the scratch buffers: each corner
    /// inside kept, a cut point on each side that crosses. Returns the number of corners.
    fn side_by_side(&mut self, tag: u32, tolerance: f64) -> usize {
        let n = self.len;
        if self.scratch_points.len() < 2 * n {
            self.scratch_points.resize(2 * n, DVec3::ZERO);
            self.scratch_tags.resize(2 * n, 0);
            self.scratch_labels.resize(2 * n, 0);
        }
        let (points, tags, labels, distances) = (
            &self.points[..n],
            &self.tags[..n],
            &self.labels[..n],
            &self.distances[..n],
        );
        let mut m = 0;
        for k in 0..n {
            let l = if k + 1 == n { 0 } else { k + 1 };
            let (dp, dq) = (distances[k], distances[l]);
            let (p_in, q_in) = (dp <= tolerance, dq <= tolerance);
            if p_in {
                self.scratch_points[m] = points[k];
                self.scratch_tags[m] = tags[k];
                self.scratch_labels[m] = labels[k];
                m += 1;
            }
            // Leaving the half-space, the polygon goes on along the plane; entering it,
            // along the side.
            if p_in != q_in {
                self.scratch_points[m] = crossing(points[k], points[l], dp, dq);
                self.scratch_tags[m] = tag;
                self.scratch_labels[m] = if p_in { tag } else { labels[k] };
                m += 1;
            }
        }
        m
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
        p.start_labelled(
            square
                .iter()
                .enumerate()
                .map(|(k, &(x, y))| (DVec3::new(x, y, 0.0), k as u32, 10 + k as u32)),
        );
        assert!(p.clip(|x| x.x - 0.25, 7, TOLERANCE));
        // From the corner where the square comes back into the half-space: the corners kept,
        // the cut point where it leaves (its side runs along the plane), the one where it
        // comes back (its side runs along the square's last side).
        let expected = [
            (DVec3::new(0.0, 1.0, 0.0), 3, 13),
            (DVec3::new(0.0, 0.0, 0.0), 0, 10),
            (DVec3::new(0.25, 0.0, 0.0), 7, 7),
            (DVec3::new(0.25, 1.0, 0.0), 7, 12),
        ];
        assert_eq!(p.points().len(), 4);
        let got = p.points().iter().zip(p.tags()).zip(p.labels());
        for (((&x, &tag), &label), (y, t, l)) in got.zip(expected) {
            assert_eq!((x, tag, label), (y, t, l));
        }
        // A plane nothing lies beyond leaves it as it is; one everything lies beyond empties it.
        assert!(p.clip(|x| x.y - 2.0, 8, TOLERANCE));
        assert_eq!(p.points().len(), 4);
        assert!(!p.clip(|x| 3.0 - x.x, 9, TOLERANCE));
        assert!(p.points().is_empty());
    }

    /// The two halves a plane cuts a convex polygon into have the areas of the whole; every
    /// kept corner lies within the half-space, the original ones keep their tags, and the
    /// cut ones lie on the plane; each side lies on the line its label names (the plane, or
    /// the side of the whole it is part of); the clip by the two crossings gives the
    /// polygon the clip side by side gives, from another corner.
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
                p.start_labelled(
                    whole
                        .points()
                        .iter()
                        .zip(whole.tags())
                        .map(|(&x, &tag)| (x, tag, tag)),
                );
                let distance = |x: DVec3| sign * (normal.dot(x) - offset);
                let mut side_by_side = TaggedPolygon::default();
                side_by_side.start_labelled(
                    p.points()
                        .iter()
                        .zip(p.tags())
                        .zip(p.labels())
                        .map(|((&x, &t), &l)| (x, t, l)),
                );
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
                let n = p.points().len();
                for (i, &label) in p.labels().iter().enumerate() {
                    let ends = [p.points()[i], p.points()[(i + 1) % n]];
                    for x in ends {
                        let off = if label == 99 {
                            distance(x)
                        } else {
                            let k = label as usize;
                            let (u, v) = (
                                whole.points()[k],
                                whole.points()[(k + 1) % whole.points().len()],
                            );
                            (v - u).cross(x - u).length() / (v - u).length()
                        };
                        assert!(
                            off.abs() <= 1e-12,
                            "side {i} off the line of its label {label}"
                        );
                    }
                }
                // The same polygon side by side, up to where it starts.
                side_by_side.distances = (0..whole.points().len())
                    .map(|k| distance(side_by_side.points[k]))
                    .collect();
                let m = side_by_side.side_by_side(99, TOLERANCE);
                if left {
                    let start = (0..m)
                        .find(|&k| side_by_side.scratch_points[k] == p.points()[0])
                        .expect("same corners");
                    for k in 0..m {
                        let j = (start + k) % m;
                        assert_eq!(
                            (
                                side_by_side.scratch_points[j],
                                side_by_side.scratch_tags[j],
                                side_by_side.scratch_labels[j]
                            ),
                            (p.points()[k], p.tags()[k], p.labels()[k])
                        );
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
