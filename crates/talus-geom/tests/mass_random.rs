//! Pyramid decomposition against two independent computations on random hulls: the
//! divergence theorem (Mirtich / Eberly) and parry3d-f64 on its own hull of the same points.

mod common;

use parry3d_f64::mass_properties::MassProperties as ParryMass;
use parry3d_f64::transformation::convex_hull;
use rand::Rng;
use talus_geom::ConvexPolyhedron;

use common::{divergence_mass_properties, max_abs, random_cloud, rng, surface_triangles};

#[test]
fn pyramid_decomposition_agrees_with_divergence_theorem_and_parry() {
    let mut r = rng(2024);
    let mut checked = 0;
    for case in 0..400 {
        let n = r.random_range(4..=500);
        let points = random_cloud(case, n, &mut r);
        let poly = match ConvexPolyhedron::from_points(&points) {
            Ok(p) => p,
            // Tiny random clouds of the lattice kind can be flat; those are tested elsewhere.
            Err(e) => {
                assert!(case % 4 == 3, "case {case}: {e}");
                continue;
            }
        };
        checked += 1;
        let p = poly.mass_properties(1.0);
        let scale = poly.diameter();
        let inertia_scale = p.mass * scale * scale;

        let (v, c, i) = divergence_mass_properties(&surface_triangles(&poly));
        assert!(
            (p.volume - v).abs() < 1e-12 * scale.powi(3),
            "case {case}: volume {} vs {v}",
            p.volume
        );
        assert!(
            (p.center_of_mass - c).length() < 1e-12 * (scale + c.length()),
            "case {case}: com"
        );
        // Offset clouds far from the origin lose digits in the divergence formulas
        // (products of coordinates ~1e3); compare at the precision they can deliver.
        let tol = if case % 4 == 2 { 1e-6 } else { 1e-11 };
        assert!(
            max_abs(p.inertia - i) < tol * inertia_scale,
            "case {case}: inertia {:?} vs {i:?}",
            p.inertia
        );

        let (vertices, indices) = convex_hull(&points);
        let parry = ParryMass::from_convex_polyhedron(1.0, &vertices, &indices);
        let parry_com = talus_geom::glam::DVec3::from_array(parry.local_com.to_array());
        assert!(
            (p.mass - parry.mass()).abs() < 1e-12 * p.mass,
            "case {case}: mass {} vs {}",
            p.mass,
            parry.mass()
        );
        assert!(
            (p.center_of_mass - parry_com).length() < 1e-12 * (scale + parry_com.length()),
            "case {case}: com vs parry"
        );
        // parry's principal frame is arbitrary where moments repeat (lattice clouds), so
        // its full tensor is compared only through the rotation-invariant principal moments.
        let mut parry_moments = parry.principal_inertia().to_array();
        parry_moments.sort_by(f64::total_cmp);
        let parry_moments = talus_geom::glam::DVec3::from_array(parry_moments);
        assert!(
            (p.principal_moments - parry_moments).abs().max_element()
                < tol.max(1e-10) * inertia_scale,
            "case {case}: principal moments {:?} vs parry {parry_moments:?}",
            p.principal_moments
        );
    }
    assert!(checked >= 350, "only {checked} hulls checked");
}
