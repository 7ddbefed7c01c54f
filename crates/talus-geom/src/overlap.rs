//! The overlap of two penetrating convex polyhedra: volume, centroid, contact normal and
//! area of the intersection polyhedron A∩B (design §3; seed 002).
//!
//! The boundary of A∩B is made of the parts of A's faces inside B and the parts of B's
//! faces inside A. A part of a face of A is that face clipped by the planes of B — and only
//! the planes of B's faces that meet A are needed: were a point of A outside B beyond some
//! other plane, the segment from it to a point of A∩B would leave B through a face meeting
//! A. (The argument needs a point of A∩B, which the closest-feature walk certifies first.)
//!
//! Candidate faces come from the witness of the walk: for a direction `n` from A towards B
//! (the normal of the witness face), A∩B lies in the slab between B's lowest and A's highest
//! point along `n`. The faces of A reaching into that slab form a cap around A's support
//! point, found by climbing A's vertex graph from the witness and spreading over the cap's
//! vertices; likewise for B. Every face of B that meets A reaches into the slab, so the caps
//! hold every face and plane the clipping needs, and their size — hence the work — follows
//! the depth of the overlap, not the vertex count.
//!
//! Each candidate vertex is classified once against the other grain's candidate planes (an
//! outcode, as in Cohen–Sutherland clipping): a face with every corner beyond one plane is
//! outside, a face with no corner beyond any plane is inside whole, and only the faces the
//! boundary of A∩B crosses are clipped, by the few planes some corner lies beyond. The
//! clipping work so follows the size of that boundary; classifying the caps' vertices is
//! cheap arithmetic (a dot product and a sign per vertex and plane).
//!
//! From the boundary parts: the volume and centroid by the divergence theorem (cones from a
//! reference point), and the vector area `S = ∫_{∂A∩B} n_A dA` of A's parts, whose direction
//! is the contact normal (from a towards b) and whose length is the projected contact area.

use std::cell::RefCell;

use glam::DVec3;

use crate::closest::closest_features_with;
use crate::feature::{Feature, FeatureCache};
use crate::iso::Iso;
use crate::polyhedron::{ConvexPolyhedron, polygon_area_vector};
use crate::pose::Pose;

/// The overlap of two penetrating grains.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Overlap {
    /// Volume of A∩B.
    pub volume: f64,
    /// Centroid of A∩B, world frame: the point where a contact force acts.
    pub centroid: DVec3,
    /// Unit contact normal, from a towards b: the direction of the vector area of the part
    /// of A's surface inside B. When one grain lies wholly inside the other that vector area
    /// vanishes; the normal is then the direction of the closest-feature witness.
    pub normal: DVec3,
    /// Projected contact area: the length of that vector area (0 when one grain lies wholly
    /// inside the other).
    pub area: f64,
}

/// A candidate face in B's frame: its plane `normal · x = offset` and a sphere around it.
#[derive(Clone, Copy)]
struct Plane {
    normal: DVec3,
    offset: f64,
    centre: DVec3,
    radius: f64,
}

impl Plane {
    #[inline]
    fn distance(&self, x: DVec3) -> f64 {
        self.normal.dot(x) - self.offset
    }
}

/// Marks for a graph search over one polyhedron, reset in O(1) by a new generation.
#[derive(Default)]
struct Marks {
    vertex: Vec<u32>,
    face: Vec<u32>,
    /// Per vertex: the generation in which `slot` was set.
    slotted: Vec<u32>,
    /// Per vertex: its index in the workspace's list of transformed points.
    slot: Vec<u32>,
    generation: u32,
}

impl Marks {
    fn reset(&mut self, poly: &ConvexPolyhedron) {
        let (v, _, f) = poly.counts();
        if self.vertex.len() < v {
            self.vertex.resize(v, 0);
            self.slotted.resize(v, 0);
            self.slot.resize(v, 0);
        }
        if self.face.len() < f {
            self.face.resize(f, 0);
        }
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            self.vertex.fill(0);
            self.face.fill(0);
            self.slotted.fill(0);
            self.generation = 1;
        }
    }
}

/// Reused buffers, one set per thread, so that a query allocates nothing once warm.
#[derive(Default)]
struct Workspace {
    marks_a: Marks,
    marks_b: Marks,
    queue: Vec<u32>,
    faces_a: Vec<u32>,
    faces_b: Vec<u32>,
    planes_a: Vec<Plane>,
    planes_b: Vec<Plane>,
    /// A's candidate vertices in B's frame, each transformed once, and B's.
    points_a: Vec<DVec3>,
    points_b: Vec<DVec3>,
    /// Outcodes of `points_a` against `planes_b` and of `points_b` against `planes_a`.
    codes_a: Vec<u64>,
    codes_b: Vec<u64>,
    masks: Masks,
    clipper: Clipper,
}

thread_local! {
    static WORKSPACE: RefCell<Workspace> = RefCell::new(Workspace::default());
}

