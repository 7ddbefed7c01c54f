//! A contact force model defined outside talus, registered by name and used in a run.
//!
//! The model is a plain Hooke spring on the mean overlap depth δ = V/A (overlap volume over
//! contact area), `F = k δ n`, with no damping and no friction. It is registered in a
//! [`ForceModelRegistry`] beside the built-in models, built from named coefficients exactly
//! as a scenario file would, and drives a small pile of grains dropped on a floor.
//!
//! Run with `cargo run --release --example custom_force_model`.

use std::collections::BTreeMap;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use talus::geom::{Pose, generate};
use talus::glam::DVec3;
use talus::sim::force::{
    CoefficientSpec, Coefficients, ContactInput, ContactLoad, ForceModel, ForceModelRegistry,
    Mixing, ModelEntry,
};
use talus::sim::material::Material;
use talus::sim::wall::{Motion, Wall, WallGeometry};
use talus::sim::{GrainDesc, SimParams, World};

/// `F = (k V A − c v_n) n`.
struct QuadraticVolume {
    stiffness: f64,
    damping: f64,
}

impl ForceModel for QuadraticVolume {
    fn name(&self) -> &str {
        "quadratic_volume"
    }

    fn history_len(&self) -> usize {
        0
    }

    fn load(&self, contact: &ContactInput, _history: &mut [f64]) -> ContactLoad {
        let o = &contact.overlap;
        ContactLoad::from_force(
            o.normal
                * (self.stiffness * o.volume * o.area - self.damping * contact.normal_velocity()),
        )
    }

    fn normal_stiffness(&self, area: f64, _length: f64) -> f64 {
        // dF/dδ = k A dV/dδ = k A².
        self.stiffness * area * area
    }
}

const COEFFICIENTS: &[CoefficientSpec] = &[
    CoefficientSpec {
        name: "stiffness",
        unit: "N/m⁵",
        default: None,
        allowed: "a finite number > 0",
        check: |k| k.is_finite() && k > 0.0,
        doc: "k in the energy w = k V²/2",
        mixing: Mixing::Harmonic,
    },
    CoefficientSpec {
        name: "damping",
        unit: "N s/m",
        default: Some(0.0),
        allowed: "a finite number ≥ 0",
        check: |c| c.is_finite() && c >= 0.0,
        doc: "dashpot c in F = k V S − c v_n n",
        mixing: Mixing::Geometric,
    },
];

fn build(c: &BTreeMap<&'static str, f64>) -> Box<dyn ForceModel> {
    Box::new(QuadraticVolume {
        stiffness: c["stiffness"],
        damping: c["damping"],
    })
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut registry = ForceModelRegistry::default();
    registry.register(ModelEntry {
        name: "quadratic_volume",
        description: "Feng's law with the energy k V²/2 and a dashpot",
        coefficients: COEFFICIENTS,
        history: &[],
        build,
    })?;
    let names: Vec<&str> = registry.entries().map(|e| e.name).collect();
    println!("registered force models: {}", names.join(", "));

    let mut world = World::new(SimParams {
        dt: 4e-6,
        ..SimParams::default()
    })?;
    let model = registry.build(
        "quadratic_volume",
        &Coefficients::from([("stiffness", 1e14), ("damping", 1.0)]),
    )?;
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let grain = generate::ellipsoid_grain(18, DVec3::new(0.005, 0.004, 0.003), &mut rng)?;
    let shape = world.add_shape("grain", &grain, None)?;
    let sand = world.add_material(Material::new("sand", 2650.0)?)?;
    world.set_force_model(model)?;
    world.add_wall(Wall::new(
        "floor",
        WallGeometry::HalfSpace { normal: DVec3::Z },
        Pose::IDENTITY,
        Motion::Fixed,
        None,
    )?)?;
    for i in 0..8 {
        let position = DVec3::new(
            0.012 * (i % 2) as f64,
            0.012 * (i / 2 % 2) as f64,
            0.006 + 0.012 * (i / 4) as f64,
        );
        world.add_grain(GrainDesc::at_rest(shape, sand, position))?;
    }
    for _ in 0..250_000 {
        world.step();
    }
    let stats = world.stats();
    println!(
        "t = {:.2} s: {} contacts, coordination {:.2}",
        world.time(),
        stats.contacts,
        stats.coordination
    );
    for id in world.grains() {
        let s = world.grain(id)?;
        println!(
            "grain {:>2}: height {:.4} m, speed {:.2e} m/s",
            id.0,
            s.pose.position.z,
            s.velocity.length()
        );
    }
    Ok(())
}
