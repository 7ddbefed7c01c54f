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
//! [`overlap_with_hint`] first walks the intersection curve instead (see
//! `overlap_trace.rs`), which finds the faces bounding A∩B and, for each, the few planes that
//! cut it, with work that follows the size of A∩B; it falls back to the clipping above.
//!
//! From the boundary parts: the volume and centroid by the divergence theorem (cones from a
//! reference point), and the vector area `S = ∫_{∂A∩B} n_A dA` of A's parts, whose direction
//! is the contact normal (from a towards b) and whose length is the projected contact area.

use std::cell::RefCell;

use glam::DVec3;

use crate::closest::closest_features_with;
use crate::feature::{Feature, FeatureCache};
use crate::iso::Iso;
use crate::overlap_reuse::{BoundingFaces, ReuseWorkspace, reused};
use crate::overlap_trace::{Crossing, PartFace, Trace, trace};
use crate::polyhedron::{ConvexPolyhedron, polygon_area_and_moment, polygon_area_vector};
use crate::pose::Pose;
use crate::tagged_polygon::TaggedPolygon;

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
    /// The moment `∫ (x − centroid) × dS` of that surface about the centroid, world frame: a
    /// uniform pressure p on the contact exerts on b the force `p · area · normal` at the
    /// centroid and the couple `p · area_moment` (the same for any surface spanning the rim
    /// of the contact, so for b's surface inside A too).
    pub area_moment: DVec3,
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
    /// For one candidate face: which of the other grain's candidate faces have a sphere
    /// meeting its own (bit `j` for face `j`).
    near: Vec<u64>,
    /// The planes a face is clipped by (see [`bounding`]).
    cut: Vec<u64>,
    /// The faces of A and of B whose parts the last overlap found, in the order found.
    kept_a: Vec<u32>,
    kept_b: Vec<u32>,
    /// The candidate faces of A and B, coded against the other's planes.
    coded_a: Coded,
    coded_b: Coded,
    clipper: Clipper,
    trace: Trace,
    /// A part of a face bounding A∩B, its corners tagged (see [`ORIGINAL`]).
    part: TaggedPolygon,
    /// The planes that cut that part (see [`checked_part`]).
    part_cuts: Vec<Plane>,
    /// The buffers of the reuse of a persisting contact's faces.
    reuse: ReuseWorkspace,
}

thread_local! {
    static WORKSPACE: RefCell<Workspace> = RefCell::new(Workspace::default());
}

/// What a pair's last overlap learned, kept by the caller for the next: where the
/// intersection curve crossed (an edge of one grain through a face of the other), for the
/// walk of [`overlap_with_hint`], and which faces bounded A∩B, for [`overlap_coherent`]. The
/// next overlap checks what it reuses; a stale or foreign hint is only a start that fails
/// the check. The result does not depend on the hint beyond round-off, only the time it
/// takes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct OverlapHint {
    crossing: Option<Crossing>,
    faces: BoundingFaces,
}

/// The overlap of `a` and `b`, or `None` when they do not penetrate (or only touch).
///
/// The closest-feature walk decides first whether the grains penetrate (warm from `cache`
/// when given, which makes a separated pair cost O(1)) and provides the witness from which
/// the candidate faces are found. When they are many (a deep overlap of many-faced grains)
/// the intersection curve is walked instead, as by [`overlap_with_hint`] from the witness
/// alone.
#[must_use]
pub fn overlap(
    a: &ConvexPolyhedron,
    pose_a: &Pose,
    b: &ConvexPolyhedron,
    pose_b: &Pose,
    cache: Option<&FeatureCache>,
) -> Option<Overlap> {
    overlap_by(a, pose_a, b, pose_b, cache, None, true)
}

/// [`overlap`] by the walk along the intersection curve (see `overlap_trace.rs`), starting
/// from what the pair's last overlap learned (`hint`, updated), and by the clipping of
/// [`overlap`] where the walk does not apply (one grain inside the other, a curve of several
/// loops, positions within round-off of a degenerate one). Both agree to round-off.
///
/// The walk's work follows the size of the overlap polyhedron. The hint saves the search for
/// a start when the witness of the closest-feature walk is not a crossing; where the walk
/// applies, the result is the same whatever the hint.
#[must_use]
pub fn overlap_with_hint(
    a: &ConvexPolyhedron,
    pose_a: &Pose,
    b: &ConvexPolyhedron,
    pose_b: &Pose,
    cache: Option<&FeatureCache>,
    hint: &mut OverlapHint,
) -> Option<Overlap> {
    overlap_by(a, pose_a, b, pose_b, cache, Some(hint), true)
}

/// [`overlap`] for a pair followed from step to step, with its closest features in `cache`
/// and what its last overlap learned in `hint` (both updated).
///
/// While a contact persists, the faces that bounded A∩B change rarely. Each of those faces
/// is clipped by the planes of the other grain's ones alone (thesis §4.2: temporal
/// coherence), which gives a part that holds its true part; the parts are then checked: every
/// corner of a part lies in the other grain (a vertex of the grain by a walk over the other's
/// faces, a corner cut out by a plane within that plane's face), which makes each part
/// exactly its face within the other grain, and the parts close (their vector areas sum to
/// zero), which makes them all of A∩B's boundary. A check that fails (a face entered or left
/// the overlap, the grains parted) falls back to the closest features and the clipping of
/// [`overlap`], which renew the hint; either way the result agrees to round-off. The closest
/// features are not updated while the faces are reused: they are a start for the walk, and
/// any start gives the same answer.
#[must_use]
pub fn overlap_coherent(
    a: &ConvexPolyhedron,
    pose_a: &Pose,
    b: &ConvexPolyhedron,
    pose_b: &Pose,
    cache: &mut FeatureCache,
    hint: &mut OverlapHint,
) -> Option<Overlap> {
    let a_to_b = Iso::between(pose_a, pose_b);
    WORKSPACE.with(|w| {
        let w = &mut *w.borrow_mut();
        if let Some(o) = from_faces(a, b, pose_b, &a_to_b, &mut hint.faces, &mut w.reuse) {
            cache.clearance = 0.0;
            return Some(o);
        }
        hint.faces = BoundingFaces::default();
        if !closest_features_with(a, pose_a, b, pose_b, &a_to_b, cache).is_penetrating() {
            return None;
        }
        let found = intersect(a, b, pose_b, &a_to_b, cache, true, w);
        if found.is_some() {
            hint.faces.set(&w.kept_a, &w.kept_b);
        }
        found
    })
}

