//! Every shipped scenario runs to its end with the Gear predictor–corrector (the thesis'
//! integrator, §3.7) at the step `talus check` allows for it: the quick variant of each,
//! the same one the Verlet tests run, run with Gear at the engine's critical step for Gear,
//! ends clean (no blow-up, no doubt about its answers, overlaps within the range of the
//! contact law) with its answer within the same physical bounds as with Verlet.
//!
//! Gear's critical step is four to seven times smaller than Verlet's with these damped
//! contacts, so each run here takes that many more steps than its Verlet twin; the quick
//! variants are sized for it.

use std::path::PathBuf;

use talus_scenario::Runner;
use talus_scenario::schema::Integrator;

mod common;

use common::{
    PERIODIC_PILE_MIN_DEG, QUICK_BOX, QUICK_DRUM, QUICK_HOPPER, QUICK_PERIODIC_PILE, QUICK_PILE,
    QUICK_POUR, QUICK_PYRAMID, QUICK_SHAPES, QUICK_VARIANTS, SHORT_CHUTE, SHORT_CONVEYOR,
    SHORT_DRIP, assert_chute_flow, assert_conveyor_carries, assert_discharge, assert_dripped_heap,
    assert_drum_turns_its_bed, assert_intruder_rises, assert_pile_angle, assert_pile_angle_above,
    assert_poured_heap, assert_settled_in_the_box, config_file, gear_step, heights, number,
    run_clean, run_clean_but, scenario, scratch, start, with_gear,
};

/// The quick variant `overrides` of the shipped scenario `name`, started with Gear at the
/// step `talus check` allows, on one worker thread (the tests run side by side).
fn gear(name: &str, overrides: &[&str]) -> (Runner, PathBuf) {
    let (file, scenario) = with_gear(name, overrides);
    assert_eq!(scenario.integrator, Integrator::Gear);
    let out = scratch(&format!("gear-{name}"));
    (start(&scenario, &file, 1, &out), out)
}

/// Runs `runner` to a clean end and checks that it ran at Gear's critical step.
fn run_gear(runner: &mut Runner, out: &std::path::Path) -> serde_json::Value {
    let summary = run_clean(runner, out);
    let dt = number(&summary, "dt");
    assert!(
        dt <= number(&summary, "critical_dt"),
        "dt = {dt} s above the run's own critical step {}",
        summary["critical_dt"]
    );
    summary
}

#[test]
fn every_shipped_scenario_has_a_quick_variant_whose_gear_step_check_allows() {
    let dir = config_file("angle_of_repose");
    let dir = dir.parent().unwrap();
    let mut shipped: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "ron"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    shipped.sort();
    let mut quick: Vec<String> = QUICK_VARIANTS.iter().map(|q| q.0.to_string()).collect();
    quick.sort();
    assert_eq!(shipped, quick, "a shipped scenario without a quick variant");
    for (name, overrides) in QUICK_VARIANTS {
        let (file, verlet) = scenario(name, overrides, &[]);
        // Gear's step is the smaller: the Verlet step of the file is refused with Gear.
        let dt = gear_step(&verlet, &file);
        assert!(dt < verlet.time.dt, "{name}: Gear's step {dt} s");
        let (_, gear) = with_gear(name, overrides);
        assert_eq!(gear.time.dt, dt, "{name}");
    }
}

#[test]
fn pile_with_gear() {
    let (mut runner, out) = gear("angle_of_repose", &QUICK_PILE);
    assert_pile_angle(&run_gear(&mut runner, &out));
    let _ = std::fs::remove_dir_all(out);
}

#[test]
fn periodic_pile_with_gear() {
    let (mut runner, out) = gear("angle_of_repose_periodic", &QUICK_PERIODIC_PILE);
    assert_pile_angle_above(&run_gear(&mut runner, &out), PERIODIC_PILE_MIN_DEG);
    let _ = std::fs::remove_dir_all(out);
}

#[test]
fn poured_heap_with_gear() {
    let (mut runner, out) = gear("angle_of_repose_pour", &QUICK_POUR);
    let summary = run_gear(&mut runner, &out);
    assert_eq!(summary["grains"], 110, "every grain was poured");
    assert_poured_heap(&summary);
    let _ = std::fs::remove_dir_all(out);
}

#[test]
fn hopper_with_gear() {
    let (mut runner, out) = gear("hopper", &QUICK_HOPPER);
    assert_discharge(&run_gear(&mut runner, &out), 200);
    let _ = std::fs::remove_dir_all(out);
}

#[test]
fn pyramid_hopper_with_gear() {
    let (mut runner, out) = gear("hopper_pyramid", &QUICK_PYRAMID);
    assert_discharge(&run_gear(&mut runner, &out), 200);
    let _ = std::fs::remove_dir_all(out);
}

#[test]
fn vibrating_box_with_gear() {
    let (mut runner, out) = gear("vibrating_box", &QUICK_BOX);
    assert_intruder_rises(&run_gear(&mut runner, &out));
    let _ = std::fs::remove_dir_all(out);
}

#[test]
fn rotating_drum_with_gear() {
    let (mut runner, out) = gear("rotating_drum", &QUICK_DRUM);
    run_gear(&mut runner, &out);
    assert_drum_turns_its_bed(&runner, 60);
    let _ = std::fs::remove_dir_all(out);
}

#[test]
fn dripped_heap_with_gear() {
    let (mut runner, out) = gear("max_stability_angle", &SHORT_DRIP);
    assert_dripped_heap(&run_gear(&mut runner, &out), 45);
    let _ = std::fs::remove_dir_all(out);
}

#[test]
fn conveyor_with_gear() {
    let (mut runner, out) = gear("vibrating_conveyor", &SHORT_CONVEYOR);
    assert_conveyor_carries(&run_gear(&mut runner, &out));
    let _ = std::fs::remove_dir_all(out);
}

#[test]
fn chute_flow_with_gear() {
    let (mut runner, out) = gear("chute_flow", &SHORT_CHUTE);
    // The short chute's flow is mostly still speeding up over its window: by 10 to 26 %
    // over seeds 7, 8, 9 and 11, with either integrator, which the run reports as a doubt
    // about its steadiness (the Verlet test in tests/chute.rs does not ask for a steady
    // flow either). Everything else of a clean run is asked for.
    let summary = run_clean_but(&mut runner, &out, &["the flow is accelerating"]);
    assert!(number(&summary, "dt") <= number(&summary, "critical_dt"));
    assert_eq!(runner.exp.world.grain_count(), 150, "no grain lost");
    assert_chute_flow(&summary, &out);
    let _ = std::fs::remove_dir_all(out);
}

#[test]
fn shapes_pile_with_gear() {
    let (mut runner, out) = gear("shapes_pile", &QUICK_SHAPES);
    let start = heights(&runner);
    let summary = run_gear(&mut runner, &out);
    assert_settled_in_the_box(&runner, &summary, &start);
    let _ = std::fs::remove_dir_all(out);
}
