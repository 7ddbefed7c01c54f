//! What the step's stage times mean: on one thread the stages are disjoint stretches of the
//! step; with several, the broad phase runs beside the narrow phase, whose wall time then
//! holds it.

mod common;

use std::time::{Duration, Instant};

use talus_geom::glam::DVec3;
use talus_sim::broad::BroadPhaseKind;
use talus_sim::{GrainDesc, SimParams, StepStats, World};

use common::cube_world;

/// A lattice of 10 × 10 × 6 cubes of 1 cm, 0.1 mm apart: every neighbour's box overlaps
/// (the margin is 0.2 mm), so the list holds well over the pairs that take the threads. The
/// broad phase is brute force, which costs more here than the narrow phase's pairs apart.
fn lattice(threads: usize) -> World {
    let edge = 0.01;
    let (mut w, cube, quartz) = cube_world(
        SimParams {
            dt: 1e-5,
            margin: 2e-4,
            gravity: DVec3::ZERO,
            threads,
            broad_phase: BroadPhaseKind::BruteForce,
            ..SimParams::default()
        },
        edge,
    );
    let pitch = edge + 1e-4;
    for i in 0..10 {
        for j in 0..10 {
            for k in 0..6 {
                let at = DVec3::new(i as f64, j as f64, k as f64) * pitch;
                w.add_grain(GrainDesc::at_rest(cube, quartz, at)).unwrap();
            }
        }
    }
    w
}

/// The stage times of `s` as listed in the step's order.
fn stages(s: &StepStats) -> [Duration; 8] {
    [
        s.renumber, s.predict, s.bounds, s.broad, s.narrow, s.forces, s.correct, s.wrap,
    ]
}

#[test]
fn on_one_thread_the_stages_add_up_to_no_more_than_the_step() {
    let mut w = lattice(1);
    for _ in 0..20 {
        let start = Instant::now();
        let s = *w.step();
        let wall = start.elapsed();
        assert!(s.pairs > 1_000, "{} pairs", s.pairs);
        let sum: Duration = stages(&s).iter().sum();
        assert!(sum <= wall, "stages {sum:?} in a step of {wall:?}");
    }
}

#[test]
fn with_two_threads_the_narrow_phase_holds_the_broad_phase_beside_it() {
    let mut w = lattice(2);
    w.step();
    for _ in 0..20 {
        let s = *w.step();
        assert!(s.pairs > 1_000, "{} pairs", s.pairs);
        // The pairs' list was long enough for the threads: the narrow phase waited for the
        // broad phase beside it, and its wall time is counted whole (with the broad phase's
        // time taken out of it, as if it had run first, the narrow phase would be near zero).
        assert!(
            s.narrow >= s.broad,
            "narrow {:?}, broad {:?}",
            s.narrow,
            s.broad
        );
    }
}