/// The overlap from the faces that bounded the last one, each clipped by the other grain's
/// ones and checked (see [`crate::overlap_reuse`]); `None` when there are none or a check
/// fails. On success the hint keeps the faces whose parts were not empty.
fn from_faces(
    a: &ConvexPolyhedron,
    b: &ConvexPolyhedron,
    pose_b: &Pose,
    a_to_b: &Iso,
    faces: &mut BoundingFaces,
    w: &mut ReuseWorkspace,
) -> Option<Overlap> {
    let found = reused(a, b, a_to_b, faces, w)?;
    // One grain inside the other: no direction from the parts, and none kept to stand in.
    let scale = a.diameter_bound() + b.diameter_bound();
    let contact_area = found.sums.contact_area;
    if contact_area.length() <= 1e-12 * scale * scale {
        return None;
    }
    let o = finish(&found.sums, scale, pose_b, || contact_area)?;
    faces.set(
        &found.kept_a[..found.count_a],
        &found.kept_b[..found.count_b],
    );
    Some(o)
}

/// The overlap, by the walk along the intersection curve when `hint` is given, else by
/// clipping the candidate faces (or walking when they are many and `walk_many`).
fn overlap_by(
    a: &ConvexPolyhedron,
    pose_a: &Pose,
    b: &ConvexPolyhedron,
    pose_b: &Pose,
    cache: Option<&FeatureCache>,
    hint: Option<&mut OverlapHint>,
    walk_many: bool,
) -> Option<Overlap> {
    // Everything is computed in B's body frame.
    let a_to_b = Iso::between(pose_a, pose_b);
    let mut walk = cache.copied().unwrap_or_default();
    if !closest_features_with(a, pose_a, b, pose_b, &a_to_b, &mut walk).is_penetrating() {
        return None;
    }
    WORKSPACE.with(|w| {
        let w = &mut *w.borrow_mut();
        if let Some(hint) = hint {
            if let Some(o) = traced(a, b, pose_b, &a_to_b, &walk, hint, w) {
                return Some(o);
            }
        }
        intersect(a, b, pose_b, &a_to_b, &walk, walk_many, w)
    })
}

/// The overlap from the faces the intersection curve runs through and those inside them
/// (see [`crate::overlap_trace`]); `None` when the walk does not apply.
fn traced(
    a: &ConvexPolyhedron,
    b: &ConvexPolyhedron,
    pose_b: &Pose,
    a_to_b: &Iso,
    witness: &FeatureCache,
    hint: &mut OverlapHint,
    w: &mut Workspace,
) -> Option<Overlap> {
    let mut starts = [Crossing::default(); 2];
    let mut count = 0;
    if let Some(c) = hint.crossing {
        starts[count] = c;
        count += 1;
    }
    let witness_crossing = match (witness.feature_a, witness.feature_b) {
        (Feature::Edge(edge), Feature::Face(face)) => Some(Crossing {
            edge,
            face,
            edge_of_a: true,
        }),
        (Feature::Face(face), Feature::Edge(edge)) => Some(Crossing {
            edge,
            face,
            edge_of_a: false,
        }),
        _ => None,
    };
    if let Some(c) = witness_crossing.filter(|&c| Some(c) != hint.crossing) {
        starts[count] = c;
        count += 1;
    }
    let start = trace(a, b, a_to_b, &starts[..count], &mut w.trace);
    hint.crossing = start;
    start?;
    let sums = assemble(a, b, a_to_b, w)?;
    // The curve runs around A∩B, so A's surface inside B is not closed and its vector
    // area does not vanish; were it round-off small, the witness direction stands in.
    let scale = a.diameter_bound() + b.diameter_bound();
    finish(&sums, scale, pose_b, || {
        witness_direction(a, b, witness, a_to_b)
    })
}

