//! Rolling resistance: the elastic–plastic spring–dashpot model (Ai, Chen, Rotter & Ooi,
//! Powder Technology 206 (2011) 269, model type C; LIGGGHTS' `epsd2`).
//!
//! Rolling is the relative rotation about an axis in the tangent plane, `ω_r = ω − (ω·n) n`
//! of the relative angular velocity ω. A spring of stiffness `k_r = 2.25 μ_r² R*² K` (K the
//! normal stiffness at the contact) winds up with the rolling angle, a dashpot of the normal
//! direction's damping ratio acts on `ω_r`, and the couple is capped where the contact rolls
//! freely, `μ_r R* F_n`: then the spring is shortened to match (the plastic regime). R* is
//! the pair's rolling radius `r_a r_b / (r_a + r_b)`, half the characteristic length of the
//! pair (the grain's equivalent radius against a wall). A ball rolling on a floor at speed v
//! then stops within `(1 + I/(m R²)) v² / (2 μ_r g)` (R* = R). The angle is kept as a vector
//! (3 history values), turned into the current tangent plane each step as the tangential
//! spring is.

use talus_geom::glam::DVec3;

use super::CoefficientSpec;
use super::ContactInput;
use super::friction::{into_tangent_plane, slip};
use super::part::{Part, PartEntry, Partial, Role, Spring};
use super::registry::Mixing;
use super::registry::non_negative;

/// The elastic–plastic spring–dashpot rolling resistance.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RollingResistance {
    /// Coefficient of rolling friction μ_r: the largest couple over `R* F_n`.
    pub friction: f64,
}

impl RollingResistance {
    /// Ai et al.'s rolling stiffness factor: `k_r = 2.25 μ_r² R*² K`.
    const STIFFNESS_FACTOR: f64 = 2.25;
}

impl Part for RollingResistance {
    fn role(&self) -> Role {
        Role::Rolling
    }

    fn history_len(&self) -> usize {
        3
    }

    fn apply(&self, contact: &ContactInput, partial: &mut Partial, history: &mut [f64]) {
        let n = contact.overlap.normal;
        let omega = contact.relative_angular_velocity;
        let rolling = omega - n * omega.dot(n);
        let radius = 0.5 * contact.length;
        let lever = self.friction * radius;
        let stiffness = Self::STIFFNESS_FACTOR * lever * lever * partial.stiffness;
        // The critical damping of the rolling mode, 2 √(I_r k_r) with I_r = m* R*², over the
        // normal one, 2 √(m* K), is 1.5 μ_r R*²: the same damping ratio as the normal
        // direction.
        let damping = 1.5 * lever * radius * partial.damping;
        let angle = into_tangent_plane(DVec3::from_slice(history), n) + rolling * contact.dt;
        let couple = -stiffness * angle - damping * rolling;
        let limit = lever * partial.normal.max(0.0);
        let (couple, angle) = slip(couple, angle, stiffness, limit);
        history[..3].copy_from_slice(&angle.to_array());
        partial.torque += couple;
    }

    fn spring(&self, normal: f64, _area: f64, length: f64) -> Option<Spring> {
        // Between two grains R* is half their length; against a wall it is the grain's
        // equivalent radius, the length itself: the stiffer.
        let lever = self.friction * length;
        Some(Spring::Couple(
            Self::STIFFNESS_FACTOR * lever * lever * normal,
        ))
    }
}

/// The part's registration.
pub(super) const ENTRY: PartEntry = PartEntry {
    role: Role::Rolling,
    name: "epsd",
    description: "elastic–plastic spring–dashpot rolling resistance (Ai et al. 2011): k_r = 2.25 μ_r² R*² K, capped at μ_r R* F_n",
    coefficients: &[CoefficientSpec {
        name: "rolling_friction",
        unit: "1",
        default: None,
        allowed: "a finite number ≥ 0",
        check: non_negative,
        doc: "coefficient of rolling friction μ_r: the largest rolling couple over R* F_n, R* the pair's rolling radius",
        mixing: Mixing::Geometric,
    }],
    history: &["roll_x", "roll_y", "roll_z"],
    build: |c| {
        Box::new(RollingResistance {
            friction: c["rolling_friction"],
        })
    },
};

#[cfg(test)]
mod tests {
    use super::*;

    fn contact(omega: DVec3) -> ContactInput {
        ContactInput {
            relative_angular_velocity: omega,
            effective_mass: 1e-3,
            length: 0.01,
            dt: 1e-4,
            ..ContactInput::face_on()
        }
    }

    #[test]
    fn winds_up_elastically_then_rolls_at_the_cap_and_ignores_twisting() {
        let part = RollingResistance { friction: 0.1 };
        let mut history = [0.0; 3];
        let fresh = || Partial {
            stiffness: 1e4,
            normal: 1.0,
            ..Partial::default()
        };
        // Elastic: k_r = 2.25 (0.1 · 0.005)² 1e4 = 5.625e-3 N m per rad; 1e-4 rad of roll.
        let mut partial = fresh();
        part.apply(&contact(DVec3::X), &mut partial, &mut history);
        assert!((partial.torque - DVec3::new(-5.625e-7, 0.0, 0.0)).length() < 1e-18);
        // Plastic: capped at μ_r R* F_n = 5e-4 N m, the spring at the cap's angle.
        for _ in 0..2000 {
            partial = fresh();
            part.apply(&contact(DVec3::X), &mut partial, &mut history);
        }
        assert!((partial.torque - DVec3::new(-5e-4, 0.0, 0.0)).length() < 1e-15);
        assert!((history[0] - 5e-4 / 5.625e-3).abs() < 1e-12);
        // Spin about the normal is twisting, not rolling: it neither winds nor turns.
        let mut spun = fresh();
        let mut still = [0.0; 3];
        part.apply(&contact(DVec3::Z * 3.0), &mut spun, &mut still);
        assert_eq!((spun.torque, still), (DVec3::ZERO, [0.0; 3]));
    }
}
