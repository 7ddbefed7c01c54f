//! The chute flow, short: grains flowing down a rough incline periodic in x and y stay in
//! the box while their unwrapped travel matches the time integral of their mean velocity;
//! the velocity grows from the base to the surface in the Bagnold-like shape the summary
//! fits; a run resumed from a checkpoint ends bit-identical; periodic axes and inclines
//! that cannot work are refused.

use std::path::{Path, PathBuf};

use serde_json::Value;
use talus_scenario::Runner;
use talus_scenario::load::{apply_overrides, read};
use talus_scenario::schema::Scenario;
use talus_scenario::validate::validate;
use talus_sim::force::ForceModelRegistry;

mod common;

use common::{SHORT_CHUTE, assert_chute_flow};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("talus-chute-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn chute(overrides: &[&str]) -> (PathBuf, Scenario) {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs/chute_flow.ron");
    let all: Vec<String> = SHORT_CHUTE
        .iter()
        .chain(overrides)
        .map(ToString::to_string)
        .collect();
    (
        file.clone(),
        apply_overrides(&read(&file).unwrap(), &all).unwrap(),
    )
}

fn summary(out: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap()
}

/// Time and mean velocity columns of the time series.
fn mean_velocity(out: &Path) -> Vec<(f64, f64)> {
    let text = std::fs::read_to_string(out.join("timeseries.csv")).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let column = |name: &str| header.iter().position(|h| h.starts_with(name)).unwrap();
    let (t, v) = (column("time"), column("chute_mean_velocity"));
    lines
        .map(|l| {
            let cells: Vec<f64> = l.split(',').map(|c| c.parse().unwrap()).collect();
            (cells[t], cells[v])
        })
        .collect()
}

#[test]
fn grains_flow_down_the_periodic_chute_in_a_bagnold_like_profile() {
    let (file, scenario) = chute(&[]);
    let registry = ForceModelRegistry::default();
    let out = scratch("flow");
    let mut runner = Runner::start(&scenario, &file, &registry, 2, &out).unwrap();
    let world = &runner.exp.world;
    let start: Vec<f64> = world
        .grains()
        .map(|id| world.grain(id).unwrap().unwrapped_position.x)
        .collect();
    runner.run(None, &mut |_| {}).unwrap();
    let world = &runner.exp.world;
    assert_eq!(
        world.grain_count(),
        150,
        "no grain is lost across the faces"
    );
    let mut wrapped = 0;
    let mut travel = 0.0;
    for (id, x0) in world.grains().zip(&start) {
        let g = world.grain(id).unwrap();
        let p = g.pose.position;
        assert!(
            (0.0..0.05).contains(&p.x) && (0.0..0.04).contains(&p.y),
            "{p} in the box"
        );
        wrapped += usize::from(g.image[0] > 0);
        travel += g.unwrapped_position.x - x0;
    }
    travel /= 150.0;
    // The mean travel down the incline is the time integral of the mean velocity.
    let v = mean_velocity(&out);
    let integral: f64 = v
        .windows(2)
        .map(|w| 0.5 * (w[0].1 + w[1].1) * (w[1].0 - w[0].0))
        .sum();
    assert!(
        wrapped > 75 && travel > 0.1,
        "{wrapped} grains wrapped, mean travel {travel} m"
    );
    assert!(
        (travel - integral).abs() < 0.02 * travel,
        "mean travel {travel} m, ∫ū dt = {integral} m"
    );

    // The flow's depth and its Bagnold-like profile, as with Gear (tests/gear.rs).
    assert_chute_flow(&summary(&out), &out);
    let _ = std::fs::remove_dir_all(out);
}

#[test]
fn a_chute_resumed_from_a_checkpoint_ends_bit_identical() {
    let (file, scenario) = chute(&["time.end=0.5", "measurements[0].window=(0.3, 0.5)"]);
    let registry = ForceModelRegistry::default();
    let whole = scratch("whole");
    let mut runner = Runner::start(&scenario, &file, &registry, 1, &whole).unwrap();
    runner.run(None, &mut |_| {}).unwrap();
    let expected = (
        std::fs::read(whole.join("timeseries.csv")).unwrap(),
        postcard::to_stdvec(&runner.exp.world.snapshot().grains).unwrap(),
        std::fs::read(whole.join("chute_profile.csv")).unwrap(),
    );
    drop(runner);
    let resumed = scratch("resumed");
    let mut runner = Runner::start(&scenario, &file, &registry, 2, &resumed).unwrap();
    runner.run(Some(4_321), &mut |_| {}).unwrap();
    runner.checkpoint().unwrap();
    drop(runner);
    let mut runner = Runner::resume(&resumed, &registry, 2).unwrap();
    runner.run(None, &mut |_| {}).unwrap();
    let images = runner
        .exp
        .world
        .grains()
        .filter(|&id| runner.exp.world.grain(id).unwrap().image != [0; 3])
        .count();
    assert!(images > 0, "grains crossed the faces");
    let got = (
        std::fs::read(resumed.join("timeseries.csv")).unwrap(),
        postcard::to_stdvec(&runner.exp.world.snapshot().grains).unwrap(),
        std::fs::read(resumed.join("chute_profile.csv")).unwrap(),
    );
    assert!(got.0 == expected.0, "the time series differ");
    assert!(got.1 == expected.1, "the final grains differ");
    assert!(got.2 == expected.2, "the profiles differ");
    for dir in [whole, resumed] {
        let _ = std::fs::remove_dir_all(dir);
    }
}

