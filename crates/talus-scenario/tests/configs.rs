//! Every scenario shipped in configs/ passes `talus check`, every run of the validation
//! studies in docs/validation/studies/ does, and overrides reach the fields they name.

use std::path::{Path, PathBuf};

use talus_scenario::Runner;
use talus_scenario::check::{CheckReport, check};
use talus_scenario::load::{apply_overrides, parse, read, to_ron};
use talus_scenario::schema::{Integrator, Placement, Scenario};
use talus_scenario::sweep::grid::{Axis, assignments, points};
use talus_scenario::sweep::spec::read_sweep_file;
use talus_sim::force::ForceModelRegistry;

/// The `.ron` files in `folder` (relative to the workspace's root), sorted.
fn ron_files(folder: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(folder);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{folder}: {e}"))
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "ron"))
        .collect();
    files.sort();
    files
}

/// The report of `talus check` on `scenario` read from `file`; a panic naming `what` with
/// every error if it fails.
fn passes_check(
    scenario: &Scenario,
    file: &Path,
    registry: &ForceModelRegistry,
    what: &str,
) -> CheckReport {
    check(scenario, file, registry).unwrap_or_else(|errors| {
        let errors: Vec<String> = errors.iter().map(ToString::to_string).collect();
        panic!("{what}: {}", errors.join("; "))
    })
}

fn configs() -> Vec<PathBuf> {
    ron_files("configs")
}

#[test]
fn every_shipped_config_passes_check() {
    let files = configs();
    let names: Vec<String> = files
        .iter()
        .map(|f| f.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    for expected in [
        "angle_of_repose",
        "angle_of_repose_pour",
        "vibrating_box",
        "hopper",
        "hopper_pyramid",
        "rotating_drum",
        "max_stability_angle",
        "vibrating_conveyor",
        "shapes_pile",
    ] {
        assert!(
            names.iter().any(|n| n == expected),
            "configs/{expected}.ron is missing"
        );
    }
    let registry = ForceModelRegistry::default();
    for file in files {
        let scenario = read(&file).unwrap_or_else(|e| panic!("{e}"));
        let report = passes_check(&scenario, &file, &registry, &file.display().to_string());
        assert!(report.grains > 0);
        assert!(report.dt <= report.critical_dt);
        assert!(report.memory_bytes > 0);
        // The scenario survives a round trip through RON (as checkpoints store it).
        let text = to_ron(&scenario).unwrap();
        assert_eq!(parse(&text, &file).unwrap(), scenario, "{}", file.display());
    }
}

/// The studies `docs/validation/regenerate.sh` runs are sweep files whose every grid point,
/// the study's `set` and its varied values applied to the scenario it names, passes
/// `talus check` (a study broken by a change of a shipped file fails here, not hours into
/// the regeneration).
#[test]
fn every_run_of_every_validation_study_passes_check() {
    let files = ron_files("docs/validation/studies");
    assert!(
        files.iter().any(|f| f.ends_with("repose_scale.ron")),
        "{files:?}"
    );
    let registry = ForceModelRegistry::default();
    for file in files {
        let spec = read_sweep_file(&file)
            .unwrap_or_else(|e| panic!("{e}"))
            .unwrap_or_else(|| panic!("{}: not a sweep file", file.display()));
        let base = read(&spec.scenario).unwrap_or_else(|e| panic!("{e}"));
        let axes: Vec<Axis> = spec
            .vary
            .iter()
            .map(|v| Axis::parse(v).unwrap_or_else(|e| panic!("{}: {e}", file.display())))
            .collect();
        let grid = points(&axes, &[1]);
        assert!(!grid.is_empty(), "{}", file.display());
        for point in grid {
            let mut overrides = spec.set.clone();
            overrides.extend(assignments(&axes, &point));
            let scenario = apply_overrides(&base, &overrides)
                .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            let what = format!("{} {overrides:?}", file.display());
            let report = passes_check(&scenario, &spec.scenario, &registry, &what);
            assert!(report.dt <= report.critical_dt, "{}", file.display());
        }
    }
}

/// The critical step `talus check` gives `scenario` with `overrides`.
fn critical_step(scenario: &Scenario, file: &Path, overrides: &[String]) -> f64 {
    let registry = ForceModelRegistry::default();
    let probe = apply_overrides(scenario, overrides).unwrap();
    check(&probe, file, &registry)
        .unwrap_or_else(|e| panic!("{}: {e:?}", file.display()))
        .critical_dt
}

#[test]
fn gear_at_the_step_check_allows_does_not_blow_up_in_any_shipped_config() {
    let registry = ForceModelRegistry::default();
    for file in configs() {
        let scenario = read(&file).unwrap();
        // Gear's critical step, found with a step far below it; the step the file has is
        // refused with Gear, and allowed with Verlet.
        let gear = ["integrator=Gear".to_string(), "time.dt=1e-8".to_string()];
        let dt = critical_step(&scenario, &file, &gear);
        assert!(dt < scenario.time.dt, "{}", file.display());
        let refused = apply_overrides(&scenario, &gear[..1]).unwrap();
        assert!(check(&refused, &file, &registry).is_err());
        // The first 3000 steps at that step, with at most 120 grains of each population: the
        // grains settle or fall onto each other, the walls start to move.
        let mut overrides = vec![
            "integrator=Gear".to_string(),
            format!("time.dt={dt}"),
            format!("time.end={}", 3000.0 * dt),
            format!("time.output_interval={}", 500.0 * dt),
            "time.checkpoint_interval=None".to_string(),
            "time.stop_at_rest=None".to_string(),
            "outputs.frame_interval=None".to_string(),
            "outputs.plots=false".to_string(),
            "seeds=1".to_string(),
        ];
        for (p, population) in scenario.grains.iter().enumerate() {
            // A poured population: what is poured in the first half of the run.
            let count = match population.placement {
                Placement::Pour { rate, .. } => {
                    overrides.push(format!("grains[{p}].placement.start=0.0"));
                    ((rate * 1500.0 * dt) as usize).max(1)
                }
                _ => population.count.min(120),
            };
            overrides.push(format!("grains[{p}].count={count}"));
        }
        let short = apply_overrides(&scenario, &overrides).unwrap();
        let out = std::env::temp_dir().join(format!(
            "talus-gear-{}-{}",
            std::process::id(),
            file.file_stem().unwrap().to_string_lossy()
        ));
        let _ = std::fs::remove_dir_all(&out);
        let mut runner = Runner::start(&short, &file, &registry, 0, &out).unwrap();
        runner
            .run(None, &mut |_| {})
            .unwrap_or_else(|e| panic!("{} with Gear at dt = {dt}: {e}", file.display()));
        let summary: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap())
                .unwrap();
        // (A shortened run's measurement may find nothing to fit: "suspect" is fine, a
        // blow-up is not.)
        assert!(
            matches!(
                summary["status"].as_str(),
                Some("finished" | "at_rest" | "suspect")
            ),
            "{} with Gear at dt = {dt}: {} {}",
            file.display(),
            summary["status"],
            summary["warnings"]
        );
        assert!(summary["max_overlap_ratio"].as_f64().unwrap() < 0.25);
        let _ = std::fs::remove_dir_all(out);
    }
}