/// The overlap of `a` and `b`, or `None` when they do not penetrate (or only touch).
///
/// The closest-feature walk decides first whether the grains penetrate (warm from `cache`
/// when given, which makes a separated pair cost O(1)) and provides the witness from which
/// the candidate faces are found.
#[must_use]
pub fn overlap(
    a: &ConvexPolyhedron,
    pose_a: &Pose,
    b: &ConvexPolyhedron,
    pose_b: &Pose,
    cache: Option<&FeatureCache>,
) -> Option<Overlap> {
    // Everything is computed in B's body frame.
    let a_to_b = Iso::between(pose_a, pose_b);
    let mut walk = cache.copied().unwrap_or_default();
    if !closest_features_with(a, pose_a, b, pose_b, &a_to_b, &mut walk).is_penetrating() {
        return None;
    }
    WORKSPACE.with(|w| intersect(a, b, pose_b, &a_to_b, &walk, &mut w.borrow_mut()))
}

fn intersect(
    a: &ConvexPolyhedron,
    b: &ConvexPolyhedron,
    pose_b: &Pose,
    a_to_b: &Iso,
    witness: &FeatureCache,
    w: &mut Workspace,
) -> Option<Overlap> {
    let a_to_b = *a_to_b;
    let b_to_a = a_to_b.inverse();

    // The last overlap's normal when the caller kept it, else one from the witness: any unit
    // direction gives the right answer; a good one gives few candidate faces.
    let hint = witness.normal_hint;
    let n = if hint.is_finite() && (hint.length_squared() - 1.0).abs() < 1e-6 {
        hint
    } else {
        witness_direction(a, b, witness, &a_to_b)
    };
    let n_in_a = b_to_a.vector(n);
    // n · x for a point of A, from its A-frame coordinates: n_in_a · x_a + shift.
    let shift = n.dot(a_to_b.translation);
    let (top_vertex, top) = climb(a, n_in_a, start_vertex(a, witness.feature_a));
    let (bottom_vertex, minus_bottom) = climb(b, -n, start_vertex(b, witness.feature_b));
    let (top, bottom) = (top + shift, -minus_bottom);
    if top < bottom {
        return None;
    }
    w.marks_a.reset(a);
    w.marks_b.reset(b);
    cap_faces(
        a,
        n_in_a,
        bottom - shift,
        top_vertex,
        &mut w.marks_a,
        &mut w.queue,
        &mut w.faces_a,
    );
    cap_faces(
        b,
        -n,
        -top,
        bottom_vertex,
        &mut w.marks_b,
        &mut w.queue,
        &mut w.faces_b,
    );

    // Every candidate face in B's frame: its plane and the sphere around it.
    w.planes_b.clear();
    w.planes_b.extend(w.faces_b.iter().map(|&g| {
        let face = b.faces()[g as usize];
        let (centre, radius) = b.face_sphere(g as usize);
        Plane {
            normal: face.normal,
            offset: face.offset,
            centre,
            radius,
        }
    }));
    w.planes_a.clear();
    w.planes_a.extend(w.faces_a.iter().map(|&f| {
        let face = a.faces()[f as usize];
        let normal = a_to_b.vector(face.normal);
        let on_plane = a_to_b.point(face.normal * face.offset);
        let (centre, radius) = a.face_sphere(f as usize);
        Plane {
            normal,
            offset: normal.dot(on_plane),
            centre: a_to_b.point(centre),
            radius,
        }
    }));

    let scale = a.diameter_bound() + b.diameter_bound();
    let tolerance = 1e-12 * scale;
    let mut sums = BoundarySums::default();

    // The candidate vertices of each grain in B's frame, each transformed once, and their
    // outcodes (Cohen–Sutherland): which candidate planes of the other grain each lies
    // beyond. A face whose corners all lie beyond one plane is outside the other grain; a
    // face whose corners lie beyond none is inside it whole; only the faces in between —
    // those the intersection's boundary crosses — are clipped, and only by the planes some
    // corner lies beyond. Those are the planes the clipping would have cut with anyway: a
    // plane no corner lies beyond leaves the polygon as it is.
    gather_points(a, &w.faces_a, &mut w.marks_a, &mut w.points_a, |x| {
        a_to_b.point(x)
    });
    gather_points(b, &w.faces_b, &mut w.marks_b, &mut w.points_b, |x| x);
    classify(&w.points_a, &w.planes_b, tolerance, &mut w.codes_a);
    classify(&w.points_b, &w.planes_a, tolerance, &mut w.codes_b);

    for (k, &f) in w.faces_a.iter().enumerate() {
        let face = a.faces()[f as usize];
        let corners = face
            .half_edges()
            .map(|h| w.marks_a.slot[a.half_edges()[h].origin as usize] as usize);
        let Some(part) = face_part(
            corners,
            &w.points_a,
            &w.codes_a,
            &w.planes_a[k],
            &w.planes_b,
            tolerance,
            &mut w.masks,
            &mut w.clipper,
        ) else {
            continue;
        };
        sums.add(part);
        sums.contact_area += polygon_area_vector(part);
    }
    for (k, &g) in w.faces_b.iter().enumerate() {
        let face = b.faces()[g as usize];
        let corners = face
            .half_edges()
            .map(|h| w.marks_b.slot[b.half_edges()[h].origin as usize] as usize);
        let own = &w.planes_b[k];
        let Some(part) = face_part(
            corners,
            &w.points_b,
            &w.codes_b,
            own,
            &w.planes_a,
            tolerance,
            &mut w.masks,
            &mut w.clipper,
        ) else {
            continue;
        };
        // A face of B lying in a face of A with the same orientation is on A's surface and
        // already counted as A's part; counting it twice would double that boundary.
        let lies_in_a = w.planes_a.iter().any(|p| {
            p.normal.dot(face.normal) > 1.0 - 1e-12
                && spheres_meet(p, own, tolerance)
                && b.half_edges()[face.half_edges()]
                    .iter()
                    .all(|h| p.distance(b.vertices()[h.origin as usize]).abs() <= tolerance)
        });
        if !lies_in_a {
            sums.add(part);
        }
    }

    let volume = sums.six_volume / 6.0;
    if volume.is_nan() || volume <= 0.0 {
        return None;
    }
    let area = sums.contact_area.length();
    // When one grain lies inside the other, A's surface inside B is closed and its vector
    // area vanishes: no direction is preferred, and the witness direction stands in.
    let direction = if area > 1e-12 * scale * scale {
        sums.contact_area / area
    } else {
        n
    };
    let centroid_b = sums.reference + sums.moment / (4.0 * sums.six_volume);
    let rotation_b = pose_b.rotation_matrix();
    Some(Overlap {
        volume,
        centroid: rotation_b * centroid_b + pose_b.position,
        normal: (rotation_b * direction).normalize(),
        area,
    })
}

