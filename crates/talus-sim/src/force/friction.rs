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

use super::ContactInput;
use super::damping::damping_ratio;

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
        let mut xi = DVec3::new(spring[0], spring[1], spring[2]);
        // Turn the elongation into the current tangent plane, keeping its length.
        let length = xi.length();
        let projected = xi - normal * xi.dot(normal);
        xi = match projected.try_normalize() {
            Some(direction) => direction * length,
            None => DVec3::ZERO,
        };
        xi += tangential_velocity * dt;
        let k_t = self.stiffness_ratio * normal_stiffness;
        let mut force = -k_t * xi - damping * self.stiffness_ratio.sqrt() * tangential_velocity;
        let limit = self.friction * normal_force.max(0.0);
        let magnitude = force.length();
        if magnitude > limit {
            force *= if magnitude > 0.0 {
                limit / magnitude
            } else {
                0.0
            };
            xi = if k_t > 0.0 { -force / k_t } else { DVec3::ZERO };
        }
        spring[..3].copy_from_slice(&xi.to_array());
        force
    }
}

/// The force on the second grain for an elastic normal force `elastic` of stiffness
/// `stiffness`: a dashpot set from the restitution, `−2 ζ √(K m*) v_n`, added to it, and the
/// tangential spring on top. The dashpot may pull for a moment at the end of a collision, as
/// in the linear spring–dashpot whose restitution the coefficient sets; clamping it would
/// make collisions more elastic than asked.
pub(super) fn damped_contact_force(
    contact: &ContactInput,
    history: &mut [f64],
    elastic: f64,
    stiffness: f64,
    restitution: f64,
    spring: &TangentialSpring,
) -> DVec3 {
    let o = &contact.overlap;
    let damping = 2.0 * damping_ratio(restitution) * (stiffness * contact.effective_mass).sqrt();
    let normal = elastic - damping * contact.normal_velocity();
    let tangential = spring.force(
        history,
        o.normal,
        contact.tangential_velocity(),
        contact.dt,
        stiffness,
        normal,
        damping,
    );
    o.normal * normal + tangential
}

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
