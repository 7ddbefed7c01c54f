//! Exhaustive closest features: every feature pair is examined. O(E_a·E_b + V_a·F_b + V_b·F_a)
//! for the distance and O(E_a·F_b + E_b·F_a) for the penetration test. It is the fallback of
//! the closest-feature walk and the oracle of its tests.

use glam::DVec3;

use crate::feature::{Feature, FeatureCache};
use crate::polyhedron::ConvexPolyhedron;
use crate::pose::Pose;
use crate::proximity::Proximity;
use crate::segment::closest_segment_segment;

/// A polyhedron's vertices in the world frame.
fn world_vertices(poly: &ConvexPolyhedron, pose: &Pose) -> Vec<DVec3> {
    let r = pose.rotation_matrix();
    poly.vertices()
        .iter()
        .map(|&v| r * v + pose.position)
        .collect()
}

/// World-frame plane (unit normal, offset) of every face.
fn world_planes(poly: &ConvexPolyhedron, world: &[DVec3], pose: &Pose) -> Vec<(DVec3, f64)> {
    let r = pose.rotation_matrix();
    poly.faces()
        .iter()
        .enumerate()
        .map(|(f, face)| {
            let n = r * face.normal;
            let on_face = world[poly.face_vertices(f).next().unwrap_or(0) as usize];
            (n, n.dot(on_face))
        })
        .collect()
}

/// Whether the projection of `x` onto face `f`'s plane lies inside the face (boundary
/// included).
fn projects_into_face(
    poly: &ConvexPolyhedron,
    world: &[DVec3],
    normal: DVec3,
    f: usize,
    x: DVec3,
) -> bool {
    let corners: Vec<DVec3> = poly.face_vertices(f).map(|v| world[v as usize]).collect();
    (0..corners.len()).all(|k| {
        let (p, q) = (corners[k], corners[(k + 1) % corners.len()]);
        (q - p).cross(x - p).dot(normal) >= 0.0
    })
}

/// An edge of one grain that crosses (or touches) a face of the other, if any.
fn edge_through_face(
    edges_of: &ConvexPolyhedron,
    edge_world: &[DVec3],
    faces_of: &ConvexPolyhedron,
    face_world: &[DVec3],
    face_planes: &[(DVec3, f64)],
) -> Option<(u32, u32)> {
    for (e, [i, j]) in edges_of.edges().iter().enumerate() {
        let (p, q) = (edge_world[*i as usize], edge_world[*j as usize]);
        for (f, &(n, d)) in face_planes.iter().enumerate() {
            let (dp, dq) = (n.dot(p) - d, n.dot(q) - d);
            if dp * dq > 0.0 || (dp == 0.0 && dq == 0.0) {
                continue;
            }
            let x = p + (q - p) * (dp / (dp - dq));
            if projects_into_face(faces_of, face_world, n, f, x) {
                return Some((e as u32, f as u32));
            }
        }
    }
    None
}

/// A vertex of one grain inside (or on) the other, if any.
fn vertex_inside(world: &[DVec3], planes: &[(DVec3, f64)]) -> Option<u32> {
    world
        .iter()
        .position(|&x| planes.iter().all(|&(n, d)| n.dot(x) - d <= 0.0))
        .map(|v| v as u32)
}

