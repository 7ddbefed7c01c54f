//! Bounding boxes: both methods contain every vertex under random rotations, the min-max box
//! is the tightest and lies inside the ellipsoid box, and the ellipsoid box is exactly the
//! ellipsoid's extent.

mod common;

use rand::Rng;
use talus_geom::glam::{DMat3, DVec3};
use talus_geom::{Aabb, BoundingEllipsoid, ConvexPolyhedron, Pose, generate};

use common::{random_cloud, random_rotation, rng};

fn random_pose(r: &mut impl Rng) -> Pose {
    let position = DVec3::new(
        r.random_range(-50.0..50.0),
        r.random_range(-50.0..50.0),
        r.random_range(-50.0..50.0),
    );
    Pose::new(position, random_rotation(r))
}

fn check(poly: &ConvexPolyhedron, ellipsoid: &BoundingEllipsoid, pose: &Pose) {
    let min_max = poly.aabb(pose);
    let ell = ellipsoid.aabb(pose);
    let world: Vec<DVec3> = poly
        .vertices()
        .iter()
        .map(|&v| pose.transform_point(v))
        .collect();
    for w in &world {
        assert!(
            min_max.contains_point(*w),
            "{w:?} {min_max:?} {:?}",
            (*w - min_max.min).min(min_max.max - *w)
        );
        assert!(
            ell.contains_point(*w),
            "vertex {w:?} outside the ellipsoid box {ell:?}"
        );
    }
    // Min-max is never larger than the ellipsoid box: inside it up to the ulps by which
    // both are rounded outward.
    let ulps = 16.0
        * f64::EPSILON
        * (pose.position.abs().max_element()
            + poly
                .vertices()
                .iter()
                .map(|v| v.length())
                .fold(0.0, f64::max));
    assert!(
        ell.inflated(ulps).contains(&min_max),
        "min-max {min_max:?} not inside ellipsoid box {ell:?}"
    );
    assert!(min_max.volume() <= ell.volume());
    // Min-max is the tightest box: each face of it touches a vertex (brute force).
    let brute = Aabb::from_points(world.iter().copied()).unwrap();
    let tol = 1e-12 * (1.0 + pose.position.abs().max_element());
    assert!((brute.min - min_max.min).abs().max_element() <= tol);
    assert!((brute.max - min_max.max).abs().max_element() <= tol);
}

#[test]
fn generated_grains_in_their_generating_ellipsoid() {
    let mut r = rng(42);
    for k in [4, 6, 12, 18, 22, 42, 52, 62, 72, 202, 302, 462] {
        let axes = DVec3::new(1.0, 0.8, 0.6) * r.random_range(0.1..3.0);
        let poly = generate::ellipsoid_grain(k, axes, &mut r).unwrap();
        let ellipsoid =
            BoundingEllipsoid::enclosing(&poly, DVec3::ZERO, DMat3::IDENTITY, axes).unwrap();
        // The vertices lie on the generating ellipsoid, so it comes back unscaled.
        assert!(
            (ellipsoid.semi_axes / axes - DVec3::ONE)
                .abs()
                .max_element()
                < 1e-14
        );
        for _ in 0..400 {
            check(&poly, &ellipsoid, &random_pose(&mut r));
        }
    }
}

#[test]
fn arbitrary_hulls_in_their_inertia_ellipsoid() {
    let mut r = rng(43);
    for case in 0..60 {
        let n = r.random_range(4..200);
        let points = random_cloud(case, n, &mut r);
        let Ok(poly) = ConvexPolyhedron::from_points(&points) else {
            continue;
        };
        let ellipsoid = BoundingEllipsoid::around(&poly);
        for _ in 0..100 {
            check(&poly, &ellipsoid, &random_pose(&mut r));
        }
    }
}

#[test]
fn ellipsoid_box_is_the_ellipsoid_extent() {
    // Independent check of sqrt(Σ_j R_ij² s_j²): the support point of the ellipsoid along a
    // world axis e, x* = M e / sqrt(eᵀ M e) with M = R S² Rᵀ, lies on the ellipsoid and
    // reaches the box face; dense samples of the surface never pass it.
    let mut r = rng(44);
    for _ in 0..200 {
        let semi = DVec3::new(
            r.random_range(0.1..2.0),
            r.random_range(0.1..2.0),
            r.random_range(0.1..2.0),
        );
        let axes = DMat3::from_quat(random_rotation(&mut r));
        let centre = DVec3::new(0.1, -0.2, 0.3);
        let e = BoundingEllipsoid {
            center: centre,
            axes,
            semi_axes: semi,
        };
        let pose = random_pose(&mut r);
        let aabb = e.aabb(&pose);
        let rot = pose.rotation_matrix() * axes;
        let m = rot * DMat3::from_diagonal(semi * semi) * rot.transpose();
        let c = pose.transform_point(centre);
        for i in 0..3 {
            let axis = DVec3::AXES[i];
            let support = m * axis / axis.dot(m * axis).sqrt();
            // On the ellipsoid: |S⁻¹ Rᵀ x| = 1.
            assert!(((rot.transpose() * support) / semi).length() - 1.0 < 1e-12);
            assert!(
                (c[i] + support[i] - aabb.max[i]).abs() < 1e-12 * (1.0 + c.abs().max_element())
            );
            assert!(
                (c[i] - support[i] - aabb.min[i]).abs() < 1e-12 * (1.0 + c.abs().max_element())
            );
        }
        for _ in 0..200 {
            let u = random_rotation(&mut r) * DVec3::X;
            let x = c + rot * (u * semi);
            assert!(aabb.contains_point(x));
        }
    }
}

#[test]
fn aabb_predicates() {
    let a = Aabb {
        min: DVec3::ZERO,
        max: DVec3::ONE,
    };
    let touching = Aabb {
        min: DVec3::new(1.0, 0.0, 0.0),
        max: DVec3::new(2.0, 1.0, 1.0),
    };
    let apart = Aabb {
        min: DVec3::new(1.0 + 1e-12, 0.0, 0.0),
        max: DVec3::new(2.0, 1.0, 1.0),
    };
    assert!(a.intersects(&touching) && touching.intersects(&a));
    assert!(!a.intersects(&apart));
    assert!(a.contains(&a));
    assert_eq!(a.inflated(0.5).volume(), 8.0);
    assert_eq!(
        Aabb::from_points([DVec3::ONE, DVec3::ZERO, DVec3::splat(0.5)]),
        Some(a)
    );
    assert_eq!(Aabb::from_points(std::iter::empty()), None);
}

#[test]
fn bad_ellipsoid_parameters_are_rejected() {
    let poly = generate::cube(1.0).unwrap();
    assert!(
        BoundingEllipsoid::enclosing(
            &poly,
            DVec3::ZERO,
            DMat3::IDENTITY,
            DVec3::new(1.0, 0.0, 1.0)
        )
        .is_err()
    );
    assert!(
        BoundingEllipsoid::enclosing(&poly, DVec3::ZERO, DMat3::IDENTITY * 2.0, DVec3::ONE)
            .is_err()
    );
    let mirror = DMat3::from_diagonal(DVec3::new(1.0, 1.0, -1.0));
    assert!(BoundingEllipsoid::enclosing(&poly, DVec3::ZERO, mirror, DVec3::ONE).is_err());
}
