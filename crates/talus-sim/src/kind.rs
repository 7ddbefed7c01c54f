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
//! 4. *Springs beside the normal one.* A law may also have a tangential spring k_t (a force
//!    in the tangent plane at the contact), a twisting spring about the normal and a rolling
//!    spring about axes across it (couples, of stiffness k_c per radian). The tangential
//!    force acts at the contact's centroid, whose arm about the centre of mass may be as
//!    long as R, with no patch to spread it: it meets the inverse mass `w_t = 1/m + R²/I`
//!    (for a ball `3.5/m`: the familiar reason `k_t = (2/7) K` makes sliding and rolling as
//!    fast as bouncing). A couple meets `1/I`. The springs of one contact act on different
//!    motions of the grain: the normal one along n, the tangential one across it, the
//!    couples on turns alone, twisting about n and rolling about the axes across it. The
//!    rule counts each contact's stiffest: `max(w K, w_t k_t, k_c/I)` in place of `w K`.
//!    That the springs do not add is exact where the contact's line runs through the centre
//!    (a ball bounces at `K/m` and slides and rolls at `3.5 k_t/m`, two separate modes);
//!    elsewhere the arm R given to the tangential force covers their coupling (a cube on a
//!    face with `k_t = K` slides and rocks together at `ω² = 2.8 K/m`, the rule counts
//!    `5.5 K/m`). The built-in springs are proportional to the normal stiffness at the
//!    contact (tangential `r K`, twisting `r K A/(2π)` with A ≤ πR², rolling
//!    `2.25 μ_r² R*² K` with R* at most the grain's equivalent radius, reached against a
//!    wall), so that over a grain's contacts they sum as the normal ones do: the rule takes
//!    each at the largest contact and counts it `K(2πR²)/K(πR²)` times (twice for laws whose
//!    stiffness grows with the area). A spring that does not grow with the contact (Yade's
//!    shear) is counted as often: a grain held by more sticking contacts of such a law is
//!    stiffer than the rule says.
//! 5. *Damping.* Each dashpot is `2ζ √(K_c m*)`, so damping grows with stiffness and the
//!    fastest mode is damped more than one contact: `ζ_max = ζ ω_max/ω₁` (exact for the
//!    chain). The tangential, twisting and rolling dashpots have the normal one's damping
//!    ratio for their own springs, over the pair's mass m* (tangential) or the moments
//!    `m* R*²` (rolling) and `m* r_c²/2` (twisting), so they do not grow with their springs
//!    as the normal ones do. Bounded as the springs are, the dashpots of n contacts of a
//!    family with inertia J (λ the inverse mass or inertia it meets on the grain, its
//!    fastest mode `ω_f² = 2 λ n k`) damp that mode at the ratio `ζ_f = ζ √(2 n λ J)`:
//!    `ζ √(n m w)` for the normal springs, which is `ζ ω_max/ω₁` again, `ζ √(n m w_t)` for
//!    the tangential ones, at most `ζ √(n m R²/I)` for the couples (R* and r_c are at most
//!    R). Where a spring beside the normal one sets `ω_max`, its mode is damped by its own
//!    family's dashpots and by the normal ones, whose rate `2 ζ_n ω_n` (ω_n the normal
//!    springs' fastest) adds at most `ζ_n ω_n/ω_max`: `ζ_max = ζ_f + ζ_n ω_n/ω_max`.
//! 6. *The integrator.* The scheme is stable for `ω dt` below its limit at that damping
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

impl GrainKind {
    /// The inverse of the least principal moment of inertia, `1/I_min`, from the inverse
    /// mass a contact force meets (`1/m + R²/(4 I_min)`).
    fn inverse_inertia(&self) -> f64 {
        4.0 * (self.inverse_mass - 1.0 / self.mass).max(0.0) / (self.radius * self.radius)
    }
}

/// What sets a critical time step: which of the rule's bounds is the smallest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// Resolving a collision in ten steps (accuracy).
    Collision,
    /// The stability of the normal springs.
    Normal,
    /// The stability of the tangential springs.
    Tangential,
    /// The stability of the twisting and rolling springs.
    Couple,
}

impl Limit {
    /// What it is, for messages.
    #[must_use]
    pub fn describe(self) -> &'static str {
        match self {
            Limit::Collision => "resolving a collision in ten steps",
            Limit::Normal => "the normal stiffness",
            Limit::Tangential => "the tangential spring, stiffer than the normal one",
            Limit::Couple => "the twisting or rolling spring, stiffer than the normal one",
        }
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
    critical_time_step_and_limit(model, kind, integrator).0
}

/// [`critical_time_step`] and what sets it.
#[must_use]
pub fn critical_time_step_and_limit(
    model: &dyn ForceModel,
    kind: &GrainKind,
    integrator: IntegratorKind,
) -> (f64, Limit) {
    let area = PI * kind.radius * kind.radius;
    let one = model.normal_stiffness(area, kind.length);
    let all = model.normal_stiffness(2.0 * area, kind.length);
    let pair = (2.0 * one / kind.mass).sqrt();
    // The springs beside the normal one at the largest contact, counted as often as the
    // normal stiffness of a grain's contacts holds the largest one's (step 4).
    let side = model.side_springs(area, kind.length);
    let count = if one > 0.0 { all / one } else { 2.0 };
    let inverse_inertia = kind.inverse_inertia();
    let lever = 1.0 / kind.mass + kind.radius * kind.radius * inverse_inertia;
    let (stiffest, limit) = [
        (kind.inverse_mass * all, Limit::Normal),
        (count * lever * side.force, Limit::Tangential),
        (count * inverse_inertia * side.couple, Limit::Couple),
    ]
    .into_iter()
    .fold((0.0, Limit::Normal), |a, b| if b.0 > a.0 { b } else { a });
    let fastest = (2.0 * stiffest).sqrt();
    let accurate = 0.1 * PI / pair;
    // The fastest mode's damping ratio (step 5).
    let ratio = model.damping_ratio();
    let zeta = match limit {
        Limit::Normal | Limit::Collision => ratio * fastest / pair,
        side => {
            let spread = if side == Limit::Tangential {
                lever
            } else {
                kind.radius * kind.radius * inverse_inertia
            };
            let normal = (2.0 * kind.inverse_mass * all).sqrt();
            ratio * ((count * kind.mass * spread).sqrt() + normal / pair * normal / fastest)
        }
    };
    let stable = integrator.damped_stability_limit(zeta) / fastest;
    if accurate <= stable {
        (accurate, Limit::Collision)
    } else {
        (stable, limit)
    }
}

/// The smallest critical time step of `kinds` under `laws` with `integrator` (infinite
/// without a law or a kind), the law that sets it and what in it does.
pub(crate) fn critical<'a>(
    laws: impl IntoIterator<Item = &'a dyn ForceModel>,
    kinds: &[GrainKind],
    integrator: IntegratorKind,
) -> (f64, Option<(&'a dyn ForceModel, Limit)>) {
    let mut smallest = (f64::INFINITY, None);
    for law in laws {
        for kind in kinds {
            let (dt, limit) = critical_time_step_and_limit(law, kind, integrator);
            if dt < smallest.0 || smallest.1.is_none() {
                smallest = (dt.min(smallest.0), Some((law, limit)));
            }
        }
    }
    smallest
}
