//! What the scenario tests share: the quick variants of the shipped scenarios (each run to
//! its end with both integrators), running them, and the physical bounds their answers are
//! held to.

use std::path::{Path, PathBuf};

use serde_json::Value;
use talus_scenario::Runner;
use talus_scenario::check::check;
use talus_scenario::load::{apply_overrides, read};
use talus_scenario::schema::Scenario;
use talus_sim::force::ForceModelRegistry;

/// `configs/angle_of_repose.ron` shortened: 192 grains in half the channel, the gate
/// removed at 0.2 s, at most 0.9 s, the pile measured over 0.2 m (the dry pile beside the
/// wet one).
#[allow(dead_code)]
pub const SHORT_PILE: [&str; 8] = [
    "grains[0].count=192",
    "grains[0].placement.max=(0.05, 0.04, 0.3)",
    "walls[4].shape.center=(0.055, 0.02, 0.15)",
    "walls[4].removed_at=0.2",
    "time.end=0.9",
    "time.stop_at_rest.after=0.6",
    "measurements[0].range=(0.0, 0.2)",
    "measurements[0].bins=20",
];

/// The quick variant of `configs/angle_of_repose.ron`: the column of [`SHORT_PILE`] in a
/// channel half as wide (2 cm, about 2.5 grains): the same height and so the same pile in
/// profile, with 96 grains; the gate removed at 0.1 s, at most 0.7 s.
#[allow(dead_code)]
pub const QUICK_PILE: [&str; 9] = [
    "grains[0].count=96",
    "grains[0].placement.max=(0.05, 0.02, 0.3)",
    "walls[3].shape.point=(0.0, 0.02, 0.0)",
    "walls[4].shape.center=(0.055, 0.01, 0.15)",
    "walls[4].removed_at=0.1",
    "time.end=0.7",
    "time.stop_at_rest.after=0.45",
    "measurements[0].range=(0.0, 0.2)",
    "measurements[0].bins=20",
];

/// The quick variant of `configs/angle_of_repose_periodic.ron`: the column of
/// [`QUICK_PILE`] in a slab periodic over 2.5 cm (a period must exceed twice the largest
/// grain), 120 grains, the gate removed at 0.1 s, at most 0.7 s.
#[allow(dead_code)]
pub const QUICK_PERIODIC_PILE: [&str; 9] = [
    "grains[0].count=120",
    "periodic.y=Some((0.0, 0.025))",
    "grains[0].placement.max=(0.05, 0.025, 0.3)",
    "walls[2].shape.point=(0.05, 0.0, 0.0)",
    "walls[2].removed_at=0.1",
    "time.end=0.7",
    "time.stop_at_rest.after=0.45",
    "measurements[0].range=(0.0, 0.2)",
    "measurements[0].bins=20",
];

/// The quick variant of `configs/angle_of_repose_pour.ron`: the channel half as wide (3 cm)
/// and the pour half as fast, 110 grains, at most 1.1 s; its surface profiled in bins of
/// 4.3 mm (30 over the file's 13 cm), half the file's: the file's 7.2 mm bins leave a flank
/// of this small heap three to four points to fit.
#[allow(dead_code)]
pub const QUICK_POUR: [&str; 9] = [
    "grains[0].count=110",
    "measurements[0].bins=30",
    "grains[0].placement.max=(0.021, 0.03, 0.075)",
    "grains[0].placement.rate=150.0",
    "walls[0].shape.center=(0.0, 0.015, -0.005)",
    "walls[0].shape.size=(0.12, 0.03, 0.01)",
    "walls[3].shape.point=(0.0, 0.03, 0.0)",
    "time.end=1.1",
    "time.stop_at_rest.after=0.9",
];

/// The quick variant of `configs/hopper.ron`: a slice of its slot 5 cm long (bin, gate and
/// fill cut to it; 200 grains spread along the whole 18 cm would lie a grain or two deep
/// and not flow steadily) holding 200 grains, the gate removed at 0.12 s, 0.45 s.
#[allow(dead_code)]
pub const QUICK_HOPPER: [&str; 9] = [
    "grains[0].count=200",
    "grains[0].placement.min=(-0.055, -0.025, 0.121)",
    "grains[0].placement.max=(0.055, 0.025, 0.6)",
    "walls[0].shape.depth=0.05",
    "walls[3].shape.point=(0.0, -0.025, 0.0)",
    "walls[4].shape.point=(0.0, 0.025, 0.0)",
    "walls[5].shape.size=(0.08, 0.06, 0.01)",
    "walls[5].removed_at=0.12",
    "time.end=0.45",
];

