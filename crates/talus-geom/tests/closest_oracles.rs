//! The closest-feature walk against two independent oracles: the exhaustive search over all
//! feature pairs and parry3d-f64 (GJK), on random pairs and crafted degenerate cases.

mod common;

use parry3d_f64::math::Pose as ParryPose;
use parry3d_f64::query;
use parry3d_f64::shape::ConvexPolyhedron as ParryPolyhedron;
use rand::Rng;
use talus_geom::glam::{DQuat, DVec3};
use talus_geom::{
    ConvexPolyhedron, FeatureCache, Pose, Proximity, closest_features, closest_features_exhaustive,
    generate,
};

use common::{random_cloud, random_rotation, rng};

struct Shape {
    poly: ConvexPolyhedron,
    parry: ParryPolyhedron,
    size: f64,
}

fn shape(poly: ConvexPolyhedron) -> Shape {
    let parry = ParryPolyhedron::from_convex_hull(poly.vertices()).expect("parry hull");
    let size = poly.diameter();
    Shape { poly, parry, size }
}

fn parry_pose(p: &Pose) -> ParryPose {
    ParryPose::from_parts(p.position, p.rotation)
}

fn shapes(r: &mut impl Rng, count: usize) -> Vec<Shape> {
    (0..count)
        .map(|i| {
            let k = r.random_range(4..=200);
            let poly = if i % 3 == 2 {
                let points = random_cloud(i % 2, k, r);
                ConvexPolyhedron::from_points(&points).unwrap()
            } else {
                let axes = DVec3::new(1.0, r.random_range(0.4..1.0), r.random_range(0.3..0.8));
                generate::ellipsoid_grain(k, axes, r).unwrap()
            };
            shape(poly)
        })
        .collect()
}

/// Poses placing b around a at distances from deep penetration to well apart.
fn random_poses(r: &mut impl Rng, a: &Shape, b: &Shape) -> (Pose, Pose) {
    let pa = Pose::new(
        DVec3::new(r.random_range(-1.0..1.0), r.random_range(-1.0..1.0), 0.0),
        random_rotation(r),
    );
    let dir = random_rotation(r) * DVec3::X;
    let reach = 0.5 * (a.size + b.size);
    let pb = Pose::new(
        pa.position + dir * reach * r.random_range(0.2..1.6),
        random_rotation(r),
    );
    (pa, pb)
}

struct Verdicts {
    checked: usize,
    separated: usize,
    penetrating: usize,
}

fn compare_with_parry(
    a: &Shape,
    pa: &Pose,
    b: &Shape,
    pb: &Pose,
    found: &Proximity,
    v: &mut Verdicts,
) {
    let size = a.size.max(b.size);
    let d = query::distance(&parry_pose(pa), &a.parry, &parry_pose(pb), &b.parry)
        .unwrap()
        .distance;
    match found {
        Proximity::Separated {
            distance,
            point_a,
            point_b,
        } => {
            assert!(
                (distance - d).abs() <= 1e-9 * size,
                "distance {distance} vs parry {d}"
            );
            assert!((point_a.distance(*point_b) - distance).abs() <= 1e-12 * size);
            // The points are on the grains' surfaces.
            let la = pa.inverse_transform_point(*point_a);
            let lb = pb.inverse_transform_point(*point_b);
            assert!(a.poly.max_face_distance(la).abs() <= 1e-9 * size);
            assert!(b.poly.max_face_distance(lb).abs() <= 1e-9 * size);
            if *distance > 1e-9 * size {
                v.separated += 1;
            }
        }
        Proximity::Penetrating { .. } => {
            assert!(d <= 1e-9 * size, "penetration reported, parry distance {d}");
            let intersecting =
                query::intersection_test(&parry_pose(pa), &a.parry, &parry_pose(pb), &b.parry)
                    .unwrap()
                    .intersecting;
            if d == 0.0 {
                assert!(intersecting);
            }
            v.penetrating += 1;
        }
    }
    v.checked += 1;
}

#[test]
fn cold_walk_agrees_with_parry_on_100k_random_pairs() {
    let mut r = rng(31);
    let all = shapes(&mut r, 60);
    let mut v = Verdicts {
        checked: 0,
        separated: 0,
        penetrating: 0,
    };
    let mut fallbacks = 0;
    for _ in 0..100_000 {
        let (i, j) = (r.random_range(0..all.len()), r.random_range(0..all.len()));
        let (a, b) = (&all[i], &all[j]);
        let (pa, pb) = random_poses(&mut r, a, b);
        let mut cache = FeatureCache::default();
        let found = closest_features(&a.poly, &pa, &b.poly, &pb, &mut cache);
        fallbacks += cache.fallbacks;
        compare_with_parry(a, &pa, b, &pb, &found, &mut v);
    }
    assert!(
        v.separated > 20_000 && v.penetrating > 20_000,
        "{} / {}",
        v.separated,
        v.penetrating
    );
    assert_eq!(fallbacks, 0, "the walk fell back to the exhaustive search");
}

