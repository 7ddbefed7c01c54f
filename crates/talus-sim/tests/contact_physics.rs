//! Contacts against physics: restitution of a head-on collision and of a face-down drop
//! under Feng's law, undamped and frictionless parts, a grain at rest on a floor,
//! sticking and sliding on an incline, momentum conservation, action and reaction, couples
//! from the contact law, and bit-identical results for any thread count.

use std::sync::Arc;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use talus_geom::glam::{DQuat, DVec3};
use talus_geom::{Pose, generate};
use talus_sim::force::{
    Coefficients, ComposedLaw, ContactInput, ContactLoad, ForceModel, ForceModelRegistry, Part,
    PartChoice, RestitutionDamping, Role, RollingResistance, TangentialSpring, TwistingSpring,
    VolumetricNormal,
};
use talus_sim::integrate::IntegratorKind;
use talus_sim::material::Material;
use talus_sim::wall::{Motion, Wall, WallGeometry};
use talus_sim::{GrainDesc, SimError, SimParams, World};

mod common;

use common::{DENSITY, cube_world, half_space};

fn model(name: &str, coefficients: &[(&str, f64)]) -> Box<dyn talus_sim::force::ForceModel> {
    let c = Coefficients(
        coefficients
            .iter()
            .map(|(k, v)| (k.to_string(), *v))
            .collect(),
    );
    ForceModelRegistry::default().build(name, &c).unwrap()
}

fn floor() -> Wall {
    half_space("floor", DVec3::ZERO, DVec3::Z)
}

/// Two 1 cm cubes meeting face to face along x at 1 m/s under `volumetric` (stiffness
/// 1e7 Pa, no friction) with `restitution`: the measured restitution and the ratio of
/// kinetic energies after and before.
fn head_on(restitution: f64, integrator: IntegratorKind) -> (f64, f64) {
    let law = model(
        "volumetric",
        &[
            ("stiffness", 1e7),
            ("restitution", restitution),
            ("friction", 0.0),
        ],
    );
    head_on_with(law, integrator)
}

/// [`head_on`] under the contact law `law`.
fn head_on_with(law: Box<dyn ForceModel>, integrator: IntegratorKind) -> (f64, f64) {
    let params = SimParams {
        dt: 2e-6,
        gravity: DVec3::ZERO,
        integrator,
        ..SimParams::default()
    };
    let (mut w, cube, quartz) = cube_world(params, 0.01);
    w.set_force_model(law).unwrap();
    let mut a = GrainDesc::at_rest(cube, quartz, DVec3::new(-0.006, 0.0, 0.0));
    a.velocity = DVec3::new(0.5, 0.0, 0.0);
    let mut b = GrainDesc::at_rest(cube, quartz, DVec3::new(0.006, 0.0, 0.0));
    b.velocity = DVec3::new(-0.5, 0.0, 0.0);
    let (ia, ib) = (w.add_grain(a).unwrap(), w.add_grain(b).unwrap());
    let energy = |w: &World| {
        [ia, ib]
            .iter()
            .map(|&i| {
                let s = w.grain(i).unwrap();
                0.5 * s.inertia.mass * s.velocity.length_squared()
            })
            .sum::<f64>()
    };
    let e0 = energy(&w);
    let mut touched = false;
    for _ in 0..20_000 {
        let stats = w.step();
        touched |= stats.contacts > 0;
        if touched && stats.contacts == 0 {
            break;
        }
    }
    assert!(touched);
    let (sa, sb) = (w.grain(ia).unwrap(), w.grain(ib).unwrap());
    ((sb.velocity.x - sa.velocity.x) / 1.0, energy(&w) / e0)
}

#[test]
fn head_on_collision_restitution() {
    for integrator in [IntegratorKind::Gear, IntegratorKind::Verlet] {
        for e in [0.3, 0.6, 0.9] {
            let (measured, _) = head_on(e, integrator);
            assert!(
                (measured - e).abs() < 0.05 * e,
                "{integrator:?}: e = {e}, measured {measured}"
            );
        }
        let (measured, energy) = head_on(1.0, integrator);
        assert!(
            (energy - 1.0).abs() < 0.01,
            "{integrator:?}: kinetic energy ratio {energy}, e {measured}"
        );
    }
}

#[test]
fn the_undamped_preset_collides_elastically() {
    // volumetric_yade has no damping part: a head-on collision keeps its energy (volumetric
    // gives the restitution asked for: head_on_collision_restitution).
    let yade = model("volumetric_yade", &[("kn", 1e9), ("ks", 1e8)]);
    let (measured, energy) = head_on_with(yade, IntegratorKind::Verlet);
    assert!(
        (energy - 1.0).abs() < 0.01 && (measured - 1.0).abs() < 0.01,
        "volumetric_yade: kinetic energy ratio {energy}, e {measured}"
    );
}

