//! Every scenario shipped in configs/ passes `talus check`, and overrides reach the fields
//! they name.

use std::path::{Path, PathBuf};

use talus_scenario::check::check;
use talus_scenario::load::{apply_overrides, parse, read, to_ron};
use talus_scenario::schema::{Integrator, Placement};
use talus_sim::force::ForceModelRegistry;

fn configs() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("configs/ exists")
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "ron"))
        .collect();
    files.sort();
    files
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
    ] {
        assert!(
            names.iter().any(|n| n == expected),
            "configs/{expected}.ron is missing"
        );
    }
    let registry = ForceModelRegistry::default();
    for file in files {
        let scenario = read(&file).unwrap_or_else(|e| panic!("{e}"));
        let report = check(&scenario, &file, &registry).unwrap_or_else(|errors| {
            panic!(
                "{}: {}",
                file.display(),
                errors
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join("; ")
            )
        });
        assert!(report.grains > 0);
        assert!(report.dt <= report.critical_dt);
        assert!(report.memory_bytes > 0);
        // The scenario survives a round trip through RON (as checkpoints store it).
        let text = to_ron(&scenario).unwrap();
        assert_eq!(parse(&text, &file).unwrap(), scenario, "{}", file.display());
    }
}

#[test]
fn check_warns_about_gear_near_the_critical_step() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs/angle_of_repose.ron");
    let registry = ForceModelRegistry::default();
    let clean = check(&read(&file).unwrap(), &file, &registry).unwrap();
    assert!(clean.warnings.is_empty(), "{:?}", clean.warnings);
    let gear = apply_overrides(&read(&file).unwrap(), &["integrator=Gear".to_string()]).unwrap();
    let report = check(&gear, &file, &registry).unwrap();
    assert!(
        report.warnings.iter().any(|w| w.contains("Gear")),
        "{:?}",
        report.warnings
    );
    let halved =
        apply_overrides(&gear, &[format!("time.dt={}", 0.45 * report.critical_dt)]).unwrap();
    let report = check(&halved, &file, &registry).unwrap();
    assert!(!report.warnings.iter().any(|w| w.contains("Gear")));
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
