//! Cohesion against its laws: a liquid bridge pulls a cube leaving a wall with Willett's
//! force at the gap measured from the cube's own position and lets go at its rupture
//! distance; a wet millimetre cube hangs below a ceiling when the bridge's pull exceeds its
//! weight and drops when it does not; dry cohesion holds with σ A.

use std::f64::consts::PI;

use talus_geom::glam::DVec3;
use talus_sim::force::{
    AreaCohesion, CapillaryBridge, ComposedLaw, ForceModel, Part, RestitutionDamping,
    VolumetricNormal,
};
use talus_sim::wall::Wall;
use talus_sim::{GrainDesc, SimParams, World};

mod common;

use common::{DENSITY, cube_world, half_space};

fn law(cohesion: Box<dyn Part>) -> Box<dyn ForceModel> {
    Box::new(
        ComposedLaw::new(
            "wet",
            vec![
                Box::new(VolumetricNormal { stiffness: 1e6 }),
                Box::new(RestitutionDamping { restitution: 0.5 }),
                cohesion,
            ],
        )
        .unwrap(),
    )
}

/// A world with gravity `g` (downwards), a cube of `edge` and the law.
fn world(
    g: f64,
    edge: f64,
    dt: f64,
    law: Box<dyn ForceModel>,
) -> (
    World,
    talus_sim::shape::ShapeId,
    talus_sim::material::MaterialId,
) {
    let params = SimParams {
        dt,
        gravity: DVec3::new(0.0, 0.0, -g),
        ..SimParams::default()
    };
    let (mut w, cube, quartz) = cube_world(params, edge);
    w.set_force_model(law).unwrap();
    (w, cube, quartz)
}

fn plane(normal: DVec3) -> Wall {
    half_space("plane", DVec3::ZERO, normal)
}

/// Equivalent radius of a cube of `edge`.
fn equivalent_radius(edge: f64) -> f64 {
    (0.75 * edge * edge * edge / PI).cbrt()
}

#[test]
fn a_bridge_pulls_by_willetts_law_at_the_measured_gap_and_ruptures_at_its_distance() {
    // A 1 mm cube leaves the floor at 0.5 m/s without gravity, a water bridge of 10⁻¹¹ m³
    // (rupture at 0.25 mm) behind it.
    let (edge, dt, speed) = (1e-3, 5e-7, 0.5);
    let bridge = CapillaryBridge {
        surface_tension: 0.072,
        contact_angle: 0.3,
        liquid_volume: 1e-11,
    };
    let (mut w, cube, quartz) = world(0.0, edge, dt, law(Box::new(bridge)));
    w.add_wall(plane(DVec3::Z)).unwrap();
    let mut d = GrainDesc::at_rest(cube, quartz, DVec3::new(0.0, 0.0, 0.5 * edge - 1e-6));
    d.velocity = DVec3::Z * speed;
    let id = w.add_grain(d).unwrap();
    // Against the floor the pair's length is 2r.
    let length = 2.0 * equivalent_radius(edge);
    let (mut pulled, mut released, mut start) = (0, None, None);
    for step in 0..2000 {
        w.step();
        let g = w.grain(id).unwrap();
        // The forces of a step are found after its drift (Verlet), at the gap before the
        // last half kick: the cube's bottom face's height, from its position.
        let gap = g.pose.position.z - 0.5 * edge;
        let pull = w.wall_loads()[0].force.z;
        if gap <= 0.0 {
            continue;
        }
        start.get_or_insert((gap, g.velocity.z));
        if pull > 0.0 {
            let expected = bridge.force(length, gap);
            assert!(
                (pull - expected).abs() < 1e-9 * expected,
                "step {step}: pull {pull} N at a gap of {gap} m, Willett gives {expected}"
            );
            pulled += 1;
        } else if released.is_none() {
            released = Some(gap);
        }
    }
    let released = released.expect("the bridge never ruptured");
    assert!(pulled > 100, "{pulled} steps with a bridge");
    assert!(
        (released - bridge.rupture_distance()).abs() < 2.0 * speed * dt,
        "ruptured at {released} m, expected {}",
        bridge.rupture_distance()
    );
    // It leaves slower by the bridge's work, the integral of its force over the gap.
    let (from, v0) = start.unwrap();
    let v = w.grain(id).unwrap().velocity.z;
    let m = DENSITY * edge * edge * edge;
    let n = 100_000;
    let span = bridge.rupture_distance() - from;
    let work: f64 = (0..n)
        .map(|i| bridge.force(length, from + (i as f64 + 0.5) / n as f64 * span) * span / n as f64)
        .sum();
    let expected = (v0 * v0 - 2.0 * work / m).sqrt();
    assert!(
        (v - expected).abs() < 0.01 * (v0 - expected),
        "leaves at {v} m/s, the bridge's work leaves {expected} (from {v0})"
    );
}

