//! Velocity Verlet, the reference integrator.
//!
//! Translation: the kick–drift–kick form of velocity Verlet, `v ← v + a dt/2`,
//! `x ← x + v dt`, forces, `v ← v + a' dt/2`. Rotation: the same splitting on the
//! world-frame angular momentum, `L ← L + D dt/2`, then a drift of the orientation by the
//! exact rotation of the angular velocity `ω = I_w⁻¹ L` over dt (eq. 2.15), forces,
//! `L ← L + D' dt/2`. Second order in dt for translation; the rotation drift freezes ω over
//! the step, which makes it first order for a tumbling asymmetric body. A reference, not the
//! workhorse.

use talus_geom::Pose;
use talus_geom::glam::DVec3;

use super::quaternion::rotation_step;
use super::{Inertia, Kinematics, Load};

/// Velocity and angular momentum of a grain, and the load of its last step.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct VerletState {
    /// Velocity of the centre of mass (at the half step between `predict` and `correct`).
    pub velocity: DVec3,
    /// Angular momentum about the centre of mass, world frame (half step likewise).
    pub angular_momentum: DVec3,
    /// The total load of the last evaluation.
    pub load: Load,
}

/// `I_w⁻¹ L` for a grain with principal moments `principal` at `pose`.
fn angular_velocity_of(pose: &Pose, principal: DVec3, angular_momentum: DVec3) -> DVec3 {
    let to_body = pose.rotation.conjugate();
    pose.rotation * ((to_body * angular_momentum) / principal)
}

impl VerletState {
    /// A grain starting with `velocity`, world angular velocity `omega` and `load`.
    #[must_use]
    pub fn initial(
        pose: &Pose,
        inertia: &Inertia,
        velocity: DVec3,
        omega: DVec3,
        load: Load,
    ) -> Self {
        let to_body = pose.rotation.conjugate();
        let angular_momentum = pose.rotation * (inertia.principal * (to_body * omega));
        VerletState {
            velocity,
            angular_momentum,
            load,
        }
    }

    /// Angular velocity, world frame.
    #[must_use]
    pub fn angular_velocity(&self, pose: &Pose, inertia: &Inertia) -> DVec3 {
        angular_velocity_of(pose, inertia.principal, self.angular_momentum)
    }
}

impl super::Integrator for VerletState {
    fn initial(kinematics: &Kinematics, inertia: &Inertia, load: &Load, _dt: f64) -> Self {
        VerletState::initial(
            &kinematics.pose,
            inertia,
            kinematics.velocity,
            kinematics.angular_velocity,
            *load,
        )
    }

    /// First half kick and drift.
    fn predict(&mut self, pose: &mut Pose, inertia: &Inertia, dt: f64) -> Kinematics {
        self.velocity += self.load.force / inertia.mass * (0.5 * dt);
        pose.position += self.velocity * dt;
        self.angular_momentum += self.load.torque * (0.5 * dt);
        let omega = angular_velocity_of(pose, inertia.principal, self.angular_momentum);
        pose.rotation = (rotation_step(omega, dt) * pose.rotation).normalize();
        Kinematics {
            pose: *pose,
            velocity: self.velocity,
            angular_velocity: angular_velocity_of(pose, inertia.principal, self.angular_momentum),
        }
    }

    /// Second half kick with the new load.
    fn correct(
        &mut self,
        _pose: &mut Pose,
        load: &Load,
        inertia: &Inertia,
        _kinematics: &Kinematics,
        dt: f64,
    ) {
        self.velocity += load.force / inertia.mass * (0.5 * dt);
        self.angular_momentum += load.torque * (0.5 * dt);
        self.load = *load;
    }

    fn velocities(&self, pose: &Pose, inertia: &Inertia, _dt: f64) -> (DVec3, DVec3) {
        (self.velocity, self.angular_velocity(pose, inertia))
    }
}
