//! Cost of one broad-phase update (thesis §4.1, seed 003) for n = 10^3, 10^4, 10^5 boxes in
//! two scenes:
//! * `bed`, a jiggling settled bed: boxes of edge 1.02–1.12 on a cubic lattice of spacing 1
//!   with ±0.05 jitter, in a container twice as wide as high, filled layer by layer, so that
//!   each box overlaps or touches its face, edge and corner neighbours; each update puts every
//!   box at its rest position plus a fresh random offset of up to ±1 % of its size per axis
//!   (8 precomputed offset sets, used in turn);
//! * `cloud`, a falling cloud: boxes of edge 0.5–1.5 at random in a cube holding one box per
//!   20 volume units; each update moves every box down by 5 % of a unit plus its own random
//!   velocity (up to ±3 % per axis); the random part reverses every 64 updates so that the
//!   cloud neither spreads nor thins however many iterations criterion runs, while the
//!   common fall never stops (every box always moves down).
//!
//! Methods: `sap-skin` (the engine's broad phase, [`BroadPhaseKind::default`]: incremental
//! sweep and prune run on boxes grown by a skin, see `broad/skin.rs`), `sap` (incremental
//! sweep and prune with automatic regions, without the skin), `sap-one-region` (the thesis'
//! single set of lists), `sap-full-resort` (sort and sweep from scratch, the baseline),
//! `grid` (linked cells, automatic size), `sorted` (seed 003's algorithm 1), and `brute` for
//! n = 10^3 only. Each iteration writes the next step's boxes into the slice, untimed (that
//! is the engine's bounds stage), then times one `update`. Each method is brought to the
//! scene's state by a few untimed updates first (its first update builds from scratch).
//!
//! After criterion's output, a table of the median time per update and per box of every
//! method, scene and n (read back from criterion's estimates), and the two targets of the
//! issue: in the bed at 10^5 boxes the incremental update at least 5 times cheaper than the
//! full re-sort, and the engine's time per box growing at most 1.2 times from 10^3 to 10^5
//! (printed for `sap` alone too), with the growth of the engine's candidates per box (each
//! tested at every update: the bed's surface, where boxes have fewer neighbours, holds a
//! smaller share of them at 10^5) and of its time per candidate.
//!
//! Run with `cargo bench -p talus-sim --bench broad_phase`; `TALUS_BENCH_N=1000,10000`
//! limits the sizes. The bed's boxes are numbered layer by layer, row by row (x fastest);
//! `TALUS_BENCH_ORDER=morton` numbers them along a Morton curve (as a world renumbered in
//! space has them), `shuffled` at random. `TALUS_BENCH_METHODS=sap,grid` builds only the
//! methods named (for a profile of one).

use std::hint::black_box;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, Throughput};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use talus_geom::Aabb;
use talus_geom::glam::DVec3;
use talus_sim::broad::{
    BroadPhase, BroadPhaseKind, BruteForce, DEFAULT_SKIN, PairEvents, Skinned, SortedDistance,
    SweepAndPrune, UniformGrid,
};
use talus_sim::periodic::Periodic;
use talus_sim::renumber::morton_key;

/// Box counts.
const SIZES: [usize; 3] = [1_000, 10_000, 100_000];

/// Offset sets of the bed, used in turn.
const BED_FRAMES: usize = 8;

/// Updates after which the cloud's random velocities reverse.
const CLOUD_HALF_PERIOD: u64 = 64;

/// A scene: the boxes' motion, step by step.
enum Scene {
    /// Rest boxes and offset sets.
    Bed {
        rest: Vec<Aabb>,
        offsets: Vec<Vec<DVec3>>,
    },
    /// Start boxes and per-box random velocities (the common fall is added).
    Cloud {
        start: Vec<Aabb>,
        velocity: Vec<DVec3>,
    },
}

/// The fall per update of the cloud.
const FALL: DVec3 = DVec3::new(0.0, 0.0, -0.05);

