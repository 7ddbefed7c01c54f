//! Closest features of two convex polyhedra by Mirtich's V-Clip, the robust successor of the
//! Lin–Canny algorithm of the thesis (§4.2, app. C).
//!
//! Each polyhedron's space is divided into Voronoi regions of its features: the region of a
//! vertex is the cone bounded by planes perpendicular to its edges, that of an edge the wedge
//! between two such planes and the two planes through the edge perpendicular to its faces,
//! that of a face the prism over it. Two features are the closest pair exactly when the
//! closest points of each lie in the other's region (thesis eq. 4.16). The walk starts from
//! a cached pair and, while the test fails, moves one feature to the neighbour whose
//! region plane is violated; every move lowers the distance between the features or, at
//! equal distance, their dimension, so with temporal coherence a query costs O(1) whatever
//! the vertex count (table 4.4).
//!
//! What the walk needs beyond Lin–Canny:
//! * Edges are clipped against regions as whole segments and the move is decided by the
//!   sign of the distance derivative at the clipping points, so closest points of two edges
//!   are never found by clamping each edge independently (fig. 4.10).
//! * Penetration is detected where Lin–Canny would cycle: an edge crossing a face inside
//!   its prism, or a vertex below a face that no neighbour improves on (a local minimum,
//!   resolved by one scan of all faces: penetration if the vertex is below every face).
//! * Each region plane is evaluated in one place for both regions it separates, so that
//!   round-off cannot put a point outside both.
//! * A cycle guard: a repeated feature pair or an over-long walk hands the query to the
//!   exhaustive search, which is counted ([`exhaustive_fallbacks`]).
//!
//! For speed, the cached pair is first checked by a certificate (see [`confirm_edge_edge`]):
//! the closest points of the two features, computed as the full state test computes them,
//! lying inside each other's regions with a margin. That is the common case of a warm query
//! and costs a fraction of the state test; the walk runs only when it fails. The states read
//! each feature's data from one packed record ([`EdgeRecord`], the face's side planes, the
//! vertex's edges), and evaluate every plane exactly as before.
//!
//! The state logic follows Mirtich's own implementation (V-Clip, MERL 1997) with the
//! corrected penetration test of the edge–face state.

use std::sync::atomic::{AtomicU64, Ordering};

use glam::DVec3;

use crate::brute::closest_features_exhaustive;
use crate::feature::{Feature, FeatureCache};
use crate::iso::Iso;
use crate::polyhedron::{ConvexPolyhedron, EdgeRecord};
use crate::pose::Pose;
use crate::proximity::Proximity;
use crate::segment::closest_segment_segment;

static EXHAUSTIVE_FALLBACKS: AtomicU64 = AtomicU64::new(0);

/// How many closest-feature queries, process-wide, ended in the exhaustive search because
/// the walk cycled or ran too long.
#[must_use]
pub fn exhaustive_fallbacks() -> u64 {
    EXHAUSTIVE_FALLBACKS.load(Ordering::Relaxed)
}

/// Closest features of `a` at `pose_a` and `b` at `pose_b`, starting from (and updating)
/// `cache`.
///
/// Returns the distance and closest points when the grains are apart, or the witness
/// features when they penetrate. Touching grains (distance exactly zero) may be reported
/// either way.
pub fn closest_features(
    a: &ConvexPolyhedron,
    pose_a: &Pose,
    b: &ConvexPolyhedron,
    pose_b: &Pose,
    cache: &mut FeatureCache,
) -> Proximity {
    let a_to_b = Iso::between(pose_a, pose_b);
    closest_features_with(a, pose_a, b, pose_b, &a_to_b, cache)
}