#[test]
fn energy_conserving_keeps_the_energy_of_an_oblique_spinning_collision() {
    // Two cubes turned to meet corner to face, off centre and spinning: Feng's law has a
    // potential, so without damping and friction the kinetic energy, translation and
    // rotation, is the same after the collision as before.
    let (mut w, cube, quartz) = cube_world(
        SimParams {
            dt: 1e-6,
            gravity: DVec3::ZERO,
            ..SimParams::default()
        },
        0.01,
    );
    w.set_force_model(model(
        "energy_conserving",
        &[("stiffness", 1e7), ("exponent", 1.5), ("friction", 0.0)],
    ))
    .unwrap();
    let mut a = GrainDesc::at_rest(cube, quartz, DVec3::new(-0.0075, 0.002, 0.001));
    a.orientation = DQuat::from_euler(talus_geom::glam::EulerRot::XYZ, 0.3, 0.5, 0.2);
    a.velocity = DVec3::new(0.5, 0.0, 0.0);
    a.angular_velocity = DVec3::new(0.0, 5.0, 10.0);
    let mut b = GrainDesc::at_rest(cube, quartz, DVec3::new(0.0075, 0.0, 0.0));
    b.velocity = DVec3::new(-0.5, 0.0, 0.0);
    let ids = [w.add_grain(a).unwrap(), w.add_grain(b).unwrap()];
    let energy = |w: &World| {
        ids.iter()
            .map(|&i| {
                let s = w.grain(i).unwrap();
                let spin = s.pose.rotation.inverse() * s.angular_velocity;
                0.5 * s.inertia.mass * s.velocity.length_squared()
                    + 0.5 * (s.inertia.principal * spin * spin).element_sum()
            })
            .sum::<f64>()
    };
    let before = energy(&w);
    let mut touched = false;
    for _ in 0..40_000 {
        let stats = w.step();
        touched |= stats.contacts > 0;
        if touched && stats.contacts == 0 {
            break;
        }
    }
    assert!(
        touched && w.stats().contacts == 0,
        "the cubes did not meet and part"
    );
    let after = energy(&w);
    assert!(
        (after - before).abs() < 1e-3 * before,
        "kinetic energy {before} J before, {after} J after"
    );
}

/// A 1 cm cube arriving face down on the floor at the speed of a fall from 5 cm, under
/// `energy_conserving` (k = 1e5 Pa, exponent 1, no friction) with `restitution`: its
/// vertical velocity just before it touched and just after it left the floor, and the force
/// on its face while it touched, k s².
fn face_down_drop(restitution: f64, integrator: IntegratorKind) -> (f64, f64, f64) {
    let (edge, k) = (0.01, 1e5);
    let params = SimParams {
        dt: 1e-6,
        integrator,
        ..SimParams::default()
    };
    let (mut w, cube, quartz) = cube_world(params, edge);
    w.set_force_model(model(
        "energy_conserving",
        &[
            ("stiffness", k),
            ("restitution", restitution),
            ("friction", 0.0),
        ],
    ))
    .unwrap();
    w.add_wall(floor()).unwrap();
    let mut d = GrainDesc::at_rest(cube, quartz, DVec3::new(0.0, 0.0, 0.5 * edge + 1e-4));
    d.velocity = DVec3::new(0.0, 0.0, -(2.0 * 9.81 * 0.05f64).sqrt());
    let id = w.add_grain(d).unwrap();
    let mut before = None;
    let mut last = d.velocity.z;
    for _ in 0..100_000 {
        let contacts = w.step().contacts;
        let v = w.grain(id).unwrap().velocity.z;
        if contacts > 0 && before.is_none() {
            before = Some(last);
        }
        if contacts == 0 && before.is_some() {
            return (before.unwrap_or(f64::NAN), v, k * edge * edge);
        }
        last = v;
    }
    panic!("the cube did not leave the floor");
}

#[test]
fn energy_conserving_rebounds_with_the_restitution_asked_for() {
    // Feng's law on a flat face is a constant force F = k s² while the faces overlap; with
    // the unloading at e² F and gravity m g, the work-energy balance over the descent,
    // ½ m v₀² = (F − m g) δ, and over the rise, ½ m v₁² = (e² F − m g) δ, gives
    // v₁/v₀ = √((e² F − m g)/(F − m g)): e to within m g/F (here 0.3 %).
    let weight = DENSITY * 1e-6 * 9.81;
    for integrator in [IntegratorKind::Verlet, IntegratorKind::Gear] {
        for e in [0.5, 0.8] {
            let (v0, v1, force) = face_down_drop(e, integrator);
            let expected = ((e * e * force - weight) / (force - weight)).sqrt();
            let measured = -v1 / v0;
            // A contact that starts or ends within a step gets up to one step's impulse
            // F dt more or less: 0.4 % of m v₀ here.
            assert!(
                (measured - expected).abs() < 0.01 * expected,
                "{integrator:?}: restitution {e}: rebound {measured} of the impact speed, the balance gives {expected}"
            );
        }
    }
}

