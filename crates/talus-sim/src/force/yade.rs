//! The parts of the `volumetric_yade` preset: Yade's `Law2_PolyhedraGeom_PolyhedraPhys_Volumetric`.
//!
//! * Normal: `F_n = k_n V` along the contact normal (k_n in N/m³; Yade derives it from the
//!   two materials' "young" values in series, `k_n = Y_a Y_b / (Y_a + Y_b)`).
//! * Shear: incremental, `F_s ← rotate(F_s) − k_s Δu_s` with Δu_s the tangential relative
//!   displacement of the step; the previous shear force is first turned into the new
//!   tangent plane. Capped at `tan φ |F_n|`.
//! * No contact damping: Yade relies on global (numerical) damping instead.
//!
//! The shear force is the shear part's history (3 values). Forces act at the overlap's
//! centroid.

use talus_geom::glam::DVec3;

use super::CoefficientSpec;
use super::ContactInput;
use super::part::PartEntry;
use super::part::{Part, Partial, Role, Spring};
use super::registry::{Mixing, positive};

/// The normal part of `volumetric_yade`: `F_n = k_n V`, stiffness `k_n A`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct YadeNormal {
    /// k_n, N/m³.
    pub stiffness: f64,
}

impl Part for YadeNormal {
    fn role(&self) -> Role {
        Role::Normal
    }

    fn apply(&self, contact: &ContactInput, partial: &mut Partial, _history: &mut [f64]) {
        let o = &contact.overlap;
        partial.stiffness = self.stiffness * o.area;
        partial.normal = self.stiffness * o.volume;
    }

    fn normal_stiffness(&self, area: f64, _length: f64) -> Option<f64> {
        // dF/dδ = k_n dV/dδ = k_n A.
        Some(self.stiffness * area)
    }
}

/// Yade's incremental shear: the last shear force turned into the new tangent plane, less
/// `k_s v_t dt`, capped at `tan φ F_n`. Its history is the shear force.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct YadeShear {
    /// k_s, N/m³ (per unit overlap volume, as k_n; Yade: young · poisson in series).
    pub stiffness: f64,
    /// tan φ.
    pub friction: f64,
}

impl Part for YadeShear {
    fn role(&self) -> Role {
        Role::Tangential
    }

    fn history_len(&self) -> usize {
        3
    }

    fn apply(&self, contact: &ContactInput, partial: &mut Partial, history: &mut [f64]) {
        let o = &contact.overlap;
        let mut shear = DVec3::new(history[0], history[1], history[2]);
        if contact.new_contact {
            shear = DVec3::ZERO;
        }
        // Turn the old shear force into the new tangent plane, keeping its length.
        let length = shear.length();
        shear = (shear - o.normal * shear.dot(o.normal))
            .try_normalize()
            .map_or(DVec3::ZERO, |d| d * length);
        shear -= self.stiffness * contact.tangential_velocity() * contact.dt;
        let limit = self.friction * partial.normal;
        if shear.length() > limit {
            shear *= if shear.length() > 0.0 {
                limit / shear.length()
            } else {
                0.0
            };
        }
        history[..3].copy_from_slice(&shear.to_array());
        partial.tangential = shear;
    }

    fn spring(&self, _normal: f64, _area: f64, _length: f64) -> Option<Spring> {
        // The force grows by k_s per displacement whatever the contact's size.
        Some(Spring::Force(self.stiffness))
    }
}

/// `k_n` of Yade's law.
pub(super) const KN: CoefficientSpec = CoefficientSpec {
    name: "kn",
    unit: "N/m³",
    default: None,
    allowed: "a finite number > 0",
    check: positive,
    doc: "normal stiffness per overlap volume, F_n = k_n V",
    mixing: Mixing::Harmonic,
};

/// `k_s` of Yade's law.
pub(super) const KS: CoefficientSpec = CoefficientSpec {
    name: "ks",
    unit: "N/m³",
    default: None,
    allowed: "a finite number > 0",
    check: positive,
    doc: "shear stiffness, ΔF_s = −k_s Δu_s",
    mixing: Mixing::Harmonic,
};

/// φ of Yade's law.
pub(super) const FRICTION_ANGLE: CoefficientSpec = CoefficientSpec {
    name: "friction_angle",
    unit: "rad",
    default: Some(0.5),
    allowed: "an angle in [0, π/2)",
    check: |x| x.is_finite() && (0.0..std::f64::consts::FRAC_PI_2).contains(&x),
    doc: "friction angle φ; shear capped at tan φ F_n",
    mixing: Mixing::Arithmetic,
};

/// The normal part's registration.
pub(super) const NORMAL_ENTRY: PartEntry = PartEntry {
    role: Role::Normal,
    name: "yade",
    description: "Yade's F_n = k_n V",
    coefficients: &[KN],
    history: &[],
    build: |c| Box::new(YadeNormal { stiffness: c["kn"] }),
};

/// The shear part's registration.
pub(super) const SHEAR_ENTRY: PartEntry = PartEntry {
    role: Role::Tangential,
    name: "yade_shear",
    description: "Yade's incremental shear force, capped at tan φ F_n",
    coefficients: &[KS, FRICTION_ANGLE],
    history: &["shear_x", "shear_y", "shear_z"],
    build: |c| {
        Box::new(YadeShear {
            stiffness: c["ks"],
            friction: c["friction_angle"].tan(),
        })
    },
};
