//! A pile of wet grains stands steeper than the same pile dry: the shortened column of
//! `configs/angle_of_repose.ron`, its law made of the `volumetric` preset's parts, slumped
//! with and without liquid bridges between the grains.

use std::path::Path;

use serde_json::Value;
use talus_scenario::Runner;
use talus_scenario::load::{apply_overrides, read};
use talus_scenario::schema::{PartSpec, PartsSpec};
use talus_sim::force::ForceModelRegistry;

mod common;

use common::SHORT_PILE;

/// The slope of the shortened pile once settled, `atan(H/L)` for its height H and its
/// runout L from the back wall (a wet pile may stand as a cliff that no surface fit
/// describes), with a liquid bridge of surface tension `gamma` (N/m) if given.
fn pile(tag: &str, gamma: Option<f64>) -> f64 {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs/angle_of_repose.ron");
    let overrides: Vec<String> = SHORT_PILE
        .iter()
        .chain(&[
            "outputs.frame_interval=None",
            "outputs.plots=false",
            "seeds=1",
        ])
        .map(ToString::to_string)
        .collect();
    let mut scenario = apply_overrides(&read(&file).unwrap(), &overrides).unwrap();
    scenario.force_model.name = "wet".into();
    scenario.force_model.coefficients.clear();
    scenario.force_model.parts = Some(PartsSpec {
        normal: PartSpec::new("volumetric", &[("stiffness", 5e5)]),
        damping: Some(PartSpec::new("restitution", &[("restitution", 0.3)])),
        tangential: Some(PartSpec::new("spring", &[("friction", 0.6)])),
        twisting: None,
        rolling: None,
        // A bridge of 1 % of a grain's volume (3·10⁻⁹ m³, rupture at 1.4 mm); at contact
        // it pulls 2π r γ, for γ = 0.5 N/m about 1.7 times a grain's weight (a granular Bond
        // number of 1.7: water on 2 mm grains).
        cohesion: gamma.map(|g| {
            PartSpec::new(
                "capillary",
                &[("surface_tension", g), ("liquid_volume", 3e-9)],
            )
        }),
    });
    let out = std::env::temp_dir().join(format!("talus-wet-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let registry = ForceModelRegistry::default();
    let mut runner = Runner::start(&scenario, &file, &registry, 0, &out).unwrap();
    runner.run(None, &mut |_| {}).unwrap();
    let summary: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let _ = std::fs::remove_dir_all(&out);
    // Settled, nothing blew up (a cliff may leave the surface fit without an answer).
    assert!(
        matches!(
            summary["status"].as_str(),
            Some("finished" | "at_rest" | "suspect")
        ) && summary["final_kinetic_energy"].as_f64().unwrap() < 1e-4,
        "{tag}: {} {}",
        summary["status"],
        summary["warnings"]
    );
    let world = &runner.exp.world;
    let (height, runout) = world
        .grains()
        .map(|id| world.grain(id).unwrap().pose.position)
        .fold((0.0f64, 0.0f64), |(h, l), p| (h.max(p.z), l.max(p.x)));
    (height / runout).atan().to_degrees()
}

#[test]
fn a_wet_pile_stands_steeper_than_a_dry_one() {
    let dry = pile("dry", None);
    let wet = pile("wet", Some(0.5));
    eprintln!("slope: dry {dry:.1}°, wet {wet:.1}°");
    assert!(wet > dry + 5.0, "wet {wet}° against dry {dry}°");
}