#[test]
fn walk_agrees_with_exhaustive_search() {
    let mut r = rng(32);
    let all = shapes(&mut r, 30);
    for _ in 0..3_000 {
        let (i, j) = (r.random_range(0..all.len()), r.random_range(0..all.len()));
        let (a, b) = (&all[i], &all[j]);
        let (pa, pb) = random_poses(&mut r, a, b);
        let mut cache = FeatureCache::default();
        let found = closest_features(&a.poly, &pa, &b.poly, &pb, &mut cache);
        let (oracle, _) = closest_features_exhaustive(&a.poly, &pa, &b.poly, &pb);
        let size = a.size.max(b.size);
        match (found, oracle) {
            (Proximity::Separated { distance, .. }, Proximity::Separated { distance: d, .. }) => {
                assert!((distance - d).abs() <= 1e-9 * size, "{distance} vs {d}");
            }
            (Proximity::Penetrating { .. }, Proximity::Penetrating { .. }) => {}
            (x, y) => {
                let gap = x.distance().or(y.distance()).unwrap();
                assert!(gap <= 1e-9 * size, "walk {x:?} vs exhaustive {y:?}");
            }
        }
    }
}

#[test]
fn warm_walk_along_trajectories_matches_cold_calls() {
    let mut r = rng(33);
    let all = shapes(&mut r, 12);
    for pair in 0..40 {
        let (a, b) = (&all[pair % all.len()], &all[(pair * 7 + 3) % all.len()]);
        let (mut pa, mut pb) = random_poses(&mut r, a, b);
        let spin_a = random_rotation(&mut r) * DVec3::X;
        let spin_b = random_rotation(&mut r) * DVec3::X;
        let drift = (pa.position - pb.position).normalize() * 0.002 * a.size;
        let mut cache = FeatureCache::default();
        let mut warm_steps = 0u64;
        for _ in 0..500 {
            pa.rotation = (DQuat::from_scaled_axis(spin_a * 0.01) * pa.rotation).normalize();
            pb.rotation = (DQuat::from_scaled_axis(spin_b * 0.01) * pb.rotation).normalize();
            pb.position += drift * if r.random_bool(0.8) { 1.0 } else { -1.0 };
            let warm = closest_features(&a.poly, &pa, &b.poly, &pb, &mut cache);
            warm_steps += cache.last_steps as u64;
            let cold = closest_features(&a.poly, &pa, &b.poly, &pb, &mut FeatureCache::default());
            let size = a.size.max(b.size);
            match (warm, cold) {
                (
                    Proximity::Separated { distance: x, .. },
                    Proximity::Separated { distance: y, .. },
                ) => {
                    assert!((x - y).abs() <= 1e-9 * size)
                }
                (Proximity::Penetrating { .. }, Proximity::Penetrating { .. }) => {}
                (x, y) => assert!(x.distance().or(y.distance()).unwrap() <= 1e-9 * size),
            }
        }
        assert_eq!(cache.fallbacks, 0);
        assert!(
            warm_steps < 500 * 3,
            "warm walks average {} steps",
            warm_steps as f64 / 500.0
        );
    }
}

/// Every feature of a polyhedron, to start walks from.
fn all_features(poly: &ConvexPolyhedron) -> Vec<talus_geom::Feature> {
    use talus_geom::Feature;
    let (v, e, f) = poly.counts();
    (0..v as u32)
        .map(Feature::Vertex)
        .chain((0..e as u32).map(Feature::Edge))
        .chain((0..f as u32).map(Feature::Face))
        .collect()
}

/// Runs the walk from every start pair and checks each answer against `expected`
/// (`Some(distance)` for separated, `None` for penetrating), to `tol`.
fn from_every_start(
    a: &ConvexPolyhedron,
    pa: &Pose,
    b: &ConvexPolyhedron,
    pb: &Pose,
    expected: Option<f64>,
    tol: f64,
) {
    for &fa in &all_features(a) {
        for &fb in &all_features(b) {
            let mut cache = FeatureCache {
                feature_a: fa,
                feature_b: fb,
                ..FeatureCache::default()
            };
            let found = closest_features(a, pa, b, pb, &mut cache);
            assert_eq!(cache.fallbacks, 0, "fallback from {fa:?} {fb:?}");
            match (expected, found) {
                (
                    Some(d),
                    Proximity::Separated {
                        distance,
                        point_a,
                        point_b,
                    },
                ) => {
                    assert!(
                        (distance - d).abs() <= tol,
                        "from {fa:?} {fb:?}: {distance} vs {d}"
                    );
                    assert!(
                        a.max_face_distance(pa.inverse_transform_point(point_a))
                            .abs()
                            <= 1e-12
                    );
                    assert!(
                        b.max_face_distance(pb.inverse_transform_point(point_b))
                            .abs()
                            <= 1e-12
                    );
                }
                (None, Proximity::Penetrating { .. }) => {}
                // Exactly touching: either answer, but a separated one at distance 0.
                (Some(0.0), Proximity::Penetrating { .. }) => {}
                (None, Proximity::Separated { distance, .. }) => {
                    panic!("from {fa:?} {fb:?}: separated by {distance}, expected penetration")
                }
                (e, f) => panic!("from {fa:?} {fb:?}: {f:?}, expected {e:?}"),
            }
        }
    }
}

