//! Distributed runs: a world stepped by 1, 2, 3 or 8 processes (threads joined by a
//! [`ThreadExchange`], the same protocol MPI carries) matches the single process bit for
//! bit at every step — grains crossing the regions in every direction, regions cut anew in
//! the middle of contacts, a process without grains — and a checkpoint of a distributed run
//! resumes on any number of processes with the bits of the uninterrupted run.

use talus_geom::glam::DVec3;
use talus_sim::distribute::{Exchange, ThreadExchange};
use talus_sim::integrate::IntegratorKind;
use talus_sim::{GrainId, World, WorldSnapshot};

mod common;

use common::gas::{bits, on_processes, scene, world};

/// Everything observable of a world after a step, bit for bit.
fn fingerprint(w: &World) -> Vec<u64> {
    let mut out = vec![w.time().to_bits(), w.steps(), w.stats().contacts as u64];
    out.push(w.stats().max_overlap_ratio.to_bits());
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
    for c in w.contacts() {
        out.extend(bits(c.force_on_b));
        out.extend(bits(c.point));
    }
    out
}

/// What one process saw: the fingerprint after every step, and each grain's owner.
struct Trace {
    steps: Vec<Vec<u64>>,
    /// Pairs listed after each step, summed: each is evaluated once per step.
    pairs: u64,
    /// Pairs listed after the last step.
    last_pairs: u64,
    /// Pairs each process evaluated, as this process heard.
    evaluated: Vec<u64>,
    owners: Vec<Vec<usize>>,
    positions: Vec<Vec<DVec3>>,
    moved: u64,
    rebalances: u64,
}

fn trace(w: &mut World, steps: usize) -> Trace {
    let mut t = Trace {
        steps: Vec::new(),
        pairs: 0,
        last_pairs: 0,
        evaluated: Vec::new(),
        owners: Vec::new(),
        positions: Vec::new(),
        moved: 0,
        rebalances: 0,
    };
    for _ in 0..steps {
        w.step();
        t.pairs += w.stats().pairs as u64;
        t.last_pairs = w.stats().pairs as u64;
        t.steps.push(fingerprint(w));
        let ids: Vec<GrainId> = w.grains().collect();
        t.owners
            .push(ids.iter().map(|&id| w.grain_owner(id).unwrap()).collect());
        t.positions.push(
            ids.iter()
                .map(|&id| w.grain(id).unwrap().pose.position)
                .collect(),
        );
    }
    t.moved = w.traffic().contacts_moved;
    t.evaluated = w
        .traffic()
        .processes
        .iter()
        .map(|p| p.pairs_evaluated)
        .collect();
    t.rebalances = w.traffic().rebalances;
    t
}

/// Runs `make()` on `ranks` processes (threads), `steps` steps, rebalancing every
/// `rebalance_every`; each process's trace.
fn distributed(
    make: impl Fn() -> World + Sync,
    ranks: usize,
    rebalance_every: u64,
    steps: usize,
) -> Vec<Trace> {
    on_processes(ranks, |ex| {
        let mut w = make();
        w.distribute(Box::new(ex), rebalance_every).unwrap();
        trace(&mut w, steps)
    })
}

fn assert_same(single: &Trace, traces: &[Trace], what: &str) {
    for (rank, t) in traces.iter().enumerate() {
        for (step, (a, b)) in single.steps.iter().zip(&t.steps).enumerate() {
            assert!(
                a == b,
                "{what}: rank {rank} of {} differs at step {}",
                traces.len(),
                step + 1
            );
        }
    }
}

#[test]
fn two_and_three_processes_step_the_bits_of_one() {
    for integrator in [IntegratorKind::Gear, IntegratorKind::Verlet] {
        let make = || world(integrator, 90);
        let single = trace(&mut make(), 400);
        for ranks in [1, 2, 3] {
            // Regions cut anew every 7 steps: pairs change hands in the middle of contacts.
            let traces = distributed(make, ranks, 7, 400);
            assert_same(&single, &traces, &format!("{integrator:?}"));
            if ranks > 1 {
                let moved: u64 = traces.iter().map(|t| t.moved).sum();
                assert!(moved > 0, "no pair changed process");
                // Every pair evaluated by one process a step: the counts the processes
                // report (as of the last step's start, so all but the last step) add up.
                for t in &traces {
                    assert_eq!(t.evaluated.len(), ranks);
                    let sum: u64 = t.evaluated.iter().sum();
                    assert_eq!(sum, single.pairs - single.last_pairs, "pairs evaluated");
                }
                assert!(traces[0].rebalances >= 400 / 7);
            }
        }
    }
}