/// The boundary sums of A∩B from the faces listed in `w.trace` (each with the other grain's
/// faces whose planes cut it), every corner of every part checked to lie in both grains and
/// the parts checked to close; `None` when a check fails. The faces whose parts are not
/// empty are left in `w.kept_a` and `w.kept_b`.
fn assemble(
    a: &ConvexPolyhedron,
    b: &ConvexPolyhedron,
    a_to_b: &Iso,
    w: &mut Workspace,
) -> Option<BoundarySums> {
    w.kept_a.clear();
    w.kept_b.clear();
    let scale = a.diameter_bound() + b.diameter_bound();
    let tolerance = 1e-12 * scale;
    let mut sums = BoundarySums::default();
    let plane_a = |f: u32| {
        let face = a.faces()[f as usize];
        let normal = a_to_b.vector(face.normal);
        let on_plane = a_to_b.point(face.normal * face.offset);
        Plane {
            normal,
            offset: normal.dot(on_plane),
            centre: DVec3::ZERO,
            radius: 0.0,
        }
    };
    let plane_b = |g: u32| {
        let face = b.faces()[g as usize];
        Plane {
            normal: face.normal,
            offset: face.offset,
            centre: DVec3::ZERO,
            radius: 0.0,
        }
    };
    // Every corner of the parts must lie in both grains (a walk along one loop of several
    // leaves parts too large, with corners outside; see below). A corner cut out by a plane
    // of the other grain lies in it when it lies in that plane's face; a vertex of its own
    // grain is checked once, against the whole other grain.
    let margin = 1e-9 * scale;
    let b_to_a = a_to_b.inverse();
    let (mut start_a, mut start_b) = (w.trace.parts_a[0].face, w.trace.parts_b[0].face);
    let first_cut = |p: &PartFace| (p.cuts.0 < p.cuts.1).then(|| w.trace.cuts[p.cuts.0 as usize]);
    start_a = first_cut(&w.trace.parts_b[0]).unwrap_or(start_a);
    start_b = first_cut(&w.trace.parts_a[0]).unwrap_or(start_b);
    let mut magnitude = 0.0;
    let limits = (tolerance, margin);
    let in_b = Container {
        poly: b,
        from_b: None,
        part_of_a: true,
    };
    let in_a = Container {
        poly: a,
        from_b: Some(b_to_a),
        part_of_a: false,
    };
    for k in 0..w.trace.parts_a.len() {
        let part = w.trace.parts_a[k];
        let corners = a
            .face_vertices(part.face as usize)
            .map(|v| (a_to_b.point(a.vertices()[v as usize]), ORIGINAL | v));
        if !checked_part(part, corners, plane_b, &in_b, &mut start_b, limits, w)? {
            continue;
        }
        w.kept_a.push(part.face);
        sums.add(w.part.points());
        // A face of A lying in a face of B with the same orientation is where the grains sit
        // flush side by side: it bounds A∩B, but no contact acts across it (and the face of
        // B there closes the boundary instead).
        let normal = a_to_b.vector(a.faces()[part.face as usize].normal);
        let flush = w.trace.parts_b.iter().any(|p| {
            let p = plane_b(p.face);
            p.normal.dot(normal) > 1.0 - 1e-12
                && a.face_vertices(part.face as usize)
                    .all(|v| p.distance(a_to_b.point(a.vertices()[v as usize])).abs() <= tolerance)
        });
        if !flush {
            let vector_area = sums.add_contact(w.part.points());
            magnitude += vector_area.length();
        }
    }
    let mut closure = DVec3::ZERO;
    for k in 0..w.trace.parts_b.len() {
        let part = w.trace.parts_b[k];
        let face = b.faces()[part.face as usize];
        let corners = b
            .face_vertices(part.face as usize)
            .map(|v| (b.vertices()[v as usize], ORIGINAL | v));
        if !checked_part(part, corners, plane_a, &in_a, &mut start_a, limits, w)? {
            continue;
        }
        // A face of B lying in a face of A with the same orientation is on A's surface and
        // already counted as A's part; counting it twice would double that boundary.
        let normal_in_a = b_to_a.vector(face.normal);
        let lies_in_a = w.trace.parts_a.iter().any(|p| {
            a.faces()[p.face as usize].normal.dot(normal_in_a) > 1.0 - 1e-12 && {
                let p = plane_a(p.face);
                b.face_vertices(part.face as usize)
                    .all(|v| p.distance(b.vertices()[v as usize]).abs() <= tolerance)
            }
        });
        w.kept_b.push(part.face);
        let vector_area = polygon_area_vector(w.part.points());
        closure += vector_area;
        magnitude += vector_area.length();
        if !lies_in_a {
            sums.add(w.part.points());
        }
    }
    // The parts must close: ∂A∩∂B may have more than one loop (a corner of one grain
    // poking out through a face of the other, a grain piercing the other), and a walk
    // along one of them misses the faces of the others. The vector area of a surface with
    // such a hole is that of the hole's rim; the clipping of all candidate faces takes over.
    if (closure + sums.contact_area).length() > 1e-9 * magnitude {
        return None;
    }
    Some(sums)
}

/// The grain the corners of the other grain's parts must lie in: its solid, the map from B's
/// frame into its own (none for B itself), and whether the parts checked against it are A's.
struct Container<'p> {
    poly: &'p ConvexPolyhedron,
    from_b: Option<Iso>,
    part_of_a: bool,
}

/// The face of `part`, its corners given in B's frame (`corners`, tagged [`ORIGINAL`]),
/// clipped by the planes (`plane`) of the other grain's faces listed for it, left in
/// `w.tagged`; every corner checked to lie in the other grain (`other`): a vertex of its own
/// grain once per overlap, against the whole other grain (from `start`), a corner cut out
/// by a plane within that plane's face. `Some(false)` when the clipping leaves nothing,
/// `None` when a corner lies outside.
fn checked_part(
    part: PartFace,
    corners: impl Iterator<Item = (DVec3, u32)>,
    plane: impl Fn(u32) -> Plane,
    other: &Container,
    start: &mut u32,
    (tolerance, margin): (f64, f64),
    w: &mut Workspace,
) -> Option<bool> {
    w.part.start(corners);
    let cuts = &w.trace.cuts[part.cuts.0 as usize..part.cuts.1 as usize];
    // All planes computed before the first clip: a plane just stored and read back at
    // another width stalls the read (store forwarding fails).
    w.part_cuts.clear();
    w.part_cuts.extend(cuts.iter().map(|&g| plane(g)));
    if !cuts
        .iter()
        .zip(&w.part_cuts)
        .all(|(&g, plane)| w.part.clip(|x| plane.distance(x), g, tolerance))
    {
        return Some(false);
    }
    for (&x, &tag) in w.part.points().iter().zip(w.part.tags()) {
        let x = other.from_b.map_or(x, |to_own| to_own.point(x));
        let inside = if tag & ORIGINAL != 0 {
            !w.trace.first_check(other.part_of_a, tag & !ORIGINAL)
                || beyond(other.poly, x, start) <= margin
        } else {
            in_face(other.poly, tag, x, margin)
        };
        if !inside {
            return None;
        }
    }
    Some(true)
}

