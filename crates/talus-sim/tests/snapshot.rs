//! Checkpoints: a run snapshotted at step k, serialized, restored into a rebuilt world and
//! continued matches the uninterrupted run bit for bit — whatever the thread count, the
//! integrator, grains not stepped yet, removed grains — and a snapshot that does not fit
//! the rebuilt world is refused with an error.

use std::sync::Arc;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use talus_geom::glam::{DQuat, DVec3, EulerRot};
use talus_geom::{Pose, generate};
use talus_sim::broad::BroadPhaseKind;
use talus_sim::force::{Coefficients, ForceModelRegistry};
use talus_sim::integrate::IntegratorKind;
use talus_sim::material::Material;
use talus_sim::shape::ShapeId;
use talus_sim::snapshot::IntegratorState;
use talus_sim::wall::{Motion, Wall, WallGeometry};
use talus_sim::{GrainDesc, GrainId, SimError, SimParams, StepStats, World, WorldSnapshot};

const SHAPES: usize = 4;
const GRAINS: usize = 100;

/// How the static part of a world is built.
#[derive(Clone, Copy)]
struct Setup {
    integrator: IntegratorKind,
    threads: usize,
    broad_phase: BroadPhaseKind,
    shapes: usize,
    renumber_every: u64,
}

impl Setup {
    fn new(integrator: IntegratorKind, threads: usize) -> Self {
        Setup {
            integrator,
            threads,
            broad_phase: BroadPhaseKind::SweepAndPrune,
            shapes: SHAPES,
            renumber_every: talus_sim::DEFAULT_RENUMBER_EVERY,
        }
    }
}

fn floor() -> Wall {
    Wall::new(
        "floor",
        WallGeometry::HalfSpace { normal: DVec3::Z },
        Pose::IDENTITY,
        Motion::Fixed,
        None,
    )
    .unwrap()
}

/// A slab pushing into the bed from the side, to and fro.
fn pusher() -> Wall {
    let slab = generate::rectangular_box(DVec3::new(0.004, 0.05, 0.03)).unwrap();
    Wall::new(
        "pusher",
        WallGeometry::Body(Arc::new(slab)),
        Pose::from_translation(DVec3::new(-0.0075, 0.015, 0.015)),
        Motion::Oscillate {
            direction: DVec3::X,
            amplitude: 0.002,
            frequency: 40.0,
            phase: 0.0,
        },
        None,
    )
    .unwrap()
}

/// Shapes, material, force model and the floor: what precedes the grains.
fn rebuild_head(setup: Setup) -> World {
    let mut w = World::new(SimParams {
        dt: 1e-5,
        integrator: setup.integrator,
        threads: setup.threads,
        broad_phase: setup.broad_phase,
        margin: 1e-3,
        renumber_every: setup.renumber_every,
        ..SimParams::default()
    })
    .unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    for i in 0..setup.shapes {
        let g = generate::ellipsoid_grain(10 + 4 * i, DVec3::new(0.005, 0.004, 0.003), &mut rng)
            .unwrap();
        w.add_shape("grain", &g, None).unwrap();
    }
    let quartz = w
        .add_material(Material::new("quartz", 2650.0).unwrap())
        .unwrap();
    let c = Coefficients::from([("stiffness", 1e6), ("restitution", 0.5), ("friction", 0.5)]);
    w.set_force_model(
        ForceModelRegistry::default()
            .build("volumetric", &c)
            .unwrap(),
    )
    .unwrap();
    // Gear's stable step is several times smaller than Verlet's with damping.
    let critical = (0..setup.shapes as u32)
        .map(|s| w.critical_time_step_of(ShapeId(s), quartz).unwrap())
        .fold(f64::INFINITY, f64::min);
    if w.params().dt > critical {
        w.set_dt(0.9 * critical).unwrap();
    }
    w.add_wall(floor()).unwrap();
    w
}

/// The static part of the world as a scenario file would rebuild it: walls added after
/// the grains come last here, while in the original run their proxies follow the grains.
fn rebuild(setup: Setup) -> World {
    let mut w = rebuild_head(setup);
    w.add_wall(pusher()).unwrap();
    w
}