#[test]
fn grains_cross_the_regions_in_every_direction() {
    let make = || world(IntegratorKind::Gear, 120);
    let steps = 1500;
    let single = trace(&mut make(), steps);
    // Eight regions of a cube are cut across all three axes; fixed between rebalances, so
    // grains flying about cross them.
    let traces = distributed(make, 8, 1_000_000, steps);
    assert_same(&single, &traces, "8 processes");
    let t = &traces[0];
    let mut seen = [[false; 2]; 3];
    for step in 1..steps {
        for (g, (&before, &after)) in t.owners[step - 1].iter().zip(&t.owners[step]).enumerate() {
            if before != after {
                let d = t.positions[step][g] - t.positions[step - 1][g];
                let axis = d.abs().max_position();
                seen[axis][usize::from(d[axis] > 0.0)] = true;
            }
        }
    }
    assert_eq!(seen, [[true; 2]; 3], "crossings (axis, -/+) seen");
    let owners: std::collections::BTreeSet<usize> = t.owners[0].iter().copied().collect();
    assert_eq!(owners.len(), 8, "every region holds grains");
}

#[test]
fn a_process_without_grains_takes_part() {
    // Two grains on three processes: one of them owns nothing.
    let make = || world(IntegratorKind::Gear, 2);
    let single = trace(&mut make(), 300);
    let traces = distributed(make, 3, 10, 300);
    assert_same(&single, &traces, "2 grains on 3 processes");
}

/// Runs `steps` on `ranks` processes from `start` (a fresh world, or one restored from a
/// snapshot), then takes a snapshot on every process after synchronizing the contacts.
fn run_and_snapshot(
    make: impl Fn() -> World + Sync,
    start: Option<&WorldSnapshot>,
    ranks: usize,
    steps: usize,
) -> (Vec<Trace>, Vec<Vec<u8>>) {
    std::thread::scope(|s| {
        let handles: Vec<_> = ThreadExchange::group(ranks)
            .into_iter()
            .map(|ex| {
                let make = &make;
                s.spawn(move || {
                    let mut w = match start {
                        Some(snap) => {
                            let mut w = scene(IntegratorKind::Gear);
                            w.restore(snap.clone()).unwrap();
                            w
                        }
                        None => make(),
                    };
                    let rank = ex.rank();
                    w.distribute(Box::new(ex), 5).unwrap();
                    let t = trace(&mut w, steps);
                    w.synchronize_contacts();
                    let mut snap = w.snapshot();
                    snap.stats = Default::default();
                    let _ = rank;
                    (t, postcard::to_stdvec(&snap).unwrap())
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).unzip()
    })
}

#[test]
fn a_checkpoint_of_two_processes_resumes_on_three_and_on_one() {
    let make = || world(IntegratorKind::Gear, 90);
    let (first, total) = (150, 350);
    let single = trace(&mut make(), total);
    let (_, snaps) = run_and_snapshot(make, None, 2, first);
    // Synchronized, both processes hold the same state: either may write the checkpoint.
    assert_eq!(snaps[0], snaps[1]);
    let snap: WorldSnapshot = postcard::from_bytes(&snaps[0]).unwrap();
    let rest = Trace {
        steps: single.steps[first..].to_vec(),
        pairs: 0,
        last_pairs: 0,
        evaluated: Vec::new(),
        owners: Vec::new(),
        positions: Vec::new(),
        moved: 0,
        rebalances: 0,
    };
    for ranks in [3, 1] {
        let (traces, _) = run_and_snapshot(make, Some(&snap), ranks, total - first);
        assert_same(&rest, &traces, &format!("resumed on {ranks}"));
    }
    // And a plain single process, not distributed at all.
    let mut w = scene(IntegratorKind::Gear);
    w.restore(snap).unwrap();
    let t = trace(&mut w, total - first);
    assert_same(&rest, &[t], "resumed on a single process");
}
