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
//! The state logic follows Mirtich's own implementation (V-Clip, MERL 1997) with the
//! corrected penetration test of the edge–face state.

use std::sync::atomic::{AtomicU64, Ordering};

use glam::DVec3;

use crate::brute::closest_features_exhaustive;
use crate::feature::{Feature, FeatureCache};
use crate::iso::Iso;
use crate::polyhedron::ConvexPolyhedron;
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
        q_to_p: b_to_a,
        pose_q: pose_b,
        contact,
    };
    let ba = Pair {
        p: b,
        q: a,
        p_to_q: b_to_a,
        q_to_p: a_to_b,
        pose_q: pose_a,
        contact,
    };
    let (mut fa, mut fb) = (cache.feature_a, cache.feature_b);
    if !fa.is_valid_for(a) || !fb.is_valid_for(b) {
        (fa, fb) = (Feature::Vertex(0), Feature::Vertex(0));
    }
    let (va, ea, faces_a) = a.counts();
    let (vb, eb, faces_b) = b.counts();
    let step_limit = 4 * (va + ea + faces_a + vb + eb + faces_b) + 64;
    let mut recent = [(Feature::Vertex(u32::MAX), Feature::Vertex(u32::MAX)); 8];

    for steps in 0..step_limit {
        let step = match (fa, fb) {
            (Feature::Vertex(v), Feature::Vertex(w)) => vertex_vertex(&ab, v, w),
            (Feature::Vertex(v), Feature::Edge(e)) => vertex_edge(&ab, v, e),
            (Feature::Edge(e), Feature::Vertex(v)) => vertex_edge(&ba, v, e).swapped(),
            (Feature::Vertex(v), Feature::Face(f)) => vertex_face(&ab, v, f),
            (Feature::Face(f), Feature::Vertex(v)) => vertex_face(&ba, v, f).swapped(),
            (Feature::Edge(e), Feature::Edge(g)) => edge_edge(&ab, e, g),
            (Feature::Edge(e), Feature::Face(f)) => edge_face(&ab, e, f),
            (Feature::Face(f), Feature::Edge(e)) => edge_face(&ba, e, f).swapped(),
            // Not a state of the walk: continue from an edge of a's face.
            (Feature::Face(f), Feature::Face(_)) => {
                let h = a.faces()[f as usize].first_half_edge as usize;
                Step::Move(Feature::Edge(a.half_edges()[h].edge), fb)
            }
        };
        match step {
            Step::Move(na, nb) => {
                (fa, fb) = (na, nb);
                if recent.contains(&(fa, fb)) {
                    break;
                }
                recent[steps % recent.len()] = (fa, fb);
            }
            Step::Separated { point_p, point_q } => {
                *cache = FeatureCache {
                    feature_a: fa,
                    feature_b: fb,
                    last_steps: steps as u32,
                    fallbacks: cache.fallbacks,
                };
                return Proximity::Separated {
                    distance: point_p.distance(point_q),
                    point_a: point_p,
                    point_b: point_q,
                };
            }
            Step::SeparatedSwapped { point_p, point_q } => {
                *cache = FeatureCache {
                    feature_a: fa,
                    feature_b: fb,
                    last_steps: steps as u32,
                    fallbacks: cache.fallbacks,
                };
                return Proximity::Separated {
                    distance: point_p.distance(point_q),
                    point_a: point_q,
                    point_b: point_p,
                };
            }
            Step::Penetrating => {
                *cache = FeatureCache {
                    feature_a: fa,
                    feature_b: fb,
                    last_steps: steps as u32,
                    fallbacks: cache.fallbacks,
                };
                return Proximity::Penetrating {
                    feature_a: fa,
                    feature_b: fb,
                };
            }
        }
    }
    EXHAUSTIVE_FALLBACKS.fetch_add(1, Ordering::Relaxed);
    let (proximity, found) = closest_features_exhaustive(a, pose_a, b, pose_b);
    *cache = FeatureCache {
        last_steps: step_limit as u32,
        fallbacks: cache.fallbacks.saturating_add(1),
        ..found
    };
    proximity
}

/// Two polyhedra seen from the first (`p`): the transforms between their frames and the
/// pose of the second, whose frame the states compute closest points in.
struct Pair<'a> {
    p: &'a ConvexPolyhedron,
    q: &'a ConvexPolyhedron,
    p_to_q: Iso,
    q_to_p: Iso,
    pose_q: &'a Pose,
    /// Distance at or below which the grains count as touching.
    contact: f64,
}