#[test]
fn laws_composed_of_parts_collide_as_their_parts_say() {
    // A normal part alone is elastic: restitution 1, kinetic energy kept. With the
    // restitution damping added, the collision has the restitution asked for.
    let normal = || -> Box<dyn Part> { Box::new(VolumetricNormal { stiffness: 1e7 }) };
    for integrator in [IntegratorKind::Gear, IntegratorKind::Verlet] {
        let elastic = ComposedLaw::new("elastic", vec![normal()]).unwrap();
        let (e, energy) = head_on_with(Box::new(elastic), integrator);
        assert!(
            (e - 1.0).abs() < 0.01 && (energy - 1.0).abs() < 0.01,
            "{integrator:?}: normal part alone: e = {e}, energy ratio {energy}"
        );
        let damping = Box::new(RestitutionDamping { restitution: 0.4 });
        let damped = ComposedLaw::new("damped", vec![damping, normal()]).unwrap();
        let (e, _) = head_on_with(Box::new(damped), integrator);
        assert!(
            (e - 0.4).abs() < 0.05 * 0.4,
            "{integrator:?}: with restitution 0.4: e = {e}"
        );
    }
}

/// A registered part as a scenario names it: its role, its name and its coefficients.
type Named<'a> = (Role, &'a str, &'a [(&'a str, f64)]);

/// The law `name` of the registered parts `parts`, built as a scenario's
/// `force_model.parts` is.
fn law_of(name: &str, parts: &[Named]) -> Box<dyn ForceModel> {
    let coefficients: Vec<Coefficients> = parts
        .iter()
        .map(|(_, _, c)| Coefficients(c.iter().map(|(k, v)| (k.to_string(), *v)).collect()))
        .collect();
    let choices: Vec<PartChoice> = parts
        .iter()
        .zip(&coefficients)
        .map(|((role, name, _), coefficients)| PartChoice {
            role: *role,
            name,
            coefficients,
        })
        .collect();
    ForceModelRegistry::default()
        .build_law(name, &choices)
        .unwrap()
}

#[test]
fn damping_none_collides_elastically() {
    // A linear spring without a dashpot: a head-on collision of two equal cubes has
    // restitution 1 and keeps the kinetic energy (the relative velocity reverses).
    for integrator in [IntegratorKind::Gear, IntegratorKind::Verlet] {
        let law = law_of(
            "undamped",
            &[
                (Role::Normal, "volumetric", &[("stiffness", 1e7)]),
                (Role::Damping, "none", &[]),
                (Role::Tangential, "none", &[]),
            ],
        );
        let (e, energy) = head_on_with(law, integrator);
        assert!(
            (e - 1.0).abs() < 0.01 && (energy - 1.0).abs() < 0.01,
            "{integrator:?}: damping none: e = {e}, kinetic energy ratio {energy}"
        );
    }
}

/// A 1 cm cube resting face down on the floor at the depth that carries its weight,
/// launched along x at `speed` under the volumetric law (k 1e6 Pa, restitution 0.3) with
/// the tangential part `tangential`: its velocity and how far it went after `duration`.
fn sliding_cube(tangential: (&str, &[(&str, f64)]), speed: f64, duration: f64) -> (DVec3, f64) {
    let edge = 0.01;
    let params = SimParams {
        dt: 1e-5,
        integrator: IntegratorKind::Verlet,
        ..SimParams::default()
    };
    let (mut w, cube, quartz) = cube_world(params, edge);
    w.set_force_model(law_of(
        "law",
        &[
            (Role::Normal, "volumetric", &[("stiffness", 1e6)]),
            (Role::Damping, "restitution", &[("restitution", 0.3)]),
            (Role::Tangential, tangential.0, tangential.1),
        ],
    ))
    .unwrap();
    w.add_wall(floor()).unwrap();
    // k s² δ / ℓ = m g with ℓ = 2r against a wall, r the equivalent radius.
    let mass = DENSITY * edge.powi(3);
    let radius = (0.75 * edge.powi(3) / std::f64::consts::PI).cbrt();
    let depth = mass * 9.81 * 2.0 * radius / (1e6 * edge * edge);
    let mut d = GrainDesc::at_rest(cube, quartz, DVec3::new(0.0, 0.0, 0.5 * edge - depth));
    d.velocity = DVec3::X * speed;
    let id = w.add_grain(d).unwrap();
    for _ in 0..(duration / w.params().dt).round() as usize {
        w.step();
    }
    let g = w.grain(id).unwrap();
    (g.velocity, g.pose.position.x)
}

#[test]
fn tangential_none_lets_a_cube_slide_without_friction() {
    // Frictionless: the floor pushes along its normal only, so the cube keeps its velocity
    // along the floor and goes v t.
    let (speed, duration) = (0.2, 0.05);
    let (v, x) = sliding_cube(("none", &[]), speed, duration);
    assert!(
        (v.x - speed).abs() < 1e-12 && v.y.abs() < 1e-12,
        "velocity {v:?} after sliding {duration} s"
    );
    assert!((x - speed * duration).abs() < 1e-9, "went {x} m");
    // The same cube with Coulomb friction μ = 0.3 slows at μ g: v = v₀ − μ g t.
    let (v, _) = sliding_cube(("spring", &[("friction", 0.3)]), speed, duration);
    let expected = speed - 0.3 * 9.81 * duration;
    assert!(
        (v.x - expected).abs() < 0.02 * (speed - expected),
        "with friction: {} m/s, Coulomb's {expected} m/s",
        v.x
    );
}