impl Scene {
    fn name(&self) -> &'static str {
        match self {
            Scene::Bed { .. } => "bed",
            Scene::Cloud { .. } => "cloud",
        }
    }

    /// The settled bed of `n` boxes.
    fn bed(n: usize, rng: &mut ChaCha8Rng) -> Scene {
        // Width w, depth w, height about w/2: w = (2n)^(1/3).
        let w = (2.0 * n as f64).cbrt().ceil() as usize;
        let mut rest = Vec::with_capacity(n);
        'fill: for z in 0.. {
            for y in 0..w {
                for x in 0..w {
                    if rest.len() == n {
                        break 'fill;
                    }
                    let site = DVec3::new(x as f64, y as f64, z as f64);
                    let jitter =
                        DVec3::from_array([0, 1, 2].map(|_| rng.random_range(-0.05..0.05)));
                    let half = DVec3::from_array([0, 1, 2].map(|_| rng.random_range(0.51..0.56)));
                    rest.push(Aabb::from_center_half_extents(site + jitter, half));
                }
            }
        }
        let offsets: Vec<Vec<DVec3>> = (0..BED_FRAMES)
            .map(|_| {
                rest.iter()
                    .map(|b| {
                        let size = b.extents();
                        DVec3::from_array(
                            [0, 1, 2].map(|a| rng.random_range(-0.01..0.01) * size[a]),
                        )
                    })
                    .collect()
            })
            .collect();
        let mut order: Vec<usize> = (0..rest.len()).collect();
        match std::env::var("TALUS_BENCH_ORDER").as_deref() {
            Ok("shuffled") => {
                for i in (1..order.len()).rev() {
                    let j = rng.random_range(0..=i);
                    order.swap(i, j);
                }
            }
            Ok("morton") => {
                let key = |b: &Aabb| {
                    // Cells of the lattice spacing, from just below the lowest centre.
                    let c = (b.min + b.max) * 0.5 + 10.0;
                    morton_key([c.x as u64, c.y as u64, c.z as u64])
                };
                order.sort_by_key(|&i| key(&rest[i]));
            }
            _ => {}
        }
        let rest: Vec<Aabb> = order.iter().map(|&i| rest[i]).collect();
        let offsets: Vec<Vec<DVec3>> = offsets
            .iter()
            .map(|o: &Vec<DVec3>| order.iter().map(|&i| o[i]).collect())
            .collect();
        Scene::Bed { rest, offsets }
    }

    /// The falling cloud of `n` boxes.
    fn cloud(n: usize, rng: &mut ChaCha8Rng) -> Scene {
        let edge = (20.0 * n as f64).cbrt();
        let mut start = Vec::with_capacity(n);
        let mut velocity = Vec::with_capacity(n);
        for _ in 0..n {
            let c = DVec3::from_array([0, 1, 2].map(|_| rng.random_range(0.0..edge)));
            let half = DVec3::from_array([0, 1, 2].map(|_| rng.random_range(0.25..0.75)));
            start.push(Aabb::from_center_half_extents(c, half));
            velocity.push(DVec3::from_array(
                [0, 1, 2].map(|_| rng.random_range(-0.03..0.03)),
            ));
        }
        Scene::Cloud { start, velocity }
    }

    /// Writes the boxes of step `t` into `boxes`.
    fn apply(&self, t: u64, boxes: &mut [Option<Aabb>]) {
        match self {
            Scene::Bed { rest, offsets } => {
                let off = &offsets[(t % BED_FRAMES as u64) as usize];
                for ((slot, b), o) in boxes.iter_mut().zip(rest).zip(off) {
                    *slot = Some(Aabb {
                        min: b.min + *o,
                        max: b.max + *o,
                    });
                }
            }
            Scene::Cloud { start, velocity } => {
                // Triangle wave: 0, 1, …, 64, 63, …, 1, 0, 1, …
                let phase = t % (2 * CLOUD_HALF_PERIOD);
                let tau = phase.min(2 * CLOUD_HALF_PERIOD - phase) as f64;
                let fall = FALL * t as f64;
                for ((slot, b), v) in boxes.iter_mut().zip(start).zip(velocity) {
                    let d = fall + *v * tau;
                    *slot = Some(Aabb {
                        min: b.min + d,
                        max: b.max + d,
                    });
                }
            }
        }
    }
}

