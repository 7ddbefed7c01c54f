//! The critical time step against the dynamics it guards (the rule: `talus_sim::kind`).
//!
//! * A harmonic chain of cubes pressed face to face between two walls, where the bound on
//!   the fastest mode over several contacts is reached: each scheme becomes unstable where
//!   its limit at the chain's fastest mode (from the chain's own stiffness matrix) says,
//!   undamped and damped, and the rule's step for the cube lies below that.
//! * A cube rocking on its face on the floor: it rocks at the frequency of its contact's
//!   elastic foundation, `ω² = k s² / (2 ℓ m)` for the volumetric law, and both schemes stay
//!   stable at the rule's step (the rocking does not grow).

use talus_geom::glam::DVec3;
use talus_sim::force::{
    ComposedLaw, ContactInput, ContactLoad, ForceModel, GrainKind, Part, RestitutionDamping,
    TangentialSpring, VolumetricNormal, damping_ratio,
};
use talus_sim::integrate::IntegratorKind;
use talus_sim::{GrainDesc, GrainId, SimParams, World};

mod common;

use common::{DENSITY, cube_world, half_space};

const EDGE: f64 = 0.01;
/// The volumetric law's k (Pa).
const K: f64 = 1e7;
/// Cubes in the chain.
const LINKS: usize = 8;
/// Their overlap with each other and with the walls (m).
const PRESS: f64 = 1e-4;

/// The volumetric normal part, a restitution damping if given, and, if `friction`, a
/// tangential spring: without it a compressed chain buckles sideways (nothing holds a cube
/// whose contact normal tilts).
fn law(restitution: Option<f64>, friction: bool) -> Box<dyn ForceModel> {
    let mut parts: Vec<Box<dyn Part>> = vec![Box::new(VolumetricNormal { stiffness: K })];
    if let Some(restitution) = restitution {
        parts.push(Box::new(RestitutionDamping { restitution }));
    }
    if friction {
        parts.push(Box::new(TangentialSpring {
            friction: 1.0,
            stiffness_ratio: 2.0 / 7.0,
        }));
    }
    Box::new(ComposedLaw::new("law", parts).unwrap())
}

/// A law that acts as `law` but reports no stiffness, so that the world takes any step:
/// the chain is stepped past the scheme's limit on purpose.
struct Unchecked(Box<dyn ForceModel>);

impl ForceModel for Unchecked {
    fn name(&self) -> &str {
        "unchecked"
    }
    fn history_len(&self) -> usize {
        self.0.history_len()
    }
    fn load(&self, contact: &ContactInput, history: &mut [f64]) -> ContactLoad {
        self.0.load(contact, history)
    }
    fn normal_stiffness(&self, _area: f64, _length: f64) -> f64 {
        0.0
    }
}

/// A world of `integrator` and `dt`, no gravity unless `gravity`, with the cube and quartz.
fn world(
    integrator: IntegratorKind,
    dt: f64,
    gravity: bool,
    restitution: Option<f64>,
) -> (
    World,
    talus_sim::shape::ShapeId,
    talus_sim::material::MaterialId,
) {
    let params = SimParams {
        dt,
        gravity: if gravity {
            DVec3::new(0.0, 0.0, -9.81)
        } else {
            DVec3::ZERO
        },
        integrator,
        ..SimParams::default()
    };
    let (mut w, cube, quartz) = cube_world(params, EDGE);
    w.set_force_model(law(restitution, false)).unwrap();
    (w, cube, quartz)
}

/// The cubes' mass and equivalent radius.
fn cube_mass_and_radius() -> (f64, f64) {
    let volume = EDGE * EDGE * EDGE;
    (
        DENSITY * volume,
        (0.75 * volume / std::f64::consts::PI).cbrt(),
    )
}

