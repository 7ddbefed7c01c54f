//! Periodic boundaries: a pair crossing each face in each direction moves as the same pair
//! in a world without them; a pair touching across a corner feels the force it feels in
//! the middle of the box; a periodic gas of elastic grains keeps its momentum to round-off
//! and its energy; threads, checkpoints and processes change no bit; bodies too large for
//! the period and planes across a periodic axis are refused.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use talus_geom::glam::{DQuat, DVec3, EulerRot};
use talus_geom::{Pose, generate};
use talus_sim::distribute::ThreadExchange;
use talus_sim::force::{Coefficients, ForceModelRegistry};
use talus_sim::integrate::IntegratorKind;
use talus_sim::material::{Material, MaterialId};
use talus_sim::periodic::{Period, Periodic};
use talus_sim::shape::ShapeId;
use talus_sim::wall::{Motion, Wall, WallGeometry};
use talus_sim::{BodyRef, GrainDesc, GrainId, SimError, SimParams, World};

/// Edge of the cubes of the pair tests (m).
const EDGE: f64 = 0.01;
/// The periodic box of the pair tests: `[0, L)` along every periodic axis.
const L: f64 = 0.06;

fn periodic(axes: [bool; 3], length: f64) -> Periodic {
    Periodic {
        axes: axes.map(|on| {
            on.then_some(Period {
                lower: 0.0,
                upper: length,
            })
        }),
    }
}

/// A world without gravity with a cube and quartz, the `volumetric` law (damping and
/// friction: the pair builds a tangential spring), `periodic` axes, dt a fifth of critical.
fn cube_world(periodic: Periodic, threads: usize) -> (World, ShapeId, MaterialId) {
    let mut w = World::new(SimParams {
        dt: 1e-6,
        gravity: DVec3::ZERO,
        margin: 2e-4,
        threads,
        periodic,
        ..SimParams::default()
    })
    .unwrap();
    let cube = w
        .add_shape("cube", &generate::cube(EDGE).unwrap(), None)
        .unwrap();
    let quartz = w
        .add_material(Material::new("quartz", 2650.0).unwrap())
        .unwrap();
    let c = Coefficients::from([("stiffness", 1e6), ("restitution", 0.7), ("friction", 0.5)]);
    w.set_force_model(
        ForceModelRegistry::default()
            .build("volumetric", &c)
            .unwrap(),
    )
    .unwrap();
    let critical = w.critical_time_step_of(cube, quartz).unwrap();
    w.set_dt(0.2 * critical).unwrap();
    (w, cube, quartz)
}

/// Two turned cubes pressed together, drifting at `drift` and sliding past each other:
/// the second ahead of the first along the drift, so that the pair straddles the face for
/// a while.
fn pair(w: &mut World, cube: ShapeId, quartz: MaterialId, first: DVec3, drift: DVec3) {
    let ahead = drift.normalize() * 0.0102;
    let side = drift.normalize().any_orthonormal_vector();
    let mut a = GrainDesc::at_rest(cube, quartz, first);
    a.orientation = DQuat::from_euler(EulerRot::XYZ, 0.05, 0.03, 0.02);
    a.velocity = drift + side * 0.05 + ahead * 20.0;
    a.angular_velocity = DVec3::new(1.0, -2.0, 3.0);
    let mut b = GrainDesc::at_rest(cube, quartz, first + ahead);
    b.velocity = drift - side * 0.05;
    w.add_grain(a).unwrap();
    w.add_grain(b).unwrap();
}

fn momentum(w: &World) -> DVec3 {
    w.grains()
        .map(|id| {
            let s = w.grain(id).unwrap();
            s.velocity * s.inertia.mass
        })
        .sum()
}

