//! Mass properties of solids with known closed forms, and their invariance under rigid
//! motions of the input points.

mod common;

use talus_geom::generate::{self, PlatonicSolid};
use talus_geom::glam::{DMat3, DVec3};
use talus_geom::{ConvexPolyhedron, MassProperties};

use common::{max_abs, random_rotation, rng};

/// Volume and isotropic moment of inertia per unit mass of a platonic solid of edge `a`
/// (standard tables of solid moments of inertia).
fn analytic(solid: PlatonicSolid, a: f64) -> (f64, f64) {
    let s5 = 5f64.sqrt();
    let s2 = 2f64.sqrt();
    match solid {
        PlatonicSolid::Tetrahedron => (a.powi(3) / (6.0 * s2), a * a / 20.0),
        PlatonicSolid::Cube => (a.powi(3), a * a / 6.0),
        PlatonicSolid::Octahedron => (s2 / 3.0 * a.powi(3), a * a / 10.0),
        PlatonicSolid::Dodecahedron => (
            (15.0 + 7.0 * s5) / 4.0 * a.powi(3),
            a * a * (95.0 + 39.0 * s5) / 300.0,
        ),
        PlatonicSolid::Icosahedron => (
            5.0 * (3.0 + s5) / 12.0 * a.powi(3),
            a * a * (3.0 + s5) / 20.0,
        ),
    }
}

fn rel(a: f64, b: f64) -> f64 {
    (a - b).abs() / b.abs()
}

#[test]
fn platonic_solids_match_closed_forms() {
    for solid in PlatonicSolid::ALL {
        for (edge, density) in [(1.0, 1.0), (0.37, 2650.0), (12.5, 0.8)] {
            let poly = generate::platonic(solid, edge).unwrap();
            let p = poly.mass_properties(density);
            let (volume, i_per_mass) = analytic(solid, edge);
            assert!(
                rel(p.volume, volume) < 1e-12,
                "{solid} volume {} vs {volume}",
                p.volume
            );
            assert!(rel(p.mass, density * volume) < 1e-12);
            assert!(
                p.center_of_mass.length() < 1e-12 * edge,
                "{solid} com {:?}",
                p.center_of_mass
            );
            let expected = DMat3::from_diagonal(DVec3::splat(p.mass * i_per_mass));
            assert!(
                max_abs(p.inertia - expected) < 1e-12 * p.mass * i_per_mass,
                "{solid} inertia {:?} vs {expected:?}",
                p.inertia
            );
            for m in p.principal_moments.to_array() {
                assert!(rel(m, p.mass * i_per_mass) < 1e-12);
            }
        }
    }
}

#[test]
fn platonic_solids_have_their_topology() {
    let expected = [
        (PlatonicSolid::Tetrahedron, (4, 6, 4), 3),
        (PlatonicSolid::Cube, (8, 12, 6), 4),
        (PlatonicSolid::Octahedron, (6, 12, 8), 3),
        (PlatonicSolid::Dodecahedron, (20, 30, 12), 5),
        (PlatonicSolid::Icosahedron, (12, 30, 20), 3),
    ];
    for (solid, counts, sides) in expected {
        let poly = generate::platonic(solid, 2.0).unwrap();
        assert_eq!(poly.counts(), counts, "{solid}");
        assert!(
            poly.faces().iter().all(|f| f.vertex_count == sides),
            "{solid}"
        );
        for [a, b] in poly.edges() {
            let length = poly.vertices()[*a as usize].distance(poly.vertices()[*b as usize]);
            assert!((length - 2.0).abs() < 1e-12, "{solid} edge {length}");
        }
    }
}

#[test]
fn rectangular_box_matches_closed_form() {
    let l = DVec3::new(0.3, 1.7, 4.1);
    let density = 7.5;
    let p = generate::rectangular_box(l)
        .unwrap()
        .mass_properties(density);
    let volume = l.x * l.y * l.z;
    let m = density * volume;
    assert!(rel(p.volume, volume) < 1e-12);
    assert!(p.center_of_mass.length() < 1e-12);
    let expected = DVec3::new(
        l.y * l.y + l.z * l.z,
        l.x * l.x + l.z * l.z,
        l.x * l.x + l.y * l.y,
    ) * (m / 12.0);
    assert!(max_abs(p.inertia - DMat3::from_diagonal(expected)) < 1e-12 * expected.max_element());
    // Ascending principal moments along the matching coordinate axes.
    assert!(rel(p.principal_moments.x, expected.z) < 1e-12);
    assert!(rel(p.principal_moments.z, expected.x) < 1e-12);
    assert!(p.principal_axes.x_axis.z.abs() > 1.0 - 1e-12);
    assert!(p.principal_axes.z_axis.x.abs() > 1.0 - 1e-12);
}

