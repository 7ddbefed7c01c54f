//! A full step on a settled bed that another code made: 500 random convex polyhedra (26
//! vertices on average) settled by Yade 2023.02a in an open box of five half-spaces
//! (`shared/beds/yade_bed_500.json.gz`, format in the README beside it), stepped with
//! talus' `volumetric_yade` law and Yade's coefficients (k_n = 5e8 N/m³, k_s = 5e3,
//! friction angle 0.5 rad). The bed's own dt may exceed talus' critical step, so the step is
//! 0.9 of the critical one. Printed first: the coordination number, grain-steps/s and the share of
//! each stage with 1 and 2 threads; criterion then reports the time per step; last, two
//! copies of the bed stepped at once on two threads each (more threads than cores).
//!
//! Run with `cargo bench -p talus-sim --bench yade_bed`; `TALUS_BED=path` reads another bed
//! of the same format. `TALUS_BED_TILES=k` lays k × k copies of the bed side by side in one
//! box (the side walls moved out to enclose them all; each copy is settled, so the whole is
//! a settled bed of k² × 500 grains): the large-bed case, which prints the peak memory per
//! grain and the time per step instead of running criterion; the grains are numbered grain by
//! grain across the copies, or copy after copy with `TALUS_BED_ORDER=copies`, or along a
//! Morton curve with `TALUS_BED_ORDER=morton`, or at random with `shuffled`.

use std::hint::black_box;
use std::io::Read;
use std::path::PathBuf;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion};
use serde_json::Value;
use talus_geom::ConvexPolyhedron;
use talus_geom::Pose;
use talus_geom::glam::{DQuat, DVec3};
use talus_sim::force::{Coefficients, ForceModelRegistry};
use talus_sim::material::Material;
use talus_sim::wall::{Motion, Wall, WallGeometry};
use talus_sim::{GrainDesc, SimParams, StepStats, World};

/// Steps whose stage times are averaged for the printed shares.
const SHARE_STEPS: usize = 200;

fn bed_path() -> PathBuf {
    std::env::var_os("TALUS_BED").map_or_else(
        || {
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../../../shared/beds/yade_bed_500.json.gz")
        },
        PathBuf::from,
    )
}

fn vec3(v: &Value) -> DVec3 {
    let c = |i: usize| v[i].as_f64().expect("a number");
    DVec3::new(c(0), c(1), c(2))
}