/// Closest features by exhaustive search, and a cache holding them.
#[must_use]
pub fn closest_features_exhaustive(
    a: &ConvexPolyhedron,
    pose_a: &Pose,
    b: &ConvexPolyhedron,
    pose_b: &Pose,
) -> (Proximity, FeatureCache) {
    let (wa, wb) = (world_vertices(a, pose_a), world_vertices(b, pose_b));
    let (pa, pb) = (world_planes(a, &wa, pose_a), world_planes(b, &wb, pose_b));
    let cache = |feature_a, feature_b| FeatureCache {
        feature_a,
        feature_b,
        ..FeatureCache::default()
    };
    let penetrating = |feature_a, feature_b| {
        (
            Proximity::Penetrating {
                feature_a,
                feature_b,
            },
            cache(feature_a, feature_b),
        )
    };
    if let Some((e, f)) = edge_through_face(a, &wa, b, &wb, &pb) {
        return penetrating(Feature::Edge(e), Feature::Face(f));
    }
    if let Some((e, f)) = edge_through_face(b, &wb, a, &wa, &pa) {
        return penetrating(Feature::Face(f), Feature::Edge(e));
    }
    if let Some(v) = vertex_inside(&wa, &pb) {
        return penetrating(Feature::Vertex(v), Feature::Face(0));
    }
    if let Some(v) = vertex_inside(&wb, &pa) {
        return penetrating(Feature::Face(0), Feature::Vertex(v));
    }

    let mut best = (
        f64::INFINITY,
        DVec3::ZERO,
        DVec3::ZERO,
        Feature::Vertex(0),
        Feature::Vertex(0),
    );
    let mut consider = |d2: f64, x: DVec3, y: DVec3, fa: Feature, fb: Feature| {
        if d2 < best.0 {
            best = (d2, x, y, fa, fb);
        }
    };
    // Edge pairs cover vertex–vertex, vertex–edge and edge–edge closest points.
    for (ea, [i, j]) in a.edges().iter().enumerate() {
        let (p0, p1) = (wa[*i as usize], wa[*j as usize]);
        for (eb, [k, l]) in b.edges().iter().enumerate() {
            let (q0, q1) = (wb[*k as usize], wb[*l as usize]);
            let (s, t) = closest_segment_segment(p0, p1, q0, q1);
            let (x, y) = (p0.lerp(p1, s), q0.lerp(q1, t));
            let fa = end_or_edge(ea as u32, [*i, *j], s);
            let fb = end_or_edge(eb as u32, [*k, *l], t);
            consider(x.distance_squared(y), x, y, fa, fb);
        }
    }
    // Vertex–face pairs where the vertex projects into the face.
    for (v, &x) in wa.iter().enumerate() {
        for (f, &(n, d)) in pb.iter().enumerate() {
            let h = n.dot(x) - d;
            let y = x - n * h;
            if h > 0.0 && projects_into_face(b, &wb, n, f, y) {
                consider(
                    h * h,
                    x,
                    y,
                    Feature::Vertex(v as u32),
                    Feature::Face(f as u32),
                );
            }
        }
    }
    for (v, &y) in wb.iter().enumerate() {
        for (f, &(n, d)) in pa.iter().enumerate() {
            let h = n.dot(y) - d;
            let x = y - n * h;
            if h > 0.0 && projects_into_face(a, &wa, n, f, x) {
                consider(
                    h * h,
                    x,
                    y,
                    Feature::Face(f as u32),
                    Feature::Vertex(v as u32),
                );
            }
        }
    }
    let (d2, point_a, point_b, fa, fb) = best;
    (
        Proximity::Separated {
            distance: d2.sqrt(),
            point_a,
            point_b,
        },
        cache(fa, fb),
    )
}

/// The feature of an edge at parameter `s`: an end vertex at 0 or 1, else the edge.
fn end_or_edge(edge: u32, [i, j]: [u32; 2], s: f64) -> Feature {
    if s <= 0.0 {
        Feature::Vertex(i)
    } else if s >= 1.0 {
        Feature::Vertex(j)
    } else {
        Feature::Edge(edge)
    }
}

/// Distance from a point to a segment, for tests of the exhaustive search.
#[cfg(test)]
fn point_segment_distance(x: DVec3, p0: DVec3, p1: DVec3) -> f64 {
    use crate::segment::closest_on_segment;
    x.distance(p0.lerp(p1, closest_on_segment(p0, p1, x)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate;

    #[test]
    fn two_unit_cubes_face_to_face() {
        let cube = generate::cube(1.0).unwrap();
        let a = Pose::IDENTITY;
        let b = Pose::from_translation(DVec3::new(1.5, 0.2, -0.1));
        let (p, _) = closest_features_exhaustive(&cube, &a, &cube, &b);
        assert!((p.distance().unwrap() - 0.5).abs() < 1e-15);
        let b = Pose::from_translation(DVec3::new(0.9, 0.2, -0.1));
        assert!(
            closest_features_exhaustive(&cube, &a, &cube, &b)
                .0
                .is_penetrating()
        );
        // Nested: the small cube inside the big one, no edge crosses a face.
        let small = generate::cube(0.1).unwrap();
        assert!(
            closest_features_exhaustive(&cube, &a, &small, &a)
                .0
                .is_penetrating()
        );
        assert!(
            closest_features_exhaustive(&small, &a, &cube, &a)
                .0
                .is_penetrating()
        );
        assert!((point_segment_distance(DVec3::Y, DVec3::ZERO, DVec3::X) - 1.0).abs() < 1e-15);
    }
}