/// A 1 cm cube resting on a floor that turns at `table` rad/s about the vertical through the
/// cube's centre (or a fixed floor and a cube spun at `spin` rad/s), under `volumetric` with
/// restitution damping, with the tangential spring (μ 0.5) when `tangential` and the
/// twisting spring (μ 0.5) when `twisting`: the cube's spin about the vertical every 100
/// steps of 1e-5 s.
fn turntable(
    table: f64,
    spin: f64,
    (tangential, twisting): (bool, bool),
    steps: usize,
) -> Vec<f64> {
    let edge = 0.01;
    let params = SimParams {
        dt: 1e-5,
        integrator: IntegratorKind::Verlet,
        ..SimParams::default()
    };
    let (mut w, cube, quartz) = cube_world(params, edge);
    let mut parts: Vec<Box<dyn Part>> = vec![
        Box::new(VolumetricNormal { stiffness: 1e6 }),
        Box::new(RestitutionDamping { restitution: 0.3 }),
    ];
    if tangential {
        parts.push(Box::new(TangentialSpring {
            friction: 0.5,
            stiffness_ratio: 2.0 / 7.0,
        }));
    }
    if twisting {
        parts.push(Box::new(TwistingSpring {
            friction: 0.5,
            stiffness_ratio: 2.0 / 7.0,
        }));
    }
    w.set_force_model(Box::new(ComposedLaw::new("law", parts).unwrap()))
        .unwrap();
    w.add_wall(
        Wall::new(
            "table",
            WallGeometry::HalfSpace { normal: DVec3::Z },
            Pose::IDENTITY,
            Motion::Rotate {
                axis: DVec3::Z,
                center: DVec3::ZERO,
                angular_velocity: table,
            },
            None,
        )
        .unwrap(),
    )
    .unwrap();
    let mut d = GrainDesc::at_rest(cube, quartz, DVec3::new(0.0, 0.0, 0.5 * edge));
    d.angular_velocity = DVec3::Z * spin;
    let id = w.add_grain(d).unwrap();
    let mut spins = Vec::new();
    for step in 0..steps {
        w.step();
        if step % 100 == 99 {
            spins.push(w.grain(id).unwrap().angular_velocity.z);
        }
    }
    spins
}

#[test]
fn a_cube_on_a_turntable_turns_with_it_only_through_twisting() {
    // The contact's centroid lies on the axis: friction alone exerts no moment, the
    // twisting spring makes the cube follow the table.
    let with = turntable(2.0, 0.0, (true, true), 30_000);
    let after = with.last().copied().unwrap();
    assert!((after - 2.0).abs() < 0.02 * 2.0, "spin {after} rad/s");
    let without = turntable(2.0, 0.0, (true, false), 30_000);
    let after = without.last().copied().unwrap();
    assert!(
        after.abs() < 0.01 * 2.0,
        "spin {after} rad/s without twisting"
    );
}

#[test]
fn a_spinning_cube_slips_at_the_twisting_limit() {
    // Spun at 30 rad/s on a fixed floor, the cube's patch slides: the moment is (2/3) μ m g
    // r_c, r_c = s/√π the radius of the face's area, and the spin falls at
    // α = (2/3) μ m g r_c / (m s²/6) = 4 μ g / (√π s). The twisting part alone: with the
    // tangential spring too, a cube spinning this fast starts to rock (the spring's
    // elongation is not turned with the spin), which changes the normal force.
    let spins = turntable(0.0, 30.0, (false, true), 3000);
    let expected = 4.0 * 0.5 * 9.81 / (std::f64::consts::PI.sqrt() * 0.01);
    // From 10 ms (the cube settled on the floor) to 25 ms, 100 steps apart.
    let measured = (spins[9] - spins[24]) / 0.015;
    assert!(
        (measured - expected).abs() < 0.03 * expected,
        "deceleration {measured} rad/s², expected {expected}"
    );
    assert!(spins[24] > 0.0, "still spinning");
    let stopped = turntable(0.0, 30.0, (false, false), 3000);
    assert!(
        stopped.last().copied().unwrap() > 29.9,
        "without twisting it keeps its spin"
    );
}

/// A ball of radius `radius`: the hull of 800 points of a Fibonacci lattice on the sphere,
/// facets about a tenth of the radius across.
fn ball(radius: f64) -> talus_geom::ConvexPolyhedron {
    let n = 800;
    let golden = std::f64::consts::PI * (3.0 - 5f64.sqrt());
    let points: Vec<DVec3> = (0..n)
        .map(|i| {
            let z = 1.0 - (2 * i + 1) as f64 / n as f64;
            let r = (1.0 - z * z).sqrt();
            let phi = golden * i as f64;
            DVec3::new(r * phi.cos(), r * phi.sin(), z) * radius
        })
        .collect();
    talus_geom::ConvexPolyhedron::from_points(&points).unwrap()
}

