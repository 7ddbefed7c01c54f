//! The quick variants of the shipped scenarios run to the end with Verlet and give
//! physically sensible answers: a pile at an angle between 15° and 60°, in a channel and in
//! a periodic slab; a poured heap whose faces stand between 10° and 60°; a steady positive
//! hopper outflow of the order of Beverloo's law; an intruder that rises in a bed shaken at
//! Γ = 3; a drum that turns its bed; a dripped heap whose slope before its avalanches is
//! steeper than after; grains carried along a tilted vibrating trough; grains from shape
//! files settled in their box; and every output file is there. (`tests/gear.rs` runs the
//! same variants with Gear, `tests/chute.rs` the chute's.)

use std::path::PathBuf;

use serde_json::Value;
use talus_scenario::Runner;

mod common;

use common::{
    PERIODIC_PILE_MIN_DEG, QUICK_BOX, QUICK_DRUM, QUICK_HOPPER, QUICK_PERIODIC_PILE, QUICK_PILE,
    QUICK_POUR, QUICK_PYRAMID, QUICK_SHAPES, SHORT_CONVEYOR, SHORT_DRIP, assert_conveyor_carries,
    assert_discharge, assert_dripped_heap, assert_drum_turns_its_bed, assert_intruder_rises,
    assert_pile_angle, assert_pile_angle_above, assert_poured_heap, assert_settled_in_the_box,
    assert_trustworthy_overlap, heights, number, run_clean, scenario, scratch, start,
};

/// No frames or plots: they change no answer.
const QUIET: [&str; 2] = ["outputs.frame_interval=None", "outputs.plots=false"];

/// The shipped scenario `name` with `overrides`, started with its own integrator (Verlet)
/// on every core.
fn verlet(name: &str, overrides: &[&str], more: &[&str]) -> (Runner, PathBuf) {
    let (file, scenario) = scenario(name, overrides, more);
    let out = scratch(name);
    (start(&scenario, &file, 0, &out), out)
}

/// Runs `runner` to a clean end at the shipped stiffness: its overlaps also stay within
/// what a trustworthy packing allows.
fn run_trusted(runner: &mut Runner, out: &std::path::Path) -> Value {
    let summary = run_clean(runner, out);
    assert_trustworthy_overlap(&summary);
    summary
}

/// Runs `name` with `overrides` and `more` to a clean, trustworthy end; its summary has
/// every key a summary must have.
fn run_quick(name: &str, overrides: &[&str], more: &[&str]) -> (PathBuf, Value) {
    let (mut runner, out) = verlet(name, overrides, more);
    let summary = run_trusted(&mut runner, &out);
    for key in [
        "scenario",
        "grains",
        "steps",
        "sim_time",
        "wall_seconds",
        "grain_steps_per_second",
        "mean_coordination",
        "max_overlap_ratio",
        "max_overlap_time",
        "final_kinetic_energy",
    ] {
        assert!(summary.get(key).is_some(), "{name}: summary lacks {key}");
    }
    (out, summary)
}

#[test]
fn angle_of_repose_pile_stands_between_15_and_60_degrees() {
    let (out, summary) = run_quick(
        "angle_of_repose",
        &QUICK_PILE,
        &["outputs.frame_interval=0.2"],
    );
    assert_pile_angle(&summary);
    assert_eq!(summary["grains"], 96);
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
fn periodic_pile_stands_between_15_and_60_degrees() {
    let (out, summary) = run_quick("angle_of_repose_periodic", &QUICK_PERIODIC_PILE, &QUIET);
    assert_pile_angle_above(&summary, PERIODIC_PILE_MIN_DEG);
    let _ = std::fs::remove_dir_all(out);
}

#[test]
fn hopper_discharges_at_a_steady_positive_rate() {
    let (out, summary) = run_quick("hopper", &QUICK_HOPPER, &QUIET);
    assert_discharge(&summary, 200);
    let _ = std::fs::remove_dir_all(out);
}

#[test]
fn intruder_rises_in_a_bed_shaken_at_gamma_three() {
    let (out, summary) = run_quick("vibrating_box", &QUICK_BOX, &QUIET);
    assert_intruder_rises(&summary);
    // The page of the run links the stroboscopic samples written beside the time series.
    assert!(out.join("stroboscopic.csv").is_file());
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("href=\"stroboscopic.csv\""));
    let _ = std::fs::remove_dir_all(out);
}