/// The chain's fastest mode: its angular frequency and its damping ratio, from the
/// stiffness and dashpot matrices of its contacts (between cubes ℓ = r, against a wall
/// ℓ = 2r; each dashpot `2ζ √(K m*)`), by power iteration on `M⁻¹K` and the mode's
/// Rayleigh quotient of the dashpots.
fn fastest_mode(restitution: Option<f64>) -> (f64, f64) {
    let (m, r) = cube_mass_and_radius();
    let zeta = restitution.map_or(0.0, damping_ratio);
    let face = EDGE * EDGE;
    // (stiffness, dashpot) between cubes and against a wall.
    let between = K * face / r;
    let wall = K * face / (2.0 * r);
    let (c_between, c_wall) = (
        2.0 * zeta * (between * 0.5 * m).sqrt(),
        2.0 * zeta * (wall * m).sqrt(),
    );
    let n = LINKS;
    let matrix = |inner: f64, outer: f64| {
        let mut a = vec![vec![0.0; n]; n];
        for i in 0..n {
            a[i][i] = if i == 0 || i == n - 1 {
                inner + outer
            } else {
                2.0 * inner
            };
            if i + 1 < n {
                a[i][i + 1] = -inner;
                a[i + 1][i] = -inner;
            }
        }
        a
    };
    let stiffness = matrix(between, wall);
    let dashpots = matrix(c_between, c_wall);
    let times = |a: &Vec<Vec<f64>>, v: &[f64]| -> Vec<f64> {
        a.iter()
            .map(|row| row.iter().zip(v).map(|(x, y)| x * y).sum())
            .collect()
    };
    let mut v: Vec<f64> = (0..n)
        .map(|i| if i % 2 == 0 { 1.0 } else { -1.0 })
        .collect();
    let mut lambda = 0.0;
    for _ in 0..2000 {
        let next = times(&stiffness, &v);
        let norm = next.iter().map(|x| x * x).sum::<f64>().sqrt();
        lambda = norm / v.iter().map(|x| x * x).sum::<f64>().sqrt();
        v = next.iter().map(|x| x / norm).collect();
    }
    let omega = (lambda / m).sqrt();
    let quotient =
        |a: &Vec<Vec<f64>>| -> f64 { times(a, &v).iter().zip(&v).map(|(x, y)| x * y).sum::<f64>() };
    let mode_damping = quotient(&dashpots) / (quotient(&stiffness) / (omega * omega));
    (omega, mode_damping / (2.0 * omega))
}

/// The chain stepped `steps` times at `dt` after its cubes were started at ±1 cm/s
/// alternately (the fastest mode's shape): the largest speed at the end over the start's.
fn chain_growth(integrator: IntegratorKind, dt: f64, restitution: Option<f64>) -> f64 {
    let (mut w, cube, quartz) = world(integrator, dt, false, restitution);
    w.set_force_model(Box::new(Unchecked(law(restitution, true))))
        .unwrap();
    // At rest: the walls' contacts (ℓ = 2r) are half as stiff as the cubes' (ℓ = r), so
    // they overlap twice as deep to carry the same force.
    let pitch = EDGE - PRESS;
    let length = pitch * (LINKS - 1) as f64 + EDGE - 4.0 * PRESS;
    w.add_wall(half_space("left", DVec3::ZERO, DVec3::X))
        .unwrap();
    w.add_wall(half_space("right", DVec3::X * length, -DVec3::X))
        .unwrap();
    let ids: Vec<GrainId> = (0..LINKS)
        .map(|i| {
            let mut d = GrainDesc::at_rest(
                cube,
                quartz,
                DVec3::new(0.5 * EDGE - 2.0 * PRESS + pitch * i as f64, 0.0, 0.0),
            );
            d.velocity = DVec3::X * if i % 2 == 0 { 0.01 } else { -0.01 };
            w.add_grain(d).unwrap()
        })
        .collect();
    for _ in 0..20_000 {
        w.step();
    }
    ids.iter()
        .map(|&id| w.grain(id).unwrap().velocity.length())
        .fold(0.0, f64::max)
        / 0.01
}

