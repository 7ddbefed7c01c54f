//! The dripped heap and the vibrating conveyor (§1.2.1, §1.2.2) checked against what can
//! be known without the code's own answers: grains dripped only while the fastest grain is
//! slower than the threshold and never onto another grain; a run resumed from a checkpoint
//! ending bit-identical; a grain on a plate whose acceleration is below gravity never
//! leaving it; below the sliding threshold A(2πf)² < μg a grain moving with its plate; the
//! transport following the tilt of the oscillation.

use std::path::{Path, PathBuf};

use serde_json::Value;
use talus_geom::glam::DVec3;
use talus_scenario::Runner;
use talus_scenario::load::{apply_overrides, parse, read};
use talus_scenario::placement::penetrates;
use talus_scenario::schema::Scenario;
use talus_sim::force::ForceModelRegistry;

mod common;

use common::{QUICK_DRUM, SHORT_CONVEYOR, SHORT_DRIP};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("talus-experiments-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn config(name: &str, overrides: &[&str]) -> (PathBuf, Scenario) {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../../configs/{name}.ron"));
    let overrides: Vec<String> = overrides.iter().map(ToString::to_string).collect();
    let scenario = apply_overrides(&read(&file).unwrap(), &overrides).unwrap();
    (file, scenario)
}

fn summary(out: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap()
}

fn fastest(runner: &Runner) -> f64 {
    let world = &runner.exp.world;
    world
        .grains()
        .map(|id| world.grain(id).unwrap().velocity.length())
        .fold(0.0, f64::max)
}

#[test]
fn grains_are_dripped_only_onto_a_quiet_scene_and_never_onto_a_grain() {
    let (file, scenario) = config(
        "max_stability_angle",
        &[
            &SHORT_DRIP[..],
            &[
                "grains[0].count=10",
                "time.end=2.5",
                "time.stop_at_rest=None",
            ],
        ]
        .concat(),
    );
    let threshold = 0.05;
    let out = scratch("drip-steps");
    let registry = ForceModelRegistry::default();
    let mut runner = Runner::start(&scenario, &file, &registry, 1, &out).unwrap();
    // The default shortest interval: the time to fall one grain diameter from rest.
    let radius = runner.exp.populations[0].radius;
    let interval = (4.0 * radius / 9.81).sqrt();
    let (mut releases, mut last_release): (usize, Option<f64>) = (0, None);
    let mut quiet_steps = 0;
    while !runner.finished() {
        let before = runner.exp.world.grain_count();
        let speed = fastest(&runner);
        let time = runner.exp.world.time();
        if speed < threshold {
            quiet_steps += 1;
        }
        runner.run(Some(1), &mut |_| {}).unwrap();
        let after = runner.exp.world.grain_count();
        if after == before {
            continue;
        }
        assert_eq!(after, before + 1, "one grain at a time");
        assert!(
            speed < threshold,
            "a grain dripped at t = {time} with a grain at {speed} m/s"
        );
        if let Some(t) = last_release {
            assert!(
                time - t >= interval - 1e-9,
                "{} s after the last one",
                time - t
            );
        }
        // The new grain (the highest id) overlaps no other grain where it appeared: checked
        // exactly, polyhedron against polyhedron, a step later (it has moved by g·dt²).
        let world = &runner.exp.world;
        let ids: Vec<_> = world.grains().collect();
        let new = *ids.iter().max_by_key(|id| id.0).unwrap();
        let g = world.grain(new).unwrap();
        let shape_of = |s| &world.shapes().get(s).unwrap().body;
        for &other in ids.iter().filter(|&&id| id != new) {
            let o = world.grain(other).unwrap();
            assert!(
                !penetrates(shape_of(g.shape), &g.pose, shape_of(o.shape), &o.pose),
                "grain {} dripped into grain {}",
                new.0,
                other.0
            );
        }
        // Jittered by at most 2 mm horizontally about the release point.
        let offset = g.pose.position - DVec3::new(0.0, 0.008, 0.05);
        assert!(offset.truncate().length() <= 0.002 + 1e-12 && offset.z.abs() < 1e-6);
        releases += 1;
        last_release = Some(time);
    }
    assert_eq!(releases, 10, "the count was reached");
    assert!(
        quiet_steps > releases,
        "the check saw quiet moments without a release"
    );
    let _ = std::fs::remove_dir_all(out);
}