#[test]
fn a_pair_crossing_each_face_moves_as_without_the_faces() {
    for axis in 0..3 {
        for sign in [-1.0, 1.0] {
            let mut drift = DVec3::ZERO;
            drift[axis] = sign * 1.5;
            // Start a little inside the face the pair drifts towards.
            let mut first = DVec3::splat(0.5 * L);
            first[axis] = if sign > 0.0 { L - 0.014 } else { 0.014 };
            let (mut w, cube, quartz) = cube_world(periodic([true; 3], L), 1);
            pair(&mut w, cube, quartz, first, drift);
            let (mut free, cube, quartz) = cube_world(Periodic::NONE, 1);
            pair(&mut free, cube, quartz, first, drift);
            let p0 = momentum(&w);
            let scale = w
                .grains()
                .map(|id| {
                    let s = w.grain(id).unwrap();
                    s.velocity.length() * s.inertia.mass
                })
                .sum::<f64>();
            let (mut straddled, mut wrapped) = (false, [false; 2]);
            let steps = (0.03 / 1.5 / w.params().dt) as usize;
            for step in 0..steps {
                w.step();
                free.step();
                let what = format!("axis {axis}, direction {sign}, step {step}");
                assert_eq!(w.stats().contacts, free.stats().contacts, "{what}");
                assert_eq!(w.box_pairs(), free.box_pairs(), "{what}: the pair goes on");
                for (g, id) in w.grains().enumerate() {
                    let (s, f) = (w.grain(id).unwrap(), free.grain(id).unwrap());
                    assert!(
                        (s.unwrapped_position - f.pose.position).length() < 1e-12,
                        "{what}: grain {g} at {} unwrapped, {} without faces",
                        s.unwrapped_position,
                        f.pose.position
                    );
                    assert!((0.0..L).contains(&s.pose.position[axis]), "{what}: wrapped");
                    assert!((s.velocity - f.velocity).length() < 1e-9, "{what}");
                    assert!((s.angular_velocity - f.angular_velocity).length() < 1e-6);
                    wrapped[g] |= s.image[axis] == sign as i32;
                }
                let (a, b) = (
                    w.grain(GrainId(0)).unwrap().pose.position[axis],
                    w.grain(GrainId(1)).unwrap().pose.position[axis],
                );
                straddled |= w.stats().contacts == 1 && (a - b).abs() > 0.5 * L;
                let forces: Vec<DVec3> = w.contacts().map(|c| c.force_on_b).collect();
                let free_forces: Vec<DVec3> = free.contacts().map(|c| c.force_on_b).collect();
                for (x, y) in forces.iter().zip(&free_forces) {
                    assert!((*x - *y).length() <= 1e-9 * y.length().max(1e-9), "{what}");
                }
                let p = momentum(&w);
                assert!(
                    (p - p0).length() <= 1e-12 * scale,
                    "{what}: momentum {p} vs {p0}"
                );
            }
            assert!(
                straddled && wrapped == [true; 2],
                "axis {axis}, direction {sign}: the touching pair straddled the face \
                 ({straddled}) and both grains wrapped ({wrapped:?})"
            );
        }
    }
}

#[test]
fn a_pair_across_a_corner_feels_the_force_it_feels_in_the_middle() {
    // Two cubes overlapping, one just inside the corner x = y = L, the other across it.
    let a_at = DVec3::new(L - 0.003, L - 0.002, 0.5 * L);
    let offset = DVec3::new(0.0085, 0.0062, 0.0011);
    let spin = DQuat::from_euler(EulerRot::XYZ, 0.4, 0.1, 0.7);
    let setup = |w: &mut World, cube, quartz, a_at: DVec3| {
        let mut a = GrainDesc::at_rest(cube, quartz, a_at);
        a.orientation = spin;
        a.velocity = DVec3::new(0.1, -0.2, 0.05);
        let mut b = GrainDesc::at_rest(cube, quartz, a_at + offset);
        b.angular_velocity = DVec3::new(5.0, 0.0, -3.0);
        w.add_grain(a).unwrap();
        w.add_grain(b).unwrap();
    };
    let (mut w, cube, quartz) = cube_world(periodic([true, true, false], L), 1);
    setup(&mut w, cube, quartz, a_at);
    let b = w.grain(GrainId(1)).unwrap();
    assert!(
        b.pose.position.x < 0.01 && b.pose.position.y < 0.01,
        "placed across the corner"
    );
    assert_eq!(b.image, [1, 1, 0]);
    let (mut free, cube, quartz) = cube_world(Periodic::NONE, 1);
    let middle = DVec3::splat(0.5 * L);
    setup(&mut free, cube, quartz, middle);
    for _ in 0..3 {
        w.step();
        free.step();
        let (c, f) = (
            w.contacts().next().expect("touching across the corner"),
            free.contacts().next().expect("touching in the middle"),
        );
        assert!((c.force_on_b - f.force_on_b).length() < 1e-9 * f.force_on_b.length());
        assert!((c.torque_on_b - f.torque_on_b).length() <= 1e-9 * f.torque_on_b.length());
        assert!(f.force_on_b.length() > 0.0);
        // The point is reported in the box: the middle one moved by whole periods.
        let moved = c.point - (f.point - middle + a_at);
        let periods = (moved / L).round();
        assert!((moved - periods * L).length() < 1e-12, "point {}", c.point);
        for id in [GrainId(0), GrainId(1)] {
            let (s, r) = (w.grain(id).unwrap(), free.grain(id).unwrap());
            let d = s.unwrapped_position - (r.pose.position - middle + a_at);
            assert!(d.length() < 1e-12);
            assert!((s.angular_velocity - r.angular_velocity).length() < 1e-9);
            assert!((s.velocity - r.velocity).length() < 1e-12);
        }
    }
}