/// [`closest_features`] with the transform from a's to b's frame already computed
/// (`a_to_b = Iso::between(pose_a, pose_b)`).
pub(crate) fn closest_features_with(
    a: &ConvexPolyhedron,
    pose_a: &Pose,
    b: &ConvexPolyhedron,
    pose_b: &Pose,
    a_to_b: &Iso,
    cache: &mut FeatureCache,
) -> Proximity {
    let b_to_a = a_to_b.inverse();
    // Distances within a few dozen ulps of the sizes and offset involved are round-off of
    // the transform between the frames: the grains touch.
    let contact = 64.0
        * f64::EPSILON
        * (a.diameter_bound() + b.diameter_bound() + 2.0 * a_to_b.translation.abs().max_element());
    let ab = Pair {
        p: a,
        q: b,
        p_to_q: a_to_b,
        q_to_p: &b_to_a,
        contact,
    };
    let ba = Pair {
        p: b,
        q: a,
        p_to_q: &b_to_a,
        q_to_p: a_to_b,
        contact,
    };
    let (mut fa, mut fb) = (cache.feature_a, cache.feature_b);
    if !fa.is_valid_for(a) || !fb.is_valid_for(b) {
        (fa, fb) = (Feature::Vertex(0), Feature::Vertex(0));
    }
    // With temporal coherence the cached pair is usually still closest: certify it cheaply,
    // and walk only when that fails.
    let confirmed = match (fa, fb) {
        (Feature::Edge(e), Feature::Edge(g)) => confirm_edge_edge(&ab, e, g),
        (Feature::Vertex(v), Feature::Face(f)) => confirm_vertex_face(&ab, v, f),
        (Feature::Face(f), Feature::Vertex(v)) => confirm_vertex_face(&ba, v, f).map(Step::swapped),
        (Feature::Vertex(v), Feature::Edge(e)) => confirm_vertex_edge(&ab, v, e),
        (Feature::Edge(e), Feature::Vertex(v)) => confirm_vertex_edge(&ba, v, e).map(Step::swapped),
        // The full test, kept when it finds penetration (an edge through a face).
        (Feature::Edge(e), Feature::Face(f)) => penetrating(edge_face(&ab, e, f)),
        (Feature::Face(f), Feature::Edge(e)) => penetrating(edge_face(&ba, e, f)),
        _ => None,
    };
    match confirmed {
        Some(step) => finish(step, fa, fb, 0, pose_a, pose_b, cache),
        None => walk(&ab, &ba, fa, fb, pose_a, pose_b, cache),
    }
}

/// [`Pose::transform_point`], inlined.
#[inline(always)]
fn world(pose: &Pose, body: DVec3) -> DVec3 {
    pose.rotation * body + pose.position
}

/// The step if it is `Penetrating`.
#[inline(always)]
fn penetrating(step: Step) -> Option<Step> {
    matches!(step, Step::Penetrating).then_some(Step::Penetrating)
}

/// The walk from the pair `(fa, fb)`; the exhaustive search when it cycles or runs too
/// long.
#[inline(never)]
fn walk(
    ab: &Pair,
    ba: &Pair,
    mut fa: Feature,
    mut fb: Feature,
    pose_a: &Pose,
    pose_b: &Pose,
    cache: &mut FeatureCache,
) -> Proximity {
    let (a, b) = (ab.p, ab.q);
    let (va, ea, faces_a) = a.counts();
    let (vb, eb, faces_b) = b.counts();
    let step_limit = 4 * (va + ea + faces_a + vb + eb + faces_b) + 64;
    let mut recent = [(Feature::Vertex(u32::MAX), Feature::Vertex(u32::MAX)); 8];
    for steps in 0..step_limit {
        let step = match (fa, fb) {
            (Feature::Vertex(v), Feature::Vertex(w)) => vertex_vertex(ab, v, w),
            (Feature::Vertex(v), Feature::Edge(e)) => vertex_edge(ab, v, e),
            (Feature::Edge(e), Feature::Vertex(v)) => vertex_edge(ba, v, e).swapped(),
            (Feature::Vertex(v), Feature::Face(f)) => vertex_face(ab, v, f),
            (Feature::Face(f), Feature::Vertex(v)) => vertex_face(ba, v, f).swapped(),
            (Feature::Edge(e), Feature::Edge(g)) => edge_edge(ab, e, g),
            (Feature::Edge(e), Feature::Face(f)) => edge_face(ab, e, f),
            (Feature::Face(f), Feature::Edge(e)) => edge_face(ba, e, f).swapped(),
            // Not a state of the walk: continue from an edge of a's face.
            (Feature::Face(f), Feature::Face(_)) => {
                let h = a.faces()[f as usize].first_half_edge as usize;
                Step::Move(Feature::Edge(a.half_edges()[h].edge), fb)
            }
        };
        if let Step::Move(na, nb) = step {
            (fa, fb) = (na, nb);
            if recent.contains(&(fa, fb)) {
                break;
            }
            recent[steps % recent.len()] = (fa, fb);
            continue;
        }
        return finish(step, fa, fb, steps, pose_a, pose_b, cache);
    }
    EXHAUSTIVE_FALLBACKS.fetch_add(1, Ordering::Relaxed);
    let (proximity, found) = closest_features_exhaustive(a, pose_a, b, pose_b);
    *cache = FeatureCache {
        last_steps: step_limit as u32,
        fallbacks: cache.fallbacks.saturating_add(1),
        normal_hint: cache.normal_hint,
        clearance: proximity.distance().unwrap_or(0.0),
        ..found
    };
    proximity
}