/// The outcome of testing one feature pair `(feature of p, feature of q)`.
enum Step {
    /// Continue from this pair.
    Move(Feature, Feature),
    /// The pair is closest; world-frame points on p and q.
    Separated { point_p: DVec3, point_q: DVec3 },
    /// As `Separated`, for a pair evaluated with the roles of the grains exchanged.
    SeparatedSwapped { point_p: DVec3, point_q: DVec3 },
    /// The grains penetrate; the pair is the witness.
    Penetrating,
}

impl Step {
    /// The same outcome with the roles of p and q exchanged.
    fn swapped(self) -> Step {
        match self {
            Step::Move(x, y) => Step::Move(y, x),
            Step::Separated { point_p, point_q } => Step::SeparatedSwapped { point_p, point_q },
            Step::SeparatedSwapped { point_p, point_q } => Step::Separated { point_p, point_q },
            Step::Penetrating => Step::Penetrating,
        }
    }
}

impl Pair<'_> {
    /// Closest points given in q's frame, as a world-frame outcome; touching points count
    /// as penetration.
    fn separated(&self, on_p: DVec3, on_q: DVec3) -> Step {
        if on_p.distance(on_q) <= self.contact {
            return Step::Penetrating;
        }
        Step::Separated {
            point_p: self.pose_q.transform_point(on_p),
            point_q: self.pose_q.transform_point(on_q),
        }
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

/// Tail, head and canonical half-edge of an edge.
#[inline]
fn edge_ends(poly: &ConvexPolyhedron, e: u32) -> (DVec3, DVec3, usize) {
    let h = poly.edge_half_edge(e as usize) as usize;
    let [t, hd] = poly.edges()[e as usize];
    (poly.vertices()[t as usize], poly.vertices()[hd as usize], h)
}

/// The four planes of an edge's region, vertex planes first: tail, head, left face, right
/// face. Each is the negation of the plane the neighbour uses for the same boundary.
#[inline]
fn edge_planes(poly: &ConvexPolyhedron, e: u32) -> [RegionPlane; 4] {
    let (tail, head, h) = edge_ends(poly, e);
    let [t, hd] = poly.edges()[e as usize];
    let he = poly.half_edges()[h];
    let twin = he.twin as usize;
    let u = poly.half_edge_direction(h);
    [
        RegionPlane {
            normal: -u,
            point: tail,
            neighbour: Feature::Vertex(t),
        },
        RegionPlane {
            normal: u,
            point: head,
            neighbour: Feature::Vertex(hd),
        },
        RegionPlane {
            normal: -poly.half_edge_side(h),
            point: tail,
            neighbour: Feature::Face(he.face),
        },
        RegionPlane {
            normal: -poly.half_edge_side(twin),
            point: head,
            neighbour: Feature::Face(poly.half_edges()[twin].face),
        },
    ]
}

/// The plane of vertex `v`'s cone towards the edge of outgoing half-edge `h`.
#[inline]
fn vertex_plane(poly: &ConvexPolyhedron, v: DVec3, h: u32) -> RegionPlane {
    RegionPlane {
        normal: poly.half_edge_direction(h as usize),
        point: v,
        neighbour: Feature::Edge(poly.half_edges()[h as usize].edge),
    }
}

/// The side plane of a face's prism through half-edge `h`.
#[inline]
fn face_plane(poly: &ConvexPolyhedron, h: usize) -> RegionPlane {
    let he = poly.half_edges()[h];
    RegionPlane {
        normal: poly.half_edge_side(h),
        point: poly.vertices()[he.origin as usize],
        neighbour: Feature::Edge(he.edge),
    }
}

/// Signed distance of `x` from the plane of face `f`.
#[inline]
fn face_distance(poly: &ConvexPolyhedron, f: u32, x: DVec3) -> f64 {
    poly.faces()[f as usize].signed_distance(x)
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

/// Sign of the derivative, along the segment, of the distance from the segment point at
/// `lambda` to `feature` of `poly` (a vertex or a face; all in `poly`'s frame). `None` when
/// the point lies on the feature: the grains touch there.
fn distance_derivative(
    poly: &ConvexPolyhedron,
    feature: Feature,
    t: DVec3,
    h: DVec3,
    lambda: f64,
) -> Option<f64> {
    let seg = h - t;
    match feature {
        Feature::Vertex(v) => {
            let offset = t + seg * lambda - poly.vertices()[v as usize];
            (offset != DVec3::ZERO).then(|| seg.dot(offset))
        }
        Feature::Face(f) => {
            let (dt, dh) = (face_distance(poly, f, t), face_distance(poly, f, h));
            let d = dt + lambda * (dh - dt);
            (d != 0.0).then_some(if d > 0.0 { dh - dt } else { dt - dh })
        }
        Feature::Edge(_) => Some(0.0),
    }
}

/// After a clip, move the region's feature to the neighbour beyond a clipped end if the
/// distance decreases towards it (Mirtich's derivative test).
fn derivative_move(
    poly: &ConvexPolyhedron,
    t: DVec3,
    h: DVec3,
    clip: (f64, f64, Option<Feature>, Option<Feature>),
) -> Option<Option<Feature>> {
    let (lo, hi, below, above) = clip;
    if let Some(n) = below {
        match distance_derivative(poly, n, t, h, lo) {
            None => return None,
            Some(d) if d > 0.0 => return Some(Some(n)),
            Some(_) => {}
        }
    }
    if let Some(n) = above {
        match distance_derivative(poly, n, t, h, hi) {
            None => return None,
            Some(d) if d < 0.0 => return Some(Some(n)),
            Some(_) => {}
        }
    }
    Some(None)
}

fn vertex_vertex(pair: &Pair, v: u32, w: u32) -> Step {
    let (p, q) = (pair.p, pair.q);
    let pv = p.vertices()[v as usize];
    let qw = q.vertices()[w as usize];
    let w_in_p = pair.q_to_p.point(qw);
    for h in p.vertex_half_edges(v as usize) {
        let plane = vertex_plane(p, pv, h);
        if plane.violation(w_in_p) > 0.0 {
            return Step::Move(plane.neighbour, Feature::Vertex(w));
        }
    }
    let v_in_q = pair.p_to_q.point(pv);
    for h in q.vertex_half_edges(w as usize) {
        let plane = vertex_plane(q, qw, h);
        if plane.violation(v_in_q) > 0.0 {
            return Step::Move(Feature::Vertex(v), plane.neighbour);
        }
    }
    if v_in_q == qw {
        return Step::Penetrating;
    }
    pair.separated(v_in_q, qw)
}

fn vertex_edge(pair: &Pair, v: u32, e: u32) -> Step {
    let (p, q) = (pair.p, pair.q);
    let pv = p.vertices()[v as usize];
    let v_in_q = pair.p_to_q.point(pv);
    for plane in edge_planes(q, e) {
        if plane.violation(v_in_q) > 0.0 {
            return Step::Move(Feature::Vertex(v), plane.neighbour);
        }
    }
    let (tail, head, _) = edge_ends(q, e);
    let (t, h) = (pair.q_to_p.point(tail), pair.q_to_p.point(head));
    let cone = p
        .vertex_half_edges(v as usize)
        .map(|he| vertex_plane(p, pv, he));
    let (lo, hi, below, above) = match clip_segment(t, h, cone) {
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

fn vertex_face(pair: &Pair, v: u32, f: u32) -> Step {
    let (p, q) = (pair.p, pair.q);
    let pv = p.vertices()[v as usize];
    let x = pair.p_to_q.point(pv);
    let face = q.faces()[f as usize];
    // The most violated side plane, which keeps the walk away from poor edge choices.
    let mut worst: Option<(f64, Feature)> = None;
    for h in face.half_edges() {
        let plane = face_plane(q, h);
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
    for h in p.vertex_half_edges(v as usize) {
        let other = pair
            .p_to_q
            .point(p.vertices()[p.half_edge_end(h as usize) as usize]);
        let d_other = face.signed_distance(other);
        if (d > 0.0 && d_other < d) || (d < 0.0 && d_other > d) {
            return Step::Move(
                Feature::Edge(p.half_edges()[h as usize].edge),
                Feature::Face(f),
            );
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

/// One half of the edge–edge test: the edge `s` (ends `t`, `h`, given in `owner`'s frame)
/// against the region of edge `e` of `owner`. `Some(step)` when the pair must change or the
/// grains touch; `None` when `s` passes the region test. Moves are returned as the new
/// feature of `owner`.
fn edge_edge_half(
    owner: &ConvexPolyhedron,
    e: u32,
    t: DVec3,
    h: DVec3,
) -> Option<Result<Feature, ()>> {
    let planes = edge_planes(owner, e);
    let seg = h - t;
    let at = |lambda: f64| t + seg * lambda;
    let vertex_at = |n: Feature| match n {
        Feature::Vertex(i) => owner.vertices()[i as usize],
        _ => DVec3::ZERO,
    };
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    let (mut below, mut above): (Option<Feature>, Option<Feature>) = (None, None);
    // Vertex planes: parallel and opposite, so no ordering of λ is needed between them.
    for plane in &planes[..2] {
        let (vt, vh) = (plane.violation(t), plane.violation(h));
        if vt > 0.0 && vh > 0.0 {
            return Some(Ok(plane.neighbour));
        }
        if vt > 0.0 {
            lo = vt / (vt - vh);
            below = Some(plane.neighbour);
        } else if vh > 0.0 {
            hi = vt / (vt - vh);
            above = Some(plane.neighbour);
        }
    }
    let (vertex_lo, vertex_below, vertex_hi, vertex_above) = (lo, below, hi, above);
    let mut excluded = false;
    for plane in &planes[2..] {
        let (vt, vh) = (plane.violation(t), plane.violation(h));
        if vt > 0.0 && vh > 0.0 {
            // Beyond a face plane entirely: move to the face, unless a vertex clipped
            // before is approached.
            if let Some(n) = vertex_below {
                let offset = at(vertex_lo) - vertex_at(n);
                if offset == DVec3::ZERO {
                    return Some(Err(()));
                }
                if offset.dot(seg) > 0.0 {
                    return Some(Ok(n));
                }
            } else if let Some(n) = vertex_above {
                let offset = at(vertex_hi) - vertex_at(n);
                if offset == DVec3::ZERO {
                    return Some(Err(()));
                }
                if offset.dot(seg) < 0.0 {
                    return Some(Ok(n));
                }
            }
            return Some(Ok(plane.neighbour));
        }
        if vt > 0.0 {
            let lambda = vt / (vt - vh);
            if lambda > lo {
                lo = lambda;
                below = Some(plane.neighbour);
                if lo > hi {
                    excluded = true;
                    break;
                }
            }
        } else if vh > 0.0 {
            let lambda = vt / (vt - vh);
            if lambda < hi {
                hi = lambda;
                above = Some(plane.neighbour);
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
        if let Feature::Vertex(i) = nl {
            let offset = at(lo) - owner.vertices()[i as usize];
            if offset == DVec3::ZERO {
                return Some(Err(()));
            }
            return Some(Ok(if offset.dot(seg) >= 0.0 { nl } else { nu }));
        }
        if let Feature::Vertex(i) = nu {
            let offset = at(hi) - owner.vertices()[i as usize];
            if offset == DVec3::ZERO {
                return Some(Err(()));
            }
            return Some(Ok(if offset.dot(seg) <= 0.0 { nu } else { nl }));
        }
        let Feature::Face(f) = nl else {
            return None;
        };
        let (dt, dh) = (face_distance(owner, f, t), face_distance(owner, f, h));
        let d = dt + lo * (dh - dt);
        if d == 0.0 {
            return Some(Err(()));
        }
        let towards_lower = if d > 0.0 { dt < dh } else { dt > dh };
        return Some(Ok(if towards_lower { nl } else { nu }));
    }
    match derivative_move(owner, t, h, (lo, hi, below, above)) {
        None => Some(Err(())),
        Some(Some(n)) => Some(Ok(n)),
        Some(None) => None,
    }
}

fn edge_edge(pair: &Pair, e: u32, g: u32) -> Step {
    let (p, q) = (pair.p, pair.q);
    let (pt, ph, _) = edge_ends(p, e);
    let (t_in_q, h_in_q) = (pair.p_to_q.point(pt), pair.p_to_q.point(ph));
    match edge_edge_half(q, g, t_in_q, h_in_q) {
        Some(Ok(n)) => return Step::Move(Feature::Edge(e), n),
        Some(Err(())) => return Step::Penetrating,
        None => {}
    }
    let (qt, qh, _) = edge_ends(q, g);
    let (t_in_p, h_in_p) = (pair.q_to_p.point(qt), pair.q_to_p.point(qh));
    match edge_edge_half(p, e, t_in_p, h_in_p) {
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

fn edge_face(pair: &Pair, e: u32, f: u32) -> Step {
    let (p, q) = (pair.p, pair.q);
    let (pt, ph, _) = edge_ends(p, e);
    let (t, h) = (pair.p_to_q.point(pt), pair.p_to_q.point(ph));
    let face = q.faces()[f as usize];
    let sides = face.half_edges().map(|he| face_plane(q, he));
    let (lo, hi, below, above) = match clip_segment(t, h, sides) {
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
    let [tail, head] = p.edges()[e as usize];
    let towards_lower = if d_lo > 0.0 { dt <= dh } else { dt >= dh };
    if towards_lower {
        match below {
            Some(n) => Step::Move(Feature::Edge(e), n),
            None => Step::Move(Feature::Vertex(tail), Feature::Face(f)),
        }
    } else {
        match above {
            Some(n) => Step::Move(Feature::Edge(e), n),
            None => Step::Move(Feature::Vertex(head), Feature::Face(f)),
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
