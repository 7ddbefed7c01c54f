//! Twisting resistance: a spring–slider on the relative spin about the contact normal.
//!
//! A contact between polyhedra has an area, and a relative rotation θ about its normal
//! shears it. With the tangential stiffness `k_t` spread evenly over a disk of the contact's
//! area A (radius `r_c = √(A/π)`), the patch resists with the torque `k_t (J/A) θ`, J = π
//! r_c⁴/2 its polar moment: a twisting stiffness `k_t r_c²/2`. The torque is capped where the
//! whole patch slides: the frictional moment of a uniform pressure on the disk, `(2/3) μ F_n
//! r_c`; then the spring is shortened to match, as the tangential spring is. A dashpot of
//! the normal direction's damping ratio damps a sticking contact (without it, it would ring
//! forever). The twist θ is the history.

use std::f64::consts::PI;

use super::CoefficientSpec;
use super::ContactInput;
use super::friction::{FRICTION, TANGENTIAL_RATIO};
use super::part::{Part, PartEntry, Partial, Role, Spring};

/// The twisting spring–slider.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TwistingSpring {
    /// Friction coefficient μ of the sliding patch.
    pub friction: f64,
    /// Ratio `k_t / K` of the tangential stiffness spread over the patch to the normal one.
    pub stiffness_ratio: f64,
}

impl Part for TwistingSpring {
    fn role(&self) -> Role {
        Role::Twisting
    }

    fn history_len(&self) -> usize {
        1
    }

    fn apply(&self, contact: &ContactInput, partial: &mut Partial, history: &mut [f64]) {
        let n = contact.overlap.normal;
        let spin = contact.relative_angular_velocity.dot(n);
        let radius_squared = contact.overlap.area / PI;
        let stiffness = self.stiffness_ratio * partial.stiffness * radius_squared / 2.0;
        let damping = partial.damping * self.stiffness_ratio.sqrt() * radius_squared / 2.0;
        let mut twist = history[0] + spin * contact.dt;
        let mut torque = -stiffness * twist - damping * spin;
        let limit = 2.0 / 3.0 * self.friction * partial.normal.max(0.0) * radius_squared.sqrt();
        if torque.abs() > limit {
            torque = limit.copysign(torque);
            twist = if stiffness > 0.0 {
                -torque / stiffness
            } else {
                0.0
            };
        }
        history[0] = twist;
        partial.torque += n * torque;
    }

    fn spring(&self, normal: f64, area: f64, _length: f64) -> Option<Spring> {
        Some(Spring::Couple(
            self.stiffness_ratio * normal * area / (2.0 * PI),
        ))
    }
}

/// The part's registration.
pub(super) const ENTRY: PartEntry = PartEntry {
    role: Role::Twisting,
    name: "spring",
    description: "twisting spring–slider on the spin about the normal, stiffness k_t r_c²/2, capped at (2/3) μ F_n r_c",
    coefficients: &[
        CoefficientSpec {
            doc: "friction coefficient μ of the sliding contact patch",
            ..FRICTION
        },
        CoefficientSpec {
            doc: "tangential over normal stiffness k_t / K, spread over the patch",
            ..TANGENTIAL_RATIO
        },
    ],
    history: &["twist"],
    build: |c| {
        Box::new(TwistingSpring {
            friction: c["friction"],
            stiffness_ratio: c["tangential_ratio"],
        })
    },
};
