//! Building a world in code: shapes in their principal frame, grains placed as given,
//! loads, removal, box pairs, parameter checks.

use talus_geom::glam::{DQuat, DVec3};
use talus_geom::{ConvexPolyhedron, generate};
use talus_sim::integrate::{IntegratorKind, Load};
use talus_sim::material::{Material, MaterialId};
use talus_sim::shape::ShapeId;
use talus_sim::{BoundingMethod, GrainDesc, SimError, SimParams, World};

fn world(params: SimParams) -> (World, ShapeId, MaterialId) {
    let mut w = World::new(params).unwrap();
    let shape = w
        .add_shape("cube", &generate::cube(1.0).unwrap(), None)
        .unwrap();
    let material = w
        .add_material(Material::new("quartz", 2650.0).unwrap())
        .unwrap();
    (w, shape, material)
}

#[test]
fn shapes_are_moved_to_their_principal_frame_and_grains_placed_as_given() {
    // A box off the origin and turned: its grain, placed at its own centre of mass with
    // identity orientation, has exactly the input vertices.
    let turn = DQuat::from_euler(talus_geom::glam::EulerRot::ZYX, 0.4, -0.2, 1.0);
    let corners: Vec<DVec3> = generate::rectangular_box(DVec3::new(0.3, 0.5, 0.7))
        .unwrap()
        .vertices()
        .iter()
        .map(|&v| turn * v + DVec3::new(2.0, -1.0, 0.5))
        .collect();
    let poly = ConvexPolyhedron::from_points(&corners).unwrap();
    let (mut w, _, material) = world(SimParams::default());
    let shape = w.add_shape("brick", &poly, None).unwrap();
    let s = w.shapes().get(shape).unwrap().clone();
    assert!((s.input_center_of_mass - DVec3::new(2.0, -1.0, 0.5)).length() < 1e-12);
    assert!(s.body.vertex_centroid().length() < 1e-12);
    let m = 0.3 * 0.5 * 0.7;
    let expected = DVec3::new(
        0.5 * 0.5 + 0.3 * 0.3,
        0.7 * 0.7 + 0.3 * 0.3,
        0.7 * 0.7 + 0.5 * 0.5,
    ) * (m / 12.0);
    // Ascending principal moments.
    assert!(
        (s.unit_inertia - DVec3::new(expected.x, expected.y, expected.z))
            .abs()
            .max_element()
            < 1e-14,
        "{:?}",
        s.unit_inertia
    );
    let id = w
        .add_grain(GrainDesc::at_rest(shape, material, s.input_center_of_mass))
        .unwrap();
    let placed = w.grain_vertices(id).unwrap();
    for (got, want) in placed.iter().zip(poly.vertices()) {
        assert!((*got - *want).length() < 1e-12, "{got:?} vs {want:?}");
    }
    let state = w.grain(id).unwrap();
    assert!((state.inertia.mass - 2650.0 * m).abs() < 1e-12);
    assert!((state.orientation.dot(DQuat::IDENTITY).abs() - 1.0).abs() < 1e-12);
}

#[test]
fn loads_act_for_one_step_only() {
    let params = SimParams {
        dt: 1e-3,
        gravity: DVec3::ZERO,
        ..SimParams::default()
    };
    let (mut w, shape, material) = world(params);
    let a = w
        .add_grain(GrainDesc::at_rest(shape, material, DVec3::ZERO))
        .unwrap();
    let b = w
        .add_grain(GrainDesc::at_rest(
            shape,
            material,
            DVec3::new(5.0, 0.0, 0.0),
        ))
        .unwrap();
    let mass = w.grain(a).unwrap().inertia.mass;
    // Applied every step, a load is a constant force: exact uniform acceleration.
    let force = DVec3::new(0.0, 2.0, 0.0) * mass;
    for _ in 0..1000 {
        w.apply_load(a, force, DVec3::ZERO).unwrap();
        w.step();
    }
    let t = w.time();
    let sa = w.grain(a).unwrap();
    assert!(
        (sa.pose.position.y - t * t).abs() < 1e-12,
        "{}",
        sa.pose.position.y
    );
    // b felt nothing.
    assert_eq!(w.grain(b).unwrap().pose.position, DVec3::new(5.0, 0.0, 0.0));
    // A torque applied from a grain's first step spins it up: ω = D t / I about a principal
    // axis of a cube, to the accuracy of the integrator.
    let c = w
        .add_grain(GrainDesc::at_rest(
            shape,
            material,
            DVec3::new(-5.0, 0.0, 0.0),
        ))
        .unwrap();
    let torque = DVec3::new(0.0, 0.0, 1e3);
    let i = w.grain(c).unwrap().inertia.principal.z;
    for _ in 0..100 {
        w.apply_load(c, DVec3::ZERO, torque).unwrap();
        w.step();
    }
    let omega = w.grain(c).unwrap().angular_velocity;
    let expected = 1e3 * 0.1 / i;
    assert!(
        (omega.z - expected).abs() < 1e-9 * expected,
        "{omega:?} vs {expected}"
    );
    // Once the torque stops, the spin settles within a few steps (the predictor's higher
    // derivatives still carry the old acceleration) and then stays constant.
    for _ in 0..20 {
        w.step();
    }
    let settled = w.grain(c).unwrap().angular_velocity;
    w.step();
    let again = w.grain(c).unwrap().angular_velocity;
    assert!((again - settled).length() < 1e-12 * settled.length());
    assert!((settled.z - expected).abs() < 1e3 / i * 1e-3, "{settled:?}");
}