/// The answer for a final step (not a move) at the pair `(fa, fb)` after `steps` moves, and
/// the cache updated to it.
#[inline(always)]
fn finish(
    step: Step,
    fa: Feature,
    fb: Feature,
    steps: usize,
    pose_a: &Pose,
    pose_b: &Pose,
    cache: &mut FeatureCache,
) -> Proximity {
    let clearance = match step {
        Step::Separated { distance, .. } | Step::SeparatedSwapped { distance, .. } => distance,
        Step::Penetrating | Step::Move(..) => 0.0,
    };
    *cache = FeatureCache {
        feature_a: fa,
        feature_b: fb,
        last_steps: steps as u32,
        fallbacks: cache.fallbacks,
        normal_hint: cache.normal_hint,
        clearance,
    };
    match step {
        // Points in b's frame, a's first.
        Step::Separated {
            on_p,
            on_q,
            distance,
        } => Proximity::Separated {
            distance,
            point_a: world(pose_b, on_p),
            point_b: world(pose_b, on_q),
        },
        // Points in a's frame, b's first.
        Step::SeparatedSwapped {
            on_p,
            on_q,
            distance,
        } => Proximity::Separated {
            distance,
            point_a: world(pose_a, on_q),
            point_b: world(pose_a, on_p),
        },
        Step::Penetrating | Step::Move(..) => Proximity::Penetrating {
            feature_a: fa,
            feature_b: fb,
        },
    }
}

/// Two polyhedra seen from the first (`p`): the transforms between their frames. The
/// states compute closest points in q's frame.
struct Pair<'a> {
    p: &'a ConvexPolyhedron,
    q: &'a ConvexPolyhedron,
    p_to_q: &'a Iso,
    q_to_p: &'a Iso,
    /// Distance at or below which the grains count as touching.
    contact: f64,
}

/// The outcome of testing one feature pair `(feature of p, feature of q)`.
enum Step {
    /// Continue from this pair.
    Move(Feature, Feature),
    /// The pair is closest; the points on p and q in q's frame, and their distance.
    Separated {
        on_p: DVec3,
        on_q: DVec3,
        distance: f64,
    },
    /// As `Separated`, for a pair evaluated with the roles of the grains exchanged.
    SeparatedSwapped {
        on_p: DVec3,
        on_q: DVec3,
        distance: f64,
    },
    /// The grains penetrate; the pair is the witness.
    Penetrating,
}

impl Step {
    /// The same outcome with the roles of p and q exchanged.
    #[inline]
    fn swapped(self) -> Step {
        match self {
            Step::Move(x, y) => Step::Move(y, x),
            Step::Separated {
                on_p,
                on_q,
                distance,
            } => Step::SeparatedSwapped {
                on_p,
                on_q,
                distance,
            },
            Step::SeparatedSwapped {
                on_p,
                on_q,
                distance,
            } => Step::Separated {
                on_p,
                on_q,
                distance,
            },
            Step::Penetrating => Step::Penetrating,
        }
    }
}

impl Pair<'_> {
    /// Closest points given in q's frame as an outcome; touching points count as
    /// penetration.
    #[inline]
    fn separated(&self, on_p: DVec3, on_q: DVec3) -> Step {
        let distance = on_p.distance(on_q);
        if distance <= self.contact {
            return Step::Penetrating;
        }
        Step::Separated {
            on_p,
            on_q,
            distance,
        }
    }
}

/// Certificates of the common closing states.
///
/// With temporal coherence most queries end where they start, and the full state test then
/// spends most of its time proving that no neighbour is closer (clipping the features against
/// each other's regions). A cheaper sufficient condition is the characterisation the walk
/// converges to: the closest points of the two features lie in each other's Voronoi regions
/// (Lin–Canny, thesis eq. 4.16). Each certificate below computes exactly the points the full
/// state would report and accepts only when they lie inside the regions by more than the
/// round-off of the transforms (`Pair::contact`): the pair is then closest, and the full
/// test returns the same points (it could differ only where its derivative signs are
/// round-off, as for parallel features, and then by moving to a pair at the same distance).
/// Anything closer to a boundary, touching or penetrating is left to the full test.
#[inline(always)]
fn confirm_edge_edge(pair: &Pair, e: u32, g: u32) -> Option<Step> {
    let (re, rg) = (
        pair.p.edge_record(e as usize),
        pair.q.edge_record(g as usize),
    );
    let (t_in_q, h_in_q) = (pair.p_to_q.point(re.tail), pair.p_to_q.point(re.head));
    let (qt, qh) = (rg.tail, rg.head);
    let (s, u) = closest_segment_segment(t_in_q, h_in_q, qt, qh);
    let (x, y) = (t_in_q.lerp(h_in_q, s), qt.lerp(qh, u));
    let margin = -pair.contact;
    if !inside_edge_region(rg, x, margin) || !inside_edge_region(re, pair.q_to_p.point(y), margin) {
        return None;
    }
    match pair.separated(x, y) {
        step @ Step::Separated { .. } => Some(step),
        _ => None,
    }
}

