//! Decomposed runs: each process holds only the grains of its region and ghosts of the
//! neighbours' grains that can touch them (threads joined by a [`ThreadExchange`], the
//! protocol MPI carries). At every step the grains the processes own, put together, are
//! the single process's grains to the last bit, and every process has the single process's
//! wall loads and contact counts: on 1, 2, 3 and 8 processes, with the regions cut anew in
//! the middle of contacts, grains crossing the regions in every direction, and a process
//! without grains; a world cut before its grains are added holds a part from the start; a
//! process whose work costs more is given less at the next cut, with the same bits; and a
//! checkpoint gathered from 2 processes resumes on 3 and on 1 with the bits of the
//! uninterrupted run, and so does one in pieces (each process's share, put together or
//! restored in shares on 1–4 processes, each holding only the pieces it read until the
//! first cut sends the grains to their owners).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use talus_geom::glam::DVec3;
use talus_sim::distribute::Traffic;
use talus_sim::distribute::{Exchange, SnapshotFrame, SnapshotPart, SnapshotShare};
use talus_sim::force::{
    Coefficients, ContactInput, ContactLoad, ForceModel, ForceModelRegistry, SideSprings,
};
use talus_sim::integrate::IntegratorKind;
use talus_sim::{World, WorldSnapshot};

mod common;

use common::gas::{bits, grain_descs, on_processes, scene, world, world_in};

/// A grain's state, bit for bit.
fn grain_bits(w: &World) -> BTreeMap<u32, Vec<u64>> {
    w.grains()
        .map(|id| {
            let s = w.grain(id).unwrap();
            let mut out = Vec::new();
            out.extend(bits(s.pose.position));
            out.extend(s.pose.rotation.to_array().map(f64::to_bits));
            out.extend(bits(s.velocity));
            out.extend(bits(s.angular_velocity));
            (id.0, out)
        })
        .collect()
}

/// What every process knows of the whole run after a step, bit for bit: time, counts,
/// deepest overlap, coordination and the loads on the walls.
fn shared_bits(w: &World) -> Vec<u64> {
    let s = w.stats();
    let mut out = vec![
        w.time().to_bits(),
        w.steps(),
        s.contacts as u64,
        s.pairs as u64,
        s.max_overlap_ratio.to_bits(),
        s.coordination.to_bits(),
    ];
    for load in w.wall_loads() {
        out.extend(bits(load.force));
        out.extend(bits(load.torque));
    }
    out
}

/// One process's view of a run, step by step.
struct Trace {
    grains: Vec<BTreeMap<u32, Vec<u64>>>,
    shared: Vec<Vec<u64>>,
    positions: Vec<BTreeMap<u32, DVec3>>,
    /// Grains held (owned and ghosts) after each step.
    held: Vec<usize>,
    /// The length of the per-grain arrays after each step.
    slots: Vec<usize>,
}

impl Trace {
    /// The grains and shared values of the steps after the first `steps`.
    fn after(&self, steps: usize) -> Trace {
        Trace {
            grains: self.grains[steps..].to_vec(),
            shared: self.shared[steps..].to_vec(),
            positions: Vec::new(),
            held: Vec::new(),
            slots: Vec::new(),
        }
    }
}

fn trace(w: &mut World, steps: usize) -> Trace {
    let mut t = Trace {
        grains: Vec::new(),
        shared: Vec::new(),
        positions: Vec::new(),
        held: Vec::new(),
        slots: Vec::new(),
    };
    for _ in 0..steps {
        w.step();
        t.grains.push(grain_bits(w));
        t.shared.push(shared_bits(w));
        t.positions.push(
            w.grains()
                .map(|id| (id.0, w.grain(id).unwrap().pose.position))
                .collect(),
        );
        t.held.push(w.ecs().len() as usize);
        t.slots.push(w.grain_slots());
    }
    t
}

/// A force model that gives another model's loads, after spinning for `spin` at each: the
/// same forces, at a cost per contact the work model does not know.
struct Slowed {
    inner: Box<dyn ForceModel>,
    spin: Duration,
}