/// The quick variant of `configs/hopper_pyramid.ron`: 200 grains filling the funnel's lowest
/// 3 cm, the gate removed at 0.1 s, 0.4 s (every grain has left by then).
#[allow(dead_code)]
pub const QUICK_PYRAMID: [&str; 3] = [
    "grains[0].count=200",
    "walls[5].removed_at=0.1",
    "time.end=0.4",
];

/// The quick variant of `configs/vibrating_box.ron`: the intruder under 200 beads, 0.8 s.
#[allow(dead_code)]
pub const QUICK_BOX: [&str; 2] = ["grains[1].count=200", "time.end=0.8"];

/// The quick variant of `configs/rotating_drum.ron`: 60 grains, 0.2 s.
#[allow(dead_code)]
pub const QUICK_DRUM: [&str; 3] = [
    "grains[0].count=60",
    "time.end=0.2",
    "measurements[0].window=Some((0.05, 0.2))",
];

/// The quick variant of `configs/shapes_pile.ron`: 12 grains of each shape, 0.4 s.
#[allow(dead_code)]
pub const QUICK_SHAPES: [&str; 5] = [
    "grains[0].count=12",
    "grains[1].count=12",
    "grains[2].count=12",
    "grains[3].count=12",
    "time.end=0.4",
];

/// The quick variant of `configs/max_stability_angle.ron`: 45 grains, a fall of 1° an
/// avalanche, the heaps of 15 grains and more measured, at most 11 s. (A heap of 30 grains
/// is too small for the bounds its angles are held to: over seeds 11 to 16 its Θ_r ranged
/// from 5° to 14°.)
#[allow(dead_code)]
pub const SHORT_DRIP: [&str; 6] = [
    "grains[0].count=45",
    "measurements[0].avalanche_drop_deg=1.0",
    "measurements[0].min_grains=15",
    "time.end=11.0",
    "outputs.frame_interval=None",
    "outputs.plots=false",
];

/// `configs/vibrating_conveyor.ron` shortened: 16 grains, 0.6 s, measured from 0.2 s.
#[allow(dead_code)]
pub const SHORT_CONVEYOR: [&str; 6] = [
    "grains[0].count=16",
    "time.end=0.6",
    "measurements[0].window=(0.2, 0.6)",
    "time.checkpoint_interval=None",
    "outputs.frame_interval=None",
    "outputs.plots=false",
];

/// `configs/chute_flow.ron` shortened: 150 grains on a base 5 × 4 cm at 36°, a softer law
/// and a longer step, 0.8 s measured from 0.5 s, the bed at rest at the start (started
/// down the slope as the shipped file's, its softer contacts let the fall's impacts sink
/// 11.6 % of the grain size into each other with the Gear integrator).
#[allow(dead_code)]
pub const SHORT_CHUTE: [&str; 14] = [
    "grains[0].velocity=None",
    "grains[0].count=150",
    "periodic.x=(0.0, 0.05)",
    "periodic.y=(0.0, 0.04)",
    "walls[0].shape.max=(0.05, 0.04, 0.0)",
    "grains[0].placement.max=(0.047, 0.037, 0.4)",
    "incline_deg=36",
    "force_model.coefficients.stiffness=2e5",
    "time.dt=5e-5",
    "time.end=0.8",
    "time.checkpoint_interval=0.4",
    "measurements[0].window=(0.5, 0.8)",
    "outputs.frame_interval=0.4",
    "outputs.plots=false",
];

/// Every shipped scenario and its quick variant.
#[allow(dead_code)]
pub const QUICK_VARIANTS: [(&str, &[&str]); 11] = [
    ("angle_of_repose", &QUICK_PILE),
    ("angle_of_repose_periodic", &QUICK_PERIODIC_PILE),
    ("angle_of_repose_pour", &QUICK_POUR),
    ("hopper", &QUICK_HOPPER),
    ("hopper_pyramid", &QUICK_PYRAMID),
    ("vibrating_box", &QUICK_BOX),
    ("rotating_drum", &QUICK_DRUM),
    ("max_stability_angle", &SHORT_DRIP),
    ("vibrating_conveyor", &SHORT_CONVEYOR),
    ("chute_flow", &SHORT_CHUTE),
    ("shapes_pile", &QUICK_SHAPES),
];

