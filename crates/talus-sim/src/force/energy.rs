//! The `energy_conserving` model: Feng's potential-based contact theory.
//!
//! With an energy `w(V)` stored in the overlap volume, the normal force that conserves
//! energy for any shape is `F = w'(V) S`, S the vector area of the overlap's surface
//! (design §3; here the `area · normal` of [`talus_geom::Overlap`]). For `w = k V` this is
//! `F = k S`: a pressure k acting on the projected contact area. With `exponent` p the energy
//! is `w = k ℓ^{1−p} V^p / p`, giving `F = k (V/ℓ)^{p−1} S` (p = 1 the plain law; p = 2 a
//! force growing with the overlap even at a constant contact area, as for two flat faces).
//! Friction is the tangential spring of [`super::TangentialSpring`]; optional damping from a
//! restitution below 1 as in `volumetric` (and then, of course, energy is not conserved).

use super::friction::{TangentialSpring, damped_contact_force};
use super::{ContactInput, ContactLoad, ForceModel};

/// The `energy_conserving` model.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EnergyConserving {
    /// k, Pa.
    pub stiffness: f64,
    /// Exponent p ≥ 1 of the energy's dependence on the overlap volume.
    pub exponent: f64,
    /// Coefficient of restitution e in (0, 1]; 1 for none.
    pub restitution: f64,
    /// Friction.
    pub friction: TangentialSpring,
}

impl ForceModel for EnergyConserving {
    fn name(&self) -> &str {
        "energy_conserving"
    }

    fn history_len(&self) -> usize {
        3
    }

    fn load(&self, contact: &ContactInput, history: &mut [f64]) -> ContactLoad {
        let o = &contact.overlap;
        let scale = if self.exponent == 1.0 {
            1.0
        } else {
            (o.volume / contact.length).powf(self.exponent - 1.0)
        };
        let elastic = self.stiffness * scale * o.area;
        let stiffness = self.normal_stiffness(o.area, contact.length);
        ContactLoad::from_force(damped_contact_force(
            contact,
            history,
            elastic,
            stiffness,
            self.restitution,
            &self.friction,
        ))
    }

    fn normal_stiffness(&self, area: f64, length: f64) -> f64 {
        // The pressure k over an area growing across a depth of order ℓ: k A / ℓ.
        self.stiffness * area / length
    }
}
