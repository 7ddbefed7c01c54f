//! A process of a decomposed run takes its share of a checkpoint without allocating anything
//! for the grains it does not hold: the first process's share (its part and the run's frame,
//! which has no per-grain list) costs no more per grain it holds than another process's part.
//! Counted by an instrumented global allocator, one process at a time while the others wait;
//! this file holds one test so that no other test allocates meanwhile.

mod common;

use std::sync::Barrier;

use common::gas::{on_processes, world};
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};
use std::alloc::System;
use talus_sim::distribute::{Exchange, SnapshotShare};
use talus_sim::integrate::IntegratorKind;

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

#[test]
fn a_share_of_a_checkpoint_allocates_for_the_grains_held_alone() {
    let (ranks, grains) = (8, 2000);
    let turn = Barrier::new(ranks);
    let measured = on_processes(ranks, |ex| {
        let rank = ex.rank();
        let mut w = world(IntegratorKind::Verlet, grains);
        w.decompose(Box::new(ex), 50).unwrap();
        for _ in 0..10 {
            w.step();
        }
        let held = w.grains().count();
        let mut bytes = 0;
        for measuring in 0..ranks {
            turn.wait();
            if measuring == rank {
                let region = Region::new(GLOBAL);
                let share = w.snapshot_share();
                bytes = region.change().bytes_allocated;
                let SnapshotShare::Part { frame, part } = share else {
                    panic!("process {rank}: a whole snapshot");
                };
                assert_eq!(frame.is_some(), rank == 0);
                assert_eq!(part.grain_count(), held);
            }
        }
        turn.wait();
        (held, bytes)
    });
    let per_held = |(held, bytes): (usize, usize)| bytes as f64 / held.max(1) as f64;
    let others = measured[1..]
        .iter()
        .map(|&m| per_held(m))
        .fold(0.0, f64::max);
    let (held, bytes) = measured[0];
    // A list of every grain id (a `None` of 400 bytes and a pending load each) would add
    // some 900 kB here; the frame itself is a few kB (walls, kinds of grain, counts).
    let frame = bytes as f64 - held as f64 * others;
    assert!(
        frame < 16_000.0,
        "the first process's share of {held} grains took {bytes} bytes, {frame:.0} more than \
         its part at the others' {others:.0} bytes a grain: {measured:?}"
    );
}