/// A 5 mm ball launched rolling along x at `speed` on the floor, under the volumetric law
/// with friction and, if given, rolling resistance μ_r: the farthest it rolled, where it is
/// and how fast it moves after `duration`, the distance in which the rolling resistance
/// stops it, `(m R² + I) v² / (2 R μ_r R* m g)` (energy over the work of the couple μ_r R*
/// m g per radian, R the height of its centre, R* its equivalent radius), and how far the
/// rolling spring, wound up to that couple, turns it back: `R μ_r R* m g / k_r`, k_r =
/// 2.25 μ_r² R*² K with K = k A/(2 R*), A ≈ 2π R δ the contact's area.
fn rolling_ball(rolling_friction: Option<f64>, speed: f64, duration: f64) -> ([f64; 3], [f64; 2]) {
    let radius = 0.005;
    let params = SimParams {
        dt: 2e-5,
        integrator: IntegratorKind::Verlet,
        ..SimParams::default()
    };
    let mut w = World::new(params).unwrap();
    let shape = w.add_shape("ball", &ball(radius), None).unwrap();
    let quartz = w
        .add_material(Material::new("quartz", DENSITY).unwrap())
        .unwrap();
    let mut parts: Vec<Box<dyn Part>> = vec![
        Box::new(VolumetricNormal { stiffness: 5e5 }),
        Box::new(RestitutionDamping { restitution: 0.3 }),
        Box::new(TangentialSpring {
            friction: 0.5,
            stiffness_ratio: 2.0 / 7.0,
        }),
    ];
    if let Some(friction) = rolling_friction {
        parts.push(Box::new(RollingResistance { friction }));
    }
    w.set_force_model(Box::new(ComposedLaw::new("law", parts).unwrap()))
        .unwrap();
    w.add_wall(floor()).unwrap();
    // Resting on the floor at the depth where the volumetric force k V/(2R), V ≈ π R δ²,
    // carries the weight.
    let mass = DENSITY * ball(radius).mass_properties(1.0).volume;
    let depth = (2.0 * mass * 9.81 / (5e5 * std::f64::consts::PI)).sqrt();
    let height = radius - depth;
    let mut d = GrainDesc::at_rest(shape, quartz, DVec3::new(0.0, 0.0, height));
    d.velocity = DVec3::X * speed;
    d.angular_velocity = DVec3::Y * speed / height;
    let id = w.add_grain(d).unwrap();
    let steps = (duration / w.params().dt).round() as usize;
    let mut farthest: f64 = 0.0;
    for _ in 0..steps {
        w.step();
        farthest = farthest.max(w.grain(id).unwrap().pose.position.x);
    }
    let g = w.grain(id).unwrap();
    let inertia = g.inertia.principal.x.max(g.inertia.principal.y);
    let equivalent = (3.0 * mass / (4.0 * std::f64::consts::PI * DENSITY)).cbrt();
    let mu_r = rolling_friction.unwrap_or(f64::NAN);
    let couple = mu_r * equivalent * mass * 9.81;
    let stop = (mass * height * height + inertia) * speed * speed / (2.0 * height * couple);
    let stiffness = 5e5 * 2.0 * std::f64::consts::PI * radius * depth / (2.0 * equivalent);
    let back = height * couple / (2.25 * (mu_r * equivalent).powi(2) * stiffness);
    (
        [farthest, g.pose.position.x, g.velocity.length()],
        [stop, back],
    )
}

#[test]
fn a_rolling_ball_stops_where_its_rolling_resistance_says() {
    // At 0.1 m/s with μ_r = 0.05 it stops within (1 + I/(m R²)) v²/(2 μ_r g) ≈ 14 mm
    // (R* ≈ R) in 2d/v ≈ 0.29 s; then the wound-up rolling spring turns it back by about
    // 0.6 mm, and its dashpot brings it to rest.
    let ([farthest, rest, speed], [stop, back]) = rolling_ball(Some(0.05), 0.1, 1.0);
    assert!(
        (farthest - stop).abs() < 0.02 * stop,
        "rolled {farthest} m, the model stops it in {stop} m"
    );
    assert!(speed < 1e-4, "still moving at {speed} m/s");
    assert!(
        ((farthest - rest) - back).abs() < 0.1 * back,
        "turned back by {} m, the spring's {back} m",
        farthest - rest
    );
    // Without it the ball keeps rolling: the facets and the dashpot take little.
    let ([rolled, _, speed], _) = rolling_ball(None, 0.1, 0.4);
    assert!(
        speed > 0.9 * 0.1 && rolled > 2.5 * stop,
        "without rolling resistance: {rolled} m, {speed} m/s"
    );
}

/// A grain dropped onto the floor: after `settle` steps, the largest relative difference
/// between the floor's load and the grain's weight over 2000 more steps, and how far the
/// grain moved meanwhile.
fn at_rest(grain: &talus_geom::ConvexPolyhedron, settle: usize) -> (f64, f64, f64) {
    let mut w = World::new(SimParams {
        dt: 1e-5,
        ..SimParams::default()
    })
    .unwrap();
    let shape = w.add_shape("grain", grain, None).unwrap();
    let quartz = w
        .add_material(Material::new("quartz", DENSITY).unwrap())
        .unwrap();
    w.set_force_model(model(
        "volumetric",
        &[("stiffness", 1e7), ("restitution", 0.3), ("friction", 0.6)],
    ))
    .unwrap();
    w.add_wall(floor()).unwrap();
    let id = w
        .add_grain(GrainDesc::at_rest(
            shape,
            quartz,
            DVec3::new(0.0, 0.0, 0.012),
        ))
        .unwrap();
    for _ in 0..settle {
        w.step();
    }
    let weight = w.grain(id).unwrap().inertia.mass * 9.81;
    let before = w.grain(id).unwrap().pose;
    let mut max_force_error: f64 = 0.0;
    for _ in 0..2000 {
        w.step();
        // The floor carries the grain's weight: the force on the floor is its weight, down.
        let floor_force = w.wall_loads()[0].force;
        max_force_error =
            max_force_error.max((floor_force + DVec3::new(0.0, 0.0, weight)).length() / weight);
    }
    let after = w.grain(id).unwrap().pose;
    (
        (max_force_error),
        (after.position - before.position).length(),
        w.stats().max_overlap_ratio,
    )
}

