//! The integrators against exact solutions: uniform acceleration, the harmonic oscillator,
//! torque-free rotation (the thesis' tumbling tetrahedron) and the free asymmetric top
//! against an independent high-accuracy solution of Euler's equations; and their stability
//! limits against the amplification matrices of their own steps.

use talus_geom::Pose;
use talus_geom::glam::DVec4;
use talus_geom::glam::{DMat3, DQuat, DVec3};
use talus_geom::{ConvexPolyhedron, generate};
use talus_sim::integrate::{
    GEAR_DAMPED_LIMITS, GEAR_DAMPING_STEP, GearState, Inertia, Integrator, IntegratorKind,
    Kinematics, Load, VerletState,
};
use talus_sim::material::Material;
use talus_sim::motion::Reach;
use talus_sim::{GrainDesc, GrainId, SimParams, World};

/// A world with one grain of `poly` (density 1000) under `gravity`.
fn one_grain(
    poly: &ConvexPolyhedron,
    integrator: IntegratorKind,
    dt: f64,
    gravity: DVec3,
    desc: impl Fn(&mut GrainDesc),
) -> (World, GrainId) {
    let mut world = World::new(SimParams {
        dt,
        gravity,
        integrator,
        ..SimParams::default()
    })
    .unwrap();
    let shape = world.add_shape("grain", poly, None).unwrap();
    let material = world
        .add_material(Material::new("m", 1000.0).unwrap())
        .unwrap();
    let mut d = GrainDesc::at_rest(shape, material, DVec3::ZERO);
    desc(&mut d);
    let id = world.add_grain(d).unwrap();
    (world, id)
}

#[test]
fn free_fall_and_parabola_are_exact() {
    let cube = generate::cube(0.01).unwrap();
    let g = DVec3::new(0.0, 0.0, -9.81);
    for integrator in [IntegratorKind::Gear, IntegratorKind::Verlet] {
        for v0 in [DVec3::ZERO, DVec3::new(3.0, -1.0, 5.0)] {
            let x0 = DVec3::new(1.0, 2.0, 10.0);
            let (mut world, id) = one_grain(&cube, integrator, 1e-3, g, |d| {
                d.position = x0;
                d.velocity = v0;
            });
            for _ in 0..5000 {
                world.step();
            }
            let t = world.time();
            let s = world.grain(id).unwrap();
            let x = x0 + v0 * t + 0.5 * g * t * t;
            let v = v0 + g * t;
            // Round-off only: a few ulps of the largest magnitudes per step.
            let ulps = 4.0 * f64::EPSILON * world.steps() as f64;
            assert!(
                (s.pose.position - x).length() < ulps * x.length(),
                "{integrator:?}: {:?} vs {x:?}",
                s.pose.position
            );
            assert!(
                (s.velocity - v).length() < ulps * v.length(),
                "{integrator:?}: {:?} vs {v:?}",
                s.velocity
            );
        }
    }
}

/// Position error at t = 3 periods of x'' = −(k/m) x, x(0) = 1, v(0) = 0.
fn oscillator_error(integrator: IntegratorKind, dt: f64) -> f64 {
    let cube = generate::cube(0.1).unwrap();
    let (mut world, id) = one_grain(&cube, integrator, dt, DVec3::ZERO, |d| {
        d.position = DVec3::X
    });
    let mass = world.grain(id).unwrap().inertia.mass;
    let omega = 5.0;
    let k = mass * omega * omega;
    let periods = 3.0;
    let steps = (periods * std::f64::consts::TAU / omega / dt).round() as usize;
    for _ in 0..steps {
        world.step_with(&mut |input| Load {
            force: -k * input.kinematics.pose.position,
            torque: DVec3::ZERO,
        });
    }
    let t = world.time();
    (world.grain(id).unwrap().pose.position.x - (omega * t).cos()).abs()
}

#[test]
fn harmonic_oscillator_converges_at_high_order() {
    let coarse = oscillator_error(IntegratorKind::Gear, 2e-3);
    let fine = oscillator_error(IntegratorKind::Gear, 1e-3);
    assert!(
        coarse / fine >= 8.0,
        "Gear: error {coarse:e} → {fine:e}, ratio {}",
        coarse / fine
    );
    let coarse = oscillator_error(IntegratorKind::Verlet, 2e-3);
    let fine = oscillator_error(IntegratorKind::Verlet, 1e-3);
    let ratio = coarse / fine;
    assert!(
        (3.5..4.5).contains(&ratio),
        "Verlet is second order: ratio {ratio}"
    );
}

