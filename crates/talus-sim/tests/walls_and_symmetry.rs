//! Moving walls against physics (a vibrating floor throws a grain only when Γ = A ω²/g
//! exceeds 1; a removed wall releases a grain; a rotating slab carries a grain round) and
//! action–reaction: swapping which grain of a pair is first gives opposite forces.

use std::sync::Arc;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use talus_geom::glam::{DQuat, DVec3};
use talus_geom::{Pose, generate};
use talus_sim::force::{Coefficients, ForceModel, ForceModelRegistry};
use talus_sim::material::Material;
use talus_sim::wall::{Motion, Wall, WallGeometry};
use talus_sim::{BodyRef, GrainDesc, SimParams, World};

fn volumetric() -> Box<dyn ForceModel> {
    let c = Coefficients::from([("stiffness", 1e7), ("restitution", 0.3), ("friction", 0.5)]);
    ForceModelRegistry::default()
        .build("volumetric", &c)
        .unwrap()
}

/// The largest gap between a cube and a floor vibrating as `A sin(2π f t)`, over 0.5 s
/// after 0.2 s of settling.
fn largest_gap(gamma: f64) -> f64 {
    let frequency = 20.0;
    let omega = std::f64::consts::TAU * frequency;
    let amplitude = gamma * 9.81 / (omega * omega);
    let mut w = World::new(SimParams {
        dt: 1e-5,
        ..SimParams::default()
    })
    .unwrap();
    let shape = w
        .add_shape("cube", &generate::cube(0.01).unwrap(), None)
        .unwrap();
    let quartz = w
        .add_material(Material::new("quartz", 2650.0).unwrap())
        .unwrap();
    w.set_force_model(volumetric()).unwrap();
    let floor = Wall::new(
        "floor",
        WallGeometry::HalfSpace { normal: DVec3::Z },
        Pose::IDENTITY,
        Motion::Oscillate {
            direction: DVec3::Z,
            amplitude,
            frequency,
            phase: 0.0,
        },
        None,
    )
    .unwrap();
    let fid = w.add_wall(floor).unwrap();
    let id = w
        .add_grain(GrainDesc::at_rest(
            shape,
            quartz,
            DVec3::new(0.0, 0.0, 0.005),
        ))
        .unwrap();
    let mut gap: f64 = 0.0;
    for step in 0..70_000 {
        w.step();
        if step >= 20_000 {
            let floor_z = w.walls()[fid.0 as usize].state(w.time()).pose.position.z;
            let bottom = w.grain(id).unwrap().pose.position.z - 0.005;
            gap = gap.max(bottom - floor_z);
        }
    }
    gap
}

#[test]
fn vibrating_floor_throws_a_grain_only_above_one_g() {
    // Below Γ = 1 the floor never accelerates down faster than gravity: the grain rides it.
    let below = largest_gap(0.5);
    assert!(below < 1e-5, "Γ = 0.5: gap {below}");
    // Above, the grain takes off; a free flight starting at the phase where the floor's
    // acceleration reaches −g lasts long enough to open a gap of a good fraction of A.
    let above = largest_gap(3.0);
    let amplitude = 3.0 * 9.81 / (std::f64::consts::TAU * 20.0_f64).powi(2);
    assert!(
        above > 0.3 * amplitude,
        "Γ = 3: gap {above}, amplitude {amplitude}"
    );
}

#[test]
fn removing_a_wall_releases_a_grain() {
    // Gravity tilted along +x presses a cube against a side wall at x = 0, which is removed
    // at t = 0.1 s: before, the cube stays; after, it accelerates at g sin θ (no floor).
    let g = DVec3::new(2.0, 0.0, 0.0);
    let mut w = World::new(SimParams {
        dt: 1e-5,
        gravity: g,
        ..SimParams::default()
    })
    .unwrap();
    let shape = w
        .add_shape("cube", &generate::cube(0.01).unwrap(), None)
        .unwrap();
    let quartz = w
        .add_material(Material::new("quartz", 2650.0).unwrap())
        .unwrap();
    w.set_force_model(volumetric()).unwrap();
    w.add_wall(
        Wall::new(
            "gate",
            WallGeometry::HalfSpace { normal: -DVec3::X },
            Pose::from_translation(DVec3::new(0.005, 0.0, 0.0)),
            Motion::Fixed,
            Some(0.1),
        )
        .unwrap(),
    )
    .unwrap();
    let id = w
        .add_grain(GrainDesc::at_rest(shape, quartz, DVec3::ZERO))
        .unwrap();
    while w.time() < 0.1 - 1e-9 {
        w.step();
    }
    let held = w.grain(id).unwrap().pose.position.x;
    assert!(held.abs() < 1e-4, "{held}");
    while w.time() < 0.2 - 1e-9 {
        w.step();
    }
    let s = w.grain(id).unwrap();
    assert!((s.velocity.x - 2.0 * 0.1).abs() < 1e-3, "{:?}", s.velocity);
}

