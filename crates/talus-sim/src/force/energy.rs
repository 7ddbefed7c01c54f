//! The `energy_conserving` model: Feng's potential-based contact theory.
//!
//! With an energy `w(V)` stored in the overlap volume, the normal force that conserves
//! energy for any shape is `F = w'(V) S`, S the vector area of the overlap's surface
//! (design §3; here the `area · normal` of [`talus_geom::Overlap`]). For `w = k V` this is
//! `F = k S`: a pressure k acting on the projected contact area. With `exponent` p the energy
//! is `w = k ℓ^{1−p} V^p / p`, giving `F = k (V/ℓ)^{p−1} S` (p = 1 the plain law; p = 2 a
//! force growing with the overlap even at a constant contact area, as for two flat faces).
//! The pressure acts on the whole contact surface: the force at the overlap's centroid, and
//! the couple `w'(V) ∫ (x − c) × dS` of that pressure about it, without which a turning
//! contact would gain or lose energy.
//! Friction is the tangential spring of [`super::TangentialSpring`]. A restitution below 1
//! (and then, of course, energy is not conserved) unloads the contact at e² of its force
//! ([`super::UnloadingDamping`]), not through `volumetric`'s dashpot: that dashpot is sized
//! for a linear spring, and a flat contact's force `k A` here does not grow with the depth,
//! so that a dashpot would take a share of the energy that depends on the impact speed.

use super::CoefficientSpec;
use super::ContactInput;
use super::part::PartEntry;
use super::part::{Part, Partial, Role};
use super::registry::{Mixing, at_least_one};

/// The normal part of `energy_conserving`: `F = k (V/ℓ)^(p−1) S`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FengNormal {
    /// k, Pa.
    pub stiffness: f64,
    /// Exponent p ≥ 1 of the energy's dependence on the overlap volume.
    pub exponent: f64,
}

impl Part for FengNormal {
    fn role(&self) -> Role {
        Role::Normal
    }

    fn apply(&self, contact: &ContactInput, partial: &mut Partial, _history: &mut [f64]) {
        let o = &contact.overlap;
        let scale = if self.exponent == 1.0 {
            1.0
        } else {
            (o.volume / contact.length).powf(self.exponent - 1.0)
        };
        // A pressure w'(V) on the contact surface: the force at the centroid and the couple
        // of the pressure over the surface, the torque that conserves energy as the grains
        // turn.
        let pressure = self.stiffness * scale;
        partial.normal = pressure * o.area;
        partial.torque += o.area_moment * pressure;
        partial.stiffness = self.stiffness * o.area / contact.length;
    }

    fn normal_stiffness(&self, area: f64, length: f64) -> Option<f64> {
        Some(self.stiffness * area / length)
    }
}

/// `k` of Feng's law: a pressure, as `volumetric`'s.
pub(super) const STIFFNESS: CoefficientSpec = CoefficientSpec {
    doc: "k in F = k (V/ℓ)^(p−1) S",
    ..super::volumetric::STIFFNESS
};

/// `p` of Feng's law.
pub(super) const EXPONENT: CoefficientSpec = CoefficientSpec {
    name: "exponent",
    unit: "1",
    default: Some(1.0),
    allowed: "a finite number ≥ 1",
    check: at_least_one,
    doc: "p in the energy w = k ℓ^(1−p) V^p / p",
    mixing: Mixing::Arithmetic,
};

/// The part's registration.
pub(super) const ENTRY: PartEntry = PartEntry {
    role: Role::Normal,
    name: "feng",
    description: "Feng's potential-based F = w'(V) S: a pressure on the projected contact area",
    coefficients: &[STIFFNESS, EXPONENT],
    history: &[],
    build: |c| {
        Box::new(FengNormal {
            stiffness: c["stiffness"],
            exponent: c["exponent"],
        })
    },
};