#[test]
fn tumbling_tetrahedron_stays_rigid_and_turns_exactly() {
    // Thesis figs. 2.2–2.4: a tetrahedron spinning about the axis through a vertex, no
    // forces. A regular tetrahedron's inertia is isotropic, so the spin is steady and the
    // exact orientation is a rotation by |ω| t about that axis.
    let tet = generate::tetrahedron(1.0).unwrap();
    let axis = tet.vertices()[0].normalize();
    let omega = axis * 3.0;
    let (mut world, id) = one_grain(&tet, IntegratorKind::Gear, 1e-3, DVec3::ZERO, |d| {
        d.angular_velocity = omega
    });
    let rest: Vec<f64> = tet.vertices().iter().map(|v| v.length()).collect();
    for step in 1..=1_000_000u32 {
        world.step();
        if step % 100_000 == 0 {
            let s = world.grain(id).unwrap();
            let vertices = world.grain_vertices(id).unwrap();
            for (v, r) in vertices.iter().zip(&rest) {
                let d = v.distance(s.pose.position);
                assert!(
                    (d - r).abs() < 1e-12 * r,
                    "step {step}: vertex–centroid distance {d} vs {r}"
                );
            }
            // The orientation follows the exact rotation.
            let exact = DQuat::from_scaled_axis(omega * world.time());
            let angle = (s.orientation * exact.conjugate())
                .normalize()
                .to_axis_angle()
                .1;
            let angle = angle.min(std::f64::consts::TAU - angle);
            assert!(angle < 1e-9, "step {step}: orientation off by {angle} rad");
        }
    }
}

/// Reference: Euler's equations and q̇ = ½ ω q (body-frame ω) by classical Runge–Kutta at a
/// small step.
fn reference_top(principal: DVec3, omega_b: DVec3, q: DQuat, t_end: f64, h: f64) -> (DVec3, DQuat) {
    let deriv = |w: DVec3, q: DQuat| {
        let w_dot = ((principal * w).cross(w)) / principal;
        // q̇ = ½ q [0, ω_body]
        let q_dot = q * DQuat::from_xyzw(w.x, w.y, w.z, 0.0);
        (
            w_dot,
            DQuat::from_vec4(0.5 * talus_geom::glam::DVec4::from(q_dot)),
        )
    };
    let add = |q: DQuat, d: DQuat, s: f64| {
        DQuat::from_vec4(talus_geom::glam::DVec4::from(q) + s * talus_geom::glam::DVec4::from(d))
    };
    let (mut w, mut q) = (omega_b, q);
    let steps = (t_end / h).round() as usize;
    for _ in 0..steps {
        let (k1w, k1q) = deriv(w, q);
        let (k2w, k2q) = deriv(w + 0.5 * h * k1w, add(q, k1q, 0.5 * h));
        let (k3w, k3q) = deriv(w + 0.5 * h * k2w, add(q, k2q, 0.5 * h));
        let (k4w, k4q) = deriv(w + h * k3w, add(q, k3q, h));
        w += h / 6.0 * (k1w + 2.0 * k2w + 2.0 * k3w + k4w);
        let dq = talus_geom::glam::DVec4::from(k1q)
            + 2.0 * talus_geom::glam::DVec4::from(k2q)
            + 2.0 * talus_geom::glam::DVec4::from(k3q)
            + talus_geom::glam::DVec4::from(k4q);
        q = DQuat::from_vec4(talus_geom::glam::DVec4::from(q) + h / 6.0 * dq).normalize();
    }
    (w, q)
}