/// Every file of a finished run that must be the same to the bit, and the final world.
fn fingerprint(runner: &Runner, out: &Path) -> (Vec<u8>, Vec<u8>, Value) {
    let mut s = summary(out);
    let m = s.as_object_mut().unwrap();
    for k in [
        "wall_seconds",
        "grain_steps_per_second",
        "stage_seconds",
        "threads",
    ] {
        m.remove(k);
    }
    let world = runner.exp.world.snapshot();
    (
        std::fs::read(out.join("timeseries.csv")).unwrap(),
        postcard::to_stdvec(&(
            world.steps,
            &world.grains,
            &world.contacts,
            &world.wall_loads,
        ))
        .unwrap(),
        s,
    )
}

#[test]
fn a_drum_averaged_over_a_window_resumed_within_it_ends_bit_identical() {
    // The window's angles before the checkpoint come back from the run's history.
    let (file, scenario) = config("rotating_drum", &QUICK_DRUM);
    let registry = ForceModelRegistry::default();
    let whole = scratch("drum-whole");
    let mut runner = Runner::start(&scenario, &file, &registry, 1, &whole).unwrap();
    runner.run(None, &mut |_| {}).unwrap();
    let expected = fingerprint(&runner, &whole);
    drop(runner);
    assert!(
        expected.2["angle_of_repose_window_samples"]
            .as_u64()
            .unwrap()
            >= 10
    );

    // Stopped at 0.12 s, in the middle of the window (0.05–0.2 s).
    let resumed = scratch("drum-resumed");
    let mut runner = Runner::start(&scenario, &file, &registry, 1, &resumed).unwrap();
    runner.run(Some(7_680), &mut |_| {}).unwrap();
    runner.checkpoint().unwrap();
    drop(runner);
    let mut runner = Runner::resume(&resumed, &registry, 1).unwrap();
    runner.run(None, &mut |_| {}).unwrap();
    let got = fingerprint(&runner, &resumed);
    assert!(got.0 == expected.0, "the time series differ");
    assert!(got.1 == expected.1, "the final worlds differ");
    assert_eq!(got.2, expected.2);
    let _ = std::fs::remove_dir_all(whole);
    let _ = std::fs::remove_dir_all(resumed);
}