#[test]
fn parallel_faces_from_every_start() {
    let cube = generate::cube(1.0).unwrap();
    for gap in [0.3, 1e-6, 1e-12] {
        let pb = Pose::from_translation(DVec3::new(0.2, -0.3, 1.0 + gap));
        from_every_start(&cube, &Pose::IDENTITY, &cube, &pb, Some(gap), 1e-14);
    }
    from_every_start(
        &cube,
        &Pose::IDENTITY,
        &cube,
        &Pose::from_translation(DVec3::new(0.2, -0.3, 0.999)),
        None,
        0.0,
    );
    // Face to face with equal extents: the faces' edges coincide in projection too.
    from_every_start(
        &cube,
        &Pose::IDENTITY,
        &cube,
        &Pose::from_translation(DVec3::new(0.0, 0.0, 1.25)),
        Some(0.25),
        1e-14,
    );
}

#[test]
fn parallel_edges_from_every_start() {
    // Both cubes turned 45° about x: a's top and b's bottom are edges along x.
    let cube = generate::cube(1.0).unwrap();
    let turn = DQuat::from_rotation_x(std::f64::consts::FRAC_PI_4);
    let reach = 0.5 * 2f64.sqrt();
    for (shift, gap) in [(0.0, 0.2), (0.7, 0.05), (0.999, 1e-9)] {
        let pa = Pose::new(DVec3::ZERO, turn);
        let pb = Pose::new(DVec3::new(shift, 0.0, 2.0 * reach + gap), turn);
        from_every_start(&cube, &pa, &cube, &pb, Some(gap), 1e-12);
    }
    // Crossed edges (b turned about z as well): a single closest point pair.
    let pa = Pose::new(DVec3::ZERO, turn);
    let pb = Pose::new(
        DVec3::new(0.1, 0.05, 2.0 * reach + 0.1),
        DQuat::from_rotation_z(0.7) * turn,
    );
    from_every_start(&cube, &pa, &cube, &pb, Some(0.1), 1e-12);
}

#[test]
fn vertex_on_a_face_and_touching_points() {
    let cube = generate::cube(1.0).unwrap();
    let octa = generate::octahedron(1.0).unwrap();
    let tip = 1.0 / 2f64.sqrt();
    for (gap, expected) in [(1e-3, Some(1e-3)), (0.0, Some(0.0)), (-1e-9, None)] {
        // The octahedron's lower tip on the cube's top face.
        let pb = Pose::new(
            DVec3::new(0.1, 0.2, 0.5 + tip + gap),
            DQuat::from_rotation_z(0.3),
        );
        from_every_start(&cube, &Pose::IDENTITY, &octa, &pb, expected, 1e-14);
        // Two octahedra tip to tip.
        let pb = Pose::new(
            DVec3::new(0.0, 0.0, 2.0 * tip + gap),
            DQuat::from_rotation_z(0.5),
        );
        from_every_start(&octa, &Pose::IDENTITY, &octa, &pb, expected, 1e-14);
    }
}

#[test]
fn nested_and_identical_grains_penetrate() {
    let mut r = rng(34);
    let big = generate::ellipsoid_grain(40, DVec3::new(1.0, 0.8, 0.6), &mut r).unwrap();
    let small = generate::ellipsoid_grain(12, DVec3::new(0.1, 0.1, 0.1), &mut r).unwrap();
    let pose = Pose::new(DVec3::new(1.0, 2.0, 3.0), random_rotation(&mut r));
    from_every_start(&big, &pose, &small, &pose, None, 0.0);
    from_every_start(&small, &pose, &big, &pose, None, 0.0);
    let cube = generate::cube(1.0).unwrap();
    from_every_start(&cube, &pose, &cube, &pose, None, 0.0);
    let g = generate::ellipsoid_grain(20, DVec3::new(1.0, 0.8, 0.6), &mut r).unwrap();
    from_every_start(&g, &pose, &g, &pose, None, 0.0);
}

#[test]
fn a_cache_from_another_pair_is_a_cold_start() {
    let cube = generate::cube(1.0).unwrap();
    let mut cache = FeatureCache {
        feature_a: talus_geom::Feature::Face(99),
        feature_b: talus_geom::Feature::Edge(1000),
        ..FeatureCache::default()
    };
    let pb = Pose::from_translation(DVec3::new(0.0, 0.0, 1.5));
    let p = closest_features(&cube, &Pose::IDENTITY, &cube, &pb, &mut cache);
    assert!((p.distance().unwrap() - 0.5).abs() < 1e-15);
}
