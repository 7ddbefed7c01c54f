//! The kinds of grain and the critical time step: what the stable step of a grain rests on
//! (its mass, its largest radius, its equivalent-sphere radius, how easily a contact force
//! turns it), computed once per kind of grain (shape and material), never per step, and the
//! one place the rule is written.
//!
//! # The rule
//!
//! For a law with normal stiffness `K(A, ℓ)` (contact area A, characteristic length ℓ) and a
//! dashpot of damping ratio ζ, a kind of grain of mass m, bounding radius R, equivalent
//! radius r and least principal moment of inertia I:
//!
//! 1. *One contact.* Two such grains meeting at the largest area a contact can have, the
//!    cross-section `πR²`, make an oscillator `ω₁ = √(K₁/m*)`, `K₁ = K(πR², r)`, `m* = m/2`.
//!    A collision lasts `π/ω₁`; the step resolves it in at least ten steps:
//!    `dt ≤ 0.1 π/ω₁` (accuracy, design §5).
//! 2. *Turning.* A contact force off the line through the centre of mass also turns the
//!    grain: along the force it meets the inverse mass `w = 1/m + L²/I` for a moment arm L,
//!    not `1/m`. The volumetric laws press over the overlap's area, so a contact resists a
//!    turn as an elastic foundation does: a patch of area A resists with moment arm its
//!    radius of gyration (a cube rocking on a face rocks at `ω² = K/(2m)`, half the bounce's
//!    `K/m`), and a patch far from the line is small. The rule takes the largest patch, the
//!    cross-section `πR²`, whose radius of gyration about a diameter is `R/2`:
//!    `w = 1/m + R²/(4 I)`.
//! 3. *Several contacts.* The stiffness seen by the grains is `Σ_c K_c u_c u_cᵀ`, u_c the
//!    contact's direction in mass-weighted coordinates (`|u_c|² ≤ w` on each of its two
//!    grains). Bounding the coupling to the neighbours, `(a + b)(a + b)ᵀ ≤ 2(a aᵀ + b bᵀ)`,
//!    leaves one block per grain, and the highest frequency is at most
//!    `ω_max² = 2 w Σ_c K_c`. For laws whose stiffness grows with the area, the contacts of
//!    one grain, projected on any direction, cover at most twice its largest cross-section
//!    (once from each side): `Σ_c K_c ≤ K(2πR², r)`. A chain of equal masses and springs
//!    reaches the bound exactly (`ω_max = 2 √(K/m)`).
//! 4. *Damping.* Each dashpot is `2ζ √(K_c m*)`, so damping grows with stiffness and the
//!    fastest mode is damped more than one contact: `ζ_max = ζ ω_max/ω₁` (exact for the
//!    chain).
//! 5. *The integrator.* The scheme is stable for `ω dt` below its limit at that damping
//!    ([`IntegratorKind::damped_stability_limit`]: about 2 for velocity Verlet, 0.31 for the
//!    Gear predictor–corrector undamped and as little as `0.08/ζ` damped):
//!    `dt ≤ λ(ζ_max)/ω_max` (stability).
//!
//! The critical step is the smaller of the two.

use std::f64::consts::PI;

use crate::force::ForceModel;
use crate::integrate::IntegratorKind;
use crate::shape::Shape;

/// What the critical time step of a kind of grain (a shape of a material) rests on.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct GrainKind {
    /// Mass.
    pub mass: f64,
    /// Largest distance from the centre of mass to the surface.
    pub radius: f64,
    /// Radius of the sphere of equal volume.
    pub length: f64,
    /// The inverse mass a contact force meets, turning included: `1/m + R²/(4 I_min)`.
    pub inverse_mass: f64,
}

impl GrainKind {
    /// Whether two kinds are the same to the last bit.
    pub(crate) fn same(&self, other: &GrainKind) -> bool {
        [self.mass, self.radius, self.length, self.inverse_mass]
            .iter()
            .zip([other.mass, other.radius, other.length, other.inverse_mass])
            .all(|(a, b)| a.to_bits() == b.to_bits())
    }

    /// Whether every quantity is positive and finite.
    pub(crate) fn is_valid(&self) -> bool {
        [self.mass, self.radius, self.length, self.inverse_mass]
            .iter()
            .all(|x| x.is_finite() && *x > 0.0)
    }
}

/// The kind of grain of `shape` at `density`.
pub(crate) fn grain_kind(shape: &Shape, density: f64) -> GrainKind {
    let mass = density * shape.volume;
    let least_inertia = density * shape.unit_inertia.min_element();
    GrainKind {
        mass,
        radius: shape.radius,
        length: shape.equivalent_radius,
        inverse_mass: 1.0 / mass + 0.25 * shape.radius * shape.radius / least_inertia,
    }
}

/// The critical time step of grains of `kind` under `model` with `integrator` (see the
/// module's documentation for the rule).
#[must_use]
pub fn critical_time_step(
    model: &dyn ForceModel,
    kind: &GrainKind,
    integrator: IntegratorKind,
) -> f64 {
    let area = PI * kind.radius * kind.radius;
    let one = model.normal_stiffness(area, kind.length);
    let all = model.normal_stiffness(2.0 * area, kind.length);
    let pair = (2.0 * one / kind.mass).sqrt();
    let fastest = (2.0 * kind.inverse_mass * all).sqrt();
    let accurate = 0.1 * PI / pair;
    let zeta = model.damping_ratio() * fastest / pair;
    let stable = integrator.damped_stability_limit(zeta) / fastest;
    accurate.min(stable)
}

/// The smallest critical time step of `kinds` under `laws` with `integrator` (infinite
/// without a law or a kind), and the law that sets it.
pub(crate) fn critical<'a>(
    laws: impl IntoIterator<Item = &'a dyn ForceModel>,
    kinds: &[GrainKind],
    integrator: IntegratorKind,
) -> (f64, Option<&'a dyn ForceModel>) {
    let mut smallest = (f64::INFINITY, None);
    for law in laws {
        for kind in kinds {
            let dt = critical_time_step(law, kind, integrator);
            if dt < smallest.0 || smallest.1.is_none() {
                smallest = (dt.min(smallest.0), Some(law));
            }
        }
    }
    smallest
}
