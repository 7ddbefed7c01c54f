//! Cost of a full step of a settled bed of polyhedral grains.
//!
//! 2,000 (and, with `TALUS_BENCH_LARGE=1`, 10,000) grains of 20 vertices on ellipsoids of
//! 5 × 4 × 3 mm, quartz, poured on a lattice into a box (floor and four side walls) and
//! settled under gravity with the `volumetric` model; then one step is timed with 1 and 2
//! worker threads. Printed first: the pairs of boxes the broad phase lists, the touching
//! pairs among them (and per grain) and the share of each stage of the step, averaged over
//! 200 steps. Criterion reports the time per step; grain-steps per
//! second are `grains / time`.
//!
//! Last, the machine's own ceiling for two threads: the same amount of independent work
//! (overlaps of one pair of grains along a path, no shared data) on one thread and on each of
//! two threads at once. On a machine whose second core is not a whole core (a virtual machine
//! sharing its host) this is below 2, and the step's two-thread speed-up is to be read against
//! it.
//!
//! Run with `cargo bench -p talus-sim --bench contact_step`; `TALUS_BENCH_N=10000` picks the
//! bed sizes (`0`: none, the ceiling alone); `TALUS_BENCH_CEILING=0` leaves the ceiling out
//! (a profile of the whole binary is otherwise mostly the ceiling's overlaps).

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use talus_geom::glam::{DQuat, DVec3};
use talus_geom::{FeatureCache, OverlapHint, Pose, generate, overlap_coherent};
use talus_sim::force::{Coefficients, ForceModelRegistry};
use talus_sim::material::Material;
use talus_sim::wall::{Motion, Wall, WallGeometry};
use talus_sim::{GrainDesc, SimParams, StepStats, World};

const SPACING: f64 = 0.011;

/// A box of `n` grains, settled.
fn settled_bed(n: usize) -> World {
    let mut world = World::new(SimParams {
        dt: 2e-5,
        margin: 2e-4,
        ..SimParams::default()
    })
    .expect("world");
    let mut rng = ChaCha8Rng::seed_from_u64(2024);
    let shapes: Vec<_> = (0..8)
        .map(|_| {
            let g = generate::ellipsoid_grain(20, DVec3::new(0.005, 0.004, 0.003), &mut rng)
                .expect("grain");
            world.add_shape("grain", &g, None).expect("shape")
        })
        .collect();
    let quartz = world
        .add_material(Material::new("quartz", 2650.0).expect("material"))
        .expect("material");
    let coefficients =
        Coefficients::from([("stiffness", 1e6), ("restitution", 0.3), ("friction", 0.5)]);
    world
        .set_force_model(
            ForceModelRegistry::default()
                .build("volumetric", &coefficients)
                .expect("model"),
        )
        .expect("force model");
    // A bed about as wide as it is deep: side² × layers = n.
    let side = ((n as f64).cbrt() * 1.4).ceil() as usize;
    let width = side as f64 * SPACING;
    let plane = |normal: DVec3, at: DVec3| {
        Wall::new(
            "wall",
            WallGeometry::HalfSpace { normal },
            Pose::from_translation(at),
            Motion::Fixed,
            None,
        )
        .expect("wall")
    };
    world.add_wall(plane(DVec3::Z, DVec3::ZERO)).unwrap();
    world.add_wall(plane(DVec3::X, DVec3::ZERO)).unwrap();
    world
        .add_wall(plane(-DVec3::X, DVec3::new(width, 0.0, 0.0)))
        .unwrap();
    world.add_wall(plane(DVec3::Y, DVec3::ZERO)).unwrap();
    world
        .add_wall(plane(-DVec3::Y, DVec3::new(0.0, width, 0.0)))
        .unwrap();
    for i in 0..n {
        let cell = DVec3::new(
            (i % side) as f64 + 0.5,
            ((i / side) % side) as f64 + 0.5,
            (i / (side * side)) as f64 + 0.5,
        );
        let mut d = GrainDesc::at_rest(shapes[i % shapes.len()], quartz, cell * SPACING);
        d.orientation = DQuat::from_euler(
            talus_geom::glam::EulerRot::XYZ,
            rng.random::<f64>() * 6.3,
            rng.random::<f64>() * 6.3,
            rng.random::<f64>() * 6.3,
        );
        world.add_grain(d).expect("grain");
    }
    let start = Instant::now();
    // Settle: let the lattice fall and come to rest (0.3 s).
    for _ in 0..15_000 {
        world.step();
    }
    println!(
        "settled {n} grains in {:.1} s of wall time",
        start.elapsed().as_secs_f64()
    );
    world
}