const WALK_ABOVE: usize = 1024;

fn intersect(
    a: &ConvexPolyhedron,
    b: &ConvexPolyhedron,
    pose_b: &Pose,
    a_to_b: &Iso,
    witness: &FeatureCache,
    walk_many: bool,
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
    // Many candidates (a deep overlap of many-faced grains): their pairs would cost more
    // than the walk along the intersection curve, whose work follows the overlap's size.
    // It starts from the witness alone, so that the result depends on nothing the caller
    // does not keep in its feature cache. Few candidates are clipped as they always were.
    if walk_many && w.faces_a.len() * w.faces_b.len() > WALK_ABOVE {
        let mut hint = OverlapHint::default();
        if let Some(o) = traced(a, b, pose_b, &a_to_b, witness, &mut hint, w) {
            return Some(o);
        }
    }
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

    // Each candidate vertex gets an outcode: bit `j` set when it lies beyond the other
    // grain's candidate plane `j` (by the clipper's own test, so that a plane no vertex of a
    // face lies beyond is one whose clip would leave the face unchanged). A face with all
    // its vertices beyond one plane has no part inside. A face is clipped by the planes some
    // vertex lies beyond, among those that may bound its part (see `bounding`).
    w.kept_a.clear();
    w.kept_b.clear();
    w.coded_a.reset(true);
    for &f in &w.faces_a {
        let corners = a.face_vertices(f as usize);
        w.coded_a
            .add_face(corners, &mut w.marks_a, &w.planes_b, tolerance, |v| {
                a_to_b.point(a.vertices()[v])
            });
    }
    w.coded_b.reset(false);
    for &g in &w.faces_b {
        let corners = b.face_vertices(g as usize);
        w.coded_b
            .add_face(corners, &mut w.marks_b, &w.planes_a, tolerance, |v| {
                b.vertices()[v]
            });
    }
    for (k, &f) in w.faces_a.iter().enumerate() {
        if w.coded_a.outside(k) {
            continue;
        }
        bounding(
            k,
            &w.planes_a,
            &w.planes_b,
            &w.coded_a,
            tolerance,
            &mut w.near,
            &mut w.cut,
        );
        w.clipper.start(a.faces()[f as usize].vertex_count as usize);
        for (i, v) in a.face_vertices(f as usize).enumerate() {
            w.clipper.set(i, w.coded_a.point(&w.marks_a, v as usize));
        }
        if w.clipper.part_inside(&w.planes_b, &w.cut, tolerance) {
            w.kept_a.push(f);
            let part = w.clipper.part();
            sums.add(part);
            // A face of A lying in a face of B with the same orientation is where the grains
            // sit flush side by side: it bounds A∩B, but no contact acts across it.
            let normal = w.planes_a[k].normal;
            let flush = selected(&w.planes_b, &w.near).any(|p| {
                p.normal.dot(normal) > 1.0 - 1e-12
                    && a.face_vertices(f as usize).all(|v| {
                        p.distance(w.coded_a.point(&w.marks_a, v as usize)).abs() <= tolerance
                    })
            });
            if !flush {
                sums.add_contact(part);
            }
        }
    }
    for (k, &g) in w.faces_b.iter().enumerate() {
        if w.coded_b.outside(k) {
            continue;
        }
        let face = b.faces()[g as usize];
        bounding(
            k,
            &w.planes_b,
            &w.planes_a,
            &w.coded_b,
            tolerance,
            &mut w.near,
            &mut w.cut,
        );
        w.clipper.start(face.vertex_count as usize);
        for (i, v) in b.face_vertices(g as usize).enumerate() {
            w.clipper.set(i, b.vertices()[v as usize]);
        }
        // A face of B lying in a face of A with the same orientation is on A's surface and
        // already counted as A's part; counting it twice would double that boundary.
        let inside = w.clipper.part_inside(&w.planes_a, &w.cut, tolerance);
        if inside {
            w.kept_b.push(g);
        }
        if inside
            && !selected(&w.planes_a, &w.near).any(|p| {
                p.normal.dot(face.normal) > 1.0 - 1e-12
                    && b.face_vertices(g as usize)
                        .all(|v| p.distance(b.vertices()[v as usize]).abs() <= tolerance)
            })
        {
            sums.add(w.clipper.part());
        }
    }

    finish(&sums, scale, pose_b, || n)
}

/// The overlap from the sums over its boundary (in B's frame, B at `pose_b`): `None` when
/// it has no volume. `direction` stands in for the normal when A's surface inside B has no
/// vector area (one grain inside the other).
/// Whether the spheres around a candidate face of A and one of B meet: always evaluated in
/// this order, so that both sides see the same rounding.
#[inline]
fn spheres_meet(face_a: &Plane, face_b: &Plane, tolerance: f64) -> bool {
    let reach = face_a.radius + face_b.radius + tolerance;
    face_a.centre.distance_squared(face_b.centre) <= reach * reach
}