#[test]
fn a_dripped_run_resumed_from_a_checkpoint_ends_bit_identical() {
    let overrides = [
        &SHORT_DRIP[..],
        &[
            "grains[0].count=8",
            "time.end=1.5",
            "time.stop_at_rest=None",
            "measurements[0].min_grains=0",
        ],
    ]
    .concat();
    let (file, scenario) = config("max_stability_angle", &overrides);
    let registry = ForceModelRegistry::default();

    let whole = scratch("drip-whole");
    let mut runner = Runner::start(&scenario, &file, &registry, 1, &whole).unwrap();
    runner.run(None, &mut |_| {}).unwrap();
    let expected = fingerprint(&runner, &whole);
    drop(runner);

    // Stopped in the middle of the dripping, checkpointed, and continued on two threads.
    let resumed = scratch("drip-resumed");
    let mut runner = Runner::start(&scenario, &file, &registry, 2, &resumed).unwrap();
    runner.run(Some(21_000), &mut |_| {}).unwrap();
    let dripped = runner.exp.world.grain_count();
    assert!(
        (1..8).contains(&dripped),
        "{dripped} grains at the checkpoint"
    );
    runner.checkpoint().unwrap();
    drop(runner);
    let mut runner = Runner::resume(&resumed, &registry, 2).unwrap();
    runner.run(None, &mut |_| {}).unwrap();
    let got = fingerprint(&runner, &resumed);
    assert!(
        runner.exp.world.grain_count() > dripped,
        "grains were dripped after the resume"
    );
    assert!(got.0 == expected.0, "the time series differ");
    assert!(got.1 == expected.1, "the final worlds differ");
    assert_eq!(got.2, expected.2);
    drop(runner);

    // Another seed drips elsewhere: the comparison above can tell runs apart.
    let other_seed = parse(
        &talus_scenario::load::to_ron(&Scenario {
            seed: scenario.seed + 1,
            ..scenario.clone()
        })
        .unwrap(),
        &file,
    )
    .unwrap();
    let other = scratch("drip-other");
    let mut runner = Runner::start(&other_seed, &file, &registry, 1, &other).unwrap();
    runner.run(None, &mut |_| {}).unwrap();
    assert!(fingerprint(&runner, &other).1 != expected.1);
    for dir in [whole, resumed, other] {
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// One flat grain (which lies on a face rather than rocking on an edge) resting on a plate
/// (a trough's floor, top at z = 0) that oscillates with
/// amplitude `a` along `direction` at `f` Hz, for `end` seconds.
fn plate(direction: (f64, f64, f64), a: f64, f: f64, end: f64) -> String {
    format!(
        r#"Scenario(
    name: "plate", seed: 4,
    time: (dt: 2e-5, end: {end}, output_interval: 0.002),
    gravity: (0.0, 0.0, -9.81),
    materials: [(name: "quartz", density: 2650.0)],
    force_model: (name: "volumetric", coefficients: {{"stiffness": 5e5, "restitution": 0.3, "friction": 0.6}}),
    grains: [(name: "g", count: 1, vertices: 10, semi_axes: (0.006, 0.005, 0.002),
        material: "quartz", placement: Points([(0.15, 0.015, 0.0065)]))],
    walls: [(name: "trough", shape: Box(min: (0.0, 0.0, 0.0), max: (0.3, 0.03, 0.03), thickness: 0.005,
        open: ["x_min", "x_max"]),
        motion: Oscillate(direction: ({}, {}, {}), amplitude: {a}, frequency: {f}))],
    measurements: [Transport(driver: "trough", direction: Some((1.0, 0.0, 0.0)), window: (0.3, {end}))],
    outputs: (plots: false),
)"#,
        direction.0, direction.1, direction.2
    )
}

/// Runs `text` step by step; returns, after `settle` seconds, the largest gap between the
/// grain's lowest point and the plate's top, the range of the grain's x relative to the
/// plate's, and the summary.
fn ride(text: &str, name: &str, settle: f64) -> (f64, f64, Value) {
    let file = PathBuf::from(format!("{name}.ron"));
    let scenario = parse(text, &file).unwrap();
    let out = scratch(name);
    let registry = ForceModelRegistry::default();
    let mut runner = Runner::start(&scenario, &file, &registry, 1, &out).unwrap();
    let (mut gap, mut lo, mut hi) = (f64::NEG_INFINITY, f64::INFINITY, f64::NEG_INFINITY);
    while !runner.finished() {
        runner.run(Some(1), &mut |_| {}).unwrap();
        let world = &runner.exp.world;
        let t = world.time();
        if t < settle {
            continue;
        }
        let wall = world.walls()[0].state(t);
        let id = world.grains().next().unwrap();
        let g = world.grain(id).unwrap();
        let body = &world.shapes().get(g.shape).unwrap().body;
        let bottom = body
            .vertices()
            .iter()
            .map(|v| g.pose.transform_point(*v).z)
            .fold(f64::INFINITY, f64::min);
        // The trough starts at the identity pose: its floor's top is at its displacement.
        gap = gap.max(bottom - wall.pose.position.z);
        let relative = g.pose.position.x - wall.pose.position.x;
        lo = lo.min(relative);
        hi = hi.max(relative);
    }
    let s = summary(&out);
    let _ = std::fs::remove_dir_all(out);
    (gap, hi - lo, s)
}

#[test]
fn a_grain_never_leaves_a_plate_accelerating_slower_than_gravity() {
    // Tilted 20° from the vertical, A = 1 mm: at 12 Hz the vertical peak acceleration is
    // 0.55 g — the plate never falls away faster than the grain; at 25 Hz it is 2.4 g and
    // the grain is thrown (the check can tell).
    let tilt = (0.342, 0.0, 0.940);
    let (gap, _, low) = ride(&plate(tilt, 0.001, 12.0, 0.6), "plate-12hz", 0.1);
    assert!(low["gamma_vertical"].as_f64().unwrap() < 1.0);
    assert!(gap < 1e-4, "the grain left the plate by {gap} m");
    let (gap, _, high) = ride(&plate(tilt, 0.001, 25.0, 0.6), "plate-25hz", 0.1);
    assert!(high["gamma_vertical"].as_f64().unwrap() > 1.0);
    assert!(gap > 5e-4, "thrown, the grain should fly: {gap} m");
}

#[test]
fn below_the_sliding_threshold_a_grain_moves_with_its_plate() {
    // Horizontal oscillation, A = 1 mm: at 6 Hz A(2πf)² = 1.4 m/s² < μg = 5.9 m/s², so
    // static friction can carry the grain and it moves with the plate: no transport and no
    // slip beyond the tangential spring's give. At 25 Hz (24.7 m/s²) it slides.
    let (_, slip, stick) = ride(&plate((1.0, 0.0, 0.0), 0.001, 6.0, 0.8), "stick", 0.2);
    let v = stick["transport_velocity_m_s"].as_f64().unwrap();
    let plate_speed = 0.001 * std::f64::consts::TAU * 6.0;
    assert!(
        v.abs() < 1e-2 * plate_speed,
        "transport {v} m/s below the threshold"
    );
    // The grain is 1 cm across; 0.2 mm is the give of the tangential spring and of the
    // contact's rocking, far below the millimetres a sliding grain moves.
    assert!(slip < 2e-4, "the grain slipped by {slip} m");
    let (_, slip, _) = ride(&plate((1.0, 0.0, 0.0), 0.001, 25.0, 0.8), "slide", 0.2);
    assert!(
        slip > 2e-4,
        "above the threshold the grain should slide: {slip} m"
    );
}

#[test]
fn reversing_the_tilt_reverses_the_transport() {
    let middle = [
        "grains[0].placement.min=(0.11, 0.0, 0.001)",
        "grains[0].placement.max=(0.19, 0.03, 0.06)",
    ];
    let mut velocities = Vec::new();
    for (k, direction) in ["(0.342, 0.0, 0.94)", "(-0.342, 0.0, 0.94)"]
        .iter()
        .enumerate()
    {
        let set = format!("walls[0].motion.direction={direction}");
        let (file, mut scenario) = config(
            "vibrating_conveyor",
            &[&SHORT_CONVEYOR[..], &middle[..], &[set.as_str()]].concat(),
        );
        // Measured along +x both times (by default it follows the tilt).
        if let talus_scenario::schema::MeasurementSpec::Transport { direction, .. } =
            &mut scenario.measurements[0]
        {
            *direction = Some((1.0, 0.0, 0.0));
        }
        let out = scratch(&format!("tilt-{k}"));
        let registry = ForceModelRegistry::default();
        let mut runner = Runner::start(&scenario, &file, &registry, 0, &out).unwrap();
        runner.run(None, &mut |_| {}).unwrap();
        let s = summary(&out);
        assert_eq!(s["status"], "finished", "{}", s["warnings"]);
        velocities.push((
            s["transport_velocity_m_s"].as_f64().unwrap(),
            s["transport_velocity_spread_m_s"].as_f64().unwrap(),
        ));
        let _ = std::fs::remove_dir_all(out);
    }
    let ((forward, sf), (backward, sb)) = (velocities[0], velocities[1]);
    assert!(forward > 2.0 * sf, "forward {forward} ± {sf}");
    assert!(backward < -2.0 * sb, "backward {backward} ± {sb}");
    // Mirror images up to the grains' own shapes: the same speed within a factor of two.
    assert!(
        (forward / -backward - 1.0).abs() < 0.5,
        "{forward} vs {backward}"
    );
}