/// A 1 mm cube touching a ceiling from below, held by a bridge of surface tension `gamma`
/// (or by dry cohesion of `pressure`): how far it has fallen after 0.1 s.
fn hanging(cohesion: Box<dyn Part>) -> f64 {
    let edge = 1e-3;
    let (mut w, cube, quartz) = world(9.81, edge, 2e-6, law(cohesion));
    w.add_wall(plane(-DVec3::Z)).unwrap();
    let start = -0.5 * edge + 1e-9;
    let id = w
        .add_grain(GrainDesc::at_rest(
            cube,
            quartz,
            DVec3::new(0.0, 0.0, start),
        ))
        .unwrap();
    for _ in 0..50_000 {
        w.step();
    }
    start - w.grain(id).unwrap().pose.position.z
}

#[test]
fn a_wet_grain_hangs_below_a_ceiling_when_the_bridge_outpulls_its_weight() {
    // The bridge against a plane pulls 2π (2r) γ cos θ: with r = 0.62 mm, 1.9 × the weight
    // of the cube (2.6·10⁻⁵ N) at γ = 0.0063 N/m, 0.53 × at γ = 0.0018 N/m.
    let edge = 1e-3;
    let weight = DENSITY * edge * edge * edge * 9.81;
    let gamma_for = |ratio: f64| ratio * weight / (4.0 * PI * equivalent_radius(edge));
    let wet = |ratio| {
        hanging(Box::new(CapillaryBridge {
            surface_tension: gamma_for(ratio),
            contact_angle: 0.0,
            liquid_volume: 1e-12,
        }))
    };
    let held = wet(1.9);
    assert!(
        held.abs() < 1e-6,
        "fell {held} m with a bridge of 1.9 weights"
    );
    let dropped = wet(0.53);
    assert!(
        dropped > 1e-2,
        "fell only {dropped} m with a bridge of 0.53 weights"
    );
    // Dry cohesion over the face's area: σ A against the weight.
    let sigma_for = |ratio: f64| ratio * weight / (edge * edge);
    let dry = |ratio| {
        hanging(Box::new(AreaCohesion {
            pressure: sigma_for(ratio),
        }))
    };
    assert!(dry(1.5).abs() < 1e-6 && dry(0.5) > 1e-2);
}

#[test]
fn two_faces_parallel_across_a_bridge_pull_at_their_middles() {
    // Two 1 mm cubes face to face part at ±0.25 m/s without gravity; the bridge between
    // their faces pulls along the line of their centres: neither turns, and they leave
    // with their momentum balanced.
    let (edge, dt) = (1e-3, 5e-7);
    let bridge = CapillaryBridge {
        surface_tension: 0.072,
        contact_angle: 0.0,
        liquid_volume: 1e-11,
    };
    let (mut w, cube, quartz) = world(0.0, edge, dt, law(Box::new(bridge)));
    let mut ids = Vec::new();
    for side in [-1.0, 1.0] {
        let mut d = GrainDesc::at_rest(cube, quartz, DVec3::X * side * (0.5 * edge - 5e-7));
        d.velocity = DVec3::X * side * 0.25;
        ids.push(w.add_grain(d).unwrap());
    }
    let mut bridged = 0;
    for _ in 0..4000 {
        bridged += usize::from(w.step().contacts > 0);
    }
    assert!(bridged > 100, "{bridged} steps with a bridge");
    assert_eq!(w.stats().contacts, 0, "the bridge has ruptured");
    let (a, b) = (w.grain(ids[0]).unwrap(), w.grain(ids[1]).unwrap());
    assert!(
        a.angular_velocity.length() < 1e-9 && b.angular_velocity.length() < 1e-9,
        "spins {:?} {:?}",
        a.angular_velocity,
        b.angular_velocity
    );
    assert!((a.velocity + b.velocity).length() < 1e-12);
    assert!(b.velocity.x < 0.25, "the bridge slowed them");
}