/// Whether `x` lies in the region of edge `r` with every plane's violation below `limit`.
#[inline(always)]
fn inside_edge_region(r: &EdgeRecord, x: DVec3, limit: f64) -> bool {
    let planes = edge_planes(r);
    (planes[0].violation(x) < limit)
        & (planes[1].violation(x) < limit)
        & (planes[2].violation(x) < limit)
        & (planes[3].violation(x) < limit)
}

#[inline(always)]
fn confirm_vertex_face(pair: &Pair, v: u32, f: u32) -> Option<Step> {
    let (p, q) = (pair.p, pair.q);
    let pv = p.vertices()[v as usize];
    let x = pair.p_to_q.point(pv);
    let face = q.faces()[f as usize];
    // The prism test exactly as in the full state.
    for plane in face_prism(q, f) {
        if plane.violation(x) > 0.0 {
            return None;
        }
    }
    let d = face.signed_distance(x);
    if d <= pair.contact {
        return None;
    }
    // Every edge at v rises from the face plane by more than round-off, so that no other
    // end is nearer the plane (the full state's comparison of transformed distances).
    let up = pair.q_to_p.vector(face.normal);
    for s in p.vertex_star(v as usize) {
        if up.dot(s.end - pv) <= pair.contact {
            return None;
        }
    }
    match pair.separated(x, x - face.normal * d) {
        step @ Step::Separated { .. } => Some(step),
        _ => None,
    }
}

#[inline(always)]
fn confirm_vertex_edge(pair: &Pair, v: u32, e: u32) -> Option<Step> {
    let (p, q) = (pair.p, pair.q);
    let pv = p.vertices()[v as usize];
    let v_in_q = pair.p_to_q.point(pv);
    let r = q.edge_record(e as usize);
    let margin = -pair.contact;
    if !inside_edge_region(r, v_in_q, margin) {
        return None;
    }
    let (tail, head) = (r.tail, r.head);
    let along = (v_in_q - tail).dot(head - tail) / (head - tail).length_squared();
    let on_edge = tail + (head - tail) * along.clamp(0.0, 1.0);
    let on_edge_in_p = pair.q_to_p.point(on_edge);
    for s in p.vertex_star(v as usize) {
        if s.direction.dot(on_edge_in_p - pv) >= margin {
            return None;
        }
    }
    match pair.separated(v_in_q, on_edge) {
        step @ Step::Separated { .. } => Some(step),
        _ => None,
    }
}

/// A Voronoi-region plane: a point `x` is outside the region when
/// `normal · (x − point) > 0`, and then closer to `neighbour`'s region.
#[derive(Clone, Copy)]
struct RegionPlane {
    normal: DVec3,
    point: DVec3,
    neighbour: Feature,
}

impl RegionPlane {
    #[inline]
    fn violation(&self, x: DVec3) -> f64 {
        self.normal.dot(x - self.point)
    }
}

/// The planes of an edge's region are numbered tail, head, left face, right face (see
/// [`EdgeRecord`]); each is the negation of the plane the neighbour uses for the same
/// boundary.
const TAIL: u8 = 0;
const HEAD: u8 = 1;
const LEFT: u8 = 2;
const RIGHT: u8 = 3;

/// The neighbour of an edge beyond its region plane `k`.
#[inline]
fn edge_neighbour(r: &EdgeRecord, k: u8) -> Feature {
    match k {
        TAIL => Feature::Vertex(r.tail_id),
        HEAD => Feature::Vertex(r.head_id),
        LEFT => Feature::Face(r.left_face),
        _ => Feature::Face(r.right_face),
    }
}

