//! Coulomb friction with a tangential spring (Cundall–Strack).
//!
//! The spring's elongation ξ, kept per contact, is carried along with the contact: each step
//! it is first turned into the current tangent plane (its length kept), then stretched by
//! the tangential relative displacement `v_t dt`. The force is `−k_t ξ − c_t v_t`, a spring
//! with a dashpot of the same damping ratio as the normal direction (without it a sticking
//! contact would ring forever); when it exceeds `μ |F_n|` the contact slides: the force is
//! capped at `μ |F_n|` and the spring shortened to match, so that sliding dissipates and
//! sticking stores energy.

use talus_geom::glam::DVec3;

use super::CoefficientSpec;
use super::ContactInput;
use super::part::PartEntry;
use super::part::{Part, Partial, Role, Spring};
use super::registry::{Mixing, non_negative, positive};

/// Parameters of the tangential spring.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TangentialSpring {
    /// Friction coefficient μ.
    pub friction: f64,
    /// Ratio of tangential to normal stiffness, `k_t / K`.
    pub stiffness_ratio: f64,
}

impl TangentialSpring {
    /// The tangential force on the second grain, given the unit `normal`, the tangential
    /// relative velocity, the normal stiffness, the magnitude of the normal force and the
    /// dashpot coefficient `damping` (force per velocity); updates the elongation `spring`
    /// (3 history values).
    #[allow(clippy::too_many_arguments)]
    pub fn force(
        &self,
        spring: &mut [f64],
        normal: DVec3,
        tangential_velocity: DVec3,
        dt: f64,
        normal_stiffness: f64,
        normal_force: f64,
        damping: f64,
    ) -> DVec3 {
        let mut xi = into_tangent_plane(DVec3::new(spring[0], spring[1], spring[2]), normal);
        xi += tangential_velocity * dt;
        let k_t = self.stiffness_ratio * normal_stiffness;
        let force = -k_t * xi - damping * self.stiffness_ratio.sqrt() * tangential_velocity;
        let (force, xi) = slip(force, xi, k_t, self.friction * normal_force.max(0.0));
        spring[..3].copy_from_slice(&xi.to_array());
        force
    }
}

/// A spring–slider past its limit: the `load` of a spring of `stiffness` stretched by
/// `elongation` (with its dashpot), capped at `limit` in magnitude; when capped, the spring is
/// shortened to carry the capped load alone, so that sliding dissipates and sticking stores.
/// Returns the load and the elongation.
pub(super) fn slip(load: DVec3, elongation: DVec3, stiffness: f64, limit: f64) -> (DVec3, DVec3) {
    let magnitude = load.length();
    if magnitude <= limit {
        return (load, elongation);
    }
    let capped = load
        * if magnitude > 0.0 {
            limit / magnitude
        } else {
            0.0
        };
    let shortened = if stiffness > 0.0 {
        -capped / stiffness
    } else {
        DVec3::ZERO
    };
    (capped, shortened)
}

/// A spring's elongation turned into the tangent plane of the current unit `normal`, its
/// length kept: the contact turns, and what it stored turns with it.
pub(super) fn into_tangent_plane(elongation: DVec3, normal: DVec3) -> DVec3 {
    let projected = elongation - normal * elongation.dot(normal);
    match projected.try_normalize() {
        Some(direction) => direction * elongation.length(),
        None => DVec3::ZERO,
    }
}

impl Part for TangentialSpring {
    fn role(&self) -> Role {
        Role::Tangential
    }

    fn history_len(&self) -> usize {
        3
    }

    fn apply(&self, contact: &ContactInput, partial: &mut Partial, history: &mut [f64]) {
        partial.tangential = self.force(
            history,
            contact.overlap.normal,
            contact.tangential_velocity(),
            contact.dt,
            partial.stiffness,
            partial.normal,
            partial.damping,
        );
    }

    fn spring(&self, normal: f64, _area: f64, _length: f64) -> Option<Spring> {
        Some(Spring::Force(self.stiffness_ratio * normal))
    }
}

/// The tangential part that adds nothing: frictionless contacts, whose force lies along the
/// normal. A law without a tangential part is the same law; this part lets a scenario say so.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct NoTangential;

impl Part for NoTangential {
    fn role(&self) -> Role {
        Role::Tangential
    }

    fn apply(&self, _contact: &ContactInput, _partial: &mut Partial, _history: &mut [f64]) {}
}

/// The registration of the frictionless part.
pub(super) const NONE_ENTRY: PartEntry = PartEntry {
    role: Role::Tangential,
    name: "none",
    description: "no tangential force: frictionless contacts (as when the role is left out)",
    coefficients: &[],
    history: &[],
    build: |_| Box::new(NoTangential),
};

/// μ of the tangential spring.
pub(super) const FRICTION: CoefficientSpec = CoefficientSpec {
    name: "friction",
    unit: "1",
    default: Some(0.5),
    allowed: "a finite number ≥ 0",
    check: non_negative,
    doc: "Coulomb friction coefficient μ",
    mixing: Mixing::Geometric,
};

/// `k_t / K` of the tangential spring.
pub(super) const TANGENTIAL_RATIO: CoefficientSpec = CoefficientSpec {
    name: "tangential_ratio",
    unit: "1",
    default: Some(2.0 / 7.0),
    allowed: "a finite number > 0",
    check: positive,
    doc: "tangential over normal stiffness k_t / K",
    mixing: Mixing::Arithmetic,
};

/// The part's registration.
pub(super) const ENTRY: PartEntry = PartEntry {
    role: Role::Tangential,
    name: "spring",
    description: "Cundall–Strack tangential spring and dashpot, capped at μ F_n",
    coefficients: &[FRICTION, TANGENTIAL_RATIO],
    history: &["spring_x", "spring_y", "spring_z"],
    build: |c| {
        Box::new(TangentialSpring {
            friction: c["friction"],
            stiffness_ratio: c["tangential_ratio"],
        })
    },
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sticks_below_the_limit_and_slides_at_it() {
        let spring = TangentialSpring {
            friction: 0.5,
            stiffness_ratio: 0.25,
        };
        let mut history = [0.0; 3];
        let n = DVec3::Z;
        // Sticking: the force grows linearly with the displacement.
        let f1 = spring.force(&mut history, n, DVec3::X, 1e-3, 1e6, 1e4, 0.0);
        assert!((f1 - DVec3::new(-250.0, 0.0, 0.0)).length() < 1e-9);
        // Sliding: capped at μ F_n, the spring shortened to match.
        for _ in 0..100 {
            spring.force(&mut history, n, DVec3::X, 1e-3, 1e6, 1e4, 0.0);
        }
        let f = spring.force(&mut history, n, DVec3::X, 1e-3, 1e6, 1e4, 0.0);
        assert!((f.length() - 5e3).abs() < 1e-9);
        assert!((history[0] - 5e3 / 2.5e5).abs() < 1e-15);
        // A new normal: the spring turns with the contact, keeping its length.
        let before = DVec3::from_slice(&history).length();
        spring.force(
            &mut history,
            DVec3::new(0.6, 0.0, 0.8),
            DVec3::ZERO,
            1e-3,
            1e6,
            1e9,
            0.0,
        );
        let after = DVec3::from_slice(&history);
        assert!(
            (after.length() - before).abs() < 1e-15
                && after.dot(DVec3::new(0.6, 0.0, 0.8)).abs() < 1e-15
        );
    }
}