#[test]
fn grain_at_rest_on_the_floor() {
    // A cube lands flat and is at rest at once: exact balance.
    let (force, drift, depth) = at_rest(&generate::cube(0.01).unwrap(), 50_000);
    assert!(
        force < 1e-9 && drift < 1e-12,
        "cube: force off by {force:e}, drift {drift:e}"
    );
    assert!(
        depth > 0.0 && depth < 0.01,
        "cube: overlap depth ratio {depth}"
    );
    // An irregular grain bounces, rocks onto a face and settles within seconds.
    let mut rng = ChaCha8Rng::seed_from_u64(8);
    let grain = generate::ellipsoid_grain(20, DVec3::new(0.01, 0.008, 0.006), &mut rng).unwrap();
    let (force, drift, depth) = at_rest(&grain, 400_000);
    assert!(
        force < 1e-4 && drift < 1e-8,
        "grain: force off by {force:e}, drift {drift:e}"
    );
    assert!(
        depth > 0.0 && depth < 0.01,
        "grain: overlap depth ratio {depth}"
    );
}

/// Displacement along the slope of a cube released on a plane inclined by `angle` (gravity
/// turned instead of the floor), after 0.2 s.
fn slide(angle: f64, friction: f64) -> f64 {
    let g = 9.81;
    let mut w = World::new(SimParams {
        dt: 1e-5,
        gravity: DVec3::new(g * angle.sin(), 0.0, -g * angle.cos()),
        ..SimParams::default()
    })
    .unwrap();
    let shape = w
        .add_shape("cube", &generate::cube(0.01).unwrap(), None)
        .unwrap();
    let quartz = w
        .add_material(Material::new("quartz", DENSITY).unwrap())
        .unwrap();
    w.set_force_model(model(
        "volumetric",
        &[
            ("stiffness", 1e7),
            ("restitution", 0.2),
            ("friction", friction),
        ],
    ))
    .unwrap();
    w.add_wall(floor()).unwrap();
    let id = w
        .add_grain(GrainDesc::at_rest(
            shape,
            quartz,
            DVec3::new(0.0, 0.0, 0.005),
        ))
        .unwrap();
    let start = w.grain(id).unwrap().pose.position.x;
    for _ in 0..20_000 {
        w.step();
    }
    w.grain(id).unwrap().pose.position.x - start
}

#[test]
fn incline_sticks_below_and_slides_above_the_friction_angle() {
    let mu: f64 = 0.5;
    let critical = mu.atan();
    let stuck = slide(0.9 * critical, mu);
    assert!(
        stuck.abs() < 1e-5,
        "moved {stuck} m below the friction angle"
    );
    let slid = slide(1.1 * critical, mu);
    // Sliding: x = ½ g (sin θ − μ cos θ) t² once moving.
    let theta = 1.1 * critical;
    let expected = 0.5 * 9.81 * (theta.sin() - mu * theta.cos()) * 0.2 * 0.2;
    assert!(
        slid > 0.5 * expected && slid < 1.1 * expected,
        "slid {slid} m, expected about {expected} m"
    );
}

fn cloud(
    threads: usize,
    integrator: IntegratorKind,
    count: usize,
    floor_too: bool,
    gravity: DVec3,
) -> World {
    let mut w = World::new(SimParams {
        dt: 1e-5,
        gravity,
        integrator,
        threads,
        margin: 1e-4,
        ..SimParams::default()
    })
    .unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(99);
    let shapes: Vec<_> = (0..5)
        .map(|i| {
            let g =
                generate::ellipsoid_grain(12 + 4 * i, DVec3::new(0.005, 0.004, 0.003), &mut rng)
                    .unwrap();
            w.add_shape("grain", &g, None).unwrap()
        })
        .collect();
    let quartz = w
        .add_material(Material::new("quartz", DENSITY).unwrap())
        .unwrap();
    w.set_force_model(model(
        "volumetric",
        &[("stiffness", 1e6), ("restitution", 0.5), ("friction", 0.5)],
    ))
    .unwrap();
    // Gear's stable step is several times smaller than Verlet's with damping.
    let critical = shapes
        .iter()
        .map(|&s| w.critical_time_step_of(s, quartz).unwrap())
        .fold(f64::INFINITY, f64::min);
    if w.params().dt > critical {
        w.set_dt(0.9 * critical).unwrap();
    }
    if floor_too {
        w.add_wall(floor()).unwrap();
    }
    let side = (count as f64).cbrt().ceil() as usize;
    for i in 0..count {
        let cell = DVec3::new(
            (i % side) as f64,
            ((i / side) % side) as f64,
            (i / (side * side)) as f64,
        );
        let mut d = GrainDesc::at_rest(
            shapes[i % shapes.len()],
            quartz,
            cell * 0.0095 + DVec3::new(0.0, 0.0, 0.01),
        );
        d.orientation = DQuat::from_euler(
            talus_geom::glam::EulerRot::XYZ,
            rng.random(),
            rng.random(),
            rng.random(),
        );
        d.velocity = DVec3::new(
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
        ) * 0.5;
        d.angular_velocity = DVec3::new(
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
        ) * 20.0;
        w.add_grain(d).unwrap();
    }
    w
}