#[test]
fn box_pairs_start_and_end() {
    for bounding in [BoundingMethod::MinMax, BoundingMethod::Ellipsoid] {
        let params = SimParams {
            dt: 1e-3,
            gravity: DVec3::ZERO,
            bounding,
            margin: 0.01,
            integrator: IntegratorKind::Verlet,
            ..SimParams::default()
        };
        let (mut w, shape, material) = world(params);
        let a = w
            .add_grain(GrainDesc::at_rest(shape, material, DVec3::ZERO))
            .unwrap();
        let mut desc = GrainDesc::at_rest(shape, material, DVec3::new(3.0, 0.0, 0.0));
        desc.velocity = DVec3::new(-10.0, 0.0, 0.0);
        let b = w.add_grain(desc).unwrap();
        let mut met = None;
        let mut parted = None;
        for step in 0..600 {
            if step == 200 {
                // Send b back.
                let v = w.grain(b).unwrap().velocity;
                w.apply_load(
                    b,
                    -2.0 * v * w.grain(b).unwrap().inertia.mass / 1e-3,
                    DVec3::ZERO,
                )
                .unwrap();
            }
            let stats = *w.step();
            if stats.pairs_started == 1 && met.is_none() {
                met = Some(w.time());
                assert_eq!(w.box_pairs(), vec![(a, b)]);
            }
            if stats.pairs_ended == 1 {
                parted = Some(w.time());
            }
            // The boxes contain the grains.
            for id in [a, b] {
                let aabb = w.grain_box(id).unwrap().unwrap();
                for v in w.grain_vertices(id).unwrap() {
                    assert!(aabb.contains_point(v));
                }
            }
        }
        assert!(met.is_some() && parted.is_some(), "{bounding:?}");
    }
}

#[test]
fn removed_grains_leave_their_pairs() {
    let (mut w, shape, material) = world(SimParams::default());
    let a = w
        .add_grain(GrainDesc::at_rest(shape, material, DVec3::ZERO))
        .unwrap();
    let b = w
        .add_grain(GrainDesc::at_rest(
            shape,
            material,
            DVec3::new(0.5, 0.0, 0.0),
        ))
        .unwrap();
    w.step();
    assert_eq!(w.box_pairs(), vec![(a, b)]);
    w.remove_grain(a).unwrap();
    let stats = *w.step();
    assert_eq!(stats.pairs_ended, 1);
    assert!(w.box_pairs().is_empty());
    assert!(matches!(w.grain(a), Err(SimError::UnknownId { .. })));
    assert!(w.remove_grain(a).is_err());
    assert_eq!(w.grains().collect::<Vec<_>>(), vec![b]);
    assert_eq!(w.grain_count(), 1);
}

/// The states of all grains at once are those read one by one, in the order of the ids,
/// with gaps left by removed grains, for grains not yet stepped and for both integrators;
/// the positions alone are theirs.
#[test]
fn all_grain_states_are_the_states_read_one_by_one() {
    for integrator in [IntegratorKind::Verlet, IntegratorKind::Gear] {
        let (mut w, shape, material) = world(SimParams {
            integrator,
            ..SimParams::default()
        });
        let mut ids = Vec::new();
        for k in 0..6 {
            let mut desc =
                GrainDesc::at_rest(shape, material, DVec3::new(1.5 * k as f64, 0.0, 0.0));
            desc.velocity = DVec3::new(0.1, 0.0, -0.2 * k as f64);
            desc.angular_velocity = DVec3::new(0.0, 1.0 + k as f64, 0.0);
            ids.push(w.add_grain(desc).unwrap());
        }
        for _ in 0..3 {
            w.step();
        }
        w.remove_grain(ids[1]).unwrap();
        w.remove_grain(ids[4]).unwrap();
        // Not yet stepped: its velocities are those it was given.
        let mut late = GrainDesc::at_rest(shape, material, DVec3::new(0.0, 3.0, 0.0));
        late.velocity = DVec3::new(0.0, 0.5, 0.0);
        w.add_grain(late).unwrap();
        let one_by_one: Vec<_> = w.grains().map(|id| w.grain(id).unwrap()).collect();
        let all: Vec<_> = w.grain_states().collect();
        assert_eq!(all, one_by_one, "{integrator:?}");
        assert_eq!(all.len(), 5);
        assert_eq!(all.last().unwrap().velocity, DVec3::new(0.0, 0.5, 0.0));
        // The positions alone are those of the states, in the same order.
        let positions: Vec<_> = w.grain_positions().collect();
        let of_states: Vec<_> = all
            .iter()
            .map(|g| (g.id, g.pose.position, g.inertia.mass))
            .collect();
        assert_eq!(positions, of_states, "{integrator:?}");
    }
}