impl ForceModel for Slowed {
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn history_len(&self) -> usize {
        self.inner.history_len()
    }
    fn load(&self, contact: &ContactInput, history: &mut [f64]) -> ContactLoad {
        let start = Instant::now();
        while start.elapsed() < self.spin {
            std::hint::spin_loop();
        }
        self.inner.load(contact, history)
    }
    fn normal_stiffness(&self, area: f64, length: f64) -> f64 {
        self.inner.normal_stiffness(area, length)
    }
    fn side_springs(&self, area: f64, length: f64) -> SideSprings {
        self.inner.side_springs(area, length)
    }
    fn damping_ratio(&self) -> f64 {
        self.inner.damping_ratio()
    }
    fn range(&self) -> f64 {
        self.inner.range()
    }
}

/// Runs `make()` on `ranks` processes (threads), decomposed, `steps` steps, the regions
/// cut anew every `rebalance_every`; each process's trace.
fn decomposed(
    make: impl Fn() -> World + Sync,
    ranks: usize,
    rebalance_every: u64,
    steps: usize,
) -> Vec<Trace> {
    on_processes(ranks, |ex| {
        let mut w = make();
        w.decompose(Box::new(ex), rebalance_every).unwrap();
        trace(&mut w, steps)
    })
}

/// Every step: the processes' grains are disjoint and together the single process's, to
/// the bit, and every process knows the single process's shared values.
fn assert_same(single: &Trace, traces: &[Trace], what: &str) {
    for step in 0..single.grains.len() {
        let mut union = BTreeMap::new();
        for (rank, t) in traces.iter().enumerate() {
            assert!(
                t.shared[step] == single.shared[step],
                "{what}: rank {rank} of {}: shared values differ at step {}: {:?} against {:?}",
                traces.len(),
                step + 1,
                &t.shared[step][..6],
                &single.shared[step][..6]
            );
            for (id, g) in &t.grains[step] {
                assert!(
                    union.insert(*id, g.clone()).is_none(),
                    "{what}: grain {id} owned twice at step {}",
                    step + 1
                );
            }
        }
        assert!(
            union == single.grains[step],
            "{what} on {} processes: grains differ at step {}",
            traces.len(),
            step + 1
        );
    }
}

#[test]
fn one_two_and_three_processes_step_the_bits_of_one() {
    for integrator in [IntegratorKind::Gear, IntegratorKind::Verlet] {
        let make = || world(integrator, 90);
        let single = trace(&mut make(), 400);
        assert!(single.shared.last().unwrap()[2] > 0, "no contacts");
        for ranks in [1, 2, 3] {
            // Regions cut anew every 7 steps: grains change hands in the middle of
            // contacts, with the states of the pairs they key.
            let traces = decomposed(make, ranks, 7, 400);
            assert_same(&single, &traces, &format!("{integrator:?}"));
        }
    }
}

#[test]
fn grains_cross_the_regions_in_every_direction_and_each_process_holds_a_part() {
    let make = || world(IntegratorKind::Gear, 120);
    let steps = 1500;
    let single = trace(&mut make(), steps);
    // Eight regions of a cube, cut across all three axes and fixed: grains flying about
    // cross them.
    let traces = decomposed(make, 8, 1_000_000, steps);
    assert_same(&single, &traces, "8 processes");
    let owner = |step: usize, id: u32| {
        traces
            .iter()
            .position(|t| t.grains[step].contains_key(&id))
            .unwrap()
    };
    let mut seen = [[false; 2]; 3];
    for step in 1..steps {
        for (&id, &after) in &single.positions[step] {
            if owner(step - 1, id) != owner(step, id) {
                let d = after - single.positions[step - 1][&id];
                let axis = d.abs().max_position();
                seen[axis][usize::from(d[axis] > 0.0)] = true;
            }
        }
    }
    assert_eq!(seen, [[true; 2]; 3], "crossings (axis, -/+) seen");
    for (rank, t) in traces.iter().enumerate() {
        assert!(!t.grains[0].is_empty(), "region {rank} holds no grain");
        // Its own grains and the ghosts that can touch them, not the whole box.
        let most = t.held.iter().max().unwrap();
        assert!(*most < 120, "process {rank} held {most} grains of 120");
        // Its arrays as long as what it holds, not as the run: the slots of grains that
        // left are taken again a step later.
        let slots = t.slots.iter().max().unwrap();
        assert!(
            *slots <= most + 2,
            "process {rank}: {slots} slots for at most {most} grains held"
        );
    }
}

