//! End-to-end through the facade: finely tessellated grains converge to the solid ellipsoid
//! they are inscribed in (volume 4/3·π·abc, inertia m(b²+c²)/5 and cyclic).

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use talus::geom::{Aabb, BoundingEllipsoid, Pose, generate};
use talus::glam::{DMat3, DQuat, DVec3};

#[test]
fn fine_grains_approach_their_ellipsoid() {
    let axes = DVec3::new(1.2, 0.9, 0.5);
    let density = 2650.0;
    let mut rng = ChaCha8Rng::seed_from_u64(17);
    let ellipsoid_volume = 4.0 / 3.0 * std::f64::consts::PI * axes.x * axes.y * axes.z;
    let mut previous_gap = f64::INFINITY;
    for k in [50, 400, 3000] {
        let grain = generate::ellipsoid_grain(k, axes, &mut rng).unwrap();
        let p = grain.mass_properties(density);
        let gap = 1.0 - p.volume / ellipsoid_volume;
        // An inscribed polyhedron is smaller, and the gap closes as the vertices multiply.
        assert!(gap > 0.0 && gap < previous_gap, "K = {k}: gap {gap}");
        previous_gap = gap;
        if k == 3000 {
            assert!(gap < 0.01, "gap {gap}");
            let (a2, b2, c2) = (axes.x * axes.x, axes.y * axes.y, axes.z * axes.z);
            let expected = DVec3::new(b2 + c2, a2 + c2, a2 + b2) * (p.mass / 5.0);
            let diagonal = DVec3::new(p.inertia.x_axis.x, p.inertia.y_axis.y, p.inertia.z_axis.z);
            assert!(
                ((diagonal - expected) / expected).abs().max_element() < 0.02,
                "{diagonal:?} vs {expected:?}"
            );
            assert!(p.center_of_mass.length() < 0.01 * axes.z);
        }
    }
}

#[test]
fn ellipsoid_box_approaches_min_max_box_for_fine_grains() {
    // Thesis table 4.3: the ellipsoid box is only a few percent larger for hundreds of vertices.
    let axes = DVec3::new(1.0, 0.8, 0.6);
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let grain = generate::ellipsoid_grain(462, axes, &mut rng).unwrap();
    let ellipsoid =
        BoundingEllipsoid::enclosing(&grain, DVec3::ZERO, DMat3::IDENTITY, axes).unwrap();
    let pose = Pose::new(
        DVec3::new(3.0, -1.0, 2.0),
        DQuat::from_euler(talus::glam::EulerRot::XYZ, 0.4, 1.1, -0.3),
    );
    let tight: Aabb = grain.aabb(&pose);
    let loose: Aabb = ellipsoid.aabb(&pose);
    let ratio = loose.volume() / tight.volume();
    assert!((1.0..1.15).contains(&ratio), "ratio {ratio}");
}
