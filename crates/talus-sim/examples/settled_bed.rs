//! Steps the settled bed of the `contact_step` bench (2,000 twenty-vertex grains) for
//! profiling: `perf record -g target/release/examples/settled_bed`.
//!
//! The settled state is kept in a file (`TALUS_BED_FILE`, default
//! `target/settled_bed_<n>.postcard`), so that only the first run pays for settling.
//! `TALUS_BED_STEPS` sets the steps timed (default 2,000), `TALUS_BED_THREADS` the threads;
//! `TALUS_BED_OUT` names a file for the final snapshot (to compare two builds byte for byte).
//! `TALUS_BED_RANKS=N` steps the bed decomposed over N processes (threads joined by a
//! `ThreadExchange`, one worker thread each) and prints each one's time, traffic and grains
//! held per step.

use std::time::Instant;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use talus_geom::glam::{DQuat, DVec3};
use talus_geom::{Pose, generate};
use talus_sim::distribute::{Exchange, ThreadExchange};
use talus_sim::force::{Coefficients, ForceModelRegistry};
use talus_sim::material::Material;
use talus_sim::wall::{Motion, Wall, WallGeometry};
use talus_sim::{GrainDesc, SimParams, World, WorldSnapshot};

const SPACING: f64 = 0.011;

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// The bench's world: shapes, material, model and walls, and (when `grains`) its lattice.
fn world(n: usize, grains: bool) -> World {
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
    if grains {
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
    }
    world
}

fn main() {
    let n = env("TALUS_BED_N", 2000);
    let steps = env("TALUS_BED_STEPS", 2000);
    let threads = env("TALUS_BED_THREADS", 1);
    let file = std::env::var("TALUS_BED_FILE")
        .unwrap_or_else(|_| format!("target/settled_bed_{n}.postcard"));
    let mut bed = world(n, false);
    let restored = std::fs::read(&file)
        .ok()
        .and_then(|bytes| postcard::from_bytes::<WorldSnapshot>(&bytes).ok())
        .is_some_and(|s| bed.restore(s).is_ok());
    if !restored {
        bed = world(n, true);
        let start = Instant::now();
        for _ in 0..15_000 {
            bed.step();
        }
        println!("settled in {:.1} s", start.elapsed().as_secs_f64());
        let bytes = postcard::to_stdvec(&bed.snapshot()).expect("snapshot");
        std::fs::write(&file, bytes).expect("write the settled bed");
    }
    let ranks = env("TALUS_BED_RANKS", 0);
    if ranks > 0 {
        decomposed(n, &bed.snapshot(), ranks, steps);
        return;
    }
    bed.set_threads(threads).expect("threads");
    let start = Instant::now();
    let mut contacts = 0;
    let mut stages = [std::time::Duration::ZERO; 6];
    for _ in 0..steps {
        let s = bed.step();
        contacts += s.contacts;
        for (total, t) in stages
            .iter_mut()
            .zip([s.predict, s.bounds, s.broad, s.narrow, s.forces, s.correct])
        {
            *total += t;
        }
    }
    let seconds = start.elapsed().as_secs_f64();
    if let Ok(out) = std::env::var("TALUS_BED_OUT") {
        std::fs::write(out, postcard::to_stdvec(&bed.snapshot()).expect("snapshot"))
            .expect("write");
    }
    println!(
        "{n} grains, {threads} thread(s), {steps} steps: {:.0} grain-steps/s, {:.0} contacts per step, {:.3} µs per contact-step",
        (n * steps) as f64 / seconds,
        contacts as f64 / steps as f64,
        1e6 * seconds / contacts as f64
    );
    let per_step = |d: std::time::Duration| 1e6 * d.as_secs_f64() / steps as f64;
    println!(
        "µs per step: predict {:.0} bounds {:.0} broad {:.0} narrow {:.0} accumulate {:.0} correct {:.0}",
        per_step(stages[0]),
        per_step(stages[1]),
        per_step(stages[2]),
        per_step(stages[3]),
        per_step(stages[4]),
        per_step(stages[5])
    );
}

/// Steps the bed of `snapshot` decomposed over `ranks` processes (threads) and prints what
/// each did per step.
fn decomposed(n: usize, snapshot: &WorldSnapshot, ranks: usize, steps: usize) {
    let reports: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = ThreadExchange::group(ranks)
            .into_iter()
            .map(|ex| {
                s.spawn(move || {
                    let mut w = world(n, false);
                    w.restore(snapshot.clone()).expect("restore");
                    w.set_threads(1).expect("threads");
                    let rank = ex.rank();
                    w.decompose(Box::new(ex), 100).expect("decompose");
                    // The first step cuts the regions and drops what is not this process's.
                    w.step();
                    let (before, held_before) = (w.traffic(), w.grain_count());
                    let start = Instant::now();
                    for _ in 0..steps {
                        w.step();
                    }
                    let seconds = start.elapsed().as_secs_f64();
                    let t = w.traffic();
                    let per = |x: f64| x / steps as f64;
                    format!(
                        "rank {rank}: {:.0} µs per step, {:.0} bytes sent per step, {:.0} µs per step exchanging (waiting included), owns {} grains (first {}), holds {} with ghosts",
                        per(1e6 * seconds),
                        per((t.bytes_sent - before.bytes_sent) as f64),
                        per(1e6 * (t.exchange - before.exchange).as_secs_f64()),
                        w.grain_count(),
                        held_before,
                        w.ecs().len()
                    )
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("rank"))
            .collect()
    });
    println!("{n} grains decomposed over {ranks} processes, {steps} steps:");
    for r in reports {
        println!("  {r}");
    }
}