/// Every vertex of `faces`, in B's frame (by `to_b`), into `points`, once each; a vertex's
/// index there is kept in `marks.slot`.
fn gather_points(
    poly: &ConvexPolyhedron,
    faces: &[u32],
    marks: &mut Marks,
    points: &mut Vec<DVec3>,
    to_b: impl Fn(DVec3) -> DVec3,
) {
    points.clear();
    let generation = marks.generation;
    for &f in faces {
        for h in poly.faces()[f as usize].half_edges() {
            let v = poly.half_edges()[h].origin as usize;
            if marks.slotted[v] != generation {
                marks.slotted[v] = generation;
                marks.slot[v] = points.len() as u32;
                points.push(to_b(poly.vertices()[v]));
            }
        }
    }
}

/// The outcode of every point: bit `j` (of `planes.len().div_ceil(64)` words per point)
/// set when the point lies more than `tolerance` beyond plane `j`, computed with the same
/// arithmetic as [`Clipper::clip`], so that both agree on every corner.
fn classify(points: &[DVec3], planes: &[Plane], tolerance: f64, codes: &mut Vec<u64>) {
    codes.clear();
    for p in points {
        for chunk in planes.chunks(64) {
            let mut bits = 0u64;
            for (j, plane) in chunk.iter().enumerate() {
                let d = (plane.normal.x * p.x + plane.normal.y * p.y) + plane.normal.z * p.z
                    - plane.offset;
                bits |= ((tolerance - d).to_bits() >> 63) << j;
            }
            codes.push(bits);
        }
    }
}

/// Whether the spheres around two candidate faces meet (the same test, and the same
/// rounding, from either side).
#[inline]
fn spheres_meet(p: &Plane, q: &Plane, tolerance: f64) -> bool {
    let reach = p.radius + q.radius + tolerance;
    p.centre.distance_squared(q.centre) <= reach * reach
}

/// Scratch masks over the other grain's candidate planes.
#[derive(Default)]
struct Masks {
    any: Vec<u64>,
    all: Vec<u64>,
    clip: Vec<u64>,
}