#[test]
fn bad_input_is_rejected_with_a_reason() {
    for dt in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        let r = World::new(SimParams {
            dt,
            ..SimParams::default()
        });
        assert!(matches!(
            r,
            Err(SimError::InvalidParameter { name: "dt", .. })
        ));
    }
    assert!(
        World::new(SimParams {
            margin: -0.1,
            ..SimParams::default()
        })
        .is_err()
    );
    assert!(
        World::new(SimParams {
            gravity: DVec3::NAN,
            ..SimParams::default()
        })
        .is_err()
    );
    assert!(Material::new("x", 0.0).is_err());
    let (mut w, shape, material) = world(SimParams::default());
    assert!(matches!(
        w.add_grain(GrainDesc::at_rest(ShapeId(7), material, DVec3::ZERO)),
        Err(SimError::UnknownId { kind: "shape", .. })
    ));
    assert!(matches!(
        w.add_grain(GrainDesc::at_rest(shape, MaterialId(3), DVec3::ZERO)),
        Err(SimError::UnknownId {
            kind: "material",
            ..
        })
    ));
    let mut d = GrainDesc::at_rest(shape, material, DVec3::ZERO);
    d.position.x = f64::NAN;
    assert!(w.add_grain(d).is_err());
    let mut d = GrainDesc::at_rest(shape, material, DVec3::ZERO);
    d.orientation = DQuat::from_xyzw(0.0, 0.0, 0.0, 2.0);
    let err = w.add_grain(d).unwrap_err();
    assert!(err.to_string().contains("unit quaternion"), "{err}");
    let id = w
        .add_grain(GrainDesc::at_rest(shape, material, DVec3::ZERO))
        .unwrap();
    assert!(w.apply_load(id, DVec3::INFINITY, DVec3::ZERO).is_err());
    assert!(w.set_dt(0.0).is_err());
}

#[test]
fn memory_per_grain_is_small() {
    let (w, _, _) = world(SimParams::default());
    let bytes = w.bytes_per_grain();
    println!("bytes per grain (Gear): {bytes}");
    assert!(bytes < 800, "{bytes} bytes per grain");
}

#[test]
fn changing_dt_keeps_the_motion() {
    // A parabola stays exact across a change of time step: the scaled derivatives are
    // rescaled with it.
    let params = SimParams {
        dt: 1e-3,
        ..SimParams::default()
    };
    let (mut w, shape, material) = world(params);
    let mut d = GrainDesc::at_rest(shape, material, DVec3::ZERO);
    d.velocity = DVec3::new(1.0, 0.0, 4.0);
    let id = w.add_grain(d).unwrap();
    for _ in 0..300 {
        w.step();
    }
    w.set_dt(2.5e-4).unwrap();
    for _ in 0..800 {
        w.step();
    }
    let t = w.time();
    assert!((t - 0.5).abs() < 1e-15);
    let x = DVec3::new(1.0, 0.0, 4.0) * t + 0.5 * w.params().gravity * t * t;
    assert!((w.grain(id).unwrap().pose.position - x).length() < 1e-12);
    let _ = Load::default();
}

#[test]
fn the_critical_time_step_of_a_kind_of_grain_is_the_worlds_for_that_grain() {
    // A unit cube of quartz under the volumetric law k V / ℓ: its stiffness against a
    // contact of the cube's circumscribed disc (radius √3/2) over its equivalent-sphere
    // radius, K = k π r² / ℓ, and the step 0.1 π √(m / 2K): a tenth of the duration of a
    // collision of two such cubes (design §5).
    let (mut w, cube, quartz) = world(SimParams::default());
    w.set_force_model(
        talus_sim::force::ForceModelRegistry::default()
            .build(
                "volumetric",
                &talus_sim::force::Coefficients::from([("stiffness", 1e6)]),
            )
            .unwrap(),
    )
    .unwrap();
    let mass = 2650.0;
    let radius: f64 = 3.0_f64.sqrt() / 2.0;
    let equivalent = (0.75 / std::f64::consts::PI).cbrt();
    let stiffness = 1e6 * std::f64::consts::PI * radius * radius / equivalent;
    let expected = 0.1 * std::f64::consts::PI * (0.5 * mass / stiffness).sqrt();
    let of_kind = w.critical_time_step_of(cube, quartz).unwrap();
    assert!(
        (of_kind / expected - 1.0).abs() < 1e-12,
        "{of_kind} vs {expected}"
    );
    // Without grains the world's own step is unbounded; with one cube it is the cube's.
    assert_eq!(w.critical_time_step(), f64::INFINITY);
    w.add_grain(GrainDesc::at_rest(cube, quartz, DVec3::ZERO))
        .unwrap();
    assert_eq!(w.critical_time_step().to_bits(), of_kind.to_bits());
    assert!(matches!(
        w.critical_time_step_of(ShapeId(7), quartz),
        Err(SimError::UnknownId { .. })
    ));
}