#[test]
fn free_asymmetric_top_conserves_and_follows_euler() {
    let brick = generate::rectangular_box(DVec3::new(1.0, 2.0, 3.0) * 0.1).unwrap();
    for (label, omega_body) in [
        // Near the unstable intermediate axis: the top flips over and back.
        ("intermediate", DVec3::new(0.01, 2.0, 0.01)),
        // Near the stable major axis.
        ("major", DVec3::new(0.2, 0.1, 3.0)),
    ] {
        // The body frame is principal with ascending moments: for this brick, body x is
        // along its 3 side (smallest moment), body z along its 1 side.
        let q0 = DQuat::from_euler(talus_geom::glam::EulerRot::XYZ, 0.3, 0.2, -0.5);
        let (mut world, id) = one_grain(&brick, IntegratorKind::Gear, 1e-4, DVec3::ZERO, |_| {});
        let start = world.grain(id).unwrap();
        let principal = start.inertia.principal;
        let body0 = start.pose.rotation;
        world.remove_grain(id).unwrap();
        // Re-add with the chosen orientation of the body frame and ω.
        let to_input = body0; // orientation identity ⇒ body rotation = body_to_input
        let orientation = q0 * to_input.conjugate();
        let omega_world = q0 * omega_body;
        let shape = talus_sim::shape::ShapeId(0);
        let id = world
            .add_grain(GrainDesc {
                shape,
                material: talus_sim::material::MaterialId(0),
                position: DVec3::ZERO,
                orientation,
                velocity: DVec3::ZERO,
                angular_velocity: omega_world,
            })
            .unwrap();
        let energy = |w_b: DVec3| 0.5 * (principal * w_b).dot(w_b);
        let momentum = |q: DQuat, w_b: DVec3| q * (principal * w_b);
        let e0 = energy(omega_body);
        let l0 = momentum(q0, omega_body);
        let mut checkpoints = [1.0, 5.0, 10.0].into_iter().peekable();
        while let Some(&t_check) = checkpoints.peek() {
            world.step();
            let s = world.grain(id).unwrap();
            let w_b = s.pose.rotation.conjugate() * s.angular_velocity;
            let l = momentum(s.pose.rotation, w_b);
            assert!(
                (l - l0).length() < 1e-8 * l0.length(),
                "{label}: L drift {:e}",
                (l - l0).length() / l0.length()
            );
            assert!(
                (energy(w_b) - e0).abs() < 1e-6 * e0,
                "{label}: energy drift"
            );
            if world.time() >= t_check - 1e-9 {
                checkpoints.next();
                let (w_ref, q_ref) = reference_top(principal, omega_body, q0, world.time(), 1e-5);
                assert!(
                    (w_b - w_ref).length() < 1e-6 * w_ref.length(),
                    "{label} t={t_check}: ω {w_b:?} vs {w_ref:?}"
                );
                let angle = (s.pose.rotation * q_ref.conjugate())
                    .normalize()
                    .to_axis_angle()
                    .1;
                let angle = angle.min(std::f64::consts::TAU - angle);
                assert!(
                    angle < 1e-6,
                    "{label} t={t_check}: orientation off by {angle}"
                );
            }
        }
        let _ = DMat3::IDENTITY;
    }
}

/// One step of `integrator` on the oscillator `x'' = −ω² x` (unit mass, stiffness ω², along
/// x) as a linear map of its state: Gear's value and five scaled derivatives, or Verlet's
/// position, half-step velocity and last force; column `j` is the step of unit state `j`.
fn amplification(integrator: IntegratorKind, omega_dt: f64) -> Vec<Vec<f64>> {
    damped_amplification(integrator, omega_dt, 0.0)
}

/// [`amplification`] with a dashpot of damping ratio `zeta` on the velocity the scheme
/// evaluates forces with.
fn damped_amplification(integrator: IntegratorKind, omega_dt: f64, zeta: f64) -> Vec<Vec<f64>> {
    let (dt, stiffness) = (1.0, omega_dt * omega_dt);
    let inertia = Inertia {
        mass: 1.0,
        principal: DVec3::ONE,
    };
    let along_x = |v: f64| DVec3::new(v, 0.0, 0.0);
    let spring = |k: &Kinematics| Load {
        force: along_x(-stiffness * k.pose.position.x - 2.0 * zeta * omega_dt * k.velocity.x),
        torque: DVec3::ZERO,
    };
    let n = match integrator {
        IntegratorKind::Gear => 6,
        IntegratorKind::Verlet => 3,
    };
    let columns: Vec<Vec<f64>> = (0..n)
        .map(|j| {
            let unit = |i: usize| if i == j { 1.0 } else { 0.0 };
            let mut pose = Pose::from_translation(along_x(unit(0)));
            let after: Vec<f64> = match integrator {
                IntegratorKind::Gear => {
                    let mut state = GearState {
                        position: [1, 2, 3, 4, 5].map(|i| along_x(unit(i))),
                        rotation: [DVec4::ZERO; 5],
                        corrected: Default::default(),
                    };
                    let k = state.predict(&mut pose, &inertia, dt);
                    state.correct(&mut pose, &spring(&k), &inertia, &k, dt);
                    std::iter::once(pose.position.x)
                        .chain(state.position.iter().map(|r| r.x))
                        .collect()
                }
                IntegratorKind::Verlet => {
                    let mut state = VerletState {
                        velocity: along_x(unit(1)),
                        angular_momentum: DVec3::ZERO,
                        load: Load {
                            force: along_x(unit(2)),
                            torque: DVec3::ZERO,
                        },
                    };
                    let k = state.predict(&mut pose, &inertia, dt);
                    state.correct(&mut pose, &spring(&k), &inertia, &k, dt);
                    vec![pose.position.x, state.velocity.x, state.load.force.x]
                }
            };
            after
        })
        .collect();
    (0..n)
        .map(|i| columns.iter().map(|c| c[i]).collect())
        .collect()
}

