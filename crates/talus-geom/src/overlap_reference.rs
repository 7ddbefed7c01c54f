//! The overlap as computed before the vertex classification of [`crate::overlap`]: every
//! candidate face clipped by every candidate plane of the other grain whose face sphere
//! meets its own. Kept for tests only, as the reference the faster overlap must agree with.

use std::cell::RefCell;

use glam::DVec3;

use crate::closest::closest_features_with;
use crate::feature::{Feature, FeatureCache};
use crate::iso::Iso;
use crate::overlap::Overlap;
use crate::polyhedron::{ConvexPolyhedron, polygon_area_vector};
use crate::pose::Pose;

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
    /// A's candidate vertices in B's frame, each transformed once.
    points_a: Vec<DVec3>,
    /// Which candidate faces' spheres meet: bit `j` of row `k` (`words_b` words per row) for
    /// A's face `k` and B's face `j`, and the transpose.
    near_a: Vec<u64>,
    near_b: Vec<u64>,
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
pub(crate) fn overlap_reference(
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

    // Which candidate faces of A and B have meeting spheres: the same test, and the same
    // rounding, from either side.
    let (words_a, words_b) = (w.faces_a.len().div_ceil(64), w.faces_b.len().div_ceil(64));
    w.near_a.clear();
    w.near_b.clear();
    w.near_b.resize(w.faces_b.len() * words_a, 0);
    for (k, own) in w.planes_a.iter().enumerate() {
        for (word, chunk) in w.planes_b.chunks(64).enumerate() {
            let mut bits = 0u64;
            for (j, o) in chunk.iter().enumerate() {
                let reach = own.radius + o.radius + tolerance;
                let meet = own.centre.distance_squared(o.centre) <= reach * reach;
                bits |= u64::from(meet) << j;
            }
            w.near_a.push(bits);
            // The transpose, from the set bits.
            while bits != 0 {
                let j = word * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                w.near_b[j * words_a + k / 64] |= 1 << (k % 64);
            }
        }
    }

    // A's candidate vertices in B's frame, each transformed once.
    w.points_a.clear();
    let generation = w.marks_a.generation;
    for (k, &f) in w.faces_a.iter().enumerate() {
        let face = a.faces()[f as usize];
        w.clipper.start(face.vertex_count as usize);
        for (i, h) in face.half_edges().enumerate() {
            let v = a.half_edges()[h].origin as usize;
            if w.marks_a.slotted[v] != generation {
                w.marks_a.slotted[v] = generation;
                w.marks_a.slot[v] = w.points_a.len() as u32;
                w.points_a.push(a_to_b.point(a.vertices()[v]));
            }
            w.clipper.set(i, w.points_a[w.marks_a.slot[v] as usize]);
        }
        let near = &w.near_a[k * words_b..(k + 1) * words_b];
        if w.clipper.part_inside(&w.planes_b, near, tolerance) {
            let part = w.clipper.part();
            sums.add(part);
            sums.contact_area += polygon_area_vector(part);
        }
    }
    for (k, &g) in w.faces_b.iter().enumerate() {
        let face = b.faces()[g as usize];
        let vertices = || {
            b.half_edges()[face.half_edges()]
                .iter()
                .map(|h| b.vertices()[h.origin as usize])
        };
        w.clipper.start(face.vertex_count as usize);
        for (i, x) in vertices().enumerate() {
            w.clipper.set(i, x);
        }
        let near = &w.near_b[k * words_a..(k + 1) * words_a];
        // A face of B lying in a face of A with the same orientation is on A's surface and
        // already counted as A's part; counting it twice would double that boundary.
        if w.clipper.part_inside(&w.planes_a, near, tolerance)
            && !selected(&w.planes_a, near).any(|p| {
                p.normal.dot(face.normal) > 1.0 - 1e-12
                    && vertices().all(|x| p.distance(x).abs() <= tolerance)
            })
        {
            sums.add(w.clipper.part());
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

/// The planes of `others` whose bits are set in `near`, in index order.
#[inline]
fn selected<'p>(others: &'p [Plane], near: &'p [u64]) -> impl Iterator<Item = &'p Plane> {
    near.iter().enumerate().flat_map(move |(word, &bits)| {
        let mut bits = bits;
        std::iter::from_fn(move || {
            (bits != 0).then(|| {
                let i = word * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                &others[i]
            })
        })
    })
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

    /// The part left by [`Clipper::part_inside`].
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