/// The planes among `others` that may bound the part of candidate face `k` (of `own`, with
/// its planes `planes`) and that some vertex of the face lies beyond, into `cut`; in `near`,
/// those whose face sphere meets the face's own.
///
/// A face of the other grain far from this face does not cross it, so it cannot bound the
/// part of this face inside that grain: clipped by the near planes alone, a face keeps its
/// part exactly, or — when it has none — gets one outside some candidate plane, which the
/// check of the part's centroid against every plane rejects. A plane no vertex lies beyond
/// leaves the face as it is.
fn bounding(
    k: usize,
    planes: &[Plane],
    others: &[Plane],
    own: &Coded,
    tolerance: f64,
    near: &mut Vec<u64>,
    cut: &mut Vec<u64>,
) {
    let face = &planes[k];
    let any_beyond = own.any_row(k);
    near.clear();
    cut.clear();
    for (chunk_index, chunk) in others.chunks(64).enumerate() {
        let mut near_bits = 0u64;
        for (j, o) in chunk.iter().enumerate() {
            // Always in the order (A's face, B's face), so that both sides round alike.
            let meets = if own.is_a {
                spheres_meet(face, o, tolerance)
            } else {
                spheres_meet(o, face, tolerance)
            };
            near_bits |= u64::from(meets) << j;
        }
        near.push(near_bits);
        cut.push(near_bits & any_beyond[chunk_index]);
    }
}

/// The candidate faces of one grain with their vertices' outcodes against the other grain's
/// candidate planes: each vertex transformed and coded once per query.
#[derive(Default)]
struct Coded {
    /// Whether these are A's faces (the order of the sphere test).
    is_a: bool,
    /// Words per outcode (one bit per plane of the other grain).
    words: usize,
    /// The candidate vertices, in B's frame.
    points: Vec<DVec3>,
    /// Per point: its outcode.
    codes: Vec<u64>,
    /// Per face: the planes every vertex lies beyond, and those some vertex does.
    all: Vec<u64>,
    any: Vec<u64>,
}

impl Coded {
    fn reset(&mut self, is_a: bool) {
        self.is_a = is_a;
        self.points.clear();
        self.codes.clear();
        self.all.clear();
        self.any.clear();
    }

    fn add_face(
        &mut self,
        corners: impl Iterator<Item = u32>,
        marks: &mut Marks,
        planes: &[Plane],
        tolerance: f64,
        position: impl Fn(usize) -> DVec3,
    ) {
        let words = planes.len().div_ceil(64);
        self.words = words;
        let row = self.all.len();
        self.all.resize(row + words, !0);
        self.any.resize(row + words, 0);
        for v in corners {
            let v = v as usize;
            if marks.slotted[v] != marks.generation {
                marks.slotted[v] = marks.generation;
                marks.slot[v] = self.points.len() as u32;
                let x = position(v);
                self.points.push(x);
                push_outcode(&mut self.codes, planes, x, tolerance);
            }
            let slot = marks.slot[v] as usize;
            for w in 0..words {
                let c = self.codes[slot * words + w];
                self.all[row + w] &= c;
                self.any[row + w] |= c;
            }
        }
    }

    /// Whether face `k` lies wholly beyond some plane.
    fn outside(&self, k: usize) -> bool {
        self.all_row(k).iter().any(|&all| all != 0)
    }

    fn all_row(&self, k: usize) -> &[u64] {
        &self.all[k * self.words..(k + 1) * self.words]
    }

    fn any_row(&self, k: usize) -> &[u64] {
        &self.any[k * self.words..(k + 1) * self.words]
    }

    /// Vertex `v`, which a face added since the last reset holds.
    fn point(&self, marks: &Marks, v: usize) -> DVec3 {
        self.points[marks.slot[v] as usize]
    }
}

/// Appends the outcode of `x` against `planes` (bit `j`: beyond plane `j` by more than
/// `tolerance`), by the arithmetic of [`Clipper::clip`].
#[inline]
fn push_outcode(codes: &mut Vec<u64>, planes: &[Plane], x: DVec3, tolerance: f64) {
    codes.extend(planes.chunks(64).map(|chunk| {
        chunk.iter().enumerate().fold(0u64, |bits, (j, p)| {
            let d = (p.normal.x * x.x + p.normal.y * x.y) + p.normal.z * x.z - p.offset;
            bits | ((tolerance - d).to_bits() >> 63) << j
        })
    }));
}

fn finish(
    sums: &BoundarySums,
    scale: f64,
    pose_b: &Pose,
    direction: impl FnOnce() -> DVec3,
) -> Option<Overlap> {
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
        direction()
    };
    let centroid_b = sums.reference + sums.moment / (4.0 * sums.six_volume);
    let rotation_b = pose_b.rotation_matrix();
    let area_moment = sums.contact_moment - (centroid_b - sums.reference).cross(sums.contact_area);
    Some(Overlap {
        volume,
        centroid: rotation_b * centroid_b + pose_b.position,
        normal: (rotation_b * direction).normalize(),
        area,
        area_moment: rotation_b * area_moment,
    })
}

/// Marks a corner of a part as a vertex of its grain (else it is the index of the other
/// grain's face whose plane cut it out).
pub(crate) const ORIGINAL: u32 = 1 << 31;

/// Whether `x` (own frame) lies within face `f`'s polygon, to `margin` beyond its sides.
/// Inlined, as [`beyond`] is.
#[inline]
pub(crate) fn in_face(poly: &ConvexPolyhedron, f: u32, x: DVec3, margin: f64) -> bool {
    poly.face_side_planes(f as usize)
        .iter()
        .all(|side| side.normal.dot(x - side.point) <= margin)
}