fn random_grain(rng: &mut ChaCha8Rng, position: DVec3) -> GrainDesc {
    let mut d = GrainDesc::at_rest(
        ShapeId(rng.random_range(0..SHAPES as u32)),
        talus_sim::material::MaterialId(0),
        position,
    );
    d.orientation = DQuat::from_euler(EulerRot::XYZ, rng.random(), rng.random(), rng.random());
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
    d
}

/// The original world: floor, a 5 × 5 × 4 lattice of random grains just above it, then
/// the moving slab.
fn original(setup: Setup) -> World {
    let mut w = rebuild_head(setup);
    let mut rng = ChaCha8Rng::seed_from_u64(77);
    for i in 0..GRAINS {
        let cell = DVec3::new((i % 5) as f64, ((i / 5) % 5) as f64, (i / 25) as f64);
        w.add_grain(random_grain(
            &mut rng,
            cell * 0.0092 + DVec3::new(0.0, 0.0, 0.0055),
        ))
        .unwrap();
    }
    w.add_wall(pusher()).unwrap();
    w
}

fn bits(v: DVec3) -> [u64; 3] {
    v.to_array().map(f64::to_bits)
}

/// Everything observable of a world, bit for bit.
fn fingerprint(w: &World) -> Vec<u64> {
    let mut out = vec![w.time().to_bits(), w.steps()];
    for id in w.grains() {
        let s = w.grain(id).unwrap();
        out.push(u64::from(id.0));
        out.extend(bits(s.pose.position));
        out.extend(s.pose.rotation.to_array().map(f64::to_bits));
        out.extend(bits(s.velocity));
        out.extend(bits(s.angular_velocity));
    }
    for load in w.wall_loads() {
        out.extend(bits(load.force));
        out.extend(bits(load.torque));
    }
    out
}

fn counts(s: &StepStats) -> [u64; 6] {
    [
        s.pairs as u64,
        s.pairs_started as u64,
        s.pairs_ended as u64,
        s.contacts as u64,
        s.coordination.to_bits(),
        s.max_overlap_ratio.to_bits(),
    ]
}

/// The snapshot as bytes, with the timings (which differ from run to run) zeroed.
fn state_bytes(w: &World) -> Vec<u8> {
    let mut s = w.snapshot();
    s.stats = StepStats {
        pairs: s.stats.pairs,
        pairs_started: s.stats.pairs_started,
        pairs_ended: s.stats.pairs_ended,
        contacts: s.stats.contacts,
        coordination: s.stats.coordination,
        max_overlap_ratio: s.stats.max_overlap_ratio,
        ..StepStats::default()
    };
    postcard::to_stdvec(&s).unwrap()
}

/// Through postcard and back.
fn round_trip(snapshot: &WorldSnapshot) -> WorldSnapshot {
    let bytes = postcard::to_stdvec(snapshot).unwrap();
    postcard::from_bytes(&bytes).unwrap()
}

/// Continues `a` (uninterrupted) and `b` (restored) `steps` steps, comparing every step's
/// counts and, at the end, the full state.
fn continue_both(a: &mut World, b: &mut World, steps: usize, what: &str) {
    assert_eq!(
        fingerprint(a),
        fingerprint(b),
        "{what}: right after restore"
    );
    for step in 0..steps {
        let ca = counts(a.step());
        let cb = counts(b.step());
        assert_eq!(
            ca, cb,
            "{what}: step counts differ {step} steps after restore"
        );
    }
    assert_eq!(
        fingerprint(a),
        fingerprint(b),
        "{what}: after {steps} steps"
    );
    assert!(
        state_bytes(a) == state_bytes(b),
        "{what}: full state differs after {steps} steps"
    );
}

fn has_tangential_history(s: &WorldSnapshot) -> bool {
    s.contacts
        .iter()
        .any(|c| c.touching && c.history.iter().any(|h| *h != 0.0))
}