/// Whether the map `m` grows some state without bound: `m^(2^40)` is large (a spectral
/// radius above one by more than about 10⁻¹¹), by repeated squaring.
fn grows(mut m: Vec<Vec<f64>>) -> bool {
    let n = m.len();
    for _ in 0..40 {
        m = (0..n)
            .map(|i| {
                (0..n)
                    .map(|j| (0..n).map(|k| m[i][k] * m[k][j]).sum())
                    .collect()
            })
            .collect();
        let norm = m.iter().flatten().fold(0.0f64, |a, v| a.max(v.abs()));
        if norm.is_nan() || norm >= 1e6 {
            return true;
        }
    }
    false
}

#[test]
fn stability_limits_are_those_of_the_schemes_own_steps() {
    for integrator in [IntegratorKind::Verlet, IntegratorKind::Gear] {
        let limit = integrator.stability_limit();
        // Stable over the whole range below the limit, unstable above it.
        for f in [0.05, 0.3, 0.6, 0.9, 0.99] {
            assert!(
                !grows(amplification(integrator, f * limit)),
                "{integrator:?} grows at {f} of its limit"
            );
        }
        assert!(grows(amplification(integrator, 1.01 * limit)));
        // The boundary itself, by bisection on the scheme's own map (to 10⁻⁵: where two
        // eigenvalues meet at the boundary, round-off moves them by the square root of the
        // machine precision).
        let (mut lo, mut hi) = (0.5 * limit, 1.5 * limit);
        for _ in 0..50 {
            let mid = 0.5 * (lo + hi);
            if grows(amplification(integrator, mid)) {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        assert!(
            (lo - limit).abs() < 1e-5 * limit,
            "{integrator:?}: the step becomes unstable at ω dt = {lo}, not {limit}"
        );
    }
}

/// Where `integrator` first becomes unstable on an oscillator of damping ratio `zeta`, from
/// below: a scan in steps of 0.002 in `ω dt`, then bisection.
fn first_instability(integrator: IntegratorKind, zeta: f64) -> f64 {
    let mut x = 0.002;
    while !grows(damped_amplification(integrator, x, zeta)) {
        x += 0.002;
    }
    let (mut lo, mut hi) = (x - 0.002, x);
    for _ in 0..40 {
        let mid = 0.5 * (lo + hi);
        if grows(damped_amplification(integrator, mid, zeta)) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    lo
}

#[test]
fn damped_stability_limits_are_those_of_the_schemes_own_steps() {
    // Gear's table, entry by entry.
    for (i, &limit) in GEAR_DAMPED_LIMITS.iter().enumerate() {
        let zeta = i as f64 * GEAR_DAMPING_STEP;
        let found = first_instability(IntegratorKind::Gear, zeta);
        assert!(
            (found - limit - 1e-6).abs() < 2e-6,
            "Gear at ζ = {zeta}: unstable from ω dt = {found}, tabulated {limit}"
        );
    }
    // Between the entries, beyond them, and Verlet's closed form: stable everywhere below
    // the limit given, and (Verlet) unstable just above it.
    for integrator in [IntegratorKind::Verlet, IntegratorKind::Gear] {
        for zeta in [0.0, 0.03, 0.12, 0.36, 0.77, 1.3, 2.96, 3.5, 5.0] {
            let limit = integrator.damped_stability_limit(zeta);
            let found = first_instability(integrator, zeta);
            // (Where two eigenvalues meet at the boundary, as undamped Verlet's at 2,
            // round-off moves it by the square root of the machine precision.)
            assert!(
                found >= limit * (1.0 - 1e-5),
                "{integrator:?} at ζ = {zeta}: unstable from {found}, below the limit {limit}"
            );
            if integrator == IntegratorKind::Verlet {
                assert!((found - limit).abs() < 1e-5 * limit, "Verlet at ζ = {zeta}");
            } else if zeta >= 0.2 {
                // (Below ζ = 0.2 the limit is the undamped one or the next entry's, on the
                // safe side where damping first raises the limit.)
                assert!(found < 1.2 * limit, "Gear's limit at ζ = {zeta} is tight");
            }
        }
    }
}

/// The motion between two force evaluations as the step bounds it (the last correction's
/// reach, then the prediction's: `talus_sim::motion`) covers how far every vertex of a
/// spinning, tumbling grain under changing loads moved between the poses the forces were
/// evaluated at, for both schemes (Gear's corrector moves the pose after the evaluation;
/// Verlet's does not).
#[test]
fn the_motion_between_evaluations_covers_every_vertex() {
    let lengths = DVec3::new(0.01, 0.006, 0.004);
    let poly = generate::rectangular_box(lengths).unwrap();
    let radius = poly.radius_about_origin();
    let mass = 2650.0 * lengths.x * lengths.y * lengths.z;
    let inertia = Inertia {
        mass,
        principal: DVec3::new(
            lengths.y * lengths.y + lengths.z * lengths.z,
            lengths.x * lengths.x + lengths.z * lengths.z,
            lengths.x * lengths.x + lengths.y * lengths.y,
        ) * (mass / 12.0),
    };
    // Loads that change every step (so that Gear's corrector moves the pose), of the size
    // of contact forces on such a grain.
    let load = |n: usize| {
        let t = n as f64;
        Load {
            force: DVec3::new((0.3 * t).sin(), (0.7 * t).cos(), (1.1 * t).sin()) * 5.0,
            torque: DVec3::new((0.5 * t).cos(), (0.2 * t).sin(), (0.9 * t).cos()) * 0.01,
        }
    };
    let start = Kinematics {
        pose: Pose::new(
            DVec3::new(0.1, -0.2, 0.3),
            DQuat::from_euler(talus_geom::glam::EulerRot::XYZ, 0.4, -1.2, 2.0),
        ),
        velocity: DVec3::new(1.0, -2.0, 0.5),
        angular_velocity: DVec3::new(40.0, -25.0, 60.0),
    };
    fn run<I: Integrator>(
        start: &Kinematics,
        inertia: &Inertia,
        load: &dyn Fn(usize) -> Load,
        poly: &ConvexPolyhedron,
        radius: f64,
    ) -> f64 {
        let dt = 2e-5;
        let mut state = I::initial(start, inertia, &load(0), dt);
        let mut pose = start.pose;
        let mut last: Option<Pose> = None;
        let mut farthest: f64 = 0.0;
        // The farthest any vertex moved from pose `from` to pose `to`.
        let vertex_move = |from: &Pose, to: &Pose| {
            poly.vertices()
                .iter()
                .map(|&v| {
                    (to.position + to.rotation * v).distance(from.position + from.rotation * v)
                })
                .fold(0.0, f64::max)
        };
        for n in 0..3_000 {
            let before = pose;
            let kinematics = state.predict(&mut pose, inertia, dt);
            let bound = state
                .corrected()
                .then(Reach::between(&before, &pose))
                .within(radius);
            if let Some(last) = last {
                let moved = vertex_move(&last, &pose);
                assert!(
                    moved <= bound * (1.0 + 1e-12),
                    "step {n}: {moved} > {bound}"
                );
                farthest = farthest.max(moved);
            }
            last = Some(pose);
            let predicted = pose;
            state.correct(&mut pose, &load(n + 1), inertia, &kinematics, dt);
            // The correction's own move, which the next step counts.
            let by_correction = state.corrected().within(radius);
            let moved = vertex_move(&predicted, &pose);
            assert!(
                moved <= by_correction * (1.0 + 1e-12),
                "step {n}: {moved} > {by_correction}"
            );
        }
        farthest
    }
    // The grain moves: the check is not of a grain at rest.
    assert!(run::<GearState>(&start, &inertia, &load, &poly, radius) > 1e-5);
    assert!(run::<VerletState>(&start, &inertia, &load, &poly, radius) > 1e-5);
}
