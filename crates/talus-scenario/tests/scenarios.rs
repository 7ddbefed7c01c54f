//! Shortened versions of the shipped scenarios run to the end and give physically sensible
//! answers: a pile at an angle between 15° and 60°, a steady positive hopper outflow, an
//! intruder that rises in a bed shaken at Γ ≈ 3, a dripped heap whose slope before its
//! avalanches is steeper than after, grains carried along a tilted vibrating trough; and
//! every output file is there.

use std::path::{Path, PathBuf};

use serde_json::Value;
use talus_scenario::Runner;
use talus_scenario::load::{apply_overrides, read};
use talus_sim::force::ForceModelRegistry;

mod common;

use common::{SHORT_CONVEYOR, SHORT_DRIP, SHORT_PILE};

fn run_config(name: &str, overrides: &[&str]) -> (PathBuf, Value) {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../../configs/{name}.ron"));
    let scenario = read(&file).unwrap();
    let overrides: Vec<String> = overrides.iter().map(ToString::to_string).collect();
    let scenario = apply_overrides(&scenario, &overrides).unwrap();
    let out = std::env::temp_dir().join(format!("talus-scenario-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let registry = ForceModelRegistry::default();
    let mut runner = Runner::start(&scenario, &file, &registry, 0, &out).unwrap();
    runner
        .run(None, &mut |_| {})
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let summary: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    for key in [
        "scenario",
        "grains",
        "steps",
        "sim_time",
        "wall_seconds",
        "grain_steps_per_second",
        "mean_coordination",
        "max_overlap_ratio",
        "final_kinetic_energy",
    ] {
        assert!(summary.get(key).is_some(), "{name}: summary lacks {key}");
    }
    assert!(summary["max_overlap_ratio"].as_f64().unwrap() < 0.25);
    // The shortened experiments give answers worth reporting: no doubts about them.
    assert!(
        matches!(summary["status"].as_str(), Some("finished" | "at_rest")),
        "{name}: status {} {}",
        summary["status"],
        summary["warnings"]
    );
    (out, summary)
}

fn number(summary: &Value, key: &str) -> f64 {
    summary[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} is not a number: {}", summary[key]))
}

#[test]
fn angle_of_repose_pile_stands_between_15_and_60_degrees() {
    let overrides = [&SHORT_PILE[..], &["outputs.frame_interval=0.2"]].concat();
    let (out, summary) = run_config("angle_of_repose", &overrides);
    let angle = number(&summary, "angle_of_repose_deg");
    assert!((15.0..=60.0).contains(&angle), "angle of repose {angle}°");
    assert_eq!(summary["grains"], 192);
    assert!(summary["repose_fit_points"].as_u64().unwrap() >= 4);
    // The outputs: time series with units, frames and their collection, plots.
    let csv = std::fs::read_to_string(out.join("timeseries.csv")).unwrap();
    let header = csv.lines().next().unwrap();
    assert!(
        header.starts_with("time [s],grains [1],kinetic_energy [J]"),
        "{header}"
    );
    assert!(header.contains("angle_of_repose [deg]"));
    let rows = csv.lines().count() - 1;
    let sim_time = number(&summary, "sim_time");
    assert_eq!(rows, (sim_time / 0.01).round() as usize + 1);
    let pvd = std::fs::read_to_string(out.join("frames.pvd")).unwrap();
    assert!(pvd.contains("frames/grains_000000.vtu") && pvd.contains("frames/walls_000000.vtu"));
    assert!(out.join("frames/grains_000002.vtu").exists());
    for plot in ["pile_profile", "kinetic_energy", "coordination"] {
        let png = std::fs::read(out.join(format!("plots/{plot}.png"))).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "{plot}.png is a PNG");
    }
    let _ = std::fs::remove_dir_all(out);
}

#[test]
fn hopper_discharges_at_a_steady_positive_rate() {
    let (out, summary) = run_config(
        "hopper",
        &[
            "grains[0].count=200",
            "walls[5].removed_at=0.12",
            "time.end=0.45",
            "outputs.frame_interval=None",
            "outputs.plots=false",
        ],
    );
    let rate = number(&summary, "discharge_rate");
    let r2 = number(&summary, "discharge_fit_r_squared");
    let mass = number(&summary, "discharged_mass");
    assert!(rate > 0.0, "rate {rate}");
    assert!(r2 > 0.95, "the outflow is not steady: r² = {r2}");
    assert_eq!(summary["clogged"], false);
    assert!(summary["discharged_grains"].as_u64().unwrap() >= 150);
    // Beverloo's law gives the same order of magnitude.
    let beverloo = number(&summary, "beverloo_rate");
    assert!(
        rate / beverloo > 0.3 && rate / beverloo < 3.0,
        "{rate} vs {beverloo}"
    );
    // The discharged mass is the mass of the grains that left.
    assert!(mass > 0.0);
    let _ = std::fs::remove_dir_all(out);
}

#[test]
fn intruder_rises_in_a_bed_shaken_at_gamma_three() {
    let (out, summary) = run_config(
        "vibrating_box",
        &[
            "grains[1].count=200",
            "time.end=0.8",
            "outputs.frame_interval=None",
            "outputs.plots=false",
        ],
    );
    let gamma = number(&summary, "gamma");
    assert!((gamma - 3.0).abs() < 0.01, "Γ = {gamma}");
    let rise = number(&summary, "intruder_rise");
    assert!(rise > 0.5, "the intruder rose by {rise} diameters");
    assert!(number(&summary, "mean_granular_temperature") > 0.0);
    // The page of the run links the stroboscopic samples written beside the time series.
    assert!(out.join("stroboscopic.csv").is_file());
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("href=\"stroboscopic.csv\""));
    let _ = std::fs::remove_dir_all(out);
}