#[test]
fn a_restored_run_continues_bit_for_bit() {
    for integrator in [IntegratorKind::Gear, IntegratorKind::Verlet] {
        let what = format!("{integrator:?}");
        let mut a = original(Setup::new(integrator, 1));
        let mut max_pairs = 0;
        let mut pushed = false;
        for step in 0..900 {
            if step == 300 {
                // Time step and gravity changed mid-run: the snapshot carries both.
                a.set_dt(0.8 * a.params().dt).unwrap();
                a.set_gravity(DVec3::new(0.5, 0.0, -9.81)).unwrap();
            }
            max_pairs = max_pairs.max(a.step().pairs);
            pushed |= a.wall_loads()[1].force.length() > 0.0;
        }
        // A load for the next step is part of the state too.
        a.apply_load(
            GrainId(3),
            DVec3::new(0.0, 0.0, 1e-3),
            DVec3::new(1e-7, 0.0, 0.0),
        )
        .unwrap();
        let snapshot = a.snapshot();
        assert!(
            has_tangential_history(&snapshot),
            "{what}: no sliding contacts"
        );
        assert!(pushed, "{what}: the slab touches no grain");
        assert!(
            max_pairs > 256,
            "{what}: the parallel contact path was not used ({max_pairs} pairs)"
        );

        // Another thread count and broad-phase method in the continued run: neither
        // changes a bit. Brute force runs without the skin the other methods run behind
        // (`talus_sim::broad::Skinned`), so the skin changes no bit either.
        let other = match integrator {
            IntegratorKind::Gear => BroadPhaseKind::BruteForce,
            IntegratorKind::Verlet => BroadPhaseKind::UniformGrid { cell_size: None },
        };
        let mut b = rebuild(Setup {
            broad_phase: other,
            ..Setup::new(integrator, 2)
        });
        b.restore(round_trip(&snapshot)).unwrap();
        assert_eq!(b.steps(), 900);
        assert_eq!(b.time().to_bits(), a.time().to_bits());
        assert_eq!(b.params().dt, a.params().dt);
        assert_eq!(b.grain_count(), GRAINS);
        assert_eq!(b.box_pairs(), a.box_pairs());
        assert_eq!(b.stats().contacts, a.stats().contacts);
        continue_both(&mut a, &mut b, 400, &what);
    }
}