#[test]
fn grains_crossing_periodic_faces_give_the_bits_of_one() {
    // Periodic along x and y: pairs met across the faces, grains wrapping through them and
    // changing hands there.
    let make = || world_in(IntegratorKind::Gear, 90, true);
    let steps = 800;
    let single = trace(&mut make(), steps);
    let wrapped = {
        let mut w = make();
        for _ in 0..steps {
            w.step();
        }
        w.grain_states().filter(|g| g.image != [0; 3]).count()
    };
    assert!(
        wrapped > 10,
        "grains crossed the periodic faces ({wrapped})"
    );
    for ranks in [2, 3] {
        let traces = decomposed(make, ranks, 7, steps);
        assert_same(&single, &traces, "periodic");
    }
}

#[test]
fn a_process_without_grains_takes_part() {
    // Two grains on three processes: one of them owns nothing.
    let make = || world(IntegratorKind::Gear, 2);
    let single = trace(&mut make(), 300);
    let traces = decomposed(make, 3, 10, 300);
    assert_same(&single, &traces, "2 grains on 3 processes");
    assert!(
        traces
            .iter()
            .any(|t| t.grains.iter().all(BTreeMap::is_empty)),
        "every process owned a grain"
    );
}

/// Runs `make()` decomposed on `ranks` processes for `steps` steps, then gathers the whole
/// run's snapshot (every process gets it; the first one's is returned). The snapshot
/// gathered on the first process alone, and the grain states, agree with it.
fn gathered(make: impl Fn() -> World + Sync, ranks: usize, steps: usize) -> WorldSnapshot {
    on_processes(ranks, |ex| {
        let mut w = make();
        w.decompose(Box::new(ex), 5).unwrap();
        for _ in 0..steps {
            w.step();
        }
        let everywhere = w.gathered_snapshot();
        let on_first = w.snapshot_on_first();
        let states = w.gathered_grain_states();
        let states_on_first = w.grain_states_on_first();
        if w.rank() == 0 {
            assert!(
                on_first.as_ref() == Some(&everywhere),
                "the first's snapshot"
            );
            assert!(states_on_first == states, "the first's grain states");
        } else {
            assert!(on_first.is_none() && states_on_first.is_empty());
        }
        let ids: Vec<u32> = states.iter().map(|g| g.id.0).collect();
        let live: Vec<u32> = (0..everywhere.grains.len() as u32)
            .filter(|&i| everywhere.grains[i as usize].is_some())
            .collect();
        assert_eq!(ids, live, "every grain's state, in id order");
        everywhere
    })
    .swap_remove(0)
}

#[test]
fn a_checkpoint_of_two_processes_resumes_on_three_and_on_one() {
    let make = || world(IntegratorKind::Gear, 90);
    let single = trace(&mut make(), 300);
    let snapshot = gathered(make, 2, 150);
    assert_eq!(snapshot.steps, 150);
    assert_eq!(
        snapshot.grains.iter().flatten().count(),
        90,
        "every grain in the gathered snapshot"
    );
    let restored = || {
        let mut w = scene(IntegratorKind::Gear);
        w.restore(snapshot.clone()).unwrap();
        w
    };
    // On one process, without decomposition.
    let mut one = restored();
    let tail = trace(&mut one, 150);
    assert!(tail.grains == single.grains[150..], "resumed on 1 process");
    assert!(tail.shared == single.shared[150..], "resumed on 1 process");
    // On three.
    let traces = decomposed(restored, 3, 5, 150);
    let later = single.after(150);
    assert_same(&later, &traces, "resumed on 3 processes");
}