#[test]
fn rotating_drum_keeps_its_grains_and_turns_them() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs/rotating_drum.ron");
    let overrides: Vec<String> = [
        "grains[0].count=100",
        "time.end=0.25",
        "outputs.frame_interval=None",
        "outputs.plots=false",
    ]
    .iter()
    .map(ToString::to_string)
    .collect();
    let scenario = apply_overrides(&read(&file).unwrap(), &overrides).unwrap();
    let out = std::env::temp_dir().join(format!("talus-scenario-{}-drum", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let registry = ForceModelRegistry::default();
    let mut runner = Runner::start(&scenario, &file, &registry, 0, &out).unwrap();
    runner.run(None, &mut |_| {}).unwrap();
    let world = &runner.exp.world;
    assert_eq!(world.grain_count(), 100);
    // Every grain is inside the drum: within the inscribed radius of the 16-gon
    // (0.05 m) from the axis, between the end plates.
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
        mean_vx += g.velocity.x / 100.0;
    }
    // The drum turns at +3 rad/s about +y, carrying the bed at its bottom towards −x:
    // ω × r with r = −z gives v_x = ω·z < 0 there.
    assert!(
        mean_vx < 0.0,
        "the bed does not move with the drum: {mean_vx}"
    );
    let _ = std::fs::remove_dir_all(out);
}

#[test]
fn dripped_heap_avalanches_between_plausible_angles() {
    let overrides = [&SHORT_DRIP[..], &["outputs.plots=true"]].concat();
    let (out, summary) = run_config("max_stability_angle", &overrides);
    assert_eq!(summary["grains"], 30, "every grain was dripped");
    let m = number(&summary, "max_stability_angle_deg");
    let r = number(&summary, "repose_angle_deg");
    assert!(summary["avalanches"].as_u64().unwrap() >= 1);
    // Θ_m ≥ Θ_r (§1.2.1, fig. 1.1). Bounds: a heap of dry angular grains with μ = 0.6
    // stands steeper than 10° (only nearly frictionless or rolling grains lie flatter) and,
    // in a channel whose walls add friction, below 60° (steeper needs cohesion).
    assert!(m >= r, "Θ_m = {m}° < Θ_r = {r}°");
    assert!((10.0..=60.0).contains(&r), "Θ_r = {r}°");
    assert!((10.0..=60.0).contains(&m), "Θ_m = {m}°");
    assert!((number(&summary, "stability_minus_repose_deg") - (m - r)).abs() < 1e-9);
    // Both flanks avalanched; the heap's angles are the means of theirs.
    for angle in ["max_stability_angle", "repose_angle"] {
        let near = number(&summary, &format!("{angle}_near_face_deg"));
        let far = number(&summary, &format!("{angle}_far_face_deg"));
        let mean = number(&summary, &format!("{angle}_deg"));
        assert!(
            (mean - 0.5 * (near + far)).abs() < 1e-9,
            "{angle}: {near}, {far}"
        );
    }
    assert!(summary["avalanches_near_face"].as_u64().unwrap() >= 1);
    assert!(summary["avalanches_far_face"].as_u64().unwrap() >= 1);
    let png = std::fs::read(out.join("plots/heap_slope.png")).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    let _ = std::fs::remove_dir_all(out);
}

#[test]
fn tilted_conveyor_carries_its_grains_along_the_tilt() {
    let overrides = [&SHORT_CONVEYOR[..], &["outputs.plots=true"]].concat();
    let (out, summary) = run_config("vibrating_conveyor", &overrides);
    let gamma = number(&summary, "gamma");
    // A = 1 mm at 25 Hz: Γ = A(2πf)²/g.
    let expected = 0.001 * (std::f64::consts::TAU * 25.0).powi(2) / 9.81;
    assert!((gamma - expected).abs() < 1e-9 * expected, "Γ = {gamma}");
    let v = number(&summary, "transport_velocity_m_s");
    let spread = number(&summary, "transport_velocity_spread_m_s");
    assert!(v > 0.0 && v > 2.0 * spread, "v = {v} ± {spread}");
    // Slower than the plate's own peak speed, A·2πf.
    assert!(v < 0.001 * std::f64::consts::TAU * 25.0, "v = {v}");
    let png = std::fs::read(out.join("plots/transport_velocity.png")).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    let _ = std::fs::remove_dir_all(out);
}

