//! Structure of built hulls: half-edge invariants, Euler's formula, planarity, convexity,
//! containment of every input point, and the same vertex set as parry3d-f64's hull.

mod common;

use std::collections::BTreeSet;

use parry3d_f64::transformation::convex_hull;
use rand::Rng;
use talus_geom::glam::DVec3;
use talus_geom::{ConvexPolyhedron, generate};

use common::{random_cloud, rng};

/// Checks every structural promise of a polyhedron built from `points`.
fn check_structure(poly: &ConvexPolyhedron, points: &[DVec3]) {
    let (v, e, f) = poly.counts();
    assert_eq!(v as i64 - e as i64 + f as i64, 2, "Euler");
    let scale = poly.diameter();
    let he = poly.half_edges();
    assert_eq!(he.len(), 2 * e);
    for (h, x) in he.iter().enumerate() {
        let h = h as u32;
        assert_eq!(he[x.twin as usize].twin, h);
        assert_ne!(x.twin, h);
        assert_eq!(he[x.next as usize].prev, h);
        assert_eq!(he[x.prev as usize].next, h);
        assert_eq!(he[x.next as usize].face, x.face);
        assert_eq!(he[x.twin as usize].edge, x.edge);
        // The twin runs the other way.
        assert_eq!(he[x.twin as usize].origin, he[x.next as usize].origin);
        let [a, b] = poly.edges()[x.edge as usize];
        let ends = [x.origin, he[x.next as usize].origin];
        assert!(ends == [a, b] || ends == [b, a]);
    }
    for (fi, face) in poly.faces().iter().enumerate() {
        assert!(face.vertex_count >= 3);
        assert!((face.normal.length() - 1.0).abs() < 1e-12);
        let corners: Vec<DVec3> = poly
            .face_vertices(fi)
            .map(|i| poly.vertices()[i as usize])
            .collect();
        // Planar, counter-clockwise seen from outside, convex.
        for c in &corners {
            assert!(
                face.signed_distance(*c).abs() < 1e-10 * scale,
                "face {fi} not planar"
            );
        }
        let area = talus_geom::polygon_area_vector(&corners);
        assert!(area.dot(face.normal) > 0.0);
        for k in 0..corners.len() {
            let (p, q, r) = (
                corners[k],
                corners[(k + 1) % corners.len()],
                corners[(k + 2) % corners.len()],
            );
            assert!(
                (q - p).cross(r - q).dot(face.normal) > 0.0,
                "face {fi} not strictly convex at a corner"
            );
        }
    }
    // Each vertex is an input point and a corner of at least three faces.
    for (i, vertex) in poly.vertices().iter().enumerate() {
        assert!(points.contains(vertex));
        assert!(poly.vertex_half_edges(i).count() >= 3);
        for n in poly.vertex_neighbors(i) {
            assert!(
                poly.edges()
                    .iter()
                    .any(|&[a, b]| (a, b) == (i as u32, n) || (b, a) == (i as u32, n))
            );
        }
    }
    // Convex: every vertex on or below every face plane; every input point inside.
    for p in points.iter().chain(poly.vertices()) {
        assert!(
            poly.max_face_distance(*p) < 1e-10 * scale,
            "point outside the hull"
        );
    }
    // Adjacent faces are not coplanar (they would have been merged): some corner of one
    // lies clearly off the other's plane.
    for ei in 0..poly.edges().len() {
        let [f0, f1] = poly.edge_faces(ei);
        let plane = poly.faces()[f0 as usize];
        let off = poly
            .face_vertices(f1 as usize)
            .map(|i| plane.signed_distance(poly.vertices()[i as usize]).abs())
            .fold(0.0, f64::max);
        assert!(off > 1e-12 * scale, "coplanar neighbours left unmerged");
    }
}

fn key(p: DVec3) -> [u64; 3] {
    p.to_array().map(f64::to_bits)
}

#[test]
fn random_hulls_are_well_formed_and_match_parry() {
    let mut r = rng(7);
    for case in 0..300 {
        let n = r.random_range(4..=500);
        let points = random_cloud(case, n, &mut r);
        let Ok(poly) = ConvexPolyhedron::from_points(&points) else {
            assert_eq!(case % 4, 3, "case {case} failed");
            continue;
        };
        check_structure(&poly, &points);
        let (parry_vertices, _) = convex_hull(&points);
        let ours: BTreeSet<[u64; 3]> = poly.vertices().iter().map(|&p| key(p)).collect();
        if case % 4 == 3 {
            // Lattice clouds: parry keeps points on edges and faces as vertices; ours must
            // be the corners among them.
            let theirs: BTreeSet<[u64; 3]> = parry_vertices
                .iter()
                .map(|p| key(DVec3::from_array(p.to_array())))
                .collect();
            assert!(ours.is_subset(&theirs), "case {case}");
        } else {
            let theirs: BTreeSet<[u64; 3]> = parry_vertices
                .iter()
                .map(|p| key(DVec3::from_array(p.to_array())))
                .collect();
            assert_eq!(ours, theirs, "case {case}: vertex sets differ");
        }
        if case % 4 == 1 {
            assert_eq!(
                poly.vertices().len(),
                n,
                "every point on a sphere is a vertex"
            );
        }
    }
}