/// The methods for a scene of `n` boxes.
fn methods(n: usize) -> Vec<(&'static str, Box<dyn BroadPhase>)> {
    let mut m: Vec<(&'static str, Box<dyn BroadPhase>)> = vec![
        ("sap-skin", BroadPhaseKind::default().build(Periodic::NONE)),
        ("sap", Box::new(SweepAndPrune::default())),
        (
            "sap-one-region",
            Box::new(SweepAndPrune::with_region_size(f64::INFINITY)),
        ),
        ("sap-full-resort", Box::new(SweepAndPrune::full_resort())),
        ("grid", Box::new(UniformGrid::new(None))),
        ("sorted", Box::new(SortedDistance::default())),
    ];
    if n <= 1_000 {
        m.push(("brute", Box::new(BruteForce::default())));
    }
    // Building and warming every method costs more than timing one: a profile of one
    // method names it.
    if let Ok(only) = std::env::var("TALUS_BENCH_METHODS") {
        m.retain(|(name, _)| only.split(',').any(|o| o.trim() == *name));
    }
    m
}

/// The sizes to run: all, or those in `TALUS_BENCH_N`.
fn sizes() -> Vec<usize> {
    match std::env::var("TALUS_BENCH_N") {
        Ok(list) => list
            .split(',')
            .filter_map(|s| s.trim().parse().ok())
            .collect(),
        Err(_) => SIZES.to_vec(),
    }
}

fn bench_scene(c: &mut Criterion, scene: &Scene, n: usize) {
    let mut group = c.benchmark_group(format!("broad_phase/{}", scene.name()));
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_millis(1500))
        .throughput(Throughput::Elements(n as u64));
    let mut boxes = vec![None; n];
    for (name, mut method) in methods(n) {
        let mut events = PairEvents::default();
        // Build, then a few steps so that the incremental methods are in their steady state.
        let mut t = 0u64;
        for _ in 0..4 {
            t += 1;
            scene.apply(t, &mut boxes);
            events.clear();
            method.update(&boxes, &mut events);
        }
        // Only the update is timed: writing the next step's boxes is the engine's bounds
        // stage, not its broad phase (and at 10^5 boxes it streams some 15 MB through memory
        // from the scene's arrays, which a step does not).
        group.bench_function(BenchmarkId::new(name, n), |b| {
            b.iter_custom(|iterations| {
                let mut spent = Duration::ZERO;
                for _ in 0..iterations {
                    t += 1;
                    scene.apply(t, &mut boxes);
                    events.clear();
                    let start = Instant::now();
                    method.update(black_box(&boxes), &mut events);
                    spent += start.elapsed();
                    black_box(events.started.len() + events.ended.len());
                }
                spent
            });
        });
    }
    group.finish();
}

/// Criterion's output folder, found as criterion finds it.
fn criterion_dir() -> PathBuf {
    if let Some(home) = std::env::var_os("CRITERION_HOME") {
        return PathBuf::from(home);
    }
    if let Some(target) = std::env::var_os("CARGO_TARGET_DIR") {
        return PathBuf::from(target).join("criterion");
    }
    // target/release/deps/<bench> → target/criterion.
    std::env::current_exe()
        .ok()
        .and_then(|exe| exe.ancestors().nth(3).map(|t| t.join("criterion")))
        .unwrap_or_else(|| PathBuf::from("target/criterion"))
}

/// The median of a benchmark from criterion's `estimates.json`, in ns.
fn median_ns(scene: &str, method: &str, n: usize) -> Option<f64> {
    let path = criterion_dir()
        .join(format!("broad_phase_{scene}"))
        .join(method)
        .join(n.to_string())
        .join("new/estimates.json");
    let text = std::fs::read_to_string(path).ok()?;
    let at = text.find("\"median\"")?;
    let rest = &text[at..];
    let at = rest.find("\"point_estimate\":")? + "\"point_estimate\":".len();
    let rest = &rest[at..];
    let end = rest.find([',', '}'])?;
    rest[..end].trim().parse().ok()
}

/// Formats nanoseconds with a unit.
fn human(ns: f64) -> String {
    if ns >= 1e9 {
        format!("{:.2} s", ns / 1e9)
    } else if ns >= 1e6 {
        format!("{:.2} ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.1} µs", ns / 1e3)
    } else {
        format!("{ns:.1} ns")
    }
}