fn momenta(w: &World) -> (DVec3, DVec3) {
    let mut p = DVec3::ZERO;
    let mut l = DVec3::ZERO;
    for id in w.grains().collect::<Vec<_>>() {
        let s = w.grain(id).unwrap();
        p += s.inertia.mass * s.velocity;
        let to_body = s.pose.rotation.conjugate();
        let spin = s.pose.rotation * (s.inertia.principal * (to_body * s.angular_velocity));
        l += s.pose.position.cross(s.inertia.mass * s.velocity) + spin;
    }
    (p, l)
}

#[test]
fn colliding_grains_conserve_momentum() {
    for integrator in [IntegratorKind::Verlet, IntegratorKind::Gear] {
        let mut w = cloud(0, integrator, 100, false, DVec3::ZERO);
        w.step();
        let (p0, l0) = momenta(&w);
        let mut contacts = 0;
        for _ in 0..3000 {
            contacts += w.step().contacts;
        }
        assert!(contacts > 1000, "only {contacts} contact-steps");
        let (p1, l1) = momenta(&w);
        let scale_p = w
            .grains()
            .map(|i| {
                let s = w.grain(i).unwrap();
                s.inertia.mass * s.velocity.length()
            })
            .sum::<f64>();
        assert!(
            (p1 - p0).length() < 1e-10 * scale_p,
            "{integrator:?}: momentum drift {:e}",
            (p1 - p0).length() / scale_p
        );
        assert!(
            (l1 - l0).length() < 1e-10 * l0.length().max(scale_p * 0.05),
            "{integrator:?}: angular momentum drift {:e}",
            (l1 - l0).length() / l0.length()
        );
    }
}

/// A contact law with a couple `c n` about the contact normal on the second grain, after an
/// optional law for the force: the couple alone, or the couple beside `volumetric`.
struct WithCouple {
    force: Option<Box<dyn ForceModel>>,
    /// The couple: a constant, or (when `per_force`) this times the force's size times the
    /// pair's length, so that it comes and goes with the contact.
    couple: f64,
    per_force: bool,
}

impl ForceModel for WithCouple {
    fn name(&self) -> &str {
        "with_couple"
    }

    fn history_len(&self) -> usize {
        self.force.as_ref().map_or(0, |m| m.history_len())
    }

    fn load(&self, contact: &ContactInput, history: &mut [f64]) -> ContactLoad {
        let mut load = self
            .force
            .as_ref()
            .map_or(ContactLoad::default(), |m| m.load(contact, history));
        let size = if self.per_force {
            load.force.length() * contact.length
        } else {
            1.0
        };
        load.torque += contact.overlap.normal * self.couple * size;
        load
    }

    fn normal_stiffness(&self, area: f64, length: f64) -> f64 {
        self.force
            .as_ref()
            .map_or(1.0, |m| m.normal_stiffness(area, length))
    }
}

#[test]
fn a_couple_from_the_law_spins_a_cube_at_torque_over_inertia() {
    // A 1 cm cube pressed 0.1 mm into the floor, no gravity, a law of a couple alone: it
    // turns about the normal with ω = T t / I, I = m s²/6, and does not move.
    let (edge, couple) = (0.01, 2e-6);
    for integrator in [IntegratorKind::Verlet, IntegratorKind::Gear] {
        let params = SimParams {
            dt: 1e-5,
            gravity: DVec3::ZERO,
            integrator,
            ..SimParams::default()
        };
        let (mut w, cube, quartz) = cube_world(params, edge);
        w.set_force_model(Box::new(WithCouple {
            force: None,
            couple,
            per_force: false,
        }))
        .unwrap();
        w.add_wall(floor()).unwrap();
        let start = DVec3::new(0.0, 0.0, 0.5 * edge - 1e-4);
        let id = w
            .add_grain(GrainDesc::at_rest(cube, quartz, start))
            .unwrap();
        let steps = 2000;
        for _ in 0..steps {
            w.step();
        }
        let s = w.grain(id).unwrap();
        let inertia = DENSITY * edge.powi(5) / 6.0;
        let expected = couple * w.time() / inertia;
        let what = format!("{integrator:?}");
        // A grain's first step starts from the loads known before any contact is met, so
        // the couple acts from within the first step: at most one step's impulse short.
        let start_up = couple * w.params().dt / inertia;
        let error = (s.angular_velocity - DVec3::Z * expected).length();
        assert!(
            error <= start_up,
            "{what}: ω = {:?}, expected {expected} about z",
            s.angular_velocity
        );
        assert!((s.pose.position - start).length() < 1e-12, "{what}: moved");
    }
}