#[test]
fn a_checkpoint_in_pieces_resumes_in_shares_on_one_to_four_processes() {
    let make = || world(IntegratorKind::Gear, 90);
    // Grains taken out just before the checkpoint, with the pairs they key (a discharge):
    // their boxes alone are in the pieces, and their pairs end with them.
    let remove = |w: &mut World| {
        for id in 0..10 {
            // Every process asks; only those that hold the grain know it.
            let _ = w.remove_grain(talus_sim::GrainId(id));
        }
    };
    let mut one = make();
    for _ in 0..150 {
        one.step();
    }
    remove(&mut one);
    let later = trace(&mut one, 150);
    // Each of 3 processes's share after 150 steps (the regions cut every 5), and the
    // snapshot gathered from them.
    let shares = on_processes(3, |ex| {
        let mut w = make();
        w.decompose(Box::new(ex), 5).unwrap();
        for _ in 0..150 {
            w.step();
        }
        remove(&mut w);
        let gathered = w.gathered_snapshot();
        let SnapshotShare::Part { frame, part } = w.snapshot_share() else {
            panic!("a decomposed run's share is a part");
        };
        assert_eq!(frame.is_some(), w.rank() == 0, "the frame on the first");
        (frame, part, gathered)
    });
    let frame: SnapshotFrame = shares[0].0.clone().unwrap();
    let parts: Vec<SnapshotPart> = shares.iter().map(|s| s.1.clone()).collect();
    assert_eq!(
        parts.iter().map(SnapshotPart::grain_count).sum::<usize>(),
        80,
        "every grain in one part"
    );
    // Put together in any order, the parts give the gathered snapshot.
    let mut reversed = parts.clone();
    reversed.reverse();
    assert!(
        frame.clone().assembled(reversed) == shares[0].2,
        "assembled"
    );
    for ranks in 1..=4 {
        let traces = on_processes(ranks, |ex| {
            let rank = ex.rank();
            // The pieces dealt in turn: with four processes the last reads none.
            let mine: Vec<SnapshotPart> = parts
                .iter()
                .enumerate()
                .filter(|(k, _)| k % ranks == rank)
                .map(|(_, p)| p.clone())
                .collect();
            let read: usize = mine.iter().map(SnapshotPart::grain_count).sum();
            let mut w = scene(IntegratorKind::Gear);
            w.restore_share(frame.clone(), mine, Box::new(ex), 5)
                .unwrap();
            assert_eq!(w.ecs().len() as usize, read, "only the pieces read");
            assert_eq!(w.steps(), 150);
            trace(&mut w, 150)
        });
        assert_same(&later, &traces, &format!("restored in shares on {ranks}"));
    }
}

#[test]
fn a_share_that_does_not_fit_its_world_is_refused() {
    let make = || world(IntegratorKind::Gear, 30);
    let shares = on_processes(2, |ex| {
        let mut w = make();
        w.decompose(Box::new(ex), 5).unwrap();
        for _ in 0..20 {
            w.step();
        }
        match w.snapshot_share() {
            SnapshotShare::Part { frame, part } => (frame, part),
            SnapshotShare::Whole(_) => panic!("a part"),
        }
    });
    let frame = shares[0].0.clone().unwrap();
    let parts: Vec<SnapshotPart> = shares.iter().map(|s| s.1.clone()).collect();
    let refused = |frame: SnapshotFrame,
                   parts: Vec<SnapshotPart>,
                   integrator: IntegratorKind,
                   expect: &str| {
        let errors = on_processes(1, |ex| {
            let mut w = scene(integrator);
            w.restore_share(frame.clone(), parts.clone(), Box::new(ex), 5)
                .map(drop)
                .unwrap_err()
                .to_string()
        });
        assert!(
            errors[0].contains(expect),
            "{expect:?} not in {:?}",
            errors[0]
        );
    };
    // A grain in two pieces.
    let twice = vec![parts[0].clone(), parts[0].clone()];
    refused(frame.clone(), twice, IntegratorKind::Gear, "in two pieces");
    // Another integrator.
    refused(
        frame.clone(),
        parts.clone(),
        IntegratorKind::Verlet,
        "integrator",
    );
    // Fewer grain ids than the pieces hold.
    let short = SnapshotFrame {
        ids: 3,
        ..frame.clone()
    };
    refused(short, parts.clone(), IntegratorKind::Gear, "grain ids");
}