/// The stages' times over `steps` steps, and the steps' wall time (with several threads the
/// broad phase runs within the narrow phase's time, so the stages add up to more).
fn stage_shares(world: &mut World, steps: usize) -> (StepStats, Duration) {
    let mut total = StepStats::default();
    let (mut pairs, mut contacts) = (0usize, 0usize);
    let mut coordination = 0.0;
    let start = Instant::now();
    for _ in 0..steps {
        let s = *world.step();
        total.predict += s.predict;
        total.bounds += s.bounds;
        total.broad += s.broad;
        total.narrow += s.narrow;
        total.forces += s.forces;
        total.correct += s.correct;
        pairs += s.pairs;
        contacts += s.contacts;
        coordination += s.coordination;
    }
    total.pairs = pairs / steps;
    total.contacts = contacts / steps;
    total.coordination = coordination / steps as f64;
    (total, start.elapsed())
}

/// Seconds for `queries` overlaps of two grains pushed into each other and turning, as a
/// simulation sees them from step to step.
fn independent_work(queries: usize) -> f64 {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let grain = generate::ellipsoid_grain(18, DVec3::new(1.0, 0.8, 0.6), &mut rng).expect("grain");
    let (mut cache, mut hint) = (FeatureCache::default(), OverlapHint::default());
    let start = Instant::now();
    let mut volume = 0.0;
    for i in 0..queries {
        let t = (i % 20_000) as f64 * 1e-3;
        let a = Pose::new(DVec3::ZERO, DQuat::from_rotation_x(t));
        let b = Pose::new(DVec3::new(0.0, 0.0, 1.19), DQuat::from_rotation_y(t));
        if let Some(o) = overlap_coherent(&grain, &a, &grain, &b, &mut cache, &mut hint) {
            volume += o.volume;
        }
    }
    black_box(volume);
    start.elapsed().as_secs_f64()
}

/// How many times one thread's work two threads do in the same time, each on its own data
/// (median of five tries).
fn two_thread_ceiling() -> f64 {
    const QUERIES: usize = 400_000;
    let mut ratios: Vec<f64> = (0..5)
        .map(|_| {
            let one = independent_work(QUERIES);
            let both = std::thread::scope(|s| {
                let other = s.spawn(|| independent_work(QUERIES));
                let mine = independent_work(QUERIES);
                mine.max(other.join().expect("worker"))
            });
            2.0 * one / both
        })
        .collect();
    ratios.sort_by(f64::total_cmp);
    ratios[2]
}

fn main() {
    let sizes: Vec<usize> = match std::env::var("TALUS_BENCH_N") {
        Ok(list) => list
            .split(',')
            .filter_map(|n| n.trim().parse().ok())
            .filter(|&n| n > 0)
            .collect(),
        Err(_) if std::env::var_os("TALUS_BENCH_LARGE").is_some() => vec![2_000, 10_000],
        Err(_) => vec![2_000],
    };
    let mut criterion = Criterion::default().configure_from_args();
    for n in sizes {
        let mut world = settled_bed(n);
        for threads in [1, 2] {
            world.set_threads(threads).expect("threads");
            let (s, sum) = stage_shares(&mut world, 200);
            let share = |d: Duration| 100.0 * d.as_secs_f64() / sum.as_secs_f64();
            println!(
                "n = {n}, {threads} thread(s): {:.0} grain-steps/s, {} pairs of boxes, {} contacts ({:.2} per grain), stages % of the step: predict {:.1} bounds {:.1} broad {:.1} narrow+forces {:.1} loads {:.1} correct {:.1}",
                n as f64 * 200.0 / sum.as_secs_f64(),
                s.pairs,
                s.contacts,
                s.coordination,
                share(s.predict),
                share(s.bounds),
                share(s.broad),
                share(s.narrow),
                share(s.forces),
                share(s.correct)
            );
            let mut group = criterion.benchmark_group("settled_bed_step");
            group
                .sample_size(10)
                .warm_up_time(Duration::from_millis(500))
                .measurement_time(Duration::from_secs(5));
            group.bench_with_input(
                BenchmarkId::new(format!("{threads}_threads"), n),
                &n,
                |b, _| {
                    b.iter(|| black_box(world.step().contacts));
                },
            );
            group.finish();
        }
    }
    criterion.final_summary();
    if std::env::var("TALUS_BENCH_CEILING").is_ok_and(|v| v.trim() == "0") {
        return;
    }
    println!(
        "this machine: two threads on independent work do {:.2} times one thread's",
        two_thread_ceiling()
    );
}