/// The four planes of an edge's region, in the order tail, head, left face, right face.
#[inline]
fn edge_planes(r: &EdgeRecord) -> [RegionPlane; 4] {
    [
        RegionPlane {
            normal: -r.direction,
            point: r.tail,
            neighbour: Feature::Vertex(r.tail_id),
        },
        RegionPlane {
            normal: r.direction,
            point: r.head,
            neighbour: Feature::Vertex(r.head_id),
        },
        RegionPlane {
            normal: r.left_side,
            point: r.tail,
            neighbour: Feature::Face(r.left_face),
        },
        RegionPlane {
            normal: r.right_side,
            point: r.head,
            neighbour: Feature::Face(r.right_face),
        },
    ]
}

/// The planes of vertex `v`'s cone (at position `pv`), one per edge leaving it.
#[inline]
fn vertex_cone(poly: &ConvexPolyhedron, v: u32, pv: DVec3) -> impl Iterator<Item = RegionPlane> {
    poly.vertex_star(v as usize)
        .iter()
        .map(move |s| RegionPlane {
            normal: s.direction,
            point: pv,
            neighbour: Feature::Edge(s.edge),
        })
}

/// The side planes of face `f`'s prism.
#[inline]
fn face_prism(poly: &ConvexPolyhedron, f: u32) -> impl Iterator<Item = RegionPlane> {
    poly.face_side_planes(f as usize)
        .iter()
        .map(|s| RegionPlane {
            normal: s.normal,
            point: s.point,
            neighbour: Feature::Edge(s.edge),
        })
}

/// The result of clipping a segment `t + λ (h − t)`, λ ∈ [0, 1], against a region.
enum Clip {
    /// Both ends are outside one plane: the segment lies beyond that neighbour.
    Simple(Feature),
    /// The segment is clipped to `[lo, hi]` (empty when `lo > hi`: excluded by two planes);
    /// the neighbours beyond the clipped ends, `None` where the segment's own end remains.
    Clipped {
        lo: f64,
        hi: f64,
        below: Option<Feature>,
        above: Option<Feature>,
        excluded: bool,
    },
}

#[inline]
fn clip_segment(t: DVec3, h: DVec3, planes: impl Iterator<Item = RegionPlane>) -> Clip {
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    let (mut below, mut above) = (None, None);
    for plane in planes {
        let (vt, vh) = (plane.violation(t), plane.violation(h));
        if vt <= 0.0 {
            if vh <= 0.0 {
                continue;
            }
            let lambda = vt / (vt - vh);
            if lambda < hi {
                hi = lambda;
                above = Some(plane.neighbour);
                if hi < lo {
                    return Clip::Clipped {
                        lo,
                        hi,
                        below,
                        above,
                        excluded: true,
                    };
                }
            }
        } else {
            if vh > 0.0 {
                return Clip::Simple(plane.neighbour);
            }
            let lambda = vt / (vt - vh);
            if lambda > lo {
                lo = lambda;
                below = Some(plane.neighbour);
                if lo > hi {
                    return Clip::Clipped {
                        lo,
                        hi,
                        below,
                        above,
                        excluded: true,
                    };
                }
            }
        }
    }
    Clip::Clipped {
        lo,
        hi,
        below,
        above,
        excluded: false,
    }
}

#[inline(always)]
fn vertex_vertex(pair: &Pair, v: u32, w: u32) -> Step {
    let (p, q) = (pair.p, pair.q);
    let pv = p.vertices()[v as usize];
    let qw = q.vertices()[w as usize];
    let w_in_p = pair.q_to_p.point(qw);
    for plane in vertex_cone(p, v, pv) {
        if plane.violation(w_in_p) > 0.0 {
            return Step::Move(plane.neighbour, Feature::Vertex(w));
        }
    }
    let v_in_q = pair.p_to_q.point(pv);
    for plane in vertex_cone(q, w, qw) {
        if plane.violation(v_in_q) > 0.0 {
            return Step::Move(Feature::Vertex(v), plane.neighbour);
        }
    }
    if v_in_q == qw {
        return Step::Penetrating;
    }
    pair.separated(v_in_q, qw)
}