#[test]
fn a_bed_at_rest_on_a_steepening_incline_starts_to_flow_past_where_it_stopped() {
    // The bed settles at 20° (where it stops), then the incline steepens at 25°/s to 40°.
    let (file, mut scenario) = chute(&[
        "incline_deg=20",
        "time.end=1.8",
        "measurements[0].window=(1.6, 1.8)",
    ]);
    scenario.incline_ramp = Some(talus_scenario::schema::InclineRamp {
        from: 0.6,
        rate_deg_per_s: 25.0,
        to_deg: 40.0,
    });
    assert!(validate(&scenario, &file).is_empty());
    let registry = ForceModelRegistry::default();
    let out = scratch("ramp");
    let mut runner = Runner::start(&scenario, &file, &registry, 2, &out).unwrap();
    runner.run(None, &mut |_| {}).unwrap();
    let s = summary(&out);
    let v = mean_velocity(&out);
    // At rest before the ramp: the bed stopped at 20°.
    let before = v.iter().rev().find(|p| p.0 <= 0.6).unwrap().1;
    let start = s["theta_start_deg"]
        .as_f64()
        .expect("the bed started to flow");
    let when = s["flow_start_time_s"].as_f64().unwrap();
    assert!(before.abs() < 0.005, "{before} m/s at 20° before the ramp");
    // The incline at the start is the ramp's at that time, past where the bed stopped.
    assert!((start - (20.0 + 25.0 * (when - 0.6)).min(40.0)).abs() < 1e-9);
    assert!(start > 20.0 && start < 40.0, "θ_start = {start}°");
    // It flows from then on: the mean velocity at the end well above the threshold.
    assert!(v.last().unwrap().1 > 0.05, "{:?}", v.last());
    // The ramp is a function of time: gravity in the last step is the incline's at its
    // start.
    let world = &runner.exp.world;
    let (g, last) = (world.params().gravity, world.time() - world.params().dt);
    let expected = (20.0 + 25.0 * (last - 0.6)).min(40.0);
    assert!(
        (g.x.atan2(-g.z).to_degrees() - expected).abs() < 1e-9,
        "{g}"
    );
    let _ = std::fs::remove_dir_all(out);
}

#[test]
fn periodic_axes_and_inclines_that_cannot_work_are_refused() {
    let errors = |overrides: &[&str]| -> Vec<String> {
        let (file, scenario) = chute(overrides);
        validate(&scenario, &file)
            .iter()
            .map(ToString::to_string)
            .collect()
    };
    let has = |overrides: &[&str], field: &str, words: &str| {
        let e = errors(overrides);
        assert!(
            e.iter().any(|m| m.contains(field) && m.contains(words)),
            "{overrides:?}: {e:?}"
        );
    };
    assert!(errors(&[]).is_empty(), "{:?}", errors(&[]));
    has(
        &["periodic.x=(0.05, 0.0)"],
        "periodic.x",
        "upper above the lower",
    );
    has(
        &["periodic.y=(0.0, 0.01)"],
        "periodic.y",
        "twice the largest grain",
    );
    has(&["periodic.z=(0.0, 1.0)"], "periodic.z", "gravity");
    has(&["periodic.x=None"], "periodic", "periodic axes x");
    has(&["incline_deg=90"], "incline_deg", "below 90°");
    has(
        &["gravity=(1.0, 0.0, -9.81)"],
        "gravity",
        "vertical gravity",
    );
    has(
        &["incline_ramp=(0.5, 10.0, 30.0)"],
        "incline_ramp.to_deg",
        "steeper than incline_deg",
    );
    has(
        &["incline_ramp=(0.5, -1.0, 40.0)"],
        "incline_ramp.rate_deg_per_s",
        "",
    );
    // A side wall across the periodic y axis.
    let (file, mut scenario) = chute(&[]);
    scenario.walls.push(talus_scenario::schema::WallSpec {
        name: "side".into(),
        shape: talus_scenario::schema::WallShape::Plane {
            point: (0.0, 0.0, 0.0),
            normal: (0.0, 1.0, 0.0),
        },
        motion: Default::default(),
        removed_at: None,
        material: None,
    });
    let e: Vec<String> = validate(&scenario, &file)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert!(
        e.iter()
            .any(|m| m.contains("walls[1].shape.normal") && m.contains("periodic axis y")),
        "{e:?}"
    );
}