/// A periodic box of `n` grains of a few shapes flying about, elastic and frictionless.
/// (Measured: the kinetic energy between collisions within 1.3e-7 of the start's.)
fn gas(n: usize, threads: usize) -> World {
    let side = 0.05;
    let mut w = World::new(SimParams {
        dt: 1e-6,
        gravity: DVec3::ZERO,
        margin: 1e-4,
        threads,
        periodic: periodic([true; 3], side),
        // Gear: velocity Verlet's rotation is first order for tumbling grains, and its
        // energy drifts by itself between collisions.
        integrator: IntegratorKind::Gear,
        ..SimParams::default()
    })
    .unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    for i in 0..3 {
        let g = generate::ellipsoid_grain(12 + 3 * i, DVec3::new(0.004, 0.003, 0.0025), &mut rng)
            .unwrap();
        w.add_shape("grain", &g, None).unwrap();
    }
    let m = w
        .add_material(Material::new("glass", 2500.0).unwrap())
        .unwrap();
    let c = Coefficients::from([("stiffness", 1e6), ("restitution", 1.0), ("friction", 0.0)]);
    w.set_force_model(
        ForceModelRegistry::default()
            .build("energy_conserving", &c)
            .unwrap(),
    )
    .unwrap();
    let critical = (0..3)
        .map(|s| w.critical_time_step_of(ShapeId(s), m).unwrap())
        .fold(f64::INFINITY, f64::min);
    w.set_dt(0.1 * critical).unwrap();
    let per_side = (n as f64).cbrt().ceil() as usize;
    let pitch = side / per_side as f64;
    for i in 0..n {
        let cell = DVec3::new(
            (i % per_side) as f64,
            ((i / per_side) % per_side) as f64,
            (i / (per_side * per_side)) as f64,
        );
        let mut d = GrainDesc::at_rest(ShapeId(rng.random_range(0..3)), m, (cell + 0.5) * pitch);
        d.orientation = DQuat::from_euler(EulerRot::XYZ, rng.random(), rng.random(), rng.random());
        let mut v = || rng.random_range(-1.0..1.0);
        d.velocity = DVec3::new(v(), v(), v()) * 2.0;
        d.angular_velocity = DVec3::new(v(), v(), v()) * 20.0;
        w.add_grain(d).unwrap();
    }
    w
}

fn kinetic_energy(w: &World) -> f64 {
    w.grains()
        .map(|id| {
            let s = w.grain(id).unwrap();
            let spin = s.pose.rotation.inverse() * s.angular_velocity;
            0.5 * s.inertia.mass * s.velocity.length_squared()
                + 0.5 * (s.inertia.principal * spin * spin).element_sum()
        })
        .sum()
}

#[test]
fn an_elastic_periodic_gas_keeps_its_momentum_and_energy() {
    let mut w = gas(27, 1);
    let (p0, e0) = (momentum(&w), kinetic_energy(&w));
    let scale: f64 = w
        .grains()
        .map(|id| {
            let s = w.grain(id).unwrap();
            s.velocity.length() * s.inertia.mass
        })
        .sum();
    let (mut across, mut free_checks, mut collisions) = (0, 0, 0);
    let mut touching = false;
    for _ in 0..30_000 {
        w.step();
        let p = momentum(&w);
        assert!((p - p0).length() <= 1e-12 * scale, "momentum {p} vs {p0}");
        for c in w.contacts() {
            if let (BodyRef::Grain(a), BodyRef::Grain(b)) = (c.a, c.b) {
                let d = w.grain(a).unwrap().pose.position - w.grain(b).unwrap().pose.position;
                if d.abs().max_element() > 0.025 {
                    across += 1;
                }
            }
        }
        if w.stats().contacts > 0 {
            touching = true;
        } else {
            if touching {
                collisions += 1;
                // No contact stores energy now: the kinetic energy is all of it.
                let e = kinetic_energy(&w);
                assert!(
                    (e - e0).abs() < 1e-6 * e0,
                    "kinetic energy {e} J between collisions, {e0} J at the start"
                );
                free_checks += 1;
            }
            touching = false;
        }
    }
    let wrapped = w
        .grains()
        .filter(|&id| w.grain(id).unwrap().image != [0; 3])
        .count();
    assert!(
        across > 0 && collisions >= 5 && free_checks >= 5 && wrapped >= 10,
        "{across} contact-steps across a face, {collisions} collisions, {wrapped} grains wrapped"
    );
}