/// How far `x` (own frame) lies beyond the plane of `poly` it lies farthest beyond, as seen
/// from the vertex centroid: negative when inside.
///
/// The plane maximising `n·(x − c) / (d − n·c)` (with `n·y = d` the faces' planes and `c`
/// the vertex centroid) is found by climbing the face graph from `start` (updated): these
/// are the values of the linear function `y ↦ y·(x − c)` at the faces' poles
/// ([`ConvexPolyhedron::face_pole`]), the vertices of the polar polyhedron, whose edges join
/// adjacent faces, so a local maximum is the global one; and `x` is inside when that maximum
/// is below 1.
///
/// Inlined where it can be: a point passed to a call is stored to the stack and read back
/// at another width (its `x`, then `y` and `z` together), which stalls the read until the
/// store is done (store forwarding fails), some twenty cycles per call.
#[inline]
pub(crate) fn beyond(poly: &ConvexPolyhedron, x: DVec3, start: &mut u32) -> f64 {
    let faces = poly.faces();
    let relative = x - poly.vertex_centroid();
    let value = |f: u32| poly.face_pole(f as usize).dot(relative);
    let mut f = *start;
    let mut best = value(f);
    loop {
        let mut moved = false;
        for h in faces[f as usize].half_edges() {
            let next = poly.half_edges()[poly.half_edges()[h].twin as usize].face;
            let v = value(next);
            if v > best {
                (f, best, moved) = (next, v, true);
            }
        }
        if !moved {
            break;
        }
    }
    *start = f;
    faces[f as usize].signed_distance(x)
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
pub(crate) struct BoundarySums {
    /// The apex of the cones: the first corner of the first polygon (on the intersection's
    /// boundary, so the cones are no larger than the intersection and a thin overlap keeps
    /// its digits) unless given (see [`BoundarySums::about`]).
    reference: DVec3,
    started: bool,
    six_volume: f64,
    moment: DVec3,
    pub contact_area: DVec3,
    /// The moment of A's surface inside B about the reference point.
    contact_moment: DVec3,
}

impl BoundarySums {
    /// Sums of cones from `reference` (rather than from the first corner added).
    pub fn about(reference: DVec3) -> BoundarySums {
        BoundarySums {
            reference,
            started: true,
            ..BoundarySums::default()
        }
    }

    /// Adds a part of B's surface inside A to the contact's vector area and moment as the
    /// part of A's surface it stands in for: the two span the same rim the other way round
    /// (their union is the closed boundary of A∩B), so it counts with the opposite sign.
    pub fn add_contact_of_b(&mut self, polygon: &[DVec3]) {
        let (area, moment) = polygon_area_and_moment(polygon, self.reference);
        self.contact_area -= area;
        self.contact_moment -= moment;
    }

    /// Adds a part of A's surface inside B (after [`BoundarySums::add`] has set the
    /// reference point) to the contact's vector area and moment; returns its vector area.
    pub fn add_contact(&mut self, polygon: &[DVec3]) -> DVec3 {
        let (area, moment) = polygon_area_and_moment(polygon, self.reference);
        self.contact_area += area;
        self.contact_moment += moment;
        area
    }

    /// Adds the cone from the reference point over an outward polygon: tetrahedra
    /// (r, p0, pk, pk+1) with signed volume det/6 and centroid (r + p0 + pk + pk+1)/4.
    pub fn add(&mut self, polygon: &[DVec3]) {
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
#[cfg(test)]
mod tests {
    //! The overlap by the walk along the intersection curve against the clipping of every
    //! candidate face by every candidate plane whose face sphere meets its own (the overlap
    //! before the walk, kept as the fallback), over random pairs from grazing to deep and with
    //! any hint the caches may hold.

    use glam::DQuat;
    use proptest::prelude::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    use super::*;
    use crate::closest::closest_features;
    use crate::generate;
    use crate::overlap_reuse::HINT_FACES;

    /// The overlap by clipping the candidate faces alone.
    fn overlap_reference(
        a: &ConvexPolyhedron,
        pa: &Pose,
        b: &ConvexPolyhedron,
        pb: &Pose,
        cache: Option<&FeatureCache>,
    ) -> Option<Overlap> {
        overlap_by(a, pa, b, pb, cache, None, false)
    }

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

    /// Counts of compared overlaps, of those equal to the reference's to the last bit, and
    /// of those the walk computed.
    #[derive(Default)]
    struct Tally {
        compared: usize,
        identical: usize,
        traced: usize,
    }

    /// The overlap by the walk alone, `None` where it does not apply.
    fn walk_only(
        a: &ConvexPolyhedron,
        pa: &Pose,
        b: &ConvexPolyhedron,
        pb: &Pose,
        cache: &FeatureCache,
        mut hint: OverlapHint,
    ) -> Option<Overlap> {
        let a_to_b = Iso::between(pa, pb);
        let mut walk = *cache;
        if !closest_features_with(a, pa, b, pb, &a_to_b, &mut walk).is_penetrating() {
            return None;
        }
        WORKSPACE.with(|w| traced(a, b, pb, &a_to_b, &walk, &mut hint, &mut w.borrow_mut()))
    }

    /// Overlap hints as a pipeline may hold them: none, the right one, one from another
    /// pair, made-up ones (crossings and bounding faces, existing or not).
    fn overlap_hints(right: OverlapHint, r: &mut ChaCha8Rng) -> Vec<OverlapHint> {
        let mut made_up = |edge_of_a| {
            let faces = |r: &mut ChaCha8Rng| -> Vec<u32> {
                let top = if r.random() { 12 } else { 500 };
                (0..r.random_range(1..=HINT_FACES))
                    .map(|_| r.random_range(0..top))
                    .collect()
            };
            let mut hint = OverlapHint {
                crossing: Some(Crossing {
                    edge: r.random_range(0..700),
                    face: r.random_range(0..500),
                    edge_of_a,
                }),
                faces: BoundingFaces::default(),
            };
            hint.faces.set(&faces(r), &faces(r));
            hint
        };
        let (x, y) = (made_up(true), made_up(false));
        let stale = STALE.with(|s| s.replace(right));
        vec![OverlapHint::default(), right, stale, x, y]
    }

    thread_local! {
        /// The last pair's hint, handed to the next pair as a stale one.
        static STALE: std::cell::Cell<OverlapHint> = std::cell::Cell::new(OverlapHint::default());
    }

    /// Compares the overlap of one placed pair under every feature cache and overlap hint
    /// with the reference; the warm cache comes from the closest-feature walk, as in the
    /// pipeline. Whatever the hint, the walk's results must be the same to the last bit.
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
        let mut right = OverlapHint::default();
        let _ = overlap_with_hint(a, pa, b, pb, Some(&warm), &mut right);
        let _ = overlap_coherent(a, pa, b, pb, &mut warm.clone(), &mut right);
        for cache in hints(warm, r) {
            // The walk's result for this cache, whatever the overlap hint (with another
            // cache only the stand-in normal of a vanishing contact area may differ).
            let mut first = None;
            let old = overlap_reference(a, pa, b, pb, Some(&cache));
            let plain = overlap(a, pa, b, pb, Some(&cache));
            agree(plain, old, scale).map_err(|e| format!("{cache:?} overlap(): {e}"))?;
            for mut hint in overlap_hints(right, r) {
                let coherent =
                    overlap_coherent(a, pa, b, pb, &mut cache.clone(), &mut hint.clone());
                agree(coherent, old, scale)
                    .map_err(|e| format!("{cache:?} {hint:?} coherent: {e}"))?;
                let walked = walk_only(a, pa, b, pb, &cache, hint);
                let new = overlap_with_hint(a, pa, b, pb, Some(&cache), &mut hint);
                agree(new, old, scale).map_err(|e| format!("{cache:?} {hint:?}: {e}"))?;
                agree(new, cold, scale).map_err(|e| format!("{cache:?} {hint:?} vs none: {e}"))?;
                if let Some(w) = walked {
                    if new != Some(w) || first.is_some_and(|f| f != w) {
                        return Err(format!("{cache:?} {hint:?}: {w:?} vs {new:?} {first:?}"));
                    }
                    first = Some(w);
                    tally.traced += 1;
                }
                tally.compared += 1;
                tally.identical += usize::from(new == old);
            }
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

    /// Most overlaps come from the walk, over a fixed sample (printed: how many, and how
    /// many equal the reference's to the last bit).
    #[test]
    fn the_walk_computes_most_overlaps() {
        let mut tally = Tally::default();
        for seed in 0..1000 {
            random_pair(seed, &mut tally).unwrap();
        }
        eprintln!(
            "{} overlaps: {} by the walk, {} identical to the reference's to the last bit",
            tally.compared, tally.traced, tally.identical
        );
        assert!(tally.traced * 2 >= tally.compared);
    }

    /// Pairs followed along a trajectory, as the contact pipeline follows them: each step's
    /// overlap by [`overlap_coherent`], with the cache and hint the last step left, agrees
    /// with the reference's; and most steps reuse the last step's faces (printed: how many).
    #[test]
    fn persisting_contacts_reuse_their_faces_and_agree() {
        let (mut steps, mut reused) = (0usize, 0usize);
        for seed in 0..60 {
            let mut r = ChaCha8Rng::seed_from_u64(seed);
            let counts = [6, 12, 20, 26, 60, 200];
            let a = grain(counts[r.random_range(0..counts.len())], &mut r);
            let b = grain(counts[r.random_range(0..counts.len())], &mut r);
            let pa = Pose::new(DVec3::ZERO, rotation(&mut r));
            let direction = rotation(&mut r) * DVec3::X;
            let depth = 2.0 * 10f64.powf(r.random_range(-3.0..-1.0));
            let start = pushed(&a, &pa, &b, direction, rotation(&mut r), depth);
            let spin = rotation(&mut r) * DVec3::X;
            let drift = rotation(&mut r) * DVec3::X * 5e-5;
            let (mut cache, mut hint) = (FeatureCache::default(), OverlapHint::default());
            for k in 0..200 {
                let t = k as f64;
                // b turns and slides along the surface, sinking in and rising out.
                let pb = Pose::new(
                    start.position + drift * t + direction * (1e-4 * (0.05 * t).sin()),
                    DQuat::from_axis_angle(spin, 5e-4 * t) * start.rotation,
                );
                let a_to_b = Iso::between(&pa, &pb);
                let mut faces = hint.faces;
                let by_faces = WORKSPACE.with(|w| {
                    from_faces(&a, &b, &pb, &a_to_b, &mut faces, &mut w.borrow_mut().reuse)
                        .is_some()
                });
                let got = overlap_coherent(&a, &pa, &b, &pb, &mut cache, &mut hint);
                let want = overlap_reference(&a, &pa, &b, &pb, None);
                agree(got, want, 2.0).unwrap_or_else(|e| panic!("seed {seed} step {k}: {e}"));
                steps += usize::from(want.is_some());
                reused += usize::from(by_faces);
            }
        }
        eprintln!("{steps} overlapping steps, {reused} from the last step's faces");
        assert!(reused * 4 >= steps * 3, "{reused} of {steps}");
    }

    /// A persisting contact's overlap from its last faces, by whichever way applies (one
    /// grain's parts by a cone's section or by clipping, both grains' parts), agrees with
    /// the reference, for contacts from grazing to deep between grains of few to many
    /// vertices, one step after their faces were found; every way is taken.
    #[test]
    fn the_last_faces_give_the_reference_overlap_every_way() {
        use crate::overlap_reuse::WAYS;
        WAYS.with(|w| w.set([0; 4]));
        let mut reused = 0;
        for seed in 0..1000 {
            let mut r = ChaCha8Rng::seed_from_u64(1000 + seed);
            let counts = [4, 6, 8, 12, 20, 26, 60, 200];
            let a = grain(counts[r.random_range(0..counts.len())], &mut r);
            let b = grain(counts[r.random_range(0..counts.len())], &mut r);
            let pa = Pose::new(DVec3::ZERO, rotation(&mut r));
            let direction = rotation(&mut r) * DVec3::X;
            let depth = 2.0 * 10f64.powf(r.random_range(-5.0..-0.7));
            let pb = pushed(&a, &pa, &b, direction, rotation(&mut r), depth);
            let (mut cache, mut hint) = (FeatureCache::default(), OverlapHint::default());
            if overlap_coherent(&a, &pa, &b, &pb, &mut cache, &mut hint).is_none() {
                continue;
            }
            // One step later: b turned and moved a little.
            let turn = DQuat::from_axis_angle(rotation(&mut r) * DVec3::X, 1e-3);
            let next = Pose::new(
                pb.position + rotation(&mut r) * DVec3::X * (1e-3 * depth),
                turn * pb.rotation,
            );
            let a_to_b = Iso::between(&pa, &next);
            let mut faces = hint.faces;
            let got = WORKSPACE.with(|w| {
                from_faces(
                    &a,
                    &b,
                    &next,
                    &a_to_b,
                    &mut faces,
                    &mut w.borrow_mut().reuse,
                )
            });
            let want = overlap_reference(&a, &pa, &b, &next, None);
            if let Some(g) = got {
                reused += 1;
                agree(got, want, 2.0).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
                let w = want.expect("the reference finds the overlap too");
                assert!(
                    (g.area_moment - w.area_moment).length()
                        <= 1e-9 * (1.0 + w.area_moment.length()),
                    "seed {seed}: moment {:?} vs {:?}",
                    g.area_moment,
                    w.area_moment
                );
            }
        }
        let ways = WAYS.with(std::cell::Cell::get);
        eprintln!(
            "{reused} overlaps from the last faces: {} from one grain's parts ({} parts by \
             sections, {} clipped), {} from both grains'",
            ways[0], ways[1], ways[2], ways[3]
        );
        assert!(reused >= 500, "{reused}");
        assert!(ways.iter().all(|&w| w >= 20), "{ways:?}");
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
    }

    /// A grain pressed flat onto a wall is bounded there by many of its own faces (more
    /// than 8 of a 32-faced grain) and one of the wall's: the hint keeps them all, and the
    /// next steps' overlaps come from those faces, agreeing with the reference.
    #[test]
    fn a_grain_flat_on_a_wall_is_found_from_its_last_faces() {
        let wall = generate::rectangular_box(DVec3::new(0.2, 0.2, 0.05)).expect("box");
        let wall_pose = Pose::new(DVec3::new(0.0, 0.0, -0.025), DQuat::IDENTITY);
        let (mut many, mut reused_many) = (0, 0);
        for seed in 0..200 {
            let mut r = ChaCha8Rng::seed_from_u64(9000 + seed);
            let g = generate::ellipsoid_grain(18, DVec3::new(0.01, 0.009, 0.004), &mut r)
                .expect("grain");
            // The grain lying flat, sunk a fifth of its height into the wall's top face.
            let turn = DQuat::from_rotation_z(r.random_range(0.0..std::f64::consts::TAU));
            let lowest = g
                .vertices()
                .iter()
                .map(|v| (turn * *v).z)
                .fold(f64::MAX, f64::min);
            let sunk = 0.2 * 0.008;
            let (mut cache, mut hint) = (FeatureCache::default(), OverlapHint::default());
            for k in 0..5 {
                // Sliding and turning a little from step to step.
                let t = k as f64;
                let pose = Pose::new(
                    DVec3::new(1e-5 * t, 0.0, -lowest - sunk + 1e-6 * t),
                    DQuat::from_rotation_x(1e-3 * t) * turn,
                );
                let by_faces = hint.faces.counts().0 > 8 && {
                    let a_to_b = Iso::between(&pose, &wall_pose);
                    let mut faces = hint.faces;
                    WORKSPACE.with(|w| {
                        from_faces(
                            &g,
                            &wall,
                            &wall_pose,
                            &a_to_b,
                            &mut faces,
                            &mut w.borrow_mut().reuse,
                        )
                        .is_some()
                    })
                };
                let got = overlap_coherent(&g, &pose, &wall, &wall_pose, &mut cache, &mut hint);
                let want = overlap_reference(&g, &pose, &wall, &wall_pose, None);
                assert!(want.is_some(), "seed {seed} step {k}: no overlap");
                agree(got, want, 0.02).unwrap_or_else(|e| panic!("seed {seed} step {k}: {e}"));
                if k > 0 && hint.faces.counts().0 > 8 {
                    many += 1;
                    reused_many += usize::from(by_faces);
                }
            }
        }
        assert!(
            many > 100,
            "only {many} steps bounded by more than 8 faces of the grain"
        );
        assert!(
            reused_many * 10 >= many * 9,
            "{reused_many} of {many} reused"
        );
    }
}