/// Steps `w` 300 steps, pouring five grains (the same on every process) every 60 steps and
/// removing the grain of the lowest id left every 100 steps; the grains owned after each
/// step.
fn pour_and_remove(w: &mut World) -> Vec<BTreeMap<u32, Vec<u64>>> {
    let mut rng = <rand_chacha::ChaCha8Rng as rand::SeedableRng>::seed_from_u64(99);
    let mut out = Vec::new();
    let mut removed = 0u32;
    for step in 1..=300 {
        if step % 60 == 0 {
            for k in 0..5 {
                let mut d = talus_sim::GrainDesc::at_rest(
                    talus_sim::shape::ShapeId(k % 3),
                    talus_sim::material::MaterialId(0),
                    DVec3::new(0.01 + 0.008 * f64::from(k), 0.025, 0.045),
                );
                d.velocity = DVec3::new(rand::Rng::random_range(&mut rng, -0.5..0.5), 0.0, -1.0);
                w.add_grain(d).unwrap();
            }
        }
        if step % 100 == 0 {
            // Every process asks; only those that hold the grain know it.
            let _ = w.remove_grain(talus_sim::GrainId(removed));
            removed += 1;
        }
        w.step();
        out.push(grain_bits(w));
    }
    out
}

#[test]
fn grains_poured_and_removed_on_every_process_give_the_bits_of_one() {
    let make = || world(IntegratorKind::Verlet, 60);
    let single = pour_and_remove(&mut make());
    assert_eq!(single.last().unwrap().len(), 60 + 25 - 3);
    for ranks in [2, 3] {
        let traces = on_processes(ranks, |ex| {
            let mut w = make();
            w.decompose(Box::new(ex), 13).unwrap();
            pour_and_remove(&mut w)
        });
        for step in 0..single.len() {
            let mut union = BTreeMap::new();
            for t in &traces {
                for (id, g) in &t[step] {
                    assert!(union.insert(*id, g.clone()).is_none(), "grain {id} twice");
                }
            }
            assert!(
                union == single[step],
                "{ranks} processes: grains differ at step {}",
                step + 1
            );
        }
    }
}

/// A world cut from where its grains will be, before they are added: each process gives the
/// positions of a share of the grains alone (the shares together every grain once), adds the
/// grains of its region alone (taking the others' ids, so that every process numbers the
/// grains alike), holds its part from the start, and the run has the bits of one.
#[test]
fn a_world_cut_before_its_grains_are_added_holds_its_part_from_the_start() {
    let integrator = IntegratorKind::Gear;
    let grains = 90;
    let single = trace(&mut world(integrator, grains), 200);
    let runs = on_processes(3, |ex| {
        let mut w = scene(integrator);
        w.decompose(Box::new(ex), 50).unwrap();
        let descs = grain_descs(grains);
        let positions: Vec<DVec3> = descs.iter().map(|d| d.position).collect();
        let mut asked = Vec::new();
        w.cut_before_adding(grains, &mut |range| {
            asked.push(range.clone());
            positions[range].to_vec()
        })
        .unwrap();
        let ids: Vec<u32> = descs
            .into_iter()
            .map(|d| w.add_grain(d).unwrap().0)
            .collect();
        assert_eq!(ids, (0..grains as u32).collect::<Vec<_>>());
        let own = w.grains().count();
        assert_eq!(
            w.grain_slots(),
            own,
            "per-grain arrays as long as the own grains"
        );
        assert_eq!(
            w.ecs().len() as usize,
            own,
            "no entity of the others' grains"
        );
        // Cut once is enough: a second cut, or a cut of a world holding grains, is refused.
        assert!(
            w.cut_before_adding(grains, &mut |r| positions[r].to_vec())
                .is_err()
        );
        (own, asked, trace(&mut w, 200))
    });
    // Each process was asked once, for a third of the grains, and every grain in one share.
    let mut shares: Vec<std::ops::Range<usize>> =
        runs.iter().flat_map(|r| r.1.iter().cloned()).collect();
    assert_eq!(shares.len(), 3, "{shares:?}");
    shares.sort_by_key(|r| r.start);
    assert_eq!(shares, [0..30, 30..60, 60..90]);
    let held: Vec<usize> = runs.iter().map(|r| r.0).collect();
    assert_eq!(held.iter().sum::<usize>(), grains, "{held:?}");
    assert!(held.iter().all(|&h| h < grains), "each a part: {held:?}");
    let traces: Vec<Trace> = runs.into_iter().map(|r| r.2).collect();
    assert_same(&single, &traces, "cut before adding");
}

