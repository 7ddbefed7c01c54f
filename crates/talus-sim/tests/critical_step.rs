//! The critical time step against the dynamics it guards (the rule: `talus_sim::kind`).
//!
//! * A harmonic chain of cubes, small and large in turn, pressed face to face between two
//!   walls, where the bound on the fastest mode over several contacts is reached: each
//!   scheme becomes unstable where its limit at the chain's fastest mode (from the chain's
//!   own stiffness and mass matrices) says, undamped and damped, and the rule's step for
//!   either cube lies below that.
//! * A cube rocking on its face on the floor: it rocks at the frequency of its contact's
//!   elastic foundation, `ω² = k s² / (2 ℓ m)` for the volumetric law, and both schemes stay
//!   stable at the rule's step (the rocking does not grow).
//! * A cube on the floor held by a tangential or a rolling spring far stiffer than the normal
//!   one: each scheme becomes unstable where its limit at the mode's frequency (sliding and
//!   rocking against the tangential spring, turning against the rolling one, from their
//!   stiffness and inertia) says; the rule's step lies below that, the scheme is stable there,
//!   a larger step is refused, and the step the normal spring alone would allow is unstable.

use talus_geom::generate;
use talus_geom::glam::DVec3;
use talus_sim::force::{
    ComposedLaw, ContactInput, ContactLoad, ForceModel, GrainKind, Part, RestitutionDamping,
    RollingResistance, TangentialSpring, VolumetricNormal, damping_ratio,
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
/// The larger cubes' edge (m): every other cube of the chain (see `edge`).
const BIG_EDGE: f64 = 0.0102;
/// Their overlap with each other (m).
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

/// The edge of cube `i` of the chain: small and large cubes alternate, so that each contact
/// is a small face pressed into a larger one. (Two equal faces pressed together sit on a
/// ridge of the overlap's volume, whose normal tilts one way or the other as soon as one
/// cube slides or turns by a hair: round-off would decide the chain's fate. A face within a
/// larger one keeps the overlap's volume, and the contact, smooth.)
fn edge(i: usize) -> f64 {
    if i % 2 == 0 { EDGE } else { BIG_EDGE }
}

/// Mass and equivalent radius of a cube of edge `e`.
fn mass_and_radius(e: f64) -> (f64, f64) {
    let volume = e * e * e;
    (
        DENSITY * volume,
        (0.75 * volume / std::f64::consts::PI).cbrt(),
    )
}

/// The chain's contacts from left to right (wall, cube–cube…, wall): each one's normal
/// stiffness (the volumetric law over the smaller face, with ℓ the harmonic mean of the
/// radii between cubes and twice the radius against a wall) and reduced mass.
fn chain_contacts() -> Vec<(f64, f64)> {
    let cube = |i: usize| mass_and_radius(edge(i));
    let face = |i: usize, j: usize| edge(i).min(edge(j)).powi(2);
    let mut contacts = Vec::new();
    let (m0, r0) = cube(0);
    contacts.push((K * face(0, 0) / (2.0 * r0), m0));
    for i in 0..LINKS - 1 {
        let ((ma, ra), (mb, rb)) = (cube(i), cube(i + 1));
        let length = 2.0 * ra * rb / (ra + rb);
        contacts.push((K * face(i, i + 1) / length, ma * mb / (ma + mb)));
    }
    let (mn, rn) = cube(LINKS - 1);
    contacts.push((K * face(LINKS - 1, LINKS - 1) / (2.0 * rn), mn));
    contacts
}

/// The chain's fastest mode: its angular frequency and its damping ratio, from the
/// stiffness and dashpot matrices of its contacts (each dashpot `2ζ √(k m*)`), by power
/// iteration on the mass-weighted stiffness `M^-½ K M^-½` and the mode's Rayleigh quotient
/// of the mass-weighted dashpots.
fn fastest_mode(restitution: Option<f64>) -> (f64, f64) {
    let zeta = restitution.map_or(0.0, damping_ratio);
    let n = LINKS;
    let contacts = chain_contacts();
    // Contact c joins cube c − 1 and cube c (cube −1 and cube n are the walls).
    let matrix = |value: &dyn Fn(f64, f64) -> f64| {
        let mut a = vec![vec![0.0; n]; n];
        for (c, &(k, m)) in contacts.iter().enumerate() {
            let x = value(k, m);
            let (left, right) = (c.checked_sub(1), (c < n).then_some(c));
            for i in [left, right].into_iter().flatten() {
                a[i][i] += x;
            }
            if let (Some(i), Some(j)) = (left, right) {
                a[i][j] -= x;
                a[j][i] -= x;
            }
        }
        let inverse_root: Vec<f64> = (0..n)
            .map(|i| 1.0 / mass_and_radius(edge(i)).0.sqrt())
            .collect();
        for i in 0..n {
            for j in 0..n {
                a[i][j] *= inverse_root[i] * inverse_root[j];
            }
        }
        a
    };
    let stiffness = matrix(&|k, _| k);
    let dashpots = matrix(&|k, m| 2.0 * zeta * (k * m).sqrt());
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
    let omega = lambda.sqrt();
    let quotient =
        |a: &Vec<Vec<f64>>| -> f64 { times(a, &v).iter().zip(&v).map(|(x, y)| x * y).sum::<f64>() };
    (omega, quotient(&dashpots) / (2.0 * omega))
}

/// The chain stepped `steps` times at `dt` after its cubes were started at ±1 cm/s
/// alternately (the fastest mode's shape): the largest speed at the end over the start's.
fn chain_growth(integrator: IntegratorKind, dt: f64, restitution: Option<f64>) -> f64 {
    let (mut w, cube, quartz) = world(integrator, dt, false, restitution);
    let big = w
        .add_shape("big cube", &generate::cube(BIG_EDGE).unwrap(), None)
        .unwrap();
    w.set_force_model(Box::new(Unchecked(law(restitution, true))))
        .unwrap();
    // At rest: every contact carries the same force, the cubes' overlapping by PRESS and
    // the walls' as deep as their stiffness asks.
    let contacts = chain_contacts();
    let force = contacts[1].0 * PRESS;
    let (left, right) = (force / contacts[0].0, force / contacts[LINKS].0);
    let mut x = 0.5 * edge(0) - left;
    let mut centres = vec![x];
    for i in 1..LINKS {
        x += 0.5 * (edge(i - 1) + edge(i)) - PRESS;
        centres.push(x);
    }
    let length = x + 0.5 * edge(LINKS - 1) - right;
    w.add_wall(half_space("left", DVec3::ZERO, DVec3::X))
        .unwrap();
    w.add_wall(half_space("right", DVec3::X * length, -DVec3::X))
        .unwrap();
    let ids: Vec<GrainId> = centres
        .iter()
        .enumerate()
        .map(|(i, &x)| {
            let shape = if i % 2 == 0 { cube } else { big };
            let mut d = GrainDesc::at_rest(shape, quartz, DVec3::new(x, 0.0, 0.0));
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
            // Verlet's instability is sharp (a little less so damped); Gear's grows slowly
            // just past its limit (its spectral radius barely above one), undamped most, so
            // that 20 000 steps show it clearly only some way past.
            let past = match (integrator, restitution) {
                (IntegratorKind::Verlet, None) => 1.06,
                (IntegratorKind::Verlet, Some(_)) => 1.15,
                (IntegratorKind::Gear, Some(_)) => 1.25,
                (IntegratorKind::Gear, None) => 1.7,
            };
            let below = chain_growth(integrator, 0.97 * limit, restitution);
            let above = chain_growth(integrator, past * limit, restitution);
            assert!(
                below < 2.0 && above > 50.0,
                "{integrator:?}, ζ = {zeta:.3}: growth {below} at 0.97 of the limit, {above} at {past}"
            );
            // The rule's step for either cube, over every contact it could have and the turns
            // they drive, is below the chain's limit, and not absurdly so.
            let rule = [EDGE, BIG_EDGE]
                .into_iter()
                .map(|e| {
                    let (mass, radius) = mass_and_radius(e);
                    let kind = GrainKind {
                        mass,
                        radius: 3f64.sqrt() * 0.5 * e,
                        length: radius,
                        inverse_mass: 1.0 / mass + 0.25 * 0.75 * e * e / (mass * e * e / 6.0),
                    };
                    talus_sim::force::critical_time_step(
                        law(restitution, true).as_ref(),
                        &kind,
                        integrator,
                    )
                })
                .fold(f64::INFINITY, f64::min);
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
    let (mass, radius) = mass_and_radius(EDGE);
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
    let (mass, radius) = mass_and_radius(EDGE);
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

/// A law that acts as `law` and has its normal stiffness and damping, but shows the rule no
/// other spring: the step the normal spring alone would allow.
struct NormalOnly(Box<dyn ForceModel>);

impl ForceModel for NormalOnly {
    fn name(&self) -> &str {
        "normal_only"
    }
    fn history_len(&self) -> usize {
        self.0.history_len()
    }
    fn load(&self, contact: &ContactInput, history: &mut [f64]) -> ContactLoad {
        self.0.load(contact, history)
    }
    fn normal_stiffness(&self, area: f64, length: f64) -> f64 {
        self.0.normal_stiffness(area, length)
    }
    fn damping_ratio(&self) -> f64 {
        self.0.damping_ratio()
    }
}

/// A spring stiffer than the normal one, holding a cube on the floor.
#[derive(Debug, Clone, Copy)]
enum Stiff {
    /// A tangential spring of 400 times the normal stiffness, sticking (μ 1000).
    Tangential,
    /// A rolling spring of μ_r = 20: k_r = 2.25 μ_r² R*² K = 900 r² K.
    Rolling,
}

impl Stiff {
    /// The volumetric normal part, a restitution damping if given, and the stiff spring.
    fn law(self, restitution: Option<f64>) -> Box<dyn ForceModel> {
        let spring: Box<dyn Part> = match self {
            Stiff::Tangential => Box::new(TangentialSpring {
                friction: 1000.0,
                stiffness_ratio: 400.0,
            }),
            Stiff::Rolling => Box::new(RollingResistance { friction: 20.0 }),
        };
        let mut parts: Vec<Box<dyn Part>> =
            vec![Box::new(VolumetricNormal { stiffness: K }), spring];
        if let Some(restitution) = restitution {
            parts.push(Box::new(RestitutionDamping { restitution }));
        }
        Box::new(ComposedLaw::new("stiff", parts).unwrap())
    }

    /// The angular frequency of the mode the spring holds, for the cube on its face: the
    /// contact's normal stiffness K = k s²/ℓ (ℓ = 2r against a wall) is also an elastic
    /// foundation against rocking, K s²/12 per radian, and I = m s²/6.
    /// * Tangential: the spring k_t at the face, s/2 below the centre, couples the slide x
    ///   and the rock θ: stiffness k_t [[1, s/2], [s/2, s²/4]] + [[0, 0], [0, K s²/12]]
    ///   against diag(m, I); the larger root of its characteristic equation.
    /// * Rolling: the couple k_r = 2.25 μ_r² r² K (R* = r against a wall) and the foundation
    ///   against I; the centre does not move without a tangential force.
    fn omega(self) -> f64 {
        let (m, r) = mass_and_radius(EDGE);
        let s = EDGE;
        let normal = K * s * s / (2.0 * r);
        let inertia = m * s * s / 6.0;
        let foundation = normal * s * s / 12.0;
        match self {
            Stiff::Tangential => {
                let kt = 400.0 * normal;
                // det(K − ω² M) = 0: a ω⁴ − b ω² + c.
                let a = m * inertia;
                let b = kt * inertia + m * (kt * s * s / 4.0 + foundation);
                let c = kt * foundation;
                ((b + (b * b - 4.0 * a * c).sqrt()) / (2.0 * a)).sqrt()
            }
            Stiff::Rolling => {
                let kr = 2.25 * 20.0f64.powi(2) * r * r * normal;
                ((kr + foundation) / inertia).sqrt()
            }
        }
    }
}

/// A cube resting face down on the floor at the depth that carries its weight, held by
/// `stiff` (with a restitution damping if given), stepped `steps` times at `dt` (unchecked when `unchecked`) after a kick that
/// excites the spring (1 mm/s along x for the tangential spring, 1e-3 rad/s about y for the
/// rolling one): the largest horizontal speed plus `|ω| s/2` over the run, over the kick's
/// (the vertical bounce is no part of the modes the springs hold).
fn held_cube(
    (stiff, restitution): (Stiff, Option<f64>),
    integrator: IntegratorKind,
    dt: f64,
    steps: usize,
    unchecked: bool,
) -> f64 {
    let (mut w, cube, quartz) = world(integrator, dt, true, None);
    let law = stiff.law(restitution);
    if unchecked {
        w.set_force_model(Box::new(Unchecked(law))).unwrap();
    } else {
        w.set_force_model(law).unwrap();
    }
    w.add_wall(half_space("floor", DVec3::ZERO, DVec3::Z))
        .unwrap();
    let (mass, radius) = mass_and_radius(EDGE);
    let depth = mass * 9.81 * 2.0 * radius / (K * EDGE * EDGE);
    let mut d = GrainDesc::at_rest(cube, quartz, DVec3::new(0.0, 0.0, 0.5 * EDGE - depth));
    match stiff {
        Stiff::Tangential => d.velocity = DVec3::X * 1e-3,
        Stiff::Rolling => d.angular_velocity = DVec3::Y * 1e-3,
    }
    let motion = |v: DVec3, omega: DVec3| v.truncate().length() + omega.length() * 0.5 * EDGE;
    let kick = motion(d.velocity, d.angular_velocity);
    let id = w.add_grain(d).unwrap();
    let mut largest: f64 = 0.0;
    for _ in 0..steps {
        w.step();
        let g = w.grain(id).unwrap();
        let now = motion(g.velocity, g.angular_velocity);
        if !now.is_finite() {
            return f64::INFINITY;
        }
        largest = largest.max(now);
    }
    largest / kick
}

#[test]
fn springs_stiffer_than_the_normal_one_set_the_critical_step() {
    for stiff in [Stiff::Tangential, Stiff::Rolling] {
        let omega = stiff.omega();
        for integrator in [IntegratorKind::Verlet, IntegratorKind::Gear] {
            let what = format!("{stiff:?}, {integrator:?}");
            // The mode's own limit: stable just below it, unstable past it. Both modes are
            // mostly turning (in the sliding one, rocking takes 60 % of the energy), and
            // Gear's scheme on the quaternion is stable to about 1.85 times the position
            // scheme's limit, which the rule uses for every mode: Gear has that margin here.
            let limit = integrator.stability_limit() / omega;
            let past = match integrator {
                IntegratorKind::Verlet => 1.06,
                IntegratorKind::Gear => 2.5,
            };
            // An unstable rolling spring grows until it slips at its cap, μ_r R* F_n: some
            // hundred times the kick here, where a stable one stays within 1.4 times it.
            let below = held_cube((stiff, None), integrator, 0.97 * limit, 20_000, true);
            let above = held_cube((stiff, None), integrator, past * limit, 20_000, true);
            assert!(
                below < 3.0 && above > 20.0,
                "{what}: growth {below} at 0.97 of the mode's limit, {above} at {past}"
            );
            // The rule's step is below the mode's limit, not absurdly so, and stable over
            // many steps; with a dashpot on every spring too (Gear's step then falls with
            // the damping, Verlet's a little).
            let (mut w, cube, quartz) = world(integrator, 1e-9, true, None);
            w.set_force_model(stiff.law(None)).unwrap();
            w.add_grain(GrainDesc::at_rest(cube, quartz, DVec3::ZERO))
                .unwrap();
            let rule = w.critical_time_step_of(cube, quartz).unwrap();
            assert!(
                rule < limit && rule > 0.1 * limit,
                "{what}: the rule's step {rule} against the mode's {limit}"
            );
            let growth = held_cube((stiff, None), integrator, rule, 50_000, false);
            assert!(growth < 3.0, "{what}: growth {growth} at the rule's step");
            let mut damped = world(integrator, 1e-9, true, None).0;
            damped.set_force_model(stiff.law(Some(0.3))).unwrap();
            let damped_rule = damped.critical_time_step_of(cube, quartz).unwrap();
            let growth = held_cube((stiff, Some(0.3)), integrator, damped_rule, 50_000, false);
            assert!(
                damped_rule <= rule && growth < 3.0,
                "{what}, damped: growth {growth} at the rule's step {damped_rule}"
            );
            // A step above it is refused, naming the spring.
            let e = w.set_dt(1.01 * rule).unwrap_err().to_string();
            let named = match stiff {
                Stiff::Tangential => "tangential spring",
                Stiff::Rolling => "rolling spring",
            };
            assert!(e.contains(named) && e.contains("use dt ≤"), "{what}: {e}");
            // The step the normal spring alone allows is past the mode's limit: without
            // counting the spring, the rule would allow a blow-up.
            w.set_force_model(Box::new(NormalOnly(stiff.law(None))))
                .unwrap();
            let normal_only = w.critical_time_step_of(cube, quartz).unwrap();
            let growth = held_cube((stiff, None), integrator, normal_only, 20_000, true);
            assert!(
                normal_only > limit && growth > 20.0,
                "{what}: the normal spring alone allows {normal_only} (the mode's limit {limit}), growth {growth}"
            );
        }
    }
}