/// The part of one candidate face inside the other grain, if it has area: the face's
/// corners are indices into `points` (and `codes`, their outcodes against `others`), `own`
/// is the face's plane and sphere.
#[allow(clippy::too_many_arguments)]
fn face_part<'c>(
    corners: impl Iterator<Item = usize>,
    points: &[DVec3],
    codes: &[u64],
    own: &Plane,
    others: &[Plane],
    tolerance: f64,
    masks: &mut Masks,
    clipper: &'c mut Clipper,
) -> Option<&'c [DVec3]> {
    let words = others.len().div_ceil(64);
    masks.any.clear();
    masks.any.resize(words, 0);
    masks.all.clear();
    masks.all.resize(words, !0);
    let count = corners.size_hint().0;
    clipper.start(count);
    for (i, c) in corners.enumerate() {
        clipper.set(i, points[c]);
        let code = &codes[c * words..(c + 1) * words];
        for ((any, all), &bits) in masks.any.iter_mut().zip(&mut masks.all).zip(code) {
            *any |= bits;
            *all &= bits;
        }
    }
    if masks.all.iter().any(|&bits| bits != 0) {
        // Every corner beyond one plane: the face is outside the other grain.
        return None;
    }
    if masks.any.iter().all(|&bits| bits == 0) {
        // No corner beyond any plane: the face is inside whole.
        clipper.keep_whole();
        return Some(clipper.part());
    }
    // Cut by the planes some corner lies beyond, among those whose faces come near this
    // one (see [`Clipper::part_inside`] for why the others need not cut).
    masks.clip.clear();
    for (word, &any) in masks.any.iter().enumerate() {
        let mut bits = any;
        let mut near = 0u64;
        while bits != 0 {
            let j = bits.trailing_zeros();
            bits &= bits - 1;
            if spheres_meet(own, &others[word * 64 + j as usize], tolerance) {
                near |= 1 << j;
            }
        }
        masks.clip.push(near);
    }
    clipper
        .part_inside(others, &masks.clip, tolerance)
        .then(|| clipper.part())
}

/// A unit direction from A towards B in B's frame, estimated from the witness: the mean of
/// the outward surface normal of A and the inward surface normal of B there (a face's own
/// normal, or the mean of the faces around an edge or a vertex). For a shallow overlap this
/// is close to the contact normal, which keeps the slab between the grains' supports thin.
fn witness_direction(
    a: &ConvexPolyhedron,
    b: &ConvexPolyhedron,
    witness: &FeatureCache,
    a_to_b: &Iso,
) -> DVec3 {
    let outward_a = a_to_b.vector(surface_normal(a, witness.feature_a));
    let inward_b = -surface_normal(b, witness.feature_b);
    (outward_a + inward_b)
        .try_normalize()
        .or_else(|| (b.vertex_centroid() - a_to_b.point(a.vertex_centroid())).try_normalize())
        .unwrap_or(DVec3::Z)
}

/// The outward unit normal of a face, or the normalised mean of those of the faces meeting
/// at an edge or a vertex (own frame); zero for an invalid feature.
fn surface_normal(poly: &ConvexPolyhedron, feature: Feature) -> DVec3 {
    if !feature.is_valid_for(poly) {
        return DVec3::ZERO;
    }
    let faces = poly.faces();
    let sum = match feature {
        Feature::Face(f) => faces[f as usize].normal,
        Feature::Edge(e) => {
            let [f, g] = poly.edge_faces(e as usize);
            faces[f as usize].normal + faces[g as usize].normal
        }
        Feature::Vertex(v) => poly
            .vertex_half_edges(v as usize)
            .map(|h| faces[poly.half_edges()[h as usize].face as usize].normal)
            .sum(),
    };
    sum.normalize_or_zero()
}

/// A vertex of the witness feature, to start climbing from.
fn start_vertex(poly: &ConvexPolyhedron, feature: Feature) -> u32 {
    let start = match feature {
        Feature::Vertex(v) => v,
        Feature::Edge(e) => poly.edges().get(e as usize).map_or(0, |[t, _]| *t),
        Feature::Face(f) => poly.faces().get(f as usize).map_or(0, |face| {
            poly.half_edges()[face.first_half_edge as usize].origin
        }),
    };
    if (start as usize) < poly.vertices().len() {
        start
    } else {
        0
    }
}

/// The vertex maximising `direction · v`, by climbing the vertex graph from `start` (a local
/// maximum of a linear function on a convex polyhedron is global), and the maximum.
fn climb(poly: &ConvexPolyhedron, direction: DVec3, start: u32) -> (u32, f64) {
    let mut v = start;
    let mut best = direction.dot(poly.vertices()[v as usize]);
    loop {
        let mut moved = false;
        for s in poly.vertex_star(v as usize) {
            let value = direction.dot(s.end);
            if value > best {
                (v, best, moved) = (s.end_vertex, value, true);
            }
        }
        if !moved {
            return (v, best);
        }
    }
}

/// Every face with a vertex `v` where `direction · v ≥ threshold`, into `faces`. Those
/// vertices are connected through edges (a superlevel set of a linear function on a convex
/// polyhedron), so a search from the maximising vertex `top` finds them all.
fn cap_faces(
    poly: &ConvexPolyhedron,
    direction: DVec3,
    threshold: f64,
    top: u32,
    marks: &mut Marks,
    queue: &mut Vec<u32>,
    faces: &mut Vec<u32>,
) {
    let generation = marks.generation;
    faces.clear();
    queue.clear();
    queue.push(top);
    marks.vertex[top as usize] = generation;
    while let Some(v) = queue.pop() {
        for s in poly.vertex_star(v as usize) {
            if marks.face[s.face as usize] != generation {
                marks.face[s.face as usize] = generation;
                faces.push(s.face);
            }
            let n = s.end_vertex;
            if marks.vertex[n as usize] != generation && direction.dot(s.end) >= threshold {
                marks.vertex[n as usize] = generation;
                queue.push(n);
            }
        }
    }
}