#[inline(always)]
fn vertex_edge(pair: &Pair, v: u32, e: u32) -> Step {
    let (p, q) = (pair.p, pair.q);
    let pv = p.vertices()[v as usize];
    let v_in_q = pair.p_to_q.point(pv);
    let r = q.edge_record(e as usize);
    for plane in edge_planes(r) {
        if plane.violation(v_in_q) > 0.0 {
            return Step::Move(Feature::Vertex(v), plane.neighbour);
        }
    }
    let (tail, head) = (r.tail, r.head);
    let (t, h) = (pair.q_to_p.point(tail), pair.q_to_p.point(head));
    let (lo, hi, below, above) = match clip_segment(t, h, vertex_cone(p, v, pv)) {
        Clip::Simple(n) => return Step::Move(n, Feature::Edge(e)),
        Clip::Clipped {
            lo,
            hi,
            below,
            above,
            ..
        } => (lo, hi, below, above),
    };
    let seg = h - t;
    if let Some(n) = below {
        let offset = t + seg * lo - pv;
        if offset == DVec3::ZERO {
            return Step::Penetrating;
        }
        if seg.dot(offset) > 0.0 {
            return Step::Move(n, Feature::Edge(e));
        }
    }
    if let Some(n) = above {
        let offset = t + seg * hi - pv;
        if offset == DVec3::ZERO {
            return Step::Penetrating;
        }
        if seg.dot(offset) < 0.0 {
            return Step::Move(n, Feature::Edge(e));
        }
    }
    let along = (v_in_q - tail).dot(head - tail) / (head - tail).length_squared();
    let on_edge = tail + (head - tail) * along.clamp(0.0, 1.0);
    if on_edge == v_in_q {
        return Step::Penetrating;
    }
    pair.separated(v_in_q, on_edge)
}

#[inline(always)]
fn vertex_face(pair: &Pair, v: u32, f: u32) -> Step {
    let (p, q) = (pair.p, pair.q);
    let pv = p.vertices()[v as usize];
    let x = pair.p_to_q.point(pv);
    let face = q.faces()[f as usize];
    // The most violated side plane, which keeps the walk away from poor edge choices.
    let mut worst: Option<(f64, Feature)> = None;
    for plane in face_prism(q, f) {
        let violation = plane.violation(x);
        if violation > 0.0 && worst.is_none_or(|(w, _)| violation > w) {
            worst = Some((violation, plane.neighbour));
        }
    }
    if let Some((_, n)) = worst {
        return Step::Move(Feature::Vertex(v), n);
    }
    let d = face.signed_distance(x);
    if d.abs() <= pair.contact {
        return Step::Penetrating;
    }
    // An edge at v whose other end is nearer the face plane (or beyond it) is closer. The
    // comparison uses the same transformed distances as the edge–face state, so that the
    // two states cannot disagree about which way is down.
    for s in p.vertex_star(v as usize) {
        let d_other = face.signed_distance(pair.p_to_q.point(s.end));
        if (d > 0.0 && d_other < d) || (d < 0.0 && d_other > d) {
            return Step::Move(Feature::Edge(s.edge), Feature::Face(f));
        }
    }
    if d > 0.0 {
        return pair.separated(x, x - face.normal * d);
    }
    // Below the face and no neighbour rises towards it: a local minimum. The face the
    // vertex is farthest above is a better start; if it is below every face it is inside.
    let mut best = (d, f);
    for (g, other) in q.faces().iter().enumerate() {
        let dg = other.signed_distance(x);
        if dg > best.0 {
            best = (dg, g as u32);
        }
    }
    if best.0 > 0.0 {
        Step::Move(Feature::Vertex(v), Feature::Face(best.1))
    } else {
        Step::Penetrating
    }
}

/// Sign of the derivative, along the segment `t h`, of the distance from the segment point
/// at `lambda` to the neighbour `k` of the edge `r` (a vertex or a face). `None` when the
/// point lies on the neighbour: the grains touch there.
#[inline]
fn distance_derivative(
    owner: &ConvexPolyhedron,
    r: &EdgeRecord,
    k: u8,
    t: DVec3,
    h: DVec3,
    lambda: f64,
) -> Option<f64> {
    let seg = h - t;
    match k {
        TAIL | HEAD => {
            let vertex = if k == TAIL { r.tail } else { r.head };
            let offset = t + seg * lambda - vertex;
            (offset != DVec3::ZERO).then(|| seg.dot(offset))
        }
        _ => {
            let (dt, dh) = face_distances(owner, r, k, t, h);
            let d = dt + lambda * (dh - dt);
            (d != 0.0).then_some(if d > 0.0 { dh - dt } else { dt - dh })
        }
    }
}

/// Signed distances of `t` and `h` from the plane of the face beyond plane `k` (`LEFT` or
/// `RIGHT`) of edge `r`.
#[inline]
fn face_distances(
    owner: &ConvexPolyhedron,
    r: &EdgeRecord,
    k: u8,
    t: DVec3,
    h: DVec3,
) -> (f64, f64) {
    let face = owner.faces()[if k == LEFT { r.left_face } else { r.right_face } as usize];
    (face.signed_distance(t), face.signed_distance(h))
}