#[test]
fn a_rotating_slab_carries_a_grain_round() {
    // A slab turning about z at 1 rad/s with a cube resting on it: friction drags the cube
    // along the circle it sits on.
    let mut w = World::new(SimParams {
        dt: 1e-5,
        ..SimParams::default()
    })
    .unwrap();
    let shape = w
        .add_shape("cube", &generate::cube(0.01).unwrap(), None)
        .unwrap();
    let quartz = w
        .add_material(Material::new("quartz", 2650.0).unwrap())
        .unwrap();
    w.set_force_model(volumetric()).unwrap();
    let slab = generate::rectangular_box(DVec3::new(0.2, 0.2, 0.01)).unwrap();
    w.add_wall(
        Wall::new(
            "turntable",
            WallGeometry::Body(Arc::new(slab)),
            Pose::from_translation(DVec3::new(0.0, 0.0, -0.005)),
            Motion::Rotate {
                axis: DVec3::Z,
                center: DVec3::ZERO,
                angular_velocity: 1.0,
            },
            None,
        )
        .unwrap(),
    )
    .unwrap();
    let id = w
        .add_grain(GrainDesc::at_rest(
            shape,
            quartz,
            DVec3::new(0.05, 0.0, 0.005),
        ))
        .unwrap();
    while w.time() < 0.5 - 1e-9 {
        w.step();
    }
    let s = w.grain(id).unwrap();
    // Carried round with the table: at angle ≈ 0.5 rad on the circle of radius 0.05, after
    // a short transient while friction picks it up.
    let angle = s.pose.position.y.atan2(s.pose.position.x);
    assert!(
        (s.pose.position.truncate().length() - 0.05).abs() < 1e-3,
        "{:?}",
        s.pose.position
    );
    assert!((angle - 0.5).abs() < 0.05, "angle {angle}");
    // Friction acts at the overlap's centroid, a single point: it carries the cube along
    // but transmits no twisting torque, so the cube need not spin with the table.
}

#[test]
fn swapping_a_and_b_gives_opposite_forces() {
    let mut rng = ChaCha8Rng::seed_from_u64(12);
    let grains: Vec<_> = (0..6)
        .map(|i| {
            generate::ellipsoid_grain(8 + 6 * i, DVec3::new(0.005, 0.004, 0.003), &mut rng).unwrap()
        })
        .collect();
    let mut checked = 0;
    for trial in 0..200 {
        let (ga, gb) = (&grains[trial % 6], &grains[(trial / 6) % 6]);
        let pose = |rng: &mut ChaCha8Rng, at: DVec3| {
            (
                at,
                DQuat::from_euler(
                    talus_geom::glam::EulerRot::XYZ,
                    rng.random(),
                    rng.random(),
                    rng.random(),
                ),
            )
        };
        let a = pose(&mut rng, DVec3::ZERO);
        let dir = DQuat::from_euler(
            talus_geom::glam::EulerRot::XYZ,
            rng.random(),
            rng.random(),
            rng.random(),
        ) * DVec3::X;
        let reach = rng.random_range(0.004..0.008);
        let b = pose(&mut rng, dir * reach);
        let va = DVec3::new(rng.random(), rng.random(), rng.random());
        let vb = DVec3::new(rng.random(), rng.random(), rng.random());
        // The same two grains, added in either order: the pair's first body differs.
        let run = |first_a: bool| {
            let mut w = World::new(SimParams {
                dt: 1e-7,
                gravity: DVec3::ZERO,
                ..SimParams::default()
            })
            .unwrap();
            let sa = w.add_shape("a", ga, None).unwrap();
            let sb = w.add_shape("b", gb, None).unwrap();
            let m = w.add_material(Material::new("q", 2650.0).unwrap()).unwrap();
            w.set_force_model(volumetric()).unwrap();
            let desc = |shape, (p, q): (DVec3, DQuat), v| GrainDesc {
                shape,
                material: m,
                position: p,
                orientation: q,
                velocity: v,
                angular_velocity: v * 10.0,
            };
            let (ida, idb) = if first_a {
                let x = w.add_grain(desc(sa, a, va)).unwrap();
                (x, w.add_grain(desc(sb, b, vb)).unwrap())
            } else {
                let y = w.add_grain(desc(sb, b, vb)).unwrap();
                (w.add_grain(desc(sa, a, va)).unwrap(), y)
            };
            w.step();
            w.contacts().next().map(|c| {
                // The force on grain a, whichever body of the pair it is.
                if c.a == BodyRef::Grain(ida) {
                    -c.force_on_b
                } else {
                    assert_eq!(c.b, BodyRef::Grain(ida));
                    let _ = idb;
                    c.force_on_b
                }
            })
        };
        match (run(true), run(false)) {
            (Some(f1), Some(f2)) => {
                assert!(
                    (f1 - f2).length() <= 1e-9 * f1.length().max(1e-12),
                    "trial {trial}: {f1:?} vs {f2:?}"
                );
                checked += 1;
            }
            (None, None) => {}
            (x, y) => panic!("trial {trial}: contact in one order only: {x:?} {y:?}"),
        }
    }
    assert!(checked > 50, "{checked}");
}