/// Running sums over boundary polygons of the intersection: six times the volume and the
/// first moment (times 24) of the cones from a reference point, and A's vector area.
#[derive(Default)]
struct BoundarySums {
    /// The first corner of the first polygon: on the intersection's boundary, so the cones
    /// are no larger than the intersection and a thin overlap keeps its digits.
    reference: DVec3,
    started: bool,
    six_volume: f64,
    moment: DVec3,
    contact_area: DVec3,
}

impl BoundarySums {
    /// Adds the cone from the reference point over an outward polygon: tetrahedra
    /// (r, p0, pk, pk+1) with signed volume det/6 and centroid (r + p0 + pk + pk+1)/4.
    fn add(&mut self, polygon: &[DVec3]) {
        if !self.started {
            self.reference = polygon[0];
            self.started = true;
        }
        let p0 = polygon[0] - self.reference;
        for k in 1..polygon.len() - 1 {
            let (p, q) = (polygon[k] - self.reference, polygon[k + 1] - self.reference);
            let det = p0.dot(p.cross(q));
            self.six_volume += det;
            self.moment += det * (p0 + p + q);
        }
    }
}

/// The size of the fixed clipping buffers. Clipping by one plane at most doubles a
/// polygon's vertex count, so polygons of up to half of it are clipped there.
const CAPACITY: usize = 32;

/// Coordinates of a polygon's vertices, one array per axis.
#[derive(Clone, Copy)]
struct Coordinates {
    x: [f64; CAPACITY],
    y: [f64; CAPACITY],
    z: [f64; CAPACITY],
}

/// Buffers for clipping one polygon: two fixed ones that take turns (`current` holds the
/// polygon), and growable ones for polygons too large for them.
struct Clipper {
    buffers: [Coordinates; 2],
    current: usize,
    len: usize,
    distances: [f64; CAPACITY + 1],
    /// The clipped part, as points.
    part: [DVec3; CAPACITY],
    /// Whether the polygon is in `large` rather than the fixed buffers.
    is_large: bool,
    large: Vec<DVec3>,
    scratch: Vec<DVec3>,
}

impl Default for Clipper {
    fn default() -> Self {
        let zero = Coordinates {
            x: [0.0; CAPACITY],
            y: [0.0; CAPACITY],
            z: [0.0; CAPACITY],
        };
        Clipper {
            buffers: [zero; 2],
            current: 0,
            len: 0,
            distances: [0.0; CAPACITY + 1],
            part: [DVec3::ZERO; CAPACITY],
            is_large: false,
            large: Vec::new(),
            scratch: Vec::new(),
        }
    }
}

impl Clipper {
    /// Prepares for a polygon of `count` vertices, to be given by [`Clipper::set`].
    #[inline]
    fn start(&mut self, count: usize) {
        self.len = count;
        self.current = 0;
        self.is_large = count > CAPACITY / 2;
        if self.is_large {
            self.large.clear();
            self.large.resize(count, DVec3::ZERO);
        }
    }

    /// Sets vertex `i` of the polygon.
    #[inline]
    fn set(&mut self, i: usize, p: DVec3) {
        if self.is_large {
            self.large[i] = p;
        } else {
            let c = &mut self.buffers[0];
            (c.x[i], c.y[i], c.z[i]) = (p.x, p.y, p.z);
        }
    }

    /// Takes the polygon as it is for the part.
    #[inline]
    fn keep_whole(&mut self) {
        if !self.is_large {
            let c = &self.buffers[0];
            for (i, p) in self.part[..self.len].iter_mut().enumerate() {
                *p = DVec3::new(c.x[i], c.y[i], c.z[i]);
            }
        }
    }

    /// The part left by [`Clipper::part_inside`] or [`Clipper::keep_whole`].
    #[inline]
    fn part(&self) -> &[DVec3] {
        if self.is_large {
            &self.large
        } else {
            &self.part[..self.len]
        }
    }

    /// Clips the polygon (a candidate face of one grain) to the other grain, given by its
    /// candidate faces `others`; returns whether a part with area is inside, then given by
    /// [`Clipper::part`].
    ///
    /// Only the planes of faces whose spheres meet the polygon's (the bits set in `near`)
    /// can cut it: if the polygon meets the other grain, a point of it beyond any other
    /// plane would leave the grain, on the way from a point inside, through a face meeting
    /// the polygon. Whether it meets the grain at all is checked at the end: a clipped part
    /// whose centroid lies beyond one of the candidate planes (among which is every plane a
    /// point of the first grain can be beyond, see the module documentation) lies outside.
    fn part_inside(&mut self, others: &[Plane], near: &[u64], tolerance: f64) -> bool {
        for (word, &bits) in near.iter().enumerate() {
            let mut bits = bits;
            while bits != 0 {
                let plane = &others[word * 64 + bits.trailing_zeros() as usize];
                bits &= bits - 1;
                let kept = if self.is_large {
                    clip_large(&mut self.large, &mut self.scratch, plane, tolerance)
                } else {
                    self.clip(plane, tolerance)
                };
                if !kept {
                    return false;
                }
            }
        }
        let centroid = if self.is_large {
            self.large.iter().sum::<DVec3>() / self.large.len() as f64
        } else {
            let n = self.len;
            let c = &self.buffers[self.current];
            let mut sum = DVec3::ZERO;
            for (i, p) in self.part[..n].iter_mut().enumerate() {
                *p = DVec3::new(c.x[i], c.y[i], c.z[i]);
                sum += *p;
            }
            sum / n as f64
        };
        others.iter().all(|p| p.distance(centroid) <= tolerance)
    }