/// One half of the edge–edge test: the edge `s` (ends `t`, `h`, given in the owner's frame)
/// against the region of the owner's edge `r`. `Some(step)` when the pair must change or
/// the grains touch; `None` when `s` passes the region test. Moves are returned as the new
/// feature of the owner.
#[inline(always)]
fn edge_edge_half(
    owner: &ConvexPolyhedron,
    r: &EdgeRecord,
    t: DVec3,
    h: DVec3,
) -> Option<Result<Feature, ()>> {
    let seg = h - t;
    let at = |lambda: f64| t + seg * lambda;
    let vertex_at = |k: u8| if k == TAIL { r.tail } else { r.head };
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    let (mut below, mut above): (Option<u8>, Option<u8>) = (None, None);
    // Vertex planes: parallel and opposite, so no ordering of λ is needed between them.
    let minus_u = -r.direction;
    for (normal, point, k) in [(minus_u, r.tail, TAIL), (r.direction, r.head, HEAD)] {
        let (vt, vh) = (normal.dot(t - point), normal.dot(h - point));
        if vt > 0.0 && vh > 0.0 {
            return Some(Ok(edge_neighbour(r, k)));
        }
        if vt > 0.0 {
            lo = vt / (vt - vh);
            below = Some(k);
        } else if vh > 0.0 {
            hi = vt / (vt - vh);
            above = Some(k);
        }
    }
    let (vertex_lo, vertex_below, vertex_hi, vertex_above) = (lo, below, hi, above);
    let mut excluded = false;
    for (normal, point, k) in [(r.left_side, r.tail, LEFT), (r.right_side, r.head, RIGHT)] {
        let (vt, vh) = (normal.dot(t - point), normal.dot(h - point));
        if vt > 0.0 && vh > 0.0 {
            // Beyond a face plane entirely: move to the face, unless a vertex clipped
            // before is approached.
            if let Some(n) = vertex_below {
                let offset = at(vertex_lo) - vertex_at(n);
                if offset == DVec3::ZERO {
                    return Some(Err(()));
                }
                if offset.dot(seg) > 0.0 {
                    return Some(Ok(edge_neighbour(r, n)));
                }
            } else if let Some(n) = vertex_above {
                let offset = at(vertex_hi) - vertex_at(n);
                if offset == DVec3::ZERO {
                    return Some(Err(()));
                }
                if offset.dot(seg) < 0.0 {
                    return Some(Ok(edge_neighbour(r, n)));
                }
            }
            return Some(Ok(edge_neighbour(r, k)));
        }
        if vt > 0.0 {
            let lambda = vt / (vt - vh);
            if lambda > lo {
                lo = lambda;
                below = Some(k);
                if lo > hi {
                    excluded = true;
                    break;
                }
            }
        } else if vh > 0.0 {
            let lambda = vt / (vt - vh);
            if lambda < hi {
                hi = lambda;
                above = Some(k);
                if hi < lo {
                    excluded = true;
                    break;
                }
            }
        }
    }
    if excluded {
        // Excluded by two planes (both ends clipped): choose the side by the derivative at
        // a clipping vertex, else by the distance to the lower clipping face.
        let (Some(nl), Some(nu)) = (below, above) else {
            return None;
        };
        if nl <= HEAD {
            let offset = at(lo) - vertex_at(nl);
            if offset == DVec3::ZERO {
                return Some(Err(()));
            }
            return Some(Ok(edge_neighbour(
                r,
                if offset.dot(seg) >= 0.0 { nl } else { nu },
            )));
        }
        if nu <= HEAD {
            let offset = at(hi) - vertex_at(nu);
            if offset == DVec3::ZERO {
                return Some(Err(()));
            }
            return Some(Ok(edge_neighbour(
                r,
                if offset.dot(seg) <= 0.0 { nu } else { nl },
            )));
        }
        let (dt, dh) = face_distances(owner, r, nl, t, h);
        let d = dt + lo * (dh - dt);
        if d == 0.0 {
            return Some(Err(()));
        }
        let towards_lower = if d > 0.0 { dt < dh } else { dt > dh };
        return Some(Ok(edge_neighbour(r, if towards_lower { nl } else { nu })));
    }
    // Move to the neighbour beyond a clipped end if the distance decreases towards it
    // (Mirtich's derivative test).
    if let Some(n) = below {
        match distance_derivative(owner, r, n, t, h, lo) {
            None => return Some(Err(())),
            Some(d) if d > 0.0 => return Some(Ok(edge_neighbour(r, n))),
            Some(_) => {}
        }
    }
    if let Some(n) = above {
        match distance_derivative(owner, r, n, t, h, hi) {
            None => return Some(Err(())),
            Some(d) if d < 0.0 => return Some(Ok(edge_neighbour(r, n))),
            Some(_) => {}
        }
    }
    None
}

