//! A part of a contact law defined outside talus, registered by role and name and used in a
//! scenario beside the built-in damping, tangential, twisting and rolling parts.
//!
//! The part is a Hertz-like normal law on the overlap's equivalent depth δ = V/A (overlap
//! volume over contact area): `F_n = k δ^(3/2)`, stiffness `dF/dδ = (3/2) k δ^(1/2)`. The
//! scenario is `configs/angle_of_repose.ron` with a smaller pile and its force model replaced
//! by a law of parts: this normal part, the restitution damping, the Cundall–Strack spring,
//! the twisting spring and the rolling resistance.
//!
//! Run with `cargo run --release --example custom_part`.

use std::collections::BTreeMap;
use std::path::Path;

use talus::scenario::Runner;
use talus::scenario::load::{apply_overrides, read};
use talus::scenario::schema::{PartSpec, PartsSpec};
use talus::sim::force::{
    CoefficientSpec, ContactInput, ForceModelRegistry, Mixing, Part, PartEntry, Partial, Role,
};

/// `F_n = k δ^(3/2)` on the equivalent depth δ = V/A.
struct HertzDepth {
    stiffness: f64,
}

/// The deepest contact the critical time step allows for, in characteristic lengths:
/// beyond a tenth the volumetric picture of a contact no longer holds anyway.
const DEEPEST: f64 = 0.1;

impl Part for HertzDepth {
    fn role(&self) -> Role {
        Role::Normal
    }

    fn apply(&self, contact: &ContactInput, partial: &mut Partial, _history: &mut [f64]) {
        let o = &contact.overlap;
        let depth = if o.area > 0.0 { o.volume / o.area } else { 0.0 };
        partial.normal = self.stiffness * depth.powf(1.5);
        partial.stiffness = 1.5 * self.stiffness * depth.sqrt();
    }

    fn normal_stiffness(&self, _area: f64, length: f64) -> Option<f64> {
        // The stiffness grows with the depth: take it at the deepest contact allowed.
        Some(1.5 * self.stiffness * (DEEPEST * length).sqrt())
    }
}

const COEFFICIENTS: &[CoefficientSpec] = &[CoefficientSpec {
    name: "stiffness",
    unit: "N/m^1.5",
    default: None,
    allowed: "a finite number > 0",
    check: |k| k.is_finite() && k > 0.0,
    doc: "k in F_n = k δ^(3/2), δ = V/A",
    mixing: Mixing::Harmonic,
}];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut registry = ForceModelRegistry::default();
    registry.register_part(PartEntry {
        role: Role::Normal,
        name: "hertz_depth",
        description: "F_n = k δ^(3/2) on the equivalent depth δ = V/A",
        coefficients: COEFFICIENTS,
        history: &[],
        build: |c| {
            Box::new(HertzDepth {
                stiffness: c["stiffness"],
            })
        },
    })?;
    for entry in registry.part_entries() {
        println!(
            "{} part {}: {}",
            entry.role.name(),
            entry.name,
            entry.description
        );
    }

    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/angle_of_repose.ron");
    let overrides: Vec<String> = [
        "grains[0].count=100",
        "time.end=0.3",
        "outputs.frame_interval=None",
        "outputs.plots=false",
    ]
    .iter()
    .map(ToString::to_string)
    .collect();
    let mut scenario = apply_overrides(&read(&file)?, &overrides)?;
    scenario.force_model.name = "hertz_twisting_rolling".into();
    scenario.force_model.coefficients = BTreeMap::new();
    scenario.force_model.parts = Some(PartsSpec {
        normal: PartSpec::new("hertz_depth", &[("stiffness", 5e5)]),
        damping: Some(PartSpec::new("restitution", &[("restitution", 0.3)])),
        tangential: Some(PartSpec::new("spring", &[("friction", 0.6)])),
        twisting: Some(PartSpec::new("spring", &[("friction", 0.6)])),
        rolling: Some(PartSpec::new("epsd", &[("rolling_friction", 0.1)])),
        cohesion: None,
    });
    let out = std::env::temp_dir().join("talus-custom-part");
    let _ = std::fs::remove_dir_all(&out);
    let mut run = Runner::start(&scenario, &file, &registry, 0, &out)?;
    run.run(None, &mut |_| {})?;
    // A short run: the grains fall and meet; the pile itself needs the full scenario.
    let world = &run.exp.world;
    let stats = world.stats();
    println!(
        "t = {:.2} s, {} steps: {} contacts, coordination {:.2}, deepest overlap {:.2} % of a grain",
        world.time(),
        world.steps(),
        stats.contacts,
        stats.coordination,
        100.0 * stats.max_overlap_ratio
    );
    Ok(())
}
