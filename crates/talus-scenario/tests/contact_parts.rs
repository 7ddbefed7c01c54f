//! Contact laws composed of parts in a scenario: a law made of the parts of a built-in
//! preset runs to the same bits as the preset; the "none" damping and tangential parts are
//! the roles left out; part names and coefficients are checked like a model's.

use std::path::{Path, PathBuf};

use talus_scenario::Runner;
use talus_scenario::load::{apply_overrides, read};
use talus_scenario::schema::{ForceModelSpec, PartSpec, PartsSpec, Scenario};
use talus_sim::force::ForceModelRegistry;

/// The shortened pile of `configs/angle_of_repose.ron` with its force model changed by
/// `change`: its time series, or the error.
fn run(tag: &str, change: impl FnOnce(&mut ForceModelSpec)) -> Result<String, String> {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs/angle_of_repose.ron");
    let overrides: Vec<String> = [
        "grains[0].count=60",
        "time.end=0.04",
        "time.output_interval=0.002",
        "outputs.frame_interval=None",
        "outputs.plots=false",
        "seeds=1",
    ]
    .iter()
    .map(ToString::to_string)
    .collect();
    let mut scenario: Scenario =
        apply_overrides(&read(&file).map_err(|e| e.to_string())?, &overrides)
            .map_err(|e| e.to_string())?;
    change(&mut scenario.force_model);
    let out: PathBuf =
        std::env::temp_dir().join(format!("talus-parts-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let registry = ForceModelRegistry::default();
    let result = Runner::start(&scenario, &file, &registry, 0, &out)
        .and_then(|mut r| r.run(None, &mut |_| {}).map(|_| ()))
        .map_err(|e| e.to_string())
        .and_then(|()| {
            std::fs::read_to_string(out.join("timeseries.csv")).map_err(|e| e.to_string())
        });
    let _ = std::fs::remove_dir_all(&out);
    result
}

/// The file's `volumetric` coefficients given to the preset's parts instead.
fn as_parts(spec: &mut ForceModelSpec) {
    spec.name = "my_volumetric".into();
    let file = std::mem::take(&mut spec.coefficients);
    spec.parts = Some(PartsSpec {
        normal: PartSpec::new("volumetric", &[("stiffness", file["stiffness"])]),
        damping: Some(PartSpec::new(
            "restitution",
            &[("restitution", file["restitution"])],
        )),
        tangential: Some(PartSpec::new("spring", &[("friction", file["friction"])])),
        twisting: None,
        rolling: None,
        cohesion: None,
    });
}

#[test]
fn a_law_of_the_presets_parts_runs_to_the_same_bits() {
    let preset = run("preset", |spec| {
        assert_eq!(spec.name, "volumetric");
        assert_eq!(spec.coefficients.len(), 3);
    })
    .unwrap();
    let parts = run("parts", as_parts).unwrap();
    assert!(preset.lines().count() > 10);
    assert_eq!(preset, parts);
    // Without the tangential part it is another law.
    let frictionless = run("frictionless", |spec| {
        as_parts(spec);
        if let Some(p) = &mut spec.parts {
            p.tangential = None;
        }
    })
    .unwrap();
    assert_ne!(frictionless, preset);
}

#[test]
fn parts_are_checked_by_name_and_coefficient() {
    let e = run("unknown", |spec| {
        as_parts(spec);
        if let Some(p) = &mut spec.parts {
            p.normal = PartSpec::new("hertz", &[]);
        }
    })
    .unwrap_err();
    assert!(
        e.contains("unknown normal part 'hertz'") && e.contains("volumetric"),
        "{e}"
    );
    let e = run("coefficient", |spec| {
        as_parts(spec);
        if let Some(p) = &mut spec.parts {
            p.normal = PartSpec::new("volumetric", &[("stiffness", -1.0)]);
        }
    })
    .unwrap_err();
    assert!(e.contains("stiffness") && e.contains("> 0"), "{e}");
    // Coefficients beside parts are refused: each part takes its own.
    let e = run("beside", |spec| {
        as_parts(spec);
        spec.coefficients.insert("stiffness".into(), 5e5);
    })
    .unwrap_err();
    assert!(e.contains("force_model.coefficients"), "{e}");
}

#[test]
fn a_scenario_may_name_the_none_parts() {
    // Damping "none" and tangential "none" are the parts that add nothing: the law is the
    // one without those roles, step for step.
    let without = |spec: &mut ForceModelSpec| {
        as_parts(spec);
        if let Some(p) = &mut spec.parts {
            p.damping = None;
            p.tangential = None;
        }
    };
    let left_out = run("left-out", without).unwrap();
    let named = run("named-none", |spec| {
        without(spec);
        if let Some(p) = &mut spec.parts {
            p.damping = Some(PartSpec::new("none", &[]));
            p.tangential = Some(PartSpec::new("none", &[]));
        }
    })
    .unwrap();
    assert!(left_out.lines().count() > 10);
    assert_eq!(left_out, named);
    // They take no coefficients.
    let e = run("none-coefficient", |spec| {
        without(spec);
        if let Some(p) = &mut spec.parts {
            p.damping = Some(PartSpec::new("none", &[("restitution", 0.5)]));
        }
    })
    .unwrap_err();
    assert!(e.contains("restitution") && e.contains("none"), "{e}");
}

#[test]
fn a_rolling_spring_stiffer_than_the_normal_one_lowers_the_critical_step() {
    // A common rolling friction leaves the file's step alone; μ_r = 5 makes the rolling
    // spring, 2.25 μ_r² R*² K, stiffer than the normal one by far, and the file's step is
    // refused, naming it.
    let with_rolling = |friction: f64| {
        move |spec: &mut ForceModelSpec| {
            as_parts(spec);
            if let Some(p) = &mut spec.parts {
                p.rolling = Some(PartSpec::new("epsd", &[("rolling_friction", friction)]));
            }
        }
    };
    run("rolling-common", with_rolling(0.1)).unwrap();
    let e = run("rolling-stiff", with_rolling(5.0)).unwrap_err();
    assert!(
        e.contains("time.dt") && e.contains("rolling spring") && e.contains("dt ≤"),
        "{e}"
    );
}
