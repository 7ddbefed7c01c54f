//! The `volumetric` law's normal part: normal force from the overlap volume (Matuttis–Chen);
//! the `volumetric` preset adds the restitution damping and the tangential spring.
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

use super::CoefficientSpec;
use super::ContactInput;
use super::part::PartEntry;
use super::part::{Part, Partial, Role};
use super::registry::{Mixing, positive};

/// The normal part of `volumetric`: `F_n = k V / ℓ`, stiffness `k A / ℓ`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VolumetricNormal {
    /// k, Pa.
    pub stiffness: f64,
}

impl Part for VolumetricNormal {
    fn role(&self) -> Role {
        Role::Normal
    }

    fn apply(&self, contact: &ContactInput, partial: &mut Partial, _history: &mut [f64]) {
        let o = &contact.overlap;
        partial.stiffness = self.stiffness * o.area / contact.length;
        partial.normal = self.stiffness * o.volume / contact.length;
    }

    fn normal_stiffness(&self, area: f64, length: f64) -> Option<f64> {
        Some(self.stiffness * area / length)
    }
}

/// `k` of `volumetric`.
pub(super) const STIFFNESS: CoefficientSpec = CoefficientSpec {
    name: "stiffness",
    unit: "Pa",
    default: None,
    allowed: "a finite number > 0",
    check: positive,
    doc: "k in F_n = k V / ℓ",
    mixing: Mixing::Harmonic,
};

/// The part's registration.
pub(super) const ENTRY: PartEntry = PartEntry {
    role: Role::Normal,
    name: "volumetric",
    description: "F_n = k V/ℓ (Matuttis–Chen): the overlap volume over the pair's length times a modulus",
    coefficients: &[STIFFNESS],
    history: &[],
    build: |c| {
        Box::new(VolumetricNormal {
            stiffness: c["stiffness"],
        })
    },
};