    /// Clips the polygon in the fixed buffers by the half-space `normal · x ≤ offset` of
    /// `plane` (Sutherland–Hodgman); returns whether a polygon with area is left. A vertex
    /// within `tolerance` beyond the plane counts as on it, so that a face lying in a plane
    /// of the other grain (up to round-off of the transform between their frames) is kept
    /// whole, not shaved at random.
    #[inline]
    fn clip(&mut self, plane: &Plane, tolerance: f64) -> bool {
        let n = self.len;
        let [first, second] = &mut self.buffers;
        let (polygon, next) = if self.current == 0 {
            (&*first, second)
        } else {
            (&*second, first)
        };
        let (nx, ny, nz, offset) = (plane.normal.x, plane.normal.y, plane.normal.z, plane.offset);
        let d = &mut self.distances;
        // Two vertices at a time (the one past an odd count is not used): the same
        // arithmetic as `Plane::distance`, in a form that runs two lanes at once.
        let mut beyond = 0u32;
        let mut k = 0;
        while k < n {
            let d0 = (nx * polygon.x[k] + ny * polygon.y[k]) + nz * polygon.z[k] - offset;
            let d1 =
                (nx * polygon.x[k + 1] + ny * polygon.y[k + 1]) + nz * polygon.z[k + 1] - offset;
            (d[k], d[k + 1]) = (d0, d1);
            // `d > tolerance` as the sign of `tolerance − d` (exact: a difference of finite
            // numbers rounds to zero only when they are equal).
            let (b0, b1) = (
                (tolerance - d0).to_bits() >> 63,
                (tolerance - d1).to_bits() >> 63,
            );
            beyond |= ((b0 | (b1 << 1)) as u32) << k;
            k += 2;
        }
        let all = (1u32 << n) - 1;
        beyond &= all;
        if beyond == 0 {
            return true;
        }
        if beyond == all {
            return false;
        }
        // At most two vertices per edge: `next` (CAPACITY ≥ 2n) cannot overflow. (Indices
        // are masked to the buffers' size, which they never exceed, to spare bounds checks.)
        const MASK: usize = CAPACITY - 1;
        let mut m = 0;
        for k in 0..n {
            let k = k & MASK;
            let l = if k + 1 == n { 0 } else { (k + 1) & MASK };
            let (dp, dq) = (d[k], d[l]);
            let (p_in, q_in) = (dp <= tolerance, dq <= tolerance);
            if p_in {
                let i = m & MASK;
                (next.x[i], next.y[i], next.z[i]) = (polygon.x[k], polygon.y[k], polygon.z[k]);
                m += 1;
            }
            if p_in != q_in {
                let i = m & MASK;
                let t = (dp / (dp - dq)).clamp(0.0, 1.0);
                next.x[i] = polygon.x[k] + (polygon.x[l] - polygon.x[k]) * t;
                next.y[i] = polygon.y[k] + (polygon.y[l] - polygon.y[k]) * t;
                next.z[i] = polygon.z[k] + (polygon.z[l] - polygon.z[k]) * t;
                m += 1;
            }
        }
        if m < 3 {
            return false;
        }
        self.current ^= 1;
        self.len = m;
        if m > CAPACITY / 2 {
            // Too large to be sure of the next clip's room: continue in the growable buffer.
            let c = &self.buffers[self.current];
            self.large.clear();
            self.large
                .extend((0..m).map(|i| DVec3::new(c.x[i], c.y[i], c.z[i])));
            self.is_large = true;
        }
        true
    }
}

/// [`Clipper::clip`] for a polygon in a growable buffer.
fn clip_large(
    polygon: &mut Vec<DVec3>,
    scratch: &mut Vec<DVec3>,
    plane: &Plane,
    tolerance: f64,
) -> bool {
    scratch.clear();
    let n = polygon.len();
    let mut outside = false;
    for k in 0..n {
        let l = if k + 1 == n { 0 } else { k + 1 };
        let (p, q) = (polygon[k], polygon[l]);
        let (dp, dq) = (plane.distance(p), plane.distance(q));
        let (p_in, q_in) = (dp <= tolerance, dq <= tolerance);
        outside |= !p_in;
        if p_in {
            scratch.push(p);
        }
        if p_in != q_in {
            scratch.push(p + (q - p) * (dp / (dp - dq)).clamp(0.0, 1.0));
        }
    }
    if !outside {
        return true;
    }
    std::mem::swap(polygon, scratch);
    polygon.len() >= 3
}

