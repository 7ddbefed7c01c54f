//! Viscous normal damping from a coefficient of restitution.

use super::CoefficientSpec;
use super::ContactInput;
use super::part::PartEntry;
use super::part::{Part, Partial, Role};
use super::registry::{Mixing, unit_interval};

/// The damping ratio ζ of a linear spring–dashpot whose collisions have restitution `e`:
/// `e = exp(−π ζ / √(1 − ζ²))`, i.e. `ζ = −ln e / √(π² + ln² e)`. The damping force is
/// then `−2 ζ √(K m*) v_n` for a contact stiffness K.
#[must_use]
pub fn damping_ratio(restitution: f64) -> f64 {
    if restitution >= 1.0 {
        return 0.0;
    }
    let ln_e = restitution.ln();
    -ln_e / (std::f64::consts::PI * std::f64::consts::PI + ln_e * ln_e).sqrt()
}

/// The damping part: a dashpot `−2 ζ √(K m*) v_n` on the normal direction, ζ from the
/// restitution (see [`damping_ratio`]) and K the normal part's stiffness at this contact.
/// The dashpot may pull for a moment at the end of a collision, as in the linear
/// spring–dashpot whose restitution the coefficient sets; clamping it would make collisions
/// more elastic than asked.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RestitutionDamping {
    /// Coefficient of restitution e in (0, 1].
    pub restitution: f64,
}

impl Part for RestitutionDamping {
    fn role(&self) -> Role {
        Role::Damping
    }

    fn apply(&self, contact: &ContactInput, partial: &mut Partial, _history: &mut [f64]) {
        partial.damping = 2.0
            * damping_ratio(self.restitution)
            * (partial.stiffness * contact.effective_mass).sqrt();
        partial.normal -= partial.damping * contact.normal_velocity();
    }

    fn damping_ratio(&self) -> Option<f64> {
        Some(damping_ratio(self.restitution))
    }
}

/// The damping part that adds nothing: the normal force is the normal part's alone, so that
/// collisions lose no energy to the contact (a linear normal part then has restitution 1).
/// The dashpot coefficient it leaves for the later parts is zero: the tangential, twisting
/// and rolling springs are undamped too. A law without a damping part is the same law; this
/// part lets a scenario say so.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct NoDamping;

impl Part for NoDamping {
    fn role(&self) -> Role {
        Role::Damping
    }

    fn apply(&self, _contact: &ContactInput, _partial: &mut Partial, _history: &mut [f64]) {}

    fn damping_ratio(&self) -> Option<f64> {
        Some(0.0)
    }
}

/// The registration of the part without damping.
pub(super) const NONE_ENTRY: PartEntry = PartEntry {
    role: Role::Damping,
    name: "none",
    description: "no damping: the normal force is the normal part's alone (as when the role is left out)",
    coefficients: &[],
    history: &[],
    build: |_| Box::new(NoDamping),
};

/// Damping by unloading: while the grains separate, the normal part's force and its couple
/// are scaled by e², so that a collision gives back e² of the elastic energy it stored,
/// `½ m* v₁² = e² ∫ F dδ = e² ½ m* v₀²`: restitution e whatever the normal law's force
/// against the depth (Walton and Braun's loading and unloading branches, here one branch
/// scaled). This is the damping of a law that is not a linear spring: a dashpot sized for a
/// spring of stiffness K takes a share of the energy that depends on the impact speed, and
/// Feng's flat contact, whose force `k A` does not grow with the depth, keeps nearly all of
/// it at any speed.
///
/// The tangential, twisting and rolling parts scale their dashpots from the normal
/// dashpot's coefficient; this part gives them the one of the restitution's damping ratio,
/// `2 ζ √(K m*)` as [`RestitutionDamping`] does, though it puts no dashpot on the normal
/// direction itself.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct UnloadingDamping {
    /// Coefficient of restitution e in (0, 1].
    pub restitution: f64,
}

impl Part for UnloadingDamping {
    fn role(&self) -> Role {
        Role::Damping
    }

    fn apply(&self, contact: &ContactInput, partial: &mut Partial, _history: &mut [f64]) {
        partial.damping = 2.0
            * damping_ratio(self.restitution)
            * (partial.stiffness * contact.effective_mass).sqrt();
        if contact.normal_velocity() > 0.0 {
            // The damping part comes right after the normal part: the couple so far is the
            // normal pressure's, which unloads with its force.
            let scale = self.restitution * self.restitution;
            partial.normal *= scale;
            partial.torque *= scale;
        }
    }

    fn damping_ratio(&self) -> Option<f64> {
        // No dashpot on the normal direction, but the later parts' dashpots have this ratio.
        Some(damping_ratio(self.restitution))
    }
}

/// The registration of the damping by unloading.
pub(super) const UNLOADING_ENTRY: PartEntry = PartEntry {
    role: Role::Damping,
    name: "unloading",
    description: "restitution e for any normal law: the normal force and its couple scaled by e² while the grains separate",
    coefficients: &[RESTITUTION],
    history: &[],
    build: |c| {
        Box::new(UnloadingDamping {
            restitution: c["restitution"],
        })
    },
};

/// The restitution of the damping part.
pub(super) const RESTITUTION: CoefficientSpec = CoefficientSpec {
    name: "restitution",
    unit: "1",
    default: Some(0.5),
    allowed: "a number in (0, 1]",
    check: unit_interval,
    doc: "coefficient of restitution of a normal collision",
    mixing: Mixing::Geometric,
};

/// The part's registration.
pub(super) const ENTRY: PartEntry = PartEntry {
    role: Role::Damping,
    name: "restitution",
    description: "a normal dashpot −2ζ√(K m*) v_n with ζ from a coefficient of restitution",
    coefficients: &[RESTITUTION],
    history: &[],
    build: |c| {
        Box::new(RestitutionDamping {
            restitution: c["restitution"],
        })
    },
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratio_reproduces_the_restitution_of_a_damped_oscillator() {
        for e in [0.1, 0.5, 0.9, 0.99] {
            let z = damping_ratio(e);
            let back = (-std::f64::consts::PI * z / (1.0 - z * z).sqrt()).exp();
            assert!((back - e).abs() < 1e-14);
        }
        assert_eq!(damping_ratio(1.0), 0.0);
    }
}