/// The world of the bed, `tiles` × `tiles` copies side by side in x and y: its grains at
/// their poses and velocities, its walls (the side walls enclosing all copies), Yade's law.
fn yade_bed(tiles: usize) -> World {
    let path = bed_path();
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(&path).expect("the bed file"))
        .read_to_string(&mut text)
        .expect("a gzip file");
    let bed: Value = serde_json::from_str(&text).expect("JSON");
    // A tiny step while the grains are added (each is checked against the critical step);
    // the step is set from talus' critical one once all are in.
    let mut world = World::new(SimParams {
        dt: 1e-9,
        gravity: vec3(&bed["gravity"]),
        margin: 2e-4,
        ..SimParams::default()
    })
    .expect("world");
    let material = &bed["material"];
    let rock = world
        .add_material(
            Material::new("yade", material["density"].as_f64().expect("density"))
                .expect("material"),
        )
        .expect("material");
    let young = material["young"].as_f64().expect("young");
    let poisson = material["poisson"].as_f64().expect("poisson");
    // Yade's law between two grains of one material: the stiffnesses in series.
    let coefficients = Coefficients::from([
        ("kn", young / 2.0),
        ("ks", young * poisson / 2.0),
        (
            "friction_angle",
            material["friction_angle"].as_f64().expect("friction angle"),
        ),
    ]);
    world
        .set_force_model(
            ForceModelRegistry::default()
                .build("volumetric_yade", &coefficients)
                .expect("model"),
        )
        .expect("force model");
    // The box's inside, from its walls: a copy is offset by whole box widths.
    let walls = bed["walls"].as_array().expect("walls");
    let mut low = DVec3::ZERO;
    let mut width = DVec3::ZERO;
    for axis in 0..2 {
        let at = |sense: f64| {
            walls
                .iter()
                .find(|w| {
                    w["axis"].as_u64() == Some(axis as u64) && w["sense"].as_f64() == Some(sense)
                })
                .map(|w| vec3(&w["position"])[axis])
                .expect("a side wall on each side")
        };
        low[axis] = at(1.0);
        width[axis] = at(-1.0) - at(1.0);
    }
    for wall in walls {
        let axis = wall["axis"].as_u64().expect("axis") as usize;
        let sense = wall["sense"].as_f64().expect("sense");
        let mut normal = DVec3::ZERO;
        normal[axis] = sense;
        let mut position = vec3(&wall["position"]);
        if axis < 2 && sense < 0.0 {
            position[axis] = low[axis] + tiles as f64 * width[axis];
        }
        world
            .add_wall(
                Wall::new(
                    "wall",
                    WallGeometry::HalfSpace { normal },
                    Pose::from_translation(position),
                    Motion::Fixed,
                    None,
                )
                .expect("wall"),
            )
            .unwrap();
    }
    // Each grain's shape once, shared by its copies.
    let mut grains = Vec::new();
    for (i, grain) in bed["grains"].as_array().expect("grains").iter().enumerate() {
        let points: Vec<DVec3> = grain["vertices_local"]
            .as_array()
            .expect("vertices")
            .iter()
            .map(vec3)
            .collect();
        let poly = ConvexPolyhedron::from_points(&points).expect("a convex grain");
        let id = world
            .add_shape(&format!("yade-{i}"), &poly, None)
            .expect("shape");
        let shape = world.shapes().get(id).expect("shape").clone();
        let q = grain["orientation_wxyz"].as_array().expect("quaternion");
        let w = |k: usize| q[k].as_f64().expect("a number");
        let to_world = DQuat::from_xyzw(w(1), w(2), w(3), w(0)).normalize();
        // The world turns the shape from its principal frame into the frame it was given
        // in; its centre of mass is talus' own (Yade's origin is Yade's, equal to
        // round-off).
        let mut desc = GrainDesc::at_rest(
            id,
            rock,
            vec3(&grain["position"]) + to_world * shape.input_center_of_mass,
        );
        desc.orientation = to_world;
        desc.velocity = vec3(&grain["velocity"]);
        desc.angular_velocity = vec3(&grain["angular_velocity"]);
        grains.push(desc);
    }
    // Numbered grain by grain across the copies (each grain's copies one after another,
    // neighbours in space `tiles²` numbers apart), or, with `TALUS_BED_ORDER=copies`, copy
    // by copy (neighbours in space near in number): to measure what the numbering costs.
    // `TALUS_BED_ORDER=morton` renumbers the grain-by-grain world along a Morton curve
    // before the timed steps, `shuffled` numbers the grains at random (what a mixing flow
    // left unrenumbered comes to).
    let scattered = std::env::var("TALUS_BED_ORDER").map_or(true, |o| o != "copies");
    let tile_list: Vec<(usize, usize)> = (0..tiles)
        .flat_map(|x| (0..tiles).map(move |y| (x, y)))
        .collect();
    let mut copies: Vec<(usize, (usize, usize))> = if scattered {
        (0..grains.len())
            .flat_map(|g| tile_list.iter().map(move |&t| (g, t)))
            .collect()
    } else {
        tile_list
            .iter()
            .flat_map(|&t| (0..grains.len()).map(move |g| (g, t)))
            .collect()
    };
    if std::env::var("TALUS_BED_ORDER").is_ok_and(|o| o == "shuffled") {
        let mut rng = <rand_chacha::ChaCha8Rng as rand::SeedableRng>::seed_from_u64(1);
        for i in (1..copies.len()).rev() {
            copies.swap(i, rand::Rng::random_range(&mut rng, 0..=i));
        }
    }
    for (g, (tx, ty)) in copies {
        let mut desc = grains[g];
        desc.position += DVec3::new(tx as f64 * width.x, ty as f64 * width.y, 0.0);
        world.add_grain(desc).expect("grain");
    }
    let dt = 0.9 * world.critical_time_step();
    world.set_dt(dt).expect("dt");
    println!(
        "{} grains from {}, dt = {dt:.3e} s (0.9 of talus' critical step; the bed's own dt is {:e} s)",
        world.grain_count(),
        path.display(),
        bed["dt"].as_f64().unwrap_or(f64::NAN)
    );
    world
}

/// The stages of a step's statistics, in the step's order.
fn stage_times(s: &StepStats) -> [Duration; 6] {
    [s.predict, s.bounds, s.broad, s.narrow, s.forces, s.correct]
}