#[test]
fn rotating_drum_keeps_its_grains_and_turns_them() {
    let (mut runner, out) = verlet("rotating_drum", &QUICK_DRUM, &QUIET);
    let summary = run_trusted(&mut runner, &out);
    assert_drum_turns_its_bed(&runner, 60);
    // The dynamic angle is the mean of the angles the time series holds over the window
    // (0.05–0.2 s: 16 outputs), those fitted, recomputed here from the file; their least
    // and largest.
    let text = std::fs::read_to_string(out.join("timeseries.csv")).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let column = |name: &str| header.iter().position(|h| h.starts_with(name)).unwrap();
    let (t, a) = (column("time"), column("angle_of_repose"));
    let in_window: Vec<f64> = lines
        .map(|l| {
            l.split(',')
                .map(|c| c.parse::<f64>().unwrap())
                .collect::<Vec<_>>()
        })
        .filter(|c| (0.05 - 1e-9..=0.2 + 1e-9).contains(&c[t]))
        .map(|c| c[a])
        .collect();
    assert_eq!(in_window.len(), 16);
    let angles: Vec<f64> = in_window
        .iter()
        .copied()
        .filter(|a| a.is_finite())
        .collect();
    assert!(angles.len() >= 10, "{in_window:?}");
    assert_eq!(
        number(&summary, "angle_of_repose_window_samples"),
        angles.len() as f64
    );
    let mean = angles.iter().sum::<f64>() / angles.len() as f64;
    assert!((number(&summary, "angle_of_repose_deg") - mean).abs() < 1e-9 * mean);
    let least = angles.iter().copied().fold(f64::INFINITY, f64::min);
    let largest = angles.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    assert_eq!(number(&summary, "angle_of_repose_min_deg"), least);
    assert_eq!(number(&summary, "angle_of_repose_max_deg"), largest);
    assert!(number(&summary, "angle_of_repose_deg_err") > 0.0);
    // The angle at the end is the last row's.
    let last = *in_window.last().unwrap();
    match summary["angle_of_repose_final_deg"].as_f64() {
        Some(end) => assert_eq!(end, last),
        None => assert!(last.is_nan()),
    }
    let _ = std::fs::remove_dir_all(out);
}

#[test]
fn dripped_heap_avalanches_between_plausible_angles() {
    let (out, summary) = run_quick("max_stability_angle", &SHORT_DRIP, &["outputs.plots=true"]);
    assert_dripped_heap(&summary, 45);
    let png = std::fs::read(out.join("plots/heap_slope.png")).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    let _ = std::fs::remove_dir_all(out);
}

#[test]
fn tilted_conveyor_carries_its_grains_along_the_tilt() {
    let (out, summary) = run_quick(
        "vibrating_conveyor",
        &SHORT_CONVEYOR,
        &["outputs.plots=true"],
    );
    assert_conveyor_carries(&summary);
    let png = std::fs::read(out.join("plots/transport_velocity.png")).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    let _ = std::fs::remove_dir_all(out);
}

#[test]
fn poured_heap_stands_on_both_flanks() {
    let (out, summary) = run_quick("angle_of_repose_pour", &QUICK_POUR, &QUIET);
    assert_eq!(summary["grains"], 110, "every grain was poured");
    assert_poured_heap(&summary);
    let _ = std::fs::remove_dir_all(out);
}

#[test]
fn pyramid_hopper_discharges_through_its_square_orifice() {
    let (out, summary) = run_quick("hopper_pyramid", &QUICK_PYRAMID, &QUIET);
    assert_discharge(&summary, 200);
    let _ = std::fs::remove_dir_all(out);
}

#[test]
fn the_deepest_overlap_is_reported_with_the_time_of_its_step() {
    // A row at every step: the row of the deepest overlap is the summary's. (Its own
    // folder: the pyramid's other test may run beside it in this process.)
    let every_step = "time.output_interval=1.4285714285714285e-5";
    let more = [&QUIET[..], &[every_step, "time.end=0.2"]].concat();
    let (file, scenario) = scenario("hopper_pyramid", &QUICK_PYRAMID, &more);
    let out = scratch("hopper_pyramid_every_step");
    let summary = run_trusted(&mut start(&scenario, &file, 0, &out), &out);
    let csv = std::fs::read_to_string(out.join("timeseries.csv")).unwrap();
    let column = csv
        .lines()
        .next()
        .unwrap()
        .split(',')
        .position(|c| c.starts_with("max_overlap_ratio"))
        .unwrap();
    let rows: Vec<(f64, f64)> = csv
        .lines()
        .skip(1)
        .map(|l| {
            let v: Vec<f64> = l.split(',').map(|x| x.parse().unwrap()).collect();
            (v[0], v[column])
        })
        .collect();
    assert_eq!(rows.len(), 14_001, "a row per step and one at the start");
    let deepest = rows.iter().fold(
        (0.0, 0.0),
        |best, &(t, r)| if r > best.1 { (t, r) } else { best },
    );
    assert!(deepest.1 > 0.0);
    assert_eq!(number(&summary, "max_overlap_ratio"), deepest.1);
    assert!((number(&summary, "max_overlap_time") - deepest.0).abs() < 1e-9);
    let _ = std::fs::remove_dir_all(out);
}

#[test]
fn grains_from_shape_files_settle_in_their_box() {
    let (mut runner, out) = verlet("shapes_pile", &QUICK_SHAPES, &QUIET);
    let start = heights(&runner);
    let summary = run_trusted(&mut runner, &out);
    assert_eq!(summary["grains"], 48);
    assert_settled_in_the_box(&runner, &summary, &start);
    let _ = std::fs::remove_dir_all(out);
}
