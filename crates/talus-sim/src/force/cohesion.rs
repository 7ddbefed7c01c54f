//! Cohesion: attractions along the contact normal (the thesis' wet granular media, §5).
//!
//! * `capillary`: a pendular liquid bridge (Willett, Adams, Johnson & Seville, Langmuir 16
//!   (2000) 9396, eqs. 12–13): at a gap s,
//!   `F = 2π R γ cos θ / (1 + 2.1 Ŝ + 10 Ŝ²)`, `Ŝ = (s/2) √(R/V)`, for surface tension γ,
//!   contact angle θ and bridge volume V. R is the pair's characteristic length, the radius
//!   for two equal spheres and `2r` against a wall (the sphere–plate limit `4π r γ cos θ`).
//!   The bridge forms when the grains touch and ruptures at `s_c = (1 + θ/2) V^(1/3)` (Lian,
//!   Thornton & Adams, J. Colloid Interface Sci. 161 (1993) 138); grains that come within
//!   s_c without touching have none. The gap is exact: the distance of the closest features.
//!   Its history is whether the bridge stands.
//! * `area`: dry cohesion of a fine powder: an attraction `σ A` over the contact's area while
//!   the grains overlap.
//!
//! Both pull the grains together, spread evenly over the contact's area, without counting
//! towards the friction limits.

use std::f64::consts::PI;

use super::CoefficientSpec;
use super::ContactInput;
use super::part::{Part, PartEntry, Partial, Role};
use super::registry::{Mixing, non_negative, positive};

/// A pendular liquid bridge.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CapillaryBridge {
    /// Surface tension γ of the liquid (N/m).
    pub surface_tension: f64,
    /// Contact angle θ of the liquid on the grains (radians).
    pub contact_angle: f64,
    /// Volume V of liquid in one bridge (m³).
    pub liquid_volume: f64,
}

impl CapillaryBridge {
    /// The gap at which the bridge ruptures, `(1 + θ/2) V^(1/3)`.
    #[must_use]
    pub fn rupture_distance(&self) -> f64 {
        (1.0 + 0.5 * self.contact_angle) * self.liquid_volume.cbrt()
    }

    /// The bridge's pull between grains of characteristic length `radius` at `gap` (zero
    /// or negative when they touch).
    #[must_use]
    pub fn force(&self, radius: f64, gap: f64) -> f64 {
        let scaled = 0.5 * gap.max(0.0) * (radius / self.liquid_volume).sqrt();
        2.0 * PI * radius * self.surface_tension * self.contact_angle.cos()
            / (1.0 + 2.1 * scaled + 10.0 * scaled * scaled)
    }
}

impl Part for CapillaryBridge {
    fn role(&self) -> Role {
        Role::Cohesion
    }

    fn history_len(&self) -> usize {
        1
    }

    fn apply(&self, contact: &ContactInput, partial: &mut Partial, history: &mut [f64]) {
        if contact.gap <= 0.0 {
            history[0] = 1.0;
        } else if contact.gap > self.rupture_distance() {
            history[0] = 0.0;
        }
        if history[0] != 0.0 {
            pull(contact, partial, self.force(contact.length, contact.gap));
        }
    }

    fn range(&self) -> f64 {
        self.rupture_distance()
    }
}

/// Dry cohesion over the contact's area.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AreaCohesion {
    /// Tensile strength σ of the contact (Pa).
    pub pressure: f64,
}

impl Part for AreaCohesion {
    fn role(&self) -> Role {
        Role::Cohesion
    }

    fn apply(&self, contact: &ContactInput, partial: &mut Partial, _history: &mut [f64]) {
        pull(contact, partial, self.pressure * contact.overlap.area);
    }
}

/// Adds an attraction of `force` along the normal spread evenly over the contact's area: at
/// the overlap's centroid, with the couple of that tension over the contact surface. (All
/// at the centroid, which leans to the deeper side of a tilted contact, a pull would turn a
/// grain it holds further over.) Across a gap it acts at the middle of the closest points.
fn pull(contact: &ContactInput, partial: &mut Partial, force: f64) {
    partial.cohesion += force;
    if contact.overlap.area > 0.0 {
        partial.torque -= contact.overlap.area_moment * (force / contact.overlap.area);
    }
}

fn contact_angle(x: f64) -> bool {
    x.is_finite() && (0.0..=90.0).contains(&x)
}

/// The capillary bridge's registration.
pub(super) const CAPILLARY_ENTRY: PartEntry = PartEntry {
    role: Role::Cohesion,
    name: "capillary",
    description: "pendular liquid bridge (Willett et al. 2000): F = 2π R γ cos θ/(1 + 2.1 Ŝ + 10 Ŝ²) up to the rupture gap (1 + θ/2) V^(1/3)",
    coefficients: &[
        CoefficientSpec {
            name: "surface_tension",
            unit: "N/m",
            default: Some(0.072),
            allowed: "a finite number > 0",
            check: positive,
            doc: "surface tension γ of the liquid (water 0.072)",
            mixing: Mixing::Arithmetic,
        },
        CoefficientSpec {
            name: "contact_angle",
            unit: "deg",
            default: Some(0.0),
            allowed: "0 to 90 degrees",
            check: contact_angle,
            doc: "contact angle θ of the liquid on the grains",
            mixing: Mixing::Arithmetic,
        },
        CoefficientSpec {
            name: "liquid_volume",
            unit: "m³",
            default: None,
            allowed: "a finite number > 0",
            check: positive,
            doc: "volume V of liquid in one bridge",
            mixing: Mixing::Arithmetic,
        },
    ],
    history: &["bridge"],
    build: |c| {
        Box::new(CapillaryBridge {
            surface_tension: c["surface_tension"],
            contact_angle: c["contact_angle"].to_radians(),
            liquid_volume: c["liquid_volume"],
        })
    },
};

/// The area cohesion's registration.
pub(super) const AREA_ENTRY: PartEntry = PartEntry {
    role: Role::Cohesion,
    name: "area",
    description: "dry cohesion: an attraction σ A over the contact's area while the grains overlap",
    coefficients: &[CoefficientSpec {
        name: "pressure",
        unit: "Pa",
        default: None,
        allowed: "a finite number ≥ 0",
        check: non_negative,
        doc: "tensile strength σ of a contact, per area",
        mixing: Mixing::Geometric,
    }],
    history: &[],
    build: |c| {
        Box::new(AreaCohesion {
            pressure: c["pressure"],
        })
    },
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bridge_pulls_by_willetts_law_and_ruptures_at_lians_distance() {
        // Water between two 1 mm spheres, a bridge of a hundredth of a sphere's volume.
        let bridge = CapillaryBridge {
            surface_tension: 0.072,
            contact_angle: 0.0,
            liquid_volume: 0.01 * 4.0 / 3.0 * PI * 1e-9,
        };
        let touching = 2.0 * PI * 1e-3 * 0.072;
        assert!((bridge.force(1e-3, 0.0) - touching).abs() < 1e-15);
        // At Ŝ = 1/2: 1 + 1.05 + 2.5.
        let gap = 2.0 * 0.5 * (bridge.liquid_volume / 1e-3).sqrt();
        assert!((bridge.force(1e-3, gap) - touching / 4.55).abs() < 1e-15);
        assert!((bridge.rupture_distance() - bridge.liquid_volume.cbrt()).abs() < 1e-18);
    }
}
