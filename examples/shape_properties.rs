//! Build a grain, read its mass properties and its two bounding boxes.
//!
//! Run with `cargo run --release --example shape_properties`.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use talus::geom::{BoundingEllipsoid, Pose, generate};
use talus::glam::{DMat3, DQuat, DVec3};

fn main() -> Result<(), talus::geom::GeomError> {
    // A sand grain: 18 vertices on an ellipsoid with semi-axes 1 × 0.8 × 0.6 mm, quartz.
    let semi_axes = DVec3::new(1.0e-3, 0.8e-3, 0.6e-3);
    let mut rng = ChaCha8Rng::seed_from_u64(4711);
    let grain = generate::ellipsoid_grain(18, semi_axes, &mut rng)?;
    let props = grain.mass_properties(2650.0);
    let (v, e, f) = grain.counts();
    println!("vertices {v}, edges {e}, faces {f}");
    println!(
        "volume {:.4e} m^3, mass {:.4e} kg",
        props.volume, props.mass
    );
    println!("centre of mass {:?}", props.center_of_mass);
    println!("principal moments {:?} kg m^2", props.principal_moments);

    // Bounding boxes at a tilted pose: min-max (tight, O(K)) and ellipsoid (O(1)).
    let ellipsoid = BoundingEllipsoid::enclosing(&grain, DVec3::ZERO, DMat3::IDENTITY, semi_axes)?;
    let pose = Pose::new(DVec3::new(0.01, 0.0, 0.02), DQuat::from_rotation_y(0.7));
    let tight = grain.aabb(&pose);
    let loose = ellipsoid.aabb(&pose);
    println!("min-max box   {:?} .. {:?}", tight.min, tight.max);
    println!("ellipsoid box {:?} .. {:?}", loose.min, loose.max);
    println!("volume ratio  {:.3}", loose.volume() / tight.volume());
    Ok(())
}