#[test]
fn a_chain_becomes_unstable_at_the_schemes_limit_for_its_fastest_mode() {
    for restitution in [None, Some(0.5)] {
        let (omega, zeta) = fastest_mode(restitution);
        for integrator in [IntegratorKind::Verlet, IntegratorKind::Gear] {
            let limit = integrator.damped_stability_limit(zeta) / omega;
            // Verlet's instability is sharp; Gear's grows slowly just past its limit (its
            // spectral radius barely above one), undamped most, so that 20 000 steps show
            // it clearly only some way past.
            let past = match (integrator, restitution) {
                (IntegratorKind::Verlet, _) => 1.06,
                (IntegratorKind::Gear, Some(_)) => 1.25,
                (IntegratorKind::Gear, None) => 1.7,
            };
            let below = chain_growth(integrator, 0.97 * limit, restitution);
            let above = chain_growth(integrator, past * limit, restitution);
            assert!(
                below < 2.0 && above > 50.0,
                "{integrator:?}, ζ = {zeta:.3}: growth {below} at 0.97 of the limit, {above} at {past}"
            );
            // The rule's step for the cube, over every contact it could have and the turns
            // they drive, is below the chain's limit, and not absurdly so.
            let (mass, radius) = cube_mass_and_radius();
            let kind = GrainKind {
                mass,
                radius: 3f64.sqrt() * 0.5 * EDGE,
                length: radius,
                inverse_mass: 1.0 / mass + 0.25 * 0.75 * EDGE * EDGE / (mass * EDGE * EDGE / 6.0),
            };
            let rule = talus_sim::force::critical_time_step(
                law(restitution, true).as_ref(),
                &kind,
                integrator,
            );
            assert!(
                rule < limit && rule > 0.1 * limit,
                "{integrator:?}, ζ = {zeta:.3}: the rule's step {rule} against the chain's {limit}"
            );
        }
    }
}

/// A cube resting on its face on the floor, tipped at 0.2 rad/s about y: its angular
/// velocity about y every step for `steps` steps.
fn rocking(integrator: IntegratorKind, dt: f64, steps: usize) -> Vec<f64> {
    let (mut w, cube, quartz) = world(integrator, dt, true, Some(0.5));
    w.add_wall(half_space("floor", DVec3::ZERO, DVec3::Z))
        .unwrap();
    // At the depth that carries its weight: k s² δ / (2r) = m g.
    let (mass, radius) = cube_mass_and_radius();
    let depth = mass * 9.81 * 2.0 * radius / (K * EDGE * EDGE);
    let mut d = GrainDesc::at_rest(cube, quartz, DVec3::new(0.0, 0.0, 0.5 * EDGE - depth));
    d.angular_velocity = DVec3::Y * 0.2;
    let id = w.add_grain(d).unwrap();
    (0..steps)
        .map(|_| {
            w.step();
            w.grain(id).unwrap().angular_velocity.y
        })
        .collect()
}

#[test]
fn a_cube_rocks_on_its_contact_and_stays_stable_at_the_rules_step() {
    // Rocking frequency: the volumetric law is an elastic foundation of modulus k/ℓ under
    // the face, a moment (k/ℓ) s⁴/12 per radian against I = m s²/6 (gravity's share, m g s/2,
    // is 10⁻⁴ of it).
    let (mass, radius) = cube_mass_and_radius();
    let omega = (K * EDGE * EDGE / (2.0 * 2.0 * radius * mass)).sqrt();
    let dt = 1e-6;
    let spins = rocking(IntegratorKind::Verlet, dt, 4000);
    // Half periods from the sign changes of the angular velocity.
    let crossings: Vec<usize> = spins
        .windows(2)
        .enumerate()
        .filter(|(_, w)| w[0] * w[1] < 0.0)
        .map(|(i, _)| i)
        .collect();
    assert!(crossings.len() >= 4, "{} sign changes", crossings.len());
    let half_period =
        (crossings[crossings.len() - 1] - crossings[0]) as f64 * dt / (crossings.len() - 1) as f64;
    let measured = std::f64::consts::PI / half_period;
    assert!(
        (measured - omega).abs() < 0.02 * omega,
        "rocks at {measured} rad/s, the foundation gives {omega}"
    );
    // At the rule's step, neither scheme lets the rocking grow.
    for integrator in [IntegratorKind::Verlet, IntegratorKind::Gear] {
        let (w, cube, quartz) = world(integrator, 1e-7, true, Some(0.5));
        let step = w.critical_time_step_of(cube, quartz).unwrap();
        let spins = rocking(integrator, step, (0.05 / step) as usize);
        let largest = spins.iter().fold(0.0f64, |a, s| a.max(s.abs()));
        assert!(
            largest < 0.21,
            "{integrator:?} at {step} s: turns at up to {largest} rad/s from 0.2"
        );
    }
}
