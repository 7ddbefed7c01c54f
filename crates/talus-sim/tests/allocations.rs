//! A step of a settled bed allocates nothing: every buffer of the step (bounding boxes,
//! body views, wall states, the contact list, per-contact history, loads) is kept and
//! reused from step to step. Counted by an instrumented global allocator; this file holds
//! one test so that no other test allocates meanwhile. One worker thread: with more, the
//! thread pool's job queue takes a block of memory every few dozen steps.

use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};
use std::alloc::System;
use talus_geom::glam::{DQuat, DVec3, EulerRot};
use talus_geom::{Pose, generate};
use talus_sim::force::{Coefficients, ForceModelRegistry};
use talus_sim::integrate::IntegratorKind;
use talus_sim::material::Material;
use talus_sim::wall::{Motion, Wall, WallGeometry};
use talus_sim::{GrainDesc, SimParams, World};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// 64 grains dropped a little onto a floor in a box, settled.
fn settled(integrator: IntegratorKind, model: &str, coefficients: &Coefficients) -> World {
    let mut world = World::new(SimParams {
        dt: 2e-5,
        margin: 2e-4,
        integrator,
        threads: 1,
        ..SimParams::default()
    })
    .unwrap();
    let shape = world
        .add_shape(
            "grain",
            &generate::ellipsoid_grain(
                20,
                DVec3::new(0.005, 0.004, 0.003),
                &mut <rand_chacha::ChaCha8Rng as rand::SeedableRng>::seed_from_u64(5),
            )
            .unwrap(),
            None,
        )
        .unwrap();
    let quartz = world
        .add_material(Material::new("quartz", 2650.0).unwrap())
        .unwrap();
    world
        .set_force_model(
            ForceModelRegistry::default()
                .build(model, coefficients)
                .unwrap(),
        )
        .unwrap();
    // Gear's stable step is several times smaller than Verlet's with damping.
    let critical = world.critical_time_step_of(shape, quartz).unwrap();
    if world.params().dt > critical {
        world.set_dt(0.9 * critical).unwrap();
    }
    let width = 4.0 * 0.011;
    for (normal, at) in [
        (DVec3::Z, DVec3::ZERO),
        (DVec3::X, DVec3::ZERO),
        (-DVec3::X, DVec3::new(width, 0.0, 0.0)),
        (DVec3::Y, DVec3::ZERO),
        (-DVec3::Y, DVec3::new(0.0, width, 0.0)),
    ] {
        world
            .add_wall(
                Wall::new(
                    "wall",
                    WallGeometry::HalfSpace { normal },
                    Pose::from_translation(at),
                    Motion::Fixed,
                    None,
                )
                .unwrap(),
            )
            .unwrap();
    }
    for i in 0..64 {
        let cell = DVec3::new((i % 4) as f64, ((i / 4) % 4) as f64, (i / 16) as f64) + 0.5;
        let mut desc = GrainDesc::at_rest(shape, quartz, cell * 0.011);
        desc.orientation = DQuat::from_euler(EulerRot::XYZ, i as f64, 2.0 * i as f64, 0.5);
        world.add_grain(desc).unwrap();
    }
    // 0.12 s to settle.
    for _ in 0..(0.12 / world.params().dt) as usize {
        world.step();
    }
    world
}

#[test]
fn a_step_of_a_settled_bed_allocates_nothing() {
    for (integrator, model, coefficients) in [
        (
            IntegratorKind::Verlet,
            "volumetric",
            Coefficients::from([("stiffness", 1e6), ("restitution", 0.3), ("friction", 0.5)]),
        ),
        (
            IntegratorKind::Gear,
            "volumetric_yade",
            Coefficients::from([("kn", 5e8), ("ks", 5e3)]),
        ),
    ] {
        let mut world = settled(integrator, model, &coefficients);
        // Warm: buffers reach the largest size the bed needs.
        for _ in 0..2000 {
            world.step();
        }
        let region = Region::new(GLOBAL);
        let mut contacts = 0;
        for _ in 0..200 {
            contacts += world.step().contacts;
        }
        let change = region.change();
        assert!(
            contacts > 200 * 64,
            "{model}: the bed is in contact ({contacts})"
        );
        assert_eq!(
            (change.allocations, change.reallocations),
            (0, 0),
            "{model} with {integrator:?}: allocations in 200 steps: {change:?}"
        );
    }
}