/// `values` labelled with the stages' names.
fn label_stages(values: [f64; 6]) -> String {
    let names = [
        "predict",
        "bounds",
        "broad",
        "narrow",
        "accumulate",
        "correct",
    ];
    names
        .iter()
        .zip(values)
        .map(|(name, v)| format!("{name} {v:.1}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Peak resident memory of this process (bytes), from /proc.
fn peak_rss() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024.0)
}

/// The large-bed case: memory per grain and time per step.
fn large(world: &mut World) {
    let n = world.grain_count();
    for threads in [1, 2] {
        world.set_threads(threads).expect("threads");
        // Untimed steps first: the first builds the broad phase's lists and meets every
        // contact cold.
        for _ in 0..3 {
            world.step();
        }
        let steps = 10;
        let start = std::time::Instant::now();
        let mut coordination = 0.0;
        let mut stages = [Duration::ZERO; 6];
        for _ in 0..steps {
            let s = world.step();
            coordination += s.coordination;
            for (total, stage) in stages.iter_mut().zip(stage_times(s)) {
                *total += stage;
            }
        }
        let per_step = start.elapsed().as_secs_f64() / steps as f64;
        println!(
            "tiled yade bed of {n} grains, {threads} thread(s): {per_step:.3} s per step, {:.0} grain-steps/s, coordination {:.2}; ms per step: {}",
            n as f64 / per_step,
            coordination / steps as f64,
            label_stages(stages.map(|d| 1e3 * d.as_secs_f64() / steps as f64))
        );
    }
    if let Some(peak) = peak_rss() {
        println!(
            "peak memory {:.1} MiB, {:.0} bytes per grain (the 500 shapes shared by the copies)",
            peak / 1048576.0,
            peak / n as f64
        );
    }
}

/// Two copies of the bed stepped at once, each on two threads, in threads of their own:
/// twice as many threads as the machine has cores, as in a sweep of two jobs or tests run
/// side by side. Prints the grain-steps/s of both together (a world that held its cores
/// while waiting for a helper with none to run on would fall far below one world alone).
fn side_by_side() {
    let steps = SHARE_STEPS;
    let start = std::sync::Barrier::new(2);
    let per_world: Vec<(usize, f64)> = std::thread::scope(|scope| {
        let runs: Vec<_> = (0..2)
            .map(|_| {
                scope.spawn(|| {
                    let mut world = yade_bed(1);
                    world.set_threads(2).expect("threads");
                    for _ in 0..50 {
                        world.step();
                    }
                    start.wait();
                    let clock = std::time::Instant::now();
                    for _ in 0..steps {
                        world.step();
                    }
                    (world.grain_count(), clock.elapsed().as_secs_f64())
                })
            })
            .collect();
        runs.into_iter().map(|r| r.join().expect("a run")).collect()
    });
    let grain_steps: f64 = per_world.iter().map(|&(n, _)| (n * steps) as f64).sum();
    let longest = per_world.iter().map(|&(_, t)| t).fold(0.0, f64::max);
    println!(
        "two yade beds side by side, 2 threads each: {:.0} grain-steps/s in all",
        grain_steps / longest
    );
}

fn main() {
    let tiles: usize = std::env::var("TALUS_BED_TILES")
        .ok()
        .and_then(|t| t.parse().ok())
        .unwrap_or(1)
        .max(1);
    let mut world = yade_bed(tiles);
    let n = world.grain_count();
    // The first steps find every contact afresh: not what a running simulation pays.
    for _ in 0..if tiles > 1 { 5 } else { 50 } {
        world.step();
    }
    if std::env::var("TALUS_BED_ORDER").is_ok_and(|o| o == "morton") {
        world.renumber();
    }
    let shape_bytes: usize = world
        .shapes()
        .shapes()
        .iter()
        .map(|s| s.body.data_bytes())
        .sum();
    println!(
        "{} shapes, {:.1} MB of shape data",
        world.shapes().shapes().len(),
        shape_bytes as f64 / 1e6
    );
    if tiles > 1 {
        large(&mut world);
        return;
    }
    let mut criterion = Criterion::default().configure_from_args();
    for threads in [1, 2] {
        world.set_threads(threads).expect("threads");
        let mut wall = Duration::ZERO;
        let mut coordination = 0.0;
        let mut stages = [Duration::ZERO; 6];
        for _ in 0..SHARE_STEPS {
            let start = std::time::Instant::now();
            let s = *world.step();
            wall += start.elapsed();
            coordination += s.coordination;
            for (total, stage) in stages.iter_mut().zip(stage_times(&s)) {
                *total += stage;
            }
        }
        // Shares of the wall time (with several threads the broad phase runs within the
        // narrow phase's time, so the shares add up to more than 100).
        println!(
            "yade bed, {threads} thread(s): {:.0} grain-steps/s, coordination {:.2}, stages % of the step: {}",
            n as f64 * SHARE_STEPS as f64 / wall.as_secs_f64(),
            coordination / SHARE_STEPS as f64,
            label_stages(stages.map(|d| 100.0 * d.as_secs_f64() / wall.as_secs_f64()))
        );
        let mut group = criterion.benchmark_group("yade_bed_step");
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
    criterion.final_summary();
    side_by_side();
}