/// The contacts of the last step as reported, bit for bit, sorted by the bodies.
fn reported_contacts(w: &World) -> Vec<String> {
    let mut out: Vec<String> = w
        .contacts()
        .map(|c| {
            format!(
                "{:?} {:?} {:?} {:?}",
                c.a,
                c.b,
                bits(c.force_on_b),
                bits(c.point)
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn renumbering_changes_nothing_a_pair_computes() {
    let setup = Setup {
        renumber_every: 0,
        ..Setup::new(IntegratorKind::Verlet, 1)
    };
    let mut a = original(setup);
    for _ in 0..900 {
        a.step();
    }
    let mut b = rebuild(setup);
    b.restore(a.snapshot()).unwrap();
    b.renumber();
    let (before, after) = (a.snapshot(), b.snapshot());
    assert_ne!(
        before.proxies, after.proxies,
        "the numbering did not change"
    );
    assert!(
        after.contacts.iter().any(|c| c.flipped),
        "no pair changed its order"
    );
    assert!(after.contacts.windows(2).all(|w| w[0].pair < w[1].pair));
    assert_eq!(a.box_pairs(), b.box_pairs());

    // The step after: every pair's force and point the same to the last bit, each pair
    // reported the same way round.
    a.step();
    b.step();
    let contacts = reported_contacts(&a);
    assert!(contacts.len() >= 20, "{} contacts", contacts.len());
    assert_eq!(contacts, reported_contacts(&b));

    // And every step after: each body's loads are summed in the order of its partners'
    // ids, not of the pair list, so the runs stay the same to the last bit (all but the
    // numbering itself).
    for step in 0..100 {
        assert_eq!(counts(a.step()), counts(b.step()), "step {step}");
    }
    assert_eq!(fingerprint(&a), fingerprint(&b));
}

#[test]
fn the_renumbering_interval_changes_no_bit_of_a_run() {
    // Renumbering merges the contact list's joined pairs into it (at every step with an
    // interval of 1; never merged but when due without renumbering): so neither changes a
    // bit.
    let run = |renumber_every| {
        let mut w = original(Setup {
            renumber_every,
            ..Setup::new(IntegratorKind::Gear, 1)
        });
        for _ in 0..400 {
            w.step();
        }
        (fingerprint(&w), w.snapshot().proxies)
    };
    let (never, never_numbering) = run(0);
    for every in [1, 7, 50] {
        let (renumbered, numbering) = run(every);
        assert_ne!(
            numbering, never_numbering,
            "every {every}: numbering unchanged"
        );
        assert_eq!(renumbered, never, "renumbered every {every} steps");
    }
}

#[test]
fn renumbered_runs_resume_bit_for_bit_on_any_thread_count() {
    // Renumbered every 7 steps: many renumberings before and after the checkpoint.
    let setup = |threads| Setup {
        renumber_every: 7,
        ..Setup::new(IntegratorKind::Gear, threads)
    };
    let mut a = original(setup(1));
    for _ in 0..300 {
        a.step();
    }
    let mut b = rebuild(setup(2));
    b.restore(round_trip(&a.snapshot())).unwrap();
    continue_both(&mut a, &mut b, 120, "renumbered every 7 steps");

    let mut c = original(setup(2));
    for _ in 0..420 {
        c.step();
    }
    assert_eq!(fingerprint(&a), fingerprint(&c), "1 vs 2 threads");
}

#[test]
fn grains_not_stepped_yet_resume_identically() {
    for integrator in [IntegratorKind::Gear, IntegratorKind::Verlet] {
        let what = format!("{integrator:?}");
        // Straight after adding: every grain is fresh.
        let mut a = original(Setup::new(integrator, 2));
        let snapshot = a.snapshot();
        assert!(
            snapshot
                .grains
                .iter()
                .all(|g| matches!(g.unwrap().motion, IntegratorState::Fresh { .. }))
        );
        let mut b = rebuild(Setup::new(integrator, 1));
        b.restore(round_trip(&snapshot)).unwrap();
        continue_both(&mut a, &mut b, 150, &format!("{what}, all fresh"));

        // Some grains stepped, some just added, a load pending on a fresh one.
        let mut rng = ChaCha8Rng::seed_from_u64(8);
        for i in 0..4 {
            let position = DVec3::new(0.005 + 0.0092 * i as f64, 0.005, 0.04);
            let id = a.add_grain(random_grain(&mut rng, position)).unwrap();
            a.apply_load(id, DVec3::new(1e-3, 0.0, 0.0), DVec3::ZERO)
                .unwrap();
        }
        let snapshot = a.snapshot();
        let fresh = snapshot
            .grains
            .iter()
            .filter(|g| matches!(g.unwrap().motion, IntegratorState::Fresh { .. }))
            .count();
        assert_eq!(fresh, 4);
        let mut b = rebuild(Setup::new(integrator, 1));
        b.restore(round_trip(&snapshot)).unwrap();
        continue_both(&mut a, &mut b, 150, &format!("{what}, partly fresh"));
    }
}

#[test]
fn removed_grains_stay_removed() {
    let mut a = original(Setup::new(IntegratorKind::Gear, 1));
    for _ in 0..300 {
        a.step();
    }
    a.remove_grain(GrainId(5)).unwrap();
    for _ in 0..300 {
        a.step();
    }
    // Removed right before the snapshot, while its pairs are still in the broad phase and
    // the contact list: the next step ends them in both runs alike.
    let mut touching: Vec<GrainId> = a
        .contacts()
        .filter_map(|c| match (c.a, c.b) {
            (talus_sim::BodyRef::Grain(x), talus_sim::BodyRef::Grain(_)) => Some(x),
            _ => None,
        })
        .collect();
    touching.sort();
    touching.dedup();
    touching.truncate(2);
    assert_eq!(touching.len(), 2);
    for id in &touching {
        a.remove_grain(*id).unwrap();
    }
    let snapshot = a.snapshot();
    assert!(snapshot.grains[5].is_none());
    assert_eq!(snapshot.grains.iter().filter(|g| g.is_none()).count(), 3);
    let mut b = rebuild(Setup::new(IntegratorKind::Gear, 2));
    b.restore(round_trip(&snapshot)).unwrap();
    assert_eq!(b.grain_count(), GRAINS - 3);
    assert!(b.grain(GrainId(5)).is_err());
    continue_both(&mut a, &mut b, 300, "removed grains");
    // Ids are not reused after a restore either.
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let next = random_grain(&mut rng, DVec3::new(0.0, 0.0, 0.05));
    assert_eq!(a.add_grain(next).unwrap(), b.add_grain(next).unwrap());
}

fn refused(w: &mut World, snapshot: WorldSnapshot, expect: &str) {
    match w.restore(snapshot) {
        Err(SimError::SnapshotMismatch { what }) => {
            assert!(what.contains(expect), "expected '{expect}' in '{what}'");
        }
        other => panic!("expected a snapshot mismatch about '{expect}', got {other:?}"),
    }
    assert_eq!(w.grain_count(), 0, "a refused snapshot changes nothing");
    assert_eq!(w.steps(), 0);
}

#[test]
fn a_snapshot_that_does_not_fit_is_refused() {
    let mut a = original(Setup::new(IntegratorKind::Gear, 1));
    for _ in 0..200 {
        a.step();
    }
    let snapshot = a.snapshot();
    assert!(!snapshot.contacts.is_empty());

    // A shape missing from the rebuilt world.
    let mut w = rebuild(Setup {
        shapes: SHAPES - 1,
        ..Setup::new(IntegratorKind::Gear, 1)
    });
    refused(&mut w, snapshot.clone(), "shape 3");

    // A wall missing.
    let mut w = rebuild_head(Setup::new(IntegratorKind::Gear, 1));
    refused(&mut w, snapshot.clone(), "walls");

    // Another integrator.
    let mut w = rebuild(Setup::new(IntegratorKind::Verlet, 1));
    refused(&mut w, snapshot.clone(), "integrator");

    // A world that already has grains.
    let mut w = rebuild(Setup::new(IntegratorKind::Gear, 1));
    w.add_grain(GrainDesc::at_rest(
        ShapeId(0),
        talus_sim::material::MaterialId(0),
        DVec3::ZERO,
    ))
    .unwrap();
    assert!(matches!(
        w.restore(snapshot.clone()),
        Err(SimError::SnapshotMismatch { .. })
    ));

    // A denser material: the inertia does not match.
    let mut w = World::new(*rebuild(Setup::new(IntegratorKind::Gear, 1)).params()).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    for i in 0..SHAPES {
        let g = generate::ellipsoid_grain(10 + 4 * i, DVec3::new(0.005, 0.004, 0.003), &mut rng)
            .unwrap();
        w.add_shape("grain", &g, None).unwrap();
    }
    w.add_material(Material::new("steel", 7800.0).unwrap())
        .unwrap();
    let c = Coefficients::from([("stiffness", 1e6), ("restitution", 0.5), ("friction", 0.5)]);
    w.set_force_model(
        ForceModelRegistry::default()
            .build("volumetric", &c)
            .unwrap(),
    )
    .unwrap();
    w.add_wall(floor()).unwrap();
    w.add_wall(pusher()).unwrap();
    refused(&mut w, snapshot.clone(), "inertia");

    // Corrupt snapshots.
    let mut w = rebuild(Setup::new(IntegratorKind::Gear, 1));
    let mut bad = snapshot.clone();
    bad.contacts[0].history.push(0.0);
    refused(&mut w, bad, "history");
    let mut bad = snapshot.clone();
    bad.contacts.swap(0, 1);
    refused(&mut w, bad, "sorted");
    let mut bad = snapshot.clone();
    if let Some(g) = bad.grains[0].as_mut() {
        g.pose.position.x = f64::NAN;
    }
    refused(&mut w, bad, "pose");
    let mut bad = snapshot.clone();
    bad.boxes.pop();
    refused(&mut w, bad, "boxes");
    let mut bad = snapshot.clone();
    bad.pending.push(Default::default());
    refused(&mut w, bad, "pending");
    let mut bad = snapshot.clone();
    bad.format += 1;
    refused(&mut w, bad, "format");

    // After all that, the right snapshot is still accepted.
    w.restore(snapshot).unwrap();
    assert_eq!(fingerprint(&w), fingerprint(&a));
}