/// Overlaps deeper than this fraction of the grain size make a run `suspect` (the range of
/// the volumetric contact laws); a clean run stays below it.
#[allow(dead_code)]
pub const SUSPECT_OVERLAP: f64 = 0.1;

/// The deepest overlap, as a fraction of the grain size, a scenario at its shipped contact
/// stiffness may reach: a packing whose grains interpenetrate deeper is not one to trust.
/// The shipped stiffnesses and steps keep every scenario within it over its whole run (the
/// chute's quick variant softens its contacts, for speed).
#[allow(dead_code)]
pub const TRUSTWORTHY_OVERLAP: f64 = 0.05;

/// Asserts that the run of `summary` kept its overlaps within [`TRUSTWORTHY_OVERLAP`].
#[allow(dead_code)]
pub fn assert_trustworthy_overlap(summary: &Value) {
    let overlap = number(summary, "max_overlap_ratio");
    assert!(
        overlap <= TRUSTWORTHY_OVERLAP,
        "{}: overlaps reached {overlap} of the grain size",
        summary["scenario"]
    );
}

/// The shipped scenario file `name`.
#[allow(dead_code)]
pub fn config_file(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../../configs/{name}.ron"))
}

/// The shipped scenario `name` with `overrides`, then `more`, applied, run with its own
/// seed only (a file's `seeds: N` would run its companions too; the spread over seeds is
/// tested end to end in talus-cli's `tests/seeds.rs`).
#[allow(dead_code)]
pub fn scenario(name: &str, overrides: &[&str], more: &[&str]) -> (PathBuf, Scenario) {
    let file = config_file(name);
    let all: Vec<String> = ["seeds=1"]
        .iter()
        .chain(overrides)
        .chain(more)
        .map(ToString::to_string)
        .collect();
    let scenario =
        apply_overrides(&read(&file).unwrap(), &all).unwrap_or_else(|e| panic!("{name}: {e}"));
    (file, scenario)
}

/// The step `talus check` allows for `scenario` with the Gear integrator: the engine's
/// critical step for Gear (found with a step far below it, which the check accepts).
#[allow(dead_code)]
pub fn gear_step(scenario: &Scenario, file: &Path) -> f64 {
    let probe = apply_overrides(
        scenario,
        &["integrator=Gear".to_string(), "time.dt=1e-8".to_string()],
    )
    .unwrap();
    check(&probe, file, &ForceModelRegistry::default())
        .unwrap_or_else(|e| panic!("{}: {e:?}", file.display()))
        .critical_dt
}

/// The quick variant `overrides` of the shipped scenario `name` with Gear at the step
/// `talus check` allows, without checkpoints, frames or plots (which change no answer).
#[allow(dead_code)]
pub fn with_gear(name: &str, overrides: &[&str]) -> (PathBuf, Scenario) {
    let (file, quick) = scenario(name, overrides, &[]);
    let dt = gear_step(&quick, &file);
    let gear = apply_overrides(
        &quick,
        &[
            "integrator=Gear".to_string(),
            format!("time.dt={dt}"),
            "time.checkpoint_interval=None".to_string(),
            "outputs.frame_interval=None".to_string(),
            "outputs.plots=false".to_string(),
        ],
    )
    .unwrap();
    (file, gear)
}