#[test]
fn overrides_set_the_named_fields() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs/hopper.ron");
    let scenario = read(&file).unwrap();
    let changed = apply_overrides(
        &scenario,
        &[
            "time.end=0.25".to_string(),
            "grains[0].count=100".to_string(),
            "grains.0.placement.gap=0.2".to_string(),
            "force_model.coefficients.friction=0.3".to_string(),
            "integrator=Verlet".to_string(),
            "time.dt=1e-5".to_string(),
        ],
    )
    .unwrap();
    assert_eq!(changed.time.end, 0.25);
    assert_eq!(changed.time.dt, 1e-5);
    assert_eq!(changed.grains[0].count, 100);
    assert_eq!(changed.force_model.coefficients["friction"], 0.3);
    assert_eq!(changed.integrator, Integrator::Verlet);
    match &changed.grains[0].placement {
        Placement::Lattice { gap, .. } => assert_eq!(*gap, Some(0.2)),
        other => panic!("unexpected placement {other:?}"),
    }
    // A coefficient the file leaves to its default can be set; whole numbers fit counts.
    let more = apply_overrides(
        &scenario,
        &[
            "force_model.coefficients.tangential_ratio=0.3".to_string(),
            "grains[0].count=1e3".to_string(),
        ],
    )
    .unwrap();
    assert_eq!(more.force_model.coefficients["tangential_ratio"], 0.3);
    assert_eq!(more.grains[0].count, 1000);
    let e = apply_overrides(&scenario, &["grains[0].count=many".to_string()]).unwrap_err();
    assert!(e.to_string().contains("grains[0].count"), "{e}");
    // Unknown paths and bad values are errors that name the assignment.
    for bad in [
        "time.ned=1",
        "grains[3].count=1",
        "time.end=abc(",
        "time.end",
        "grains[0].count=-1",
    ] {
        let e = apply_overrides(&scenario, &[bad.to_string()]).unwrap_err();
        let message = e.to_string();
        assert!(message.contains("--set"), "{message}");
    }
}