/// The critical step `talus check` gives the shipped scenario `name` with Gear.
fn gear_step(name: &str) -> f64 {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../../configs/{name}.ron"));
    let probe = apply_overrides(
        &read(&file).unwrap(),
        &["integrator=Gear".to_string(), "time.dt=1e-8".to_string()],
    )
    .unwrap();
    talus_scenario::check::check(&probe, &file, &ForceModelRegistry::default())
        .unwrap_or_else(|e| panic!("{e:?}"))
        .critical_dt
}

#[test]
fn quick_drip_and_conveyor_run_to_the_end_with_gear_at_the_step_check_allows() {
    // Shorter still: Gear's step is several times smaller. The drip must place all its
    // grains; a run this short may find no avalanche ("suspect"), but must not blow up.
    for (name, short, more) in [
        (
            "max_stability_angle",
            &SHORT_DRIP[..],
            &["grains[0].count=4", "time.end=1.2"][..],
        ),
        (
            "vibrating_conveyor",
            &SHORT_CONVEYOR[..],
            &["time.end=0.3", "measurements[0].window=(0.1, 0.3)"][..],
        ),
    ] {
        let dt = gear_step(name);
        let dt_set = format!("time.dt={dt}");
        let overrides: Vec<String> = [short, more, &["integrator=Gear", dt_set.as_str()]]
            .concat()
            .iter()
            .map(ToString::to_string)
            .collect();
        let file = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../../configs/{name}.ron"));
        let scenario = apply_overrides(&read(&file).unwrap(), &overrides).unwrap();
        let out = std::env::temp_dir().join(format!("talus-gear-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&out);
        let registry = ForceModelRegistry::default();
        let mut runner = Runner::start(&scenario, &file, &registry, 0, &out).unwrap();
        runner
            .run(None, &mut |_| {})
            .unwrap_or_else(|e| panic!("{name} with Gear at {dt} s: {e}"));
        let summary: Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap())
                .unwrap();
        assert!(
            matches!(
                summary["status"].as_str(),
                Some("finished" | "at_rest" | "suspect")
            ),
            "{name}: {}",
            summary["status"]
        );
        assert_eq!(number(&summary, "dt"), dt);
        assert_eq!(
            summary["grains"].as_u64().unwrap() as usize,
            scenario.grains[0].count,
            "{name}: {}",
            summary["warnings"]
        );
        assert!(number(&summary, "max_overlap_ratio") < 0.25);
        let _ = std::fs::remove_dir_all(out);
    }
}

#[test]
fn poured_heap_stands_on_both_flanks() {
    let (out, summary) = run_config(
        "angle_of_repose_pour",
        &[
            "grains[0].count=220",
            "time.end=1.1",
            "time.stop_at_rest.after=0.9",
            "outputs.frame_interval=None",
            "outputs.plots=false",
        ],
    );
    // Each face fitted on its own side of the apex; a heap of a few grains' height stands
    // between the slope a frictional grain slides on and the 60° no dry heap exceeds.
    let near = number(&summary, "angle_of_repose_near_face_deg");
    let far = number(&summary, "angle_of_repose_far_face_deg");
    for face in [near, far] {
        assert!((10.0..=60.0).contains(&face), "faces {near}° and {far}°");
    }
    let mean = number(&summary, "angle_of_repose_deg");
    assert!((mean - 0.5 * (near + far)).abs() < 1e-9);
    let _ = std::fs::remove_dir_all(out);
}

#[test]
fn pyramid_hopper_discharges_through_its_square_orifice() {
    let (out, summary) = run_config(
        "hopper_pyramid",
        &[
            "grains[0].count=300",
            "walls[5].removed_at=0.1",
            "time.end=0.4",
            "outputs.frame_interval=None",
            "outputs.plots=false",
        ],
    );
    let rate = number(&summary, "discharge_rate");
    assert!(number(&summary, "discharge_fit_r_squared") > 0.95);
    assert_eq!(summary["clogged"], false);
    // Beverloo's square-orifice law gives the same order of magnitude.
    let beverloo = number(&summary, "beverloo_rate");
    assert!(
        rate / beverloo > 0.3 && rate / beverloo < 3.0,
        "{rate} vs {beverloo}"
    );
    let _ = std::fs::remove_dir_all(out);
}