/// Prints the table of medians and the two targets.
/// `bed_candidates`: the engine's candidates per box in the bed, by n.
fn report(sizes: &[usize], scenes: &[&str], bed_candidates: &[(usize, f64)]) {
    println!("\nMedian per update (per box), from criterion's estimates:");
    println!(
        "{:<6} {:<16} {:>8} {:>12} {:>12}",
        "scene", "method", "n", "update", "per box"
    );
    for scene in scenes {
        for name in [
            "sap-skin",
            "sap",
            "sap-one-region",
            "sap-full-resort",
            "grid",
            "sorted",
            "brute",
        ] {
            for &n in sizes {
                if let Some(ns) = median_ns(scene, name, n) {
                    println!(
                        "{scene:<6} {name:<16} {n:>8} {:>12} {:>12}",
                        human(ns),
                        human(ns / n as f64)
                    );
                }
            }
        }
    }
    let get = |name, n| median_ns("bed", name, n);
    if let (Some(inc), Some(full)) = (get("sap", 100_000), get("sap-full-resort", 100_000)) {
        let ratio = full / inc;
        println!(
            "target 1 (bed, 10^5): full re-sort / incremental = {ratio:.1} (≥ 5: {})",
            if ratio >= 5.0 { "met" } else { "MISSED" }
        );
    }
    if let (Some(small), Some(large)) = (get("sap-skin", 1_000), get("sap-skin", 100_000)) {
        let growth = (large / 1e5) / (small / 1e3);
        println!(
            "target 2 (bed): the engine's time per box 10^5 / 10^3 = {growth:.2} (≤ 1.2: {})",
            if growth <= 1.2 { "met" } else { "MISSED" }
        );
        // A box inside the bed has more neighbours than one on its surface, and a larger bed
        // has fewer of its boxes on the surface: the work per box grows with the
        // candidates per box; the time per candidate is what the memory adds.
        let per_box = |n| {
            bed_candidates
                .iter()
                .find(|&&(m, _)| m == n)
                .map(|&(_, c)| c)
        };
        if let (Some(c_small), Some(c_large)) = (per_box(1_000), per_box(100_000)) {
            println!(
                "  (candidates per box 10^5 / 10^3 = {:.2}; time per candidate 10^5 / 10^3 = {:.2})",
                c_large / c_small,
                growth * c_small / c_large
            );
        }
    }
    if let (Some(small), Some(large)) = (get("sap", 1_000), get("sap", 100_000)) {
        println!(
            "  (incremental sweep and prune without the skin: per box 10^5 / 10^3 = {:.2})",
            (large / 1e5) / (small / 1e3)
        );
    }
    if let (Some(small), Some(large)) =
        (get("sap-one-region", 1_000), get("sap-one-region", 100_000))
    {
        println!(
            "  (one region, the thesis' lists: per box 10^5 / 10^3 = {:.2})",
            (large / 1e5) / (small / 1e3)
        );
    }
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    let sizes = sizes();
    let mut rng = ChaCha8Rng::seed_from_u64(2024);
    let mut bed_candidates = Vec::new();
    for &n in &sizes {
        let bed = Scene::bed(n, &mut rng);
        let cloud = Scene::cloud(n, &mut rng);
        for scene in [&bed, &cloud] {
            // Context: pairs per box in the scene, and the engine's candidates (pairs of
            // grown boxes), each of which it tests at every update.
            let mut boxes = vec![None; n];
            scene.apply(1, &mut boxes);
            let mut sap = SweepAndPrune::default();
            let mut events = PairEvents::default();
            sap.update(&boxes, &mut events);
            let mut skinned = Skinned::new(Box::<SweepAndPrune>::default(), DEFAULT_SKIN);
            skinned.update(&boxes, &mut PairEvents::default());
            let candidates = skinned.candidate_count() as f64 / n as f64;
            if scene.name() == "bed" {
                bed_candidates.push((n, candidates));
            }
            println!(
                "{} n = {n}: {:.2} overlapping pairs per box, {candidates:.2} candidates per box \
                 (sap-skin), {} regions of edge {:.2}",
                scene.name(),
                sap.pair_count() as f64 / n as f64,
                sap.region_count(),
                sap.region_size().unwrap_or(f64::NAN)
            );
            bench_scene(&mut c, scene, n);
        }
    }
    c.final_summary();
    report(&sizes, &["bed", "cloud"], &bed_candidates);
}