/// A fresh scratch directory for the run `tag`.
#[allow(dead_code)]
pub fn scratch(tag: &str) -> PathBuf {
    let out = std::env::temp_dir().join(format!("talus-quick-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    out
}

/// Starts `scenario` (read from `file`) in `out` on `threads` worker threads.
#[allow(dead_code)]
pub fn start(scenario: &Scenario, file: &Path, threads: usize, out: &Path) -> Runner {
    Runner::start(scenario, file, &ForceModelRegistry::default(), threads, out)
        .unwrap_or_else(|e| panic!("{}: {e}", file.display()))
}

/// Runs `runner` to its end and returns its summary, once it is known to be clean: the run
/// neither blew up nor failed, its answers were not found doubtful (`finished` or
/// `at_rest`, no warning), and its deepest overlap stayed below [`SUSPECT_OVERLAP`].
#[allow(dead_code)]
pub fn run_clean(runner: &mut Runner, out: &Path) -> Value {
    run_clean_but(runner, out, &[])
}

/// [`run_clean`], but for warnings that contain one of `allowed`.
#[allow(dead_code)]
pub fn run_clean_but(runner: &mut Runner, out: &Path, allowed: &[&str]) -> Value {
    let name = runner.exp.scenario.name.clone();
    let dt = runner.exp.scenario.time.dt;
    runner
        .run(None, &mut |_| {})
        .unwrap_or_else(|e| panic!("{name} at dt = {dt} s: {e}"));
    let summary: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let warnings: Vec<&str> = summary["warnings"]
        .as_array()
        .map(|w| w.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let doubted = summary["status"].as_str() == Some("suspect")
        && !warnings.is_empty()
        && warnings
            .iter()
            .all(|w| allowed.iter().any(|a| w.contains(a)));
    assert!(
        doubted || matches!(summary["status"].as_str(), Some("finished" | "at_rest")),
        "{name} at dt = {dt} s: status {} {}",
        summary["status"],
        summary["warnings"]
    );
    let overlap = number(&summary, "max_overlap_ratio");
    assert!(
        overlap < SUSPECT_OVERLAP,
        "{name} at dt = {dt} s: overlaps reached {overlap} of the grain size"
    );
    assert_eq!(number(&summary, "dt"), dt);
    summary
}

/// The number `key` of a summary.
#[allow(dead_code)]
pub fn number(summary: &Value, key: &str) -> f64 {
    summary[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} is not a number: {}", summary[key]))
}

/// A slumped pile of angular grains with μ = 0.6 stands between 15° (only nearly
/// frictionless or rolling grains lie flatter) and 60° (steeper needs cohesion), fitted on
/// enough of its surface to mean something.
#[allow(dead_code)]
pub fn assert_pile_angle(summary: &Value) {
    assert_pile_angle_above(summary, 15.0);
}

/// The slumped pile of [`QUICK_PERIODIC_PILE`] (120 grains, three or four high, in a slab
/// periodic across the channel) stands lower and scatters more from seed to seed than the
/// walled one: over seeds 7, 8 and 9 it stood at 15.9°, 12.4° and 14.2° with Verlet and at
/// 17.1°, 12.8° and 14.1° with Gear when each grain's forces were summed in the order of
/// the pair list, and at 21.0°, 10.9°, 14.9° (Verlet) and 14.9°, 16.7°, 13.6° (Gear) in the
/// order of its partners' ids: the same spread. A single run of it is held to 8°–60°.
#[allow(dead_code)]
pub const PERIODIC_PILE_MIN_DEG: f64 = 8.0;

/// The pile's angle between `min_deg` and 60°, fitted on enough of its surface to mean
/// something, and its height that of a slumped column.
#[allow(dead_code)]
pub fn assert_pile_angle_above(summary: &Value, min_deg: f64) {
    let angle = number(summary, "angle_of_repose_deg");
    assert!(
        (min_deg..=60.0).contains(&angle),
        "angle of repose {angle}°"
    );
    assert!(summary["repose_fit_points"].as_u64().unwrap() >= 4);
    // A slumped column stands lower than it was filled (0.3 m) and at least a grain high
    // (the grains' smallest diameter is 7 mm).
    let height = number(summary, "pile_height_m");
    assert!((0.007..0.3).contains(&height), "pile height {height} m");
}

/// Each face of a poured heap, fitted on its own side of the apex, stands between the slope
/// a frictional grain slides on (10°) and the 60° no dry heap exceeds; the angle is their
/// mean.
#[allow(dead_code)]
pub fn assert_poured_heap(summary: &Value) {
    let near = number(summary, "angle_of_repose_near_face_deg");
    let far = number(summary, "angle_of_repose_far_face_deg");
    for face in [near, far] {
        assert!((10.0..=60.0).contains(&face), "faces {near}° and {far}°");
    }
    let mean = number(summary, "angle_of_repose_deg");
    assert!((mean - 0.5 * (near + far)).abs() < 1e-9);
}

/// A hopper of `count` grains discharges at a steady positive rate of the order of
/// Beverloo's law, without clogging, and most of its grains leave.
#[allow(dead_code)]
pub fn assert_discharge(summary: &Value, count: usize) {
    let rate = number(summary, "discharge_rate");
    let r2 = number(summary, "discharge_fit_r_squared");
    assert!(rate > 0.0, "rate {rate}");
    assert!(r2 > 0.95, "the outflow is not steady: r² = {r2}");
    assert_eq!(summary["clogged"], false);
    let left = summary["discharged_grains"].as_u64().unwrap() as usize;
    assert!(4 * left >= 3 * count, "{left} of {count} grains left");
    let beverloo = number(summary, "beverloo_rate");
    assert!(
        rate / beverloo > 0.3 && rate / beverloo < 3.0,
        "{rate} vs {beverloo}"
    );
    assert!(number(summary, "discharged_mass") > 0.0);
}

/// In a bed shaken at Γ = A(2πf)²/g = 3 (A = 7.45 mm, f = 10 Hz) the large grain rises by
/// more than half its diameter in 0.8 s (the Brazil-nut effect, which needs Γ > 1), and the
/// bed is agitated.
#[allow(dead_code)]
pub fn assert_intruder_rises(summary: &Value) {
    let gamma = number(summary, "gamma");
    let expected = 0.00745 * (std::f64::consts::TAU * 10.0).powi(2) / 9.81;
    assert!((gamma - expected).abs() < 1e-9 * expected, "Γ = {gamma}");
    let rise = number(summary, "intruder_rise");
    assert!(rise > 0.5, "the intruder rose by {rise} diameters");
    assert!(number(summary, "mean_granular_temperature") > 0.0);
}

/// Every one of the drum's `count` grains is inside it — within the inscribed radius of
/// the 16-gon (0.05 m) from the axis, between the end plates — and the bed moves with the
/// drum: turning at +3 rad/s about +y, it carries the bed at its bottom towards −x
/// (ω × r with r = −z gives v_x = ω·z < 0 there).
#[allow(dead_code)]
pub fn assert_drum_turns_its_bed(runner: &Runner, count: usize) {
    let world = &runner.exp.world;
    assert_eq!(world.grain_count(), count);
    let mut mean_vx = 0.0;
    for id in world.grains() {
        let g = world.grain(id).unwrap();
        let p = g.pose.position;
        assert!(
            (p.x * p.x + p.z * p.z).sqrt() < 0.05,
            "grain {} outside at {p}",
            id.0
        );
        assert!(
            p.y.abs() < 0.02,
            "grain {} through an end plate at {p}",
            id.0
        );
        mean_vx += g.velocity.x / count as f64;
    }
    assert!(
        mean_vx < 0.0,
        "the bed does not move with the drum: {mean_vx}"
    );
}

/// A dripped heap of `count` grains avalanches on both flanks, Θ_m ≥ Θ_r (§1.2.1,
/// fig. 1.1), both between 10° (only nearly frictionless or rolling grains lie flatter) and
/// 60° (steeper needs cohesion, even in a channel whose walls add friction); the heap's
/// angles are the means of its flanks'.
#[allow(dead_code)]
pub fn assert_dripped_heap(summary: &Value, count: usize) {
    assert_eq!(
        summary["grains"].as_u64().unwrap() as usize,
        count,
        "every grain was dripped"
    );
    let m = number(summary, "max_stability_angle_deg");
    let r = number(summary, "repose_angle_deg");
    assert!(m >= r, "Θ_m = {m}° < Θ_r = {r}°");
    // Θ_r of the 45 grains of SHORT_DRIP over seeds 11 to 14: 11.6°, 14.6°, 15.2° and 13.6°
    // with each grain's forces summed in the order of the pair list, 9.8°, 14.8°, 14.7° and
    // 13.8° in the order of its partners' ids: a single heap this small is held to 8°.
    assert!((8.0..=60.0).contains(&r), "Θ_r = {r}°");
    assert!((10.0..=60.0).contains(&m), "Θ_m = {m}°");
    assert!((number(summary, "stability_minus_repose_deg") - (m - r)).abs() < 1e-9);
    for angle in ["max_stability_angle", "repose_angle"] {
        let near = number(summary, &format!("{angle}_near_face_deg"));
        let far = number(summary, &format!("{angle}_far_face_deg"));
        let mean = number(summary, &format!("{angle}_deg"));
        assert!(
            (mean - 0.5 * (near + far)).abs() < 1e-9,
            "{angle}: {near}, {far}"
        );
    }
    assert!(summary["avalanches_near_face"].as_u64().unwrap() >= 1);
    assert!(summary["avalanches_far_face"].as_u64().unwrap() >= 1);
}

/// A trough oscillating with A = 1 mm at 25 Hz along a direction tilted towards +x carries
/// its grains along +x, measurably (more than twice the spread of its sub-windows) and
/// slower than the trough's own peak speed A·2πf; Γ = A(2πf)²/g.
#[allow(dead_code)]
pub fn assert_conveyor_carries(summary: &Value) {
    let gamma = number(summary, "gamma");
    let expected = 0.001 * (std::f64::consts::TAU * 25.0).powi(2) / 9.81;
    assert!((gamma - expected).abs() < 1e-9 * expected, "Γ = {gamma}");
    let v = number(summary, "transport_velocity_m_s");
    let spread = number(summary, "transport_velocity_spread_m_s");
    assert!(v > 0.0 && v > 2.0 * spread, "v = {v} ± {spread}");
    assert!(v < 0.001 * std::f64::consts::TAU * 25.0, "v = {v}");
}

/// A bed flowing down a rough incline: a few grains deep (3 to 12 diameters), its velocity
/// rising from the base to the surface in Bagnold's shape v_s + A (h^1.5 − (h − z)^1.5)
/// (A > 0, r² > 0.9) with a slip small beside the surface velocity, and the profile in
/// `out/chute_profile.csv` faster in its top third than in its bottom third.
#[allow(dead_code)]
pub fn assert_chute_flow(summary: &Value, out: &Path) {
    let depth = number(summary, "flow_depth_m");
    let d = number(summary, "mean_diameter_m");
    assert!(
        (3.0..12.0).contains(&(depth / d)),
        "h = {depth} m, d = {d} m"
    );
    let fit = &summary["bagnold"];
    let (a, slip) = (
        fit["amplitude_A"].as_f64().unwrap(),
        fit["slip_velocity_m_s"].as_f64().unwrap(),
    );
    let surface = slip + a * depth.powf(1.5);
    assert!(a > 0.0 && fit["r_squared"].as_f64().unwrap() > 0.9, "{fit}");
    assert!(
        slip.abs() < 0.3 * surface,
        "slip {slip} m/s, surface {surface} m/s"
    );
    let table = std::fs::read_to_string(out.join("chute_profile.csv")).unwrap();
    let layers: Vec<(f64, f64)> = table
        .lines()
        .skip(1)
        .filter_map(|l| {
            let c: Vec<f64> = l.split(',').map(|c| c.parse().unwrap()).collect();
            (c[0] < depth && c[2].is_finite()).then_some((c[0], c[2]))
        })
        .collect();
    let third = layers.len() / 3;
    let mean = |part: &[(f64, f64)]| part.iter().map(|l| l.1).sum::<f64>() / part.len() as f64;
    let (low, high) = (mean(&layers[..third]), mean(&layers[2 * third..]));
    assert!(
        high > 2.0 * low.max(0.0) && high > 0.0,
        "{low} m/s low, {high} m/s high"
    );
}

/// The heights of the grains' centres of mass now, in id order.
#[allow(dead_code)]
pub fn heights(runner: &Runner) -> Vec<f64> {
    let world = &runner.exp.world;
    world
        .grains()
        .map(|id| world.grain(id).unwrap().pose.position.z)
        .collect()
}

/// Grains dropped into the box of `configs/shapes_pile.ron` (8 × 8 cm, 20 cm high) from
/// `start` (their heights when placed) have settled: every grain is inside the box, none
/// ended higher than it started (their energy only goes into the contacts), and the kinetic
/// energy left is below 1 % of the potential energy they gave up falling; each rests on
/// something (mean coordination of at least 2).
#[allow(dead_code)]
pub fn assert_settled_in_the_box(runner: &Runner, summary: &Value, start: &[f64]) {
    let world = &runner.exp.world;
    let g = 9.81;
    let mut released = 0.0;
    let mut kinetic = 0.0;
    for (id, z0) in world.grains().zip(start) {
        let grain = world.grain(id).unwrap();
        let p = grain.pose.position;
        assert!(
            (0.0..0.08).contains(&p.x) && (0.0..0.08).contains(&p.y) && (0.0..0.2).contains(&p.z),
            "grain {} outside the box at {p}",
            id.0
        );
        assert!(p.z <= z0 + 1e-3, "grain {} rose from {z0} to {}", id.0, p.z);
        let mass = grain.inertia.mass;
        released += mass * g * (z0 - p.z);
        kinetic += 0.5 * mass * grain.velocity.length_squared();
    }
    assert!(released > 0.0);
    assert!(
        kinetic < 0.01 * released,
        "kinetic energy {kinetic} J of {released} J released"
    );
    assert!(number(summary, "mean_coordination") >= 2.0);
}