#[test]
fn points_inside_faces_and_on_edges_are_not_vertices() {
    // A cube with edge midpoints, face centres, its centre and duplicated corners.
    let mut points = Vec::new();
    for x in [-1.0, 0.0, 1.0] {
        for y in [-1.0, 0.0, 1.0] {
            for z in [-1.0, 0.0, 1.0] {
                points.push(DVec3::new(x, y, z));
            }
        }
    }
    points.extend_from_slice(&points.clone()[..5]);
    let poly = ConvexPolyhedron::from_points(&points).unwrap();
    assert_eq!(poly.counts(), (8, 12, 6));
    check_structure(&poly, &points);
    assert!((poly.volume() - 8.0).abs() < 1e-14);
}

#[test]
fn vertex_order_and_coordinates_are_kept() {
    let points = [
        DVec3::new(10.0, 20.0, 30.0),
        DVec3::new(10.25, 20.0, 30.0),
        DVec3::new(10.0, 20.5, 30.0),
        DVec3::new(10.1, 20.1, 30.1), // interior? no: above the base, a vertex
        DVec3::new(10.0, 20.0, 31.0),
    ];
    let poly = ConvexPolyhedron::from_points(&points).unwrap();
    let kept: Vec<DVec3> = points
        .iter()
        .copied()
        .filter(|p| poly.vertices().contains(p))
        .collect();
    assert_eq!(poly.vertices(), kept.as_slice());
    check_structure(&poly, &points);
}

#[test]
fn generated_grains_are_well_formed() {
    let mut r = rng(99);
    for k in [
        4, 5, 6, 12, 18, 22, 42, 52, 62, 72, 102, 202, 302, 462, 1000,
    ] {
        let axes = DVec3::new(1.0, r.random_range(0.3..1.0), r.random_range(0.2..0.6));
        let poly = generate::ellipsoid_grain(k, axes, &mut r).unwrap();
        assert_eq!(poly.vertices().len(), k);
        check_structure(&poly, poly.vertices());
        for v in poly.vertices() {
            // On the ellipsoid surface.
            assert!(
                ((*v / axes).length() - 1.0).abs() < 1e-14,
                "vertex off the ellipsoid"
            );
        }
        assert!(
            poly.faces().iter().all(|f| f.vertex_count == 3),
            "random points give triangles"
        );
    }
}

#[test]
fn same_seed_same_grain() {
    let a = generate::ellipsoid_grain(62, DVec3::new(1.0, 0.8, 0.6), &mut rng(3)).unwrap();
    let b = generate::ellipsoid_grain(62, DVec3::new(1.0, 0.8, 0.6), &mut rng(3)).unwrap();
    let c = generate::ellipsoid_grain(62, DVec3::new(1.0, 0.8, 0.6), &mut rng(4)).unwrap();
    assert_eq!(a, b);
    assert_ne!(a.vertices(), c.vertices());
}

#[test]
fn nearly_flat_but_solid_sets_are_accepted_exactly() {
    // Points that differ below f32 precision: the f64 stage must still find every corner.
    let eps = 1e-9;
    let mut points = vec![
        DVec3::new(0.0, 0.0, 0.0),
        DVec3::new(1.0, 0.0, 0.0),
        DVec3::new(0.0, 1.0, 0.0),
        DVec3::new(1.0, 1.0, 0.0),
    ];
    points.extend(
        points
            .clone()
            .iter()
            .map(|p| *p + DVec3::new(0.0, 0.0, 1e-3)),
    );
    points.push(DVec3::new(0.5, 0.5, 1e-3 + eps)); // a low pyramid on the top face
    let poly = ConvexPolyhedron::from_points(&points).unwrap();
    check_structure(&poly, &points);
    assert_eq!(poly.vertices().len(), 9);
    let expected = 1e-3 + eps / 3.0;
    assert!(
        (poly.volume() - expected).abs() < 1e-15,
        "volume {}",
        poly.volume()
    );
}

/// The radius about the origin is the farthest of the input points kept as vertices, and
/// no input point lies beyond it (clouds placed off the origin, so that the centre of the
/// cloud is not the centre of the sphere).
#[test]
fn the_radius_about_the_origin_holds_every_point_and_touches_a_vertex() {
    let mut r = rng(41);
    for _ in 0..200 {
        let shift = DVec3::new(r.random(), r.random(), r.random()) * 4.0 - 2.0;
        let cloud: Vec<DVec3> = random_cloud(0, 40, &mut r)
            .iter()
            .map(|&p| p + shift)
            .collect();
        let poly = ConvexPolyhedron::from_points(&cloud).unwrap();
        let farthest = cloud.iter().map(|p| p.length()).fold(0.0, f64::max);
        assert_eq!(poly.radius_about_origin(), farthest);
    }
}