/// Everything observable of a world, bit for bit.
fn fingerprint(w: &World) -> Vec<u64> {
    let mut out = vec![w.time().to_bits(), w.stats().contacts as u64];
    for id in w.grains() {
        let s = w.grain(id).unwrap();
        for v in [s.pose.position, s.velocity, s.angular_velocity] {
            out.extend(v.to_array().map(f64::to_bits));
        }
        out.extend(s.pose.rotation.to_array().map(f64::to_bits));
        out.extend(s.image.map(|i| i as u64));
    }
    for c in w.contacts() {
        out.extend(c.force_on_b.to_array().map(f64::to_bits));
    }
    out.extend(
        w.wall_loads()
            .iter()
            .flat_map(|l| l.force.to_array().map(f64::to_bits)),
    );
    out
}

/// The static part of a bed periodic in x and y on a shaking floor (walls and periodic
/// axes together): what a checkpoint is restored into; the generator for the grains.
fn bed_scene(
    integrator: IntegratorKind,
    threads: usize,
    renumber_every: u64,
) -> (World, ShapeId, MaterialId, ChaCha8Rng) {
    let side = 0.04;
    let mut w = World::new(SimParams {
        dt: 1e-6,
        integrator,
        margin: 1e-4,
        threads,
        renumber_every,
        periodic: periodic([true, true, false], side),
        ..SimParams::default()
    })
    .unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    let g = generate::ellipsoid_grain(14, DVec3::new(0.003, 0.0025, 0.002), &mut rng).unwrap();
    let shape = w.add_shape("grain", &g, None).unwrap();
    let m = w
        .add_material(Material::new("sand", 2650.0).unwrap())
        .unwrap();
    let c = Coefficients::from([("stiffness", 3e5), ("restitution", 0.5), ("friction", 0.5)]);
    w.set_force_model(
        ForceModelRegistry::default()
            .build("volumetric", &c)
            .unwrap(),
    )
    .unwrap();
    w.set_dt(0.5 * w.critical_time_step_of(shape, m).unwrap())
        .unwrap();
    let floor = Wall::new(
        "floor",
        WallGeometry::HalfSpace { normal: DVec3::Z },
        Pose::IDENTITY,
        Motion::Oscillate {
            direction: DVec3::Z,
            amplitude: 0.001,
            frequency: 40.0,
            phase: 0.0,
        },
        None,
    )
    .unwrap();
    w.add_wall(floor).unwrap();
    (w, shape, m, rng)
}

/// The bed: 300 grains on a lattice over the floor, thrown sideways.
fn bed(integrator: IntegratorKind, threads: usize) -> World {
    bed_renumbered(integrator, threads, 300)
}

/// [`bed`], its grains renumbered in space every `renumber_every` steps.
fn bed_renumbered(integrator: IntegratorKind, threads: usize, renumber_every: u64) -> World {
    let (mut w, shape, m, mut rng) = bed_scene(integrator, threads, renumber_every);
    for i in 0..300 {
        let cell = DVec3::new((i % 8) as f64, ((i / 8) % 8) as f64, (i / 64) as f64);
        let mut d = GrainDesc::at_rest(shape, m, (cell + 0.5) * 0.005 + DVec3::Z * 0.001);
        d.orientation = DQuat::from_euler(EulerRot::XYZ, rng.random(), rng.random(), rng.random());
        d.velocity = DVec3::new(
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
            0.0,
        );
        w.add_grain(d).unwrap();
    }
    w
}