/// Angular momentum drift, relative, of a colliding cloud whose contacts carry a couple
/// of `couple` times their force times the pair's length about the normal, stepped 0.03 s
/// at `dt`; and every grain's final spin.
fn drift_with_couples(integrator: IntegratorKind, couple: f64, dt: f64) -> (f64, Vec<DVec3>) {
    let mut w = cloud(0, integrator, 100, false, DVec3::ZERO);
    w.set_dt(dt).unwrap();
    w.set_force_model(Box::new(WithCouple {
        force: Some(model(
            "volumetric",
            &[("stiffness", 1e6), ("restitution", 0.5), ("friction", 0.5)],
        )),
        couple,
        per_force: true,
    }))
    .unwrap();
    w.step();
    let (_, l0) = momenta(&w);
    for _ in 0..(0.03 / dt).round() as usize {
        w.step();
    }
    let spins = w
        .grains()
        .map(|id| w.grain(id).unwrap().angular_velocity)
        .collect();
    ((momenta(&w).1 - l0).length() / l0.length(), spins)
}

#[test]
fn couples_between_grains_conserve_angular_momentum() {
    // The couples are equal and opposite on the two grains of a contact: the total angular
    // momentum keeps its value (Verlet to round-off; Gear, which evaluates the forces at
    // the predicted positions, to its truncation error, below round-off's reach at its
    // stable step with this damping), while the spins differ from a run without couples.
    let (verlet, spins) = drift_with_couples(IntegratorKind::Verlet, 0.3, 1e-5);
    assert!(verlet < 1e-11, "Verlet: angular momentum drift {verlet:e}");
    let (_, plain) = drift_with_couples(IntegratorKind::Verlet, 0.0, 1e-5);
    let changed = spins
        .iter()
        .zip(&plain)
        .map(|(a, b)| (*a - *b).length())
        .fold(0.0, f64::max);
    assert!(
        changed > 1.0,
        "the couples changed spins by {changed} rad/s"
    );
    let (gear, _) = drift_with_couples(IntegratorKind::Gear, 0.3, 3e-6);
    assert!(gear < 1e-11, "Gear: angular momentum drift {gear:e}");
}

/// A cloud of a few hundred grains (the pairs on the worker threads), and one of enough
/// grains that the stages over the grains (bounds, the bodies' states: from 1 024 up) run
/// there too.
#[test]
fn thread_count_does_not_change_a_bit() {
    same_bits_on_any_thread_count(500, 400);
    same_bits_on_any_thread_count(4200, 60);
}

fn same_bits_on_any_thread_count(grains: usize, steps: usize) {
    let run = |threads| {
        let mut w = cloud(
            threads,
            IntegratorKind::Gear,
            grains,
            true,
            DVec3::new(0.0, 0.0, -9.81),
        );
        let mut contacts = 0;
        for _ in 0..steps {
            contacts += w.step().contacts;
        }
        assert!(contacts > steps, "{contacts} contacts");
        w.grains()
            .map(|i| w.grain(i).unwrap())
            .map(|s| (s.pose, s.velocity, s.angular_velocity))
            .collect::<Vec<_>>()
    };
    let one = run(1);
    assert_eq!(one.len(), grains);
    for (x, y) in [run(2), run(3)]
        .iter()
        .flat_map(|other| one.iter().zip(other))
    {
        assert_eq!(
            x.0.position.to_array().map(f64::to_bits),
            y.0.position.to_array().map(f64::to_bits)
        );
        assert_eq!(
            x.0.rotation.to_array().map(f64::to_bits),
            y.0.rotation.to_array().map(f64::to_bits)
        );
        assert_eq!(
            x.1.to_array().map(f64::to_bits),
            y.1.to_array().map(f64::to_bits)
        );
        assert_eq!(
            x.2.to_array().map(f64::to_bits),
            y.2.to_array().map(f64::to_bits)
        );
    }
}

#[test]
fn a_time_step_above_the_critical_one_is_refused() {
    let mut w = World::new(SimParams {
        dt: 1e-3,
        ..SimParams::default()
    })
    .unwrap();
    let shape = w
        .add_shape("cube", &generate::cube(0.01).unwrap(), None)
        .unwrap();
    let quartz = w
        .add_material(Material::new("quartz", DENSITY).unwrap())
        .unwrap();
    w.add_grain(GrainDesc::at_rest(shape, quartz, DVec3::ZERO))
        .unwrap();
    let err = w
        .set_force_model(model("volumetric", &[("stiffness", 1e7)]))
        .err()
        .unwrap();
    let SimError::TimeStepTooLarge { critical, .. } = err else {
        panic!("{err}")
    };
    assert!(err.to_string().contains("use dt ≤"), "{err}");
    w.set_dt(critical * 0.99).unwrap();
    w.set_force_model(model("volumetric", &[("stiffness", 1e7)]))
        .unwrap();
    assert!(w.set_dt(critical * 1.5).is_err());
    let _ = Arc::new(0);
}
