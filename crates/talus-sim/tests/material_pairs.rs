//! Contact laws per pair of materials: on one incline, a quartz cube slides on steel at the
//! rate its pair's friction gives, while a quartz cube resting on another quartz cube, on
//! rubber, stays put.

use std::sync::Arc;

use talus_geom::glam::DVec3;
use talus_geom::{Pose, generate};
use talus_sim::force::{Coefficients, ForceModel, ForceModelRegistry};
use talus_sim::integrate::IntegratorKind;
use talus_sim::material::Material;
use talus_sim::wall::{Motion, Wall, WallGeometry};
use talus_sim::{GrainDesc, GrainId, SimParams, World};

const DENSITY: f64 = 2650.0;
const G: f64 = 9.81;
/// The incline: gravity tilted by 20° towards +x (tan 20° ≈ 0.36).
const ANGLE: f64 = 20.0 * std::f64::consts::PI / 180.0;

fn law(friction: f64) -> Box<dyn ForceModel> {
    let c = Coefficients::from([
        ("stiffness", 1e7),
        ("restitution", 0.2),
        ("friction", friction),
    ]);
    ForceModelRegistry::default()
        .build("volumetric", &c)
        .unwrap()
}

/// A fixed 30 × 4 × 2 cm slab whose top is the plane z = 0, centred at `y`.
fn slab(name: &str, y: f64) -> Wall {
    let body = generate::rectangular_box(DVec3::new(0.3, 0.04, 0.02)).unwrap();
    Wall::new(
        name,
        WallGeometry::Body(Arc::new(body)),
        Pose::new(DVec3::new(0.0, y, -0.01), Default::default()),
        Motion::Fixed,
        None,
    )
    .unwrap()
}

/// Three 1 cm quartz cubes on the incline: one on a steel slab, and on a rubber slab beside
/// it one cube with another on top. The default law has μ = 0.1 (quartz on steel); rubber
/// on quartz has μ = 0.9 and, if `quartz_pair`, quartz on quartz μ = 0.6. Returns the
/// velocity along the slope of each cube and its position there, at 0.05 s and 0.2 s.
fn incline(quartz_pair: bool) -> [[(f64, f64); 3]; 2] {
    let mut w = World::new(SimParams {
        dt: 1e-5,
        gravity: DVec3::new(G * ANGLE.sin(), 0.0, -G * ANGLE.cos()),
        integrator: IntegratorKind::Verlet,
        ..SimParams::default()
    })
    .unwrap();
    let cube = w
        .add_shape("cube", &generate::cube(0.01).unwrap(), None)
        .unwrap();
    let quartz = w
        .add_material(Material::new("quartz", DENSITY).unwrap())
        .unwrap();
    let steel = w
        .add_material(Material::new("steel", 7800.0).unwrap())
        .unwrap();
    let rubber = w
        .add_material(Material::new("rubber", 1100.0).unwrap())
        .unwrap();
    w.set_force_model(law(0.1)).unwrap();
    w.set_pair_force_model(rubber, quartz, law(0.9)).unwrap();
    if quartz_pair {
        w.set_pair_force_model(quartz, quartz, law(0.6)).unwrap();
    }
    w.add_wall(slab("steel", -0.03).with_material(steel))
        .unwrap();
    w.add_wall(slab("rubber", 0.03).with_material(rubber))
        .unwrap();
    let mut add = |y: f64, z: f64| -> GrainId {
        w.add_grain(GrainDesc::at_rest(cube, quartz, DVec3::new(0.0, y, z)))
            .unwrap()
    };
    let cubes = [add(-0.03, 0.005), add(0.03, 0.005), add(0.03, 0.015)];
    let mut states = [[(0.0, 0.0); 3]; 2];
    for (i, steps) in [5_000, 15_000].into_iter().enumerate() {
        for _ in 0..steps {
            w.step();
        }
        for (state, id) in states[i].iter_mut().zip(cubes) {
            let g = w.grain(id).unwrap();
            *state = (g.velocity.x, g.pose.position.x);
        }
    }
    states
}

#[test]
fn each_pair_of_materials_has_its_own_friction() {
    let [early, late] = incline(true);
    // On steel (μ = 0.1 < tan 20°) the cube slides at g (sin θ − μ cos θ).
    let expected = G * (ANGLE.sin() - 0.1 * ANGLE.cos());
    let measured = (late[0].0 - early[0].0) / 0.15;
    assert!(
        (measured - expected).abs() < 0.02 * expected,
        "slides at {measured} m/s², expected {expected}"
    );
    // On rubber (μ = 0.9) the lower cube sticks, and the upper one on it (μ = 0.6): they
    // only rock on their soft contacts, some ten micrometres.
    let moved =
        |early: &[(f64, f64); 3], late: &[(f64, f64); 3]| [1, 2].map(|i| late[i].1 - early[i].1);
    let stack = moved(&early, &late);
    assert!(
        stack.iter().all(|x| x.abs() < 1e-4),
        "the stack moved {stack:?} m in 0.15 s"
    );
    // With the default μ = 0.1 between the quartz cubes, the upper one slides off.
    let [early, late] = incline(false);
    let stack = moved(&early, &late);
    assert!(
        stack[0].abs() < 1e-4 && stack[1] > 0.01,
        "the stack moved {stack:?} m in 0.15 s without the quartz pair's law"
    );
}

#[test]
fn a_pair_law_needs_known_materials_a_default_law_and_the_same_history() {
    let mut w = World::new(SimParams::default()).unwrap();
    let quartz = w
        .add_material(Material::new("quartz", DENSITY).unwrap())
        .unwrap();
    let unknown = talus_sim::material::MaterialId(3);
    let err = w
        .set_pair_force_model(quartz, quartz, law(0.6))
        .unwrap_err();
    assert!(err.to_string().contains("before a default"), "{err}");
    w.set_force_model(law(0.1)).unwrap();
    let err = w
        .set_pair_force_model(quartz, unknown, law(0.6))
        .unwrap_err();
    assert!(
        matches!(err, talus_sim::SimError::UnknownId { .. }),
        "{err}"
    );
    // A frictionless law of parts keeps no history, the default law 3 values.
    let frictionless = ForceModelRegistry::default()
        .build_law(
            "bare",
            &[talus_sim::force::PartChoice {
                role: talus_sim::force::Role::Normal,
                name: "volumetric",
                coefficients: &Coefficients::from([("stiffness", 1e7)]),
            }],
        )
        .unwrap();
    let err = w
        .set_pair_force_model(quartz, quartz, frictionless)
        .unwrap_err();
    assert!(err.to_string().contains("same history"), "{err}");
    w.set_pair_force_model(quartz, quartz, law(0.6)).unwrap();
    assert_eq!(
        w.force_model_between(quartz, quartz).unwrap().name(),
        "volumetric"
    );
}