#[cfg(test)]
mod tests {
    //! The overlap against the clipping it replaced ([`crate::overlap_reference`]: every
    //! candidate face clipped by every candidate plane whose face sphere meets its own), over
    //! random pairs from grazing to deep and with any hint the cache may hold.

    use glam::DQuat;
    use proptest::prelude::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    use super::*;
    use crate::closest::closest_features;
    use crate::generate;
    use crate::overlap_reference::overlap_reference;

    fn rotation(r: &mut impl Rng) -> DQuat {
        let (u1, u2, u3): (f64, f64, f64) = (r.random(), r.random(), r.random());
        let (p, q) = ((1.0 - u1).sqrt(), u1.sqrt());
        let tau = std::f64::consts::TAU;
        DQuat::from_xyzw(
            p * (tau * u2).sin(),
            p * (tau * u2).cos(),
            q * (tau * u3).sin(),
            q * (tau * u3).cos(),
        )
        .normalize()
    }

    /// A grain of `k` vertices on a random ellipsoid of size about 2.
    fn grain(k: usize, r: &mut ChaCha8Rng) -> ConvexPolyhedron {
        let axes = DVec3::new(1.0, r.random_range(0.4..1.0), r.random_range(0.3..0.9));
        generate::ellipsoid_grain(k, axes, r).expect("grain")
    }