#[inline(always)]
fn edge_edge(pair: &Pair, e: u32, g: u32) -> Step {
    let (p, q) = (pair.p, pair.q);
    let (re, rg) = (p.edge_record(e as usize), q.edge_record(g as usize));
    let (t_in_q, h_in_q) = (pair.p_to_q.point(re.tail), pair.p_to_q.point(re.head));
    match edge_edge_half(q, rg, t_in_q, h_in_q) {
        Some(Ok(n)) => return Step::Move(Feature::Edge(e), n),
        Some(Err(())) => return Step::Penetrating,
        None => {}
    }
    let (qt, qh) = (rg.tail, rg.head);
    let (t_in_p, h_in_p) = (pair.q_to_p.point(qt), pair.q_to_p.point(qh));
    match edge_edge_half(p, re, t_in_p, h_in_p) {
        Some(Ok(n)) => return Step::Move(n, Feature::Edge(g)),
        Some(Err(())) => return Step::Penetrating,
        None => {}
    }
    let (s, u) = closest_segment_segment(t_in_q, h_in_q, qt, qh);
    let (x, y) = (t_in_q.lerp(h_in_q, s), qt.lerp(qh, u));
    if x == y {
        return Step::Penetrating;
    }
    pair.separated(x, y)
}

#[inline(always)]
fn edge_face(pair: &Pair, e: u32, f: u32) -> Step {
    let (p, q) = (pair.p, pair.q);
    let re = p.edge_record(e as usize);
    let (t, h) = (pair.p_to_q.point(re.tail), pair.p_to_q.point(re.head));
    let face = q.faces()[f as usize];
    let (lo, hi, below, above) = match clip_segment(t, h, face_prism(q, f)) {
        Clip::Clipped {
            lo,
            hi,
            below,
            above,
            excluded: false,
        } => (lo, hi, below, above),
        // The edge passes beside the face: the closest part of the face is on its boundary.
        _ => return Step::Move(Feature::Edge(e), closest_boundary_feature(q, f, t, h)),
    };
    let (dt, dh) = (face.signed_distance(t), face.signed_distance(h));
    let d_lo = if below.is_some() {
        dt + lo * (dh - dt)
    } else {
        dt
    };
    let d_hi = if above.is_some() {
        dt + hi * (dh - dt)
    } else {
        dh
    };
    if (d_lo <= 0.0 && d_hi >= 0.0) || (d_lo >= 0.0 && d_hi <= 0.0) {
        return Step::Penetrating;
    }
    let towards_lower = if d_lo > 0.0 { dt <= dh } else { dt >= dh };
    if towards_lower {
        match below {
            Some(n) => Step::Move(Feature::Edge(e), n),
            None => Step::Move(Feature::Vertex(re.tail_id), Feature::Face(f)),
        }
    } else {
        match above {
            Some(n) => Step::Move(Feature::Edge(e), n),
            None => Step::Move(Feature::Vertex(re.head_id), Feature::Face(f)),
        }
    }
}

/// The vertex or edge of face `f` closest to segment `t h` (both in `poly`'s frame): an
/// exhaustive search over the face's boundary, O(size of the face).
fn closest_boundary_feature(poly: &ConvexPolyhedron, f: u32, t: DVec3, h: DVec3) -> Feature {
    let face = poly.faces()[f as usize];
    let mut best = (f64::INFINITY, Feature::Face(f));
    for he in face.half_edges() {
        let edge = poly.half_edges()[he];
        let a = poly.vertices()[edge.origin as usize];
        let b = poly.vertices()[poly.half_edge_end(he) as usize];
        let (s, u) = closest_segment_segment(t, h, a, b);
        let d2 = t.lerp(h, s).distance_squared(a.lerp(b, u));
        if d2 < best.0 {
            let feature = if u <= 0.0 {
                Feature::Vertex(edge.origin)
            } else if u >= 1.0 {
                Feature::Vertex(poly.half_edge_end(he))
            } else {
                Feature::Edge(edge.edge)
            };
            best = (d2, feature);
        }
    }
    best.1
}