#[test]
fn threads_checkpoints_and_processes_change_no_bit() {
    for integrator in [IntegratorKind::Gear, IntegratorKind::Verlet] {
        let steps = 1200;
        let mut one = bed(integrator, 1);
        let mut two = bed(integrator, 2);
        let mut snapshot = None;
        for step in 0..steps {
            one.step();
            two.step();
            assert_eq!(
                fingerprint(&one),
                fingerprint(&two),
                "{integrator:?} step {step}"
            );
            if step == steps / 2 {
                snapshot = Some(one.snapshot());
            }
        }
        assert!(one.stats().pairs > 256, "the threads share the pairs");
        let wrapped = one
            .grains()
            .filter(|&id| one.grain(id).unwrap().image != [0; 3])
            .count();
        assert!(wrapped > 0, "grains crossed the faces");
        let mut rebuilt = bed_scene(integrator, 2, 300).0;
        rebuilt.restore(snapshot.take().unwrap()).unwrap();
        for _ in steps / 2 + 1..steps {
            rebuilt.step();
        }
        assert_eq!(
            fingerprint(&one),
            fingerprint(&rebuilt),
            "{integrator:?} resumed"
        );

        // Two processes of a distributed run, each a thread.
        let ranks: Vec<Vec<u64>> = std::thread::scope(|s| {
            let handles: Vec<_> = ThreadExchange::group(2)
                .into_iter()
                .map(|ex| {
                    s.spawn(move || {
                        let mut w = bed(integrator, 1);
                        w.distribute(Box::new(ex), 50).unwrap();
                        for _ in 0..steps {
                            w.step();
                        }
                        fingerprint(&w)
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for r in ranks {
            assert!(r == fingerprint(&one), "{integrator:?}: a process differs");
        }
    }
}

#[test]
fn the_renumbering_interval_changes_no_bit_of_a_periodic_run() {
    // A pair across a face meets its second body at the image nearest the first: which
    // body is moved by the period follows the bodies' ids, not the proxies' numbers.
    let run = |every| {
        let mut w = bed_renumbered(IntegratorKind::Gear, 1, every);
        for _ in 0..1200 {
            w.step();
        }
        let wrapped = w.grain_states().filter(|g| g.image != [0; 3]).count();
        assert!(wrapped > 0, "grains crossed the faces");
        // Everything but the contact list, which is in the order of the proxies.
        let mut bits = fingerprint(&w);
        bits.truncate(2 + 16 * w.grain_count());
        bits.extend(
            w.wall_loads()
                .iter()
                .flat_map(|l| l.force.to_array().map(f64::to_bits)),
        );
        (bits, w.snapshot().proxies)
    };
    let (never, never_numbering) = run(0);
    for every in [1, 7] {
        let (renumbered, numbering) = run(every);
        assert_ne!(
            numbering, never_numbering,
            "every {every}: numbering unchanged"
        );
        assert!(renumbered == never, "renumbered every {every} steps");
    }
}

#[test]
fn bodies_too_large_for_the_period_and_planes_across_it_are_refused() {
    let (mut w, cube, quartz) = cube_world(periodic([false, true, false], 0.03), 1);
    // A cube of 1 cm is 1.7 cm across its box when turned: more than half of 3 cm.
    let e = w
        .add_grain(GrainDesc::at_rest(cube, quartz, DVec3::ZERO))
        .unwrap_err();
    assert!(
        matches!(e, SimError::TooLargeForPeriod { axis: 'y', .. }),
        "{e}"
    );
    assert!(e.to_string().contains("half the period"), "{e}");
    let tilted = Wall::new(
        "ramp",
        WallGeometry::HalfSpace {
            normal: DVec3::new(0.0, 0.3, 1.0),
        },
        Pose::IDENTITY,
        Motion::Fixed,
        None,
    )
    .unwrap();
    assert!(w.add_wall(tilted).is_err());
    let floor = Wall::new(
        "floor",
        WallGeometry::HalfSpace { normal: DVec3::Z },
        Pose::IDENTITY,
        Motion::Fixed,
        None,
    )
    .unwrap();
    assert!(w.add_wall(floor).is_ok());
    let bad = World::new(SimParams {
        periodic: Periodic {
            axes: [
                Some(Period {
                    lower: 1.0,
                    upper: f64::NAN,
                }),
                None,
                None,
            ],
        },
        ..SimParams::default()
    });
    assert!(bad.is_err());
    // A checkpoint of a periodic world does not fit one with other periods.
    let (mut a, cube, quartz) = cube_world(periodic([true; 3], L), 1);
    a.add_grain(GrainDesc::at_rest(cube, quartz, DVec3::splat(0.01)))
        .unwrap();
    a.step();
    let (mut b, _, _) = cube_world(periodic([true, true, false], L), 1);
    assert!(matches!(
        b.restore(a.snapshot()),
        Err(SimError::SnapshotMismatch { .. })
    ));
}