#[test]
fn a_cut_before_adding_needs_an_empty_decomposed_world() {
    let mut positions = |_| vec![DVec3::ZERO];
    let mut single = scene(IntegratorKind::Verlet);
    let e = single.cut_before_adding(1, &mut positions).unwrap_err();
    assert!(e.to_string().contains("not decomposed"), "{e}");
    let messages = on_processes(2, |ex| {
        let mut w = world(IntegratorKind::Verlet, 10);
        w.decompose(Box::new(ex), 50).unwrap();
        w.cut_before_adding(1, &mut |_| vec![DVec3::ZERO])
            .unwrap_err()
            .to_string()
    });
    for m in messages {
        assert!(m.contains("a world of 10 grains"), "{m}");
    }
}

/// The 90-grain gas on two processes, the second slowed by `spin` at every contact it
/// evaluates (if given); each process's trace and traffic.
fn gas_on_two(
    rebalance_every: u64,
    steps: usize,
    spin: Option<Duration>,
) -> (Vec<Trace>, Vec<Traffic>) {
    let runs = on_processes(2, |ex| {
        let mut w = world(IntegratorKind::Gear, 90);
        if let Some(spin) = spin.filter(|_| ex.rank() == 1) {
            let inner = ForceModelRegistry::default()
                .build(
                    "volumetric",
                    &Coefficients::from([
                        ("stiffness", 2e5),
                        ("restitution", 0.6),
                        ("friction", 0.4),
                    ]),
                )
                .unwrap();
            w.set_force_model(Box::new(Slowed { inner, spin })).unwrap();
        }
        w.decompose(Box::new(ex), rebalance_every).unwrap();
        let t = trace(&mut w, steps);
        (t, w.traffic())
    });
    runs.into_iter().unzip()
}

#[test]
fn a_process_falling_behind_has_the_regions_cut_before_their_time() {
    // Cuts due every 400 steps, a run of 300: only the first cut is on schedule. The
    // slowed process falls behind, and the regions are cut again from step 100 on (a
    // quarter of the interval), with the same bits.
    let steps = 300;
    let single = trace(&mut world(IntegratorKind::Gear, 90), steps);
    let slowed = Some(Duration::from_micros(100));
    let (traces, traffic) = gas_on_two(400, steps, slowed);
    assert_same(&single, &traces, "cut ahead of schedule");
    assert_eq!(traffic[0].rebalances, traffic[1].rebalances);
    assert!(
        (2..=3).contains(&traffic[0].rebalances),
        "{} cuts in {steps} steps",
        traffic[0].rebalances
    );
    // The same gas, not slowed: balanced enough that nothing is cut ahead of schedule is
    // not guaranteed on a shared machine, but never more often than every 100 steps.
    let (traces, traffic) = gas_on_two(400, steps, None);
    assert_same(&single, &traces, "not slowed");
    assert!(traffic[0].rebalances <= 3);
}

#[test]
fn a_process_whose_work_costs_more_is_given_less() {
    // Two processes, the second slowed at every contact it evaluates (the same forces): its
    // time per unit of modelled work is the larger, so each cut gives its grains more
    // weight and its region fewer of them; the run's bits stay those of one process.
    let steps = 300;
    let single = trace(&mut world(IntegratorKind::Gear, 90), steps);
    let (traces, traffic) = gas_on_two(50, steps, Some(Duration::from_micros(100)));
    assert_same(&single, &traces, "one process slowed");
    // Every process weighed alike, from the figures all of them know.
    assert_eq!(traffic[0].weight_factors, traffic[1].weight_factors);
    let factors = &traffic[0].weight_factors;
    assert_eq!(factors.len(), 2, "the last cut went by measurements");
    assert!(
        factors[1] > 2.0 * factors[0],
        "the slowed process's factor {factors:?}"
    );
    let owned = |rank: usize| traces[rank].grains.last().unwrap().len();
    assert!(
        owned(1) < owned(0),
        "the slowed process owns {} grains, the other {}",
        owned(1),
        owned(0)
    );
    // The modelled work is counted on each process, and reported to all.
    assert!(traffic[0].processes.iter().all(|p| p.modelled_work > 0.0));
}
