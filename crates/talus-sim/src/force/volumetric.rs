//! The `volumetric` model: normal force from the overlap volume (Matuttis–Chen).
//!
//! * Normal: `F_n = k V / ℓ` along the contact normal, with V the overlap volume and ℓ the
//!   pair's characteristic length; k has the units of a pressure (Pa). Its stiffness for a
//!   contact of area A is `K = k A / ℓ` (dV/dδ = A), as for an elastic block of modulus k
//!   and length ℓ.
//! * Damping: `−2 ζ √(K m*) v_n`, ζ from the restitution e (see [`super::damping_ratio`]),
//!   with K at the current contact area.
//! * Friction: a tangential spring of stiffness `k_t = r K`, capped at `μ F_n`
//!   (Cundall–Strack, [`super::TangentialSpring`]).
//!
//! All forces act at the overlap's centroid.

use super::friction::{TangentialSpring, damped_contact_force};
use super::{ContactInput, ContactLoad, ForceModel};

/// The `volumetric` model.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Volumetric {
    /// k, Pa.
    pub stiffness: f64,
    /// Coefficient of restitution e in (0, 1].
    pub restitution: f64,
    /// Friction.
    pub friction: TangentialSpring,
}

impl ForceModel for Volumetric {
    fn name(&self) -> &str {
        "volumetric"
    }

    fn history_len(&self) -> usize {
        3
    }

    fn load(&self, contact: &ContactInput, history: &mut [f64]) -> ContactLoad {
        let o = &contact.overlap;
        let stiffness = self.normal_stiffness(o.area, contact.length);
        let elastic = self.stiffness * o.volume / contact.length;
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
        self.stiffness * area / length
    }
}