#[test]
fn box_off_centre_and_corner_at_origin() {
    // The unit-box corner at the origin: centre of mass at (a, b, c)/2 in the given frame.
    let l = DVec3::new(2.0, 3.0, 5.0);
    let corners: Vec<DVec3> = (0..8)
        .map(|i| DVec3::new((i & 1) as f64, ((i >> 1) & 1) as f64, ((i >> 2) & 1) as f64) * l)
        .collect();
    let poly = ConvexPolyhedron::from_points(&corners).unwrap();
    assert_eq!(
        poly.vertices(),
        corners.as_slice(),
        "coordinates are kept as given"
    );
    let p = poly.mass_properties(1.0);
    assert!((p.center_of_mass - 0.5 * l).length() < 1e-12);
    let m = 30.0;
    let expected = DVec3::new(9.0 + 25.0, 4.0 + 25.0, 4.0 + 9.0) * (m / 12.0);
    assert!(max_abs(p.inertia - DMat3::from_diagonal(expected)) < 1e-12 * expected.max_element());
}

fn assert_moved(
    base: &MassProperties,
    moved: &MassProperties,
    rotation: DMat3,
    shift: DVec3,
    scale: f64,
) {
    assert!(rel(moved.volume, base.volume) < 1e-12);
    let com = rotation * base.center_of_mass + shift;
    assert!(
        (moved.center_of_mass - com).length() < 1e-12 * (scale + shift.length()),
        "com {:?} vs {com:?}",
        moved.center_of_mass
    );
    let inertia = rotation * base.inertia * rotation.transpose();
    let size = base.principal_moments.max_element();
    assert!(max_abs(moved.inertia - inertia) < 1e-12 * size, "inertia");
    assert!(
        (moved.principal_moments - base.principal_moments)
            .abs()
            .max_element()
            < 1e-12 * size
    );
}

#[test]
fn invariant_under_translation_and_rotation_of_the_input() {
    let mut r = rng(11);
    let mut shapes: Vec<ConvexPolyhedron> = PlatonicSolid::ALL
        .iter()
        .map(|s| generate::platonic(*s, 1.3).unwrap())
        .collect();
    shapes.push(generate::rectangular_box(DVec3::new(1.0, 2.0, 0.5)).unwrap());
    for k in [4, 9, 30, 120] {
        shapes.push(generate::ellipsoid_grain(k, DVec3::new(1.0, 0.6, 0.4), &mut r).unwrap());
    }
    for poly in &shapes {
        let base = poly.mass_properties(3.0);
        for _ in 0..20 {
            let q = random_rotation(&mut r);
            let rotation = DMat3::from_quat(q);
            let shift = DVec3::new(
                rand::Rng::random_range(&mut r, -5.0..5.0),
                rand::Rng::random_range(&mut r, -5.0..5.0),
                rand::Rng::random_range(&mut r, -5.0..5.0),
            );
            let points: Vec<DVec3> = poly
                .vertices()
                .iter()
                .map(|&v| rotation * v + shift)
                .collect();
            let moved = ConvexPolyhedron::from_points(&points).unwrap();
            assert_eq!(moved.counts(), poly.counts());
            assert_moved(&base, &moved.mass_properties(3.0), rotation, shift, 1.0);
        }
    }
}

#[test]
fn principal_axes_diagonalise_the_inertia() {
    let mut r = rng(5);
    for k in [5, 17, 60] {
        let poly = generate::ellipsoid_grain(k, DVec3::new(1.0, 0.7, 0.3), &mut r).unwrap();
        let p = poly.mass_properties(2.0);
        let axes = p.principal_axes;
        assert!((axes.determinant() - 1.0).abs() < 1e-12);
        let diagonal = axes.transpose() * p.inertia * axes;
        let expected = DMat3::from_diagonal(p.principal_moments);
        assert!(max_abs(diagonal - expected) < 1e-12 * p.principal_moments.z);
        assert!(
            p.principal_moments.x <= p.principal_moments.y
                && p.principal_moments.y <= p.principal_moments.z
        );
        // Triangle inequality of principal moments holds for every real body.
        assert!(
            p.principal_moments.x + p.principal_moments.y >= p.principal_moments.z * (1.0 - 1e-12)
        );
    }
}