    /// Pose of b along `direction` from a, pushed `depth` into a from touching (found by
    /// bisection on the closest-feature verdict).
    fn pushed(
        a: &ConvexPolyhedron,
        pa: &Pose,
        b: &ConvexPolyhedron,
        direction: DVec3,
        rotation_b: DQuat,
        depth: f64,
    ) -> Pose {
        let at = |s: f64| Pose::new(pa.position + direction * s, rotation_b);
        let (mut lo, mut hi) = (0.0, a.diameter_bound() + b.diameter_bound());
        let mut cache = FeatureCache::default();
        for _ in 0..80 {
            let mid = 0.5 * (lo + hi);
            if closest_features(a, pa, b, &at(mid), &mut cache).is_penetrating() {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        at(hi - depth)
    }

    /// Whether two overlaps agree to round-off (relative to grains of size `scale`).
    fn agree(x: Option<Overlap>, y: Option<Overlap>, scale: f64) -> Result<(), String> {
        match (x, y) {
            (None, None) => Ok(()),
            (Some(x), Some(y)) => {
                let volume = scale * scale * scale;
                let close = (x.volume - y.volume).abs() <= 1e-12 * volume
                    && (x.area - y.area).abs() <= 1e-11 * scale * scale
                    && (x.centroid - y.centroid).length()
                        <= 1e-12 * scale * (1.0 + 1e-3 * volume / x.volume)
                    && (x.area <= 1e-9 * scale * scale
                        || (x.normal - y.normal).length()
                            <= 1e-9 * (1.0 + 1e-3 * scale * scale / x.area));
                if close {
                    Ok(())
                } else {
                    Err(format!("{x:?} vs {y:?}"))
                }
            }
            (Some(x), None) | (None, Some(x)) if x.volume <= 1e-12 * scale * scale * scale => {
                Ok(())
            }
            (x, y) => Err(format!("verdicts differ: {x:?} vs {y:?}")),
        }
    }

    /// A cache as a pipeline may hold it: warm, cold, stale (from another pair or another
    /// time), with features that do not exist, a normal pointing anywhere or not finite.
    fn hints(warm: FeatureCache, r: &mut ChaCha8Rng) -> Vec<FeatureCache> {
        let feature = |r: &mut ChaCha8Rng| match r.random_range(0..3) {
            0 => Feature::Vertex(r.random_range(0..300)),
            1 => Feature::Edge(r.random_range(0..900)),
            _ => Feature::Face(r.random_range(0..600)),
        };
        vec![
            warm,
            FeatureCache::default(),
            FeatureCache {
                normal_hint: rotation(r) * DVec3::X,
                ..warm
            },
            FeatureCache {
                normal_hint: DVec3::splat(f64::NAN),
                ..warm
            },
            FeatureCache {
                feature_a: feature(r),
                feature_b: feature(r),
                normal_hint: rotation(r) * DVec3::X * r.random_range(0.0..2.0),
                ..warm
            },
        ]
    }

    /// Counts of compared overlaps and of those equal to the last bit.
    #[derive(Default)]
    struct Tally {
        compared: usize,
        identical: usize,
    }

    /// Compares both overlaps of one placed pair under every hint; the warm cache comes from
    /// the closest-feature walk, as in the pipeline.
    fn compare(
        a: &ConvexPolyhedron,
        pa: &Pose,
        b: &ConvexPolyhedron,
        pb: &Pose,
        r: &mut ChaCha8Rng,
        tally: &mut Tally,
    ) -> Result<(), String> {
        let scale = a.diameter_bound().max(b.diameter_bound());
        let mut warm = FeatureCache::default();
        closest_features(a, pa, b, pb, &mut warm);
        let cold = overlap_reference(a, pa, b, pb, None);
        for cache in hints(warm, r) {
            let new = overlap(a, pa, b, pb, Some(&cache));
            let old = overlap_reference(a, pa, b, pb, Some(&cache));
            agree(new, old, scale).map_err(|e| format!("same hint {cache:?}: {e}"))?;
            agree(new, cold, scale).map_err(|e| format!("hint {cache:?} vs none: {e}"))?;
            tally.compared += 1;
            tally.identical += usize::from(new == old);
        }
        Ok(())
    }

    fn random_pair(seed: u64, tally: &mut Tally) -> Result<(), String> {
        let mut r = ChaCha8Rng::seed_from_u64(seed);
        let counts = [4, 5, 8, 12, 18, 20, 26, 40, 60, 100, 150, 200];
        let a = grain(counts[r.random_range(0..counts.len())], &mut r);
        let b = grain(counts[r.random_range(0..counts.len())], &mut r);
        let pa = Pose::new(
            DVec3::new(
                r.random_range(-5.0..5.0),
                r.random_range(-5.0..5.0),
                r.random_range(-5.0..5.0),
            ),
            rotation(&mut r),
        );
        let size = 2.0;
        // Depths from grazing to a fifth of the grain size and beyond.
        let depth = match r.random_range(0..5) {
            0 => size * 10f64.powf(r.random_range(-12.0..-4.0)),
            1 => size * r.random_range(0.0..0.02),
            2 => size * r.random_range(0.02..0.2),
            3 => size * r.random_range(0.2..0.6),
            _ => size * r.random_range(0.6..1.5),
        };
        let pb = pushed(
            &a,
            &pa,
            &b,
            rotation(&mut r) * DVec3::X,
            rotation(&mut r),
            depth,
        );
        compare(&a, &pa, &b, &pb, &mut r, tally)?;
        compare(&b, &pb, &a, &pa, &mut r, tally)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1500))]
        #[test]
        fn agrees_with_the_reference_for_any_hint(seed in any::<u64>()) {
            let mut tally = Tally::default();
            random_pair(seed, &mut tally).map_err(TestCaseError::fail)?;
        }
    }

    /// The share of overlaps equal to the reference's to the last bit, over a fixed sample.
    #[test]
    fn mostly_identical_to_the_last_bit() {
        let mut tally = Tally::default();
        for seed in 0..1000 {
            random_pair(seed, &mut tally).unwrap();
        }
        eprintln!(
            "{} of {} overlaps identical to the reference's to the last bit",
            tally.identical, tally.compared
        );
        assert!(tally.identical * 100 >= tally.compared * 99);
    }

    /// Degenerate placements: faces in each other's planes, corners exactly on planes,
    /// one grain inside the other, identical grains in identical poses.
    #[test]
    fn degenerate_placements_agree_with_the_reference() {
        let mut r = ChaCha8Rng::seed_from_u64(7);
        let mut tally = Tally::default();
        let cube = generate::cube(1.0).unwrap();
        let small = generate::cube(0.25).unwrap();
        let octa = generate::octahedron(1.0).unwrap();
        let ellipsoid = grain(30, &mut r);
        let steps = [-1.0, -0.75, -0.5, -0.25, 0.0, 0.25, 0.5, 0.75, 1.0];
        for &x in &steps {
            for &y in &steps {
                for &z in &[0.5, 0.75, 0.875, 1.0] {
                    let pb = Pose::from_translation(DVec3::new(x, y, z));
                    for (a, b) in [
                        (&cube, &cube),
                        (&cube, &small),
                        (&small, &cube),
                        (&octa, &cube),
                    ] {
                        compare(a, &Pose::IDENTITY, b, &pb, &mut r, &mut tally).unwrap();
                    }
                }
            }
        }
        let turned = Pose::new(
            DVec3::new(0.0, 0.0, 2f64.sqrt() - 0.1),
            DQuat::from_rotation_z(std::f64::consts::FRAC_PI_4),
        );
        compare(&octa, &Pose::IDENTITY, &octa, &turned, &mut r, &mut tally).unwrap();
        let p = Pose::new(DVec3::new(0.3, 0.0, 1.0), rotation(&mut r));
        compare(&ellipsoid, &p, &ellipsoid, &p, &mut r, &mut tally).unwrap();
        let inner = Pose::new(p.position, rotation(&mut r));
        compare(&small, &inner, &ellipsoid, &p, &mut r, &mut tally).unwrap();
        assert!(tally.identical * 100 >= tally.compared * 99);
    }
}
