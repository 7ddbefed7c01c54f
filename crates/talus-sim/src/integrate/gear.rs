//! The 6-value Gear predictor–corrector (thesis §3.7, eqs. 3.24–3.30, table 3.1).
//!
//! The state of a coordinate is its value and its first five scaled derivatives
//! `r_n = dtⁿ/n! · dⁿr/dtⁿ` (3.24). The predictor is the Taylor step of the Pascal matrix
//! (3.25); the forces are evaluated once, at the predicted state; the difference
//! `Δ = r₂ᶜ − r₂ᵖ` between the scaled acceleration they give and the predicted one
//! corrects every derivative, `r_n += c_n Δ` (3.30). For second-order equations whose
//! right side depends on the velocity (damping, friction, the gyroscopic term of the
//! rotation), c₀ = 3/16 replaces 3/20 (table 3.1 and [AT86]).
//!
//! Positions are 3-vectors; orientations are unit quaternions handled as 4-vectors, with
//! their second derivative from Euler's equations (eqs. 2.21–2.27). After each correction the
//! quaternion is renormalised and q̇ made orthogonal to q, so that q stays a rotation and ω
//! stays a pure rotation rate.

use talus_geom::Pose;
use talus_geom::glam::{DQuat, DVec3, DVec4};

use super::quaternion::{
    angular_acceleration, angular_velocity, quaternion_acceleration, quaternion_velocity,
};
use super::{Inertia, Kinematics, Load};
use crate::motion::Reach;

/// Corrector coefficients c₀ … c₅ for a second-order equation with velocity-dependent
/// forces (table 3.1, p = 2, k = 6, with c₀ = 3/16 after \[AT86\]).
pub const CORRECTOR: [f64; 6] = [
    3.0 / 16.0,
    251.0 / 360.0,
    1.0,
    11.0 / 18.0,
    1.0 / 6.0,
    1.0 / 60.0,
];

/// Scaled derivatives 1 … 5 of a grain's position and orientation; the values themselves
/// (derivative 0) are the grain's pose.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct GearState {
    /// `dtⁿ/n! · dⁿx/dtⁿ` for n = 1 … 5.
    pub position: [DVec3; 5],
    /// `dtⁿ/n! · dⁿq/dtⁿ` for n = 1 … 5, quaternions as (x, y, z, w).
    pub rotation: [DVec4; 5],
    /// How far the last correction moved the pose (the forces are evaluated at the
    /// predicted pose, so the motion between two evaluations is this and the next
    /// prediction's).
    pub corrected: Reach,
}

/// Binomial coefficients of the Pascal predictor (3.25): row n, column m ≥ n.
const PASCAL: [[f64; 6]; 6] = [
    [1.0, 1.0, 1.0, 1.0, 1.0, 1.0],
    [0.0, 1.0, 2.0, 3.0, 4.0, 5.0],
    [0.0, 0.0, 1.0, 3.0, 6.0, 10.0],
    [0.0, 0.0, 0.0, 1.0, 4.0, 10.0],
    [0.0, 0.0, 0.0, 0.0, 1.0, 5.0],
    [0.0, 0.0, 0.0, 0.0, 0.0, 1.0],
];

/// The Pascal predictor on a value and its five scaled derivatives.
#[inline]
fn predict_series<T>(series: &mut [T; 6])
where
    T: Copy + std::ops::Add<Output = T> + std::ops::Mul<f64, Output = T>,
{
    for n in 0..5 {
        let mut sum = series[n];
        for m in n + 1..6 {
            sum = sum + series[m] * PASCAL[n][m];
        }
        series[n] = sum;
    }
}

impl GearState {
    /// The state of a grain starting at `pose` with velocity `velocity` and angular
    /// velocity `omega`, under an acceleration `acceleration` and angular acceleration
    /// `omega_dot` (world frame) found from its initial forces.
    ///
    /// The scaled derivatives are the Taylor coefficients of the motion: for the position
    /// r₁ = v dt, r₂ = a dt²/2 and zero above (forces taken constant over the first step);
    /// for the orientation q₁ = ½ω q dt, q₂ from eq. 2.21 and, above, those of a rotation
    /// at constant ω, dtⁿ/n! (½ω)ⁿ q.
    #[must_use]
    pub fn initial(
        pose: &Pose,
        velocity: DVec3,
        omega: DVec3,
        acceleration: DVec3,
        omega_dot: DVec3,
        dt: f64,
    ) -> Self {
        let q = DVec4::from(pose.rotation);
        let q_dot = quaternion_velocity(q, omega);
        let q_ddot = quaternion_acceleration(q, q_dot, omega, omega_dot);
        let half_omega = DQuat::from_xyzw(0.5 * omega.x, 0.5 * omega.y, 0.5 * omega.z, 0.0);
        let mut power = DQuat::from_vec4(q_dot); // (½ω) q
        let mut rotation = [DVec4::ZERO; 5];
        let mut factorial = 1.0;
        for (n, slot) in rotation.iter_mut().enumerate() {
            let order = n + 1;
            factorial *= order as f64;
            let derivative = match order {
                1 => q_dot,
                2 => q_ddot,
                _ => {
                    power = half_omega * power;
                    DVec4::from(power)
                }
            };
            if order == 2 {
                power = half_omega * power;
            }
            *slot = derivative * (dt.powi(order as i32) / factorial);
        }
        GearState {
            position: [
                velocity * dt,
                acceleration * (0.5 * dt * dt),
                DVec3::ZERO,
                DVec3::ZERO,
                DVec3::ZERO,
            ],
            rotation,
            corrected: Reach::default(),
        }
    }

    /// Velocity of the centre of mass.
    #[must_use]
    pub fn velocity(&self, dt: f64) -> DVec3 {
        self.position[0] / dt
    }

    /// Angular velocity, world frame, for a grain at `pose`.
    #[must_use]
    pub fn angular_velocity(&self, pose: &Pose, dt: f64) -> DVec3 {
        angular_velocity(DVec4::from(pose.rotation), self.rotation[0] / dt)
    }
}

impl super::Integrator for GearState {
    fn initial(kinematics: &Kinematics, inertia: &Inertia, load: &Load, dt: f64) -> Self {
        let pose = &kinematics.pose;
        let omega_dot = angular_acceleration(
            pose.rotation,
            inertia.principal,
            kinematics.angular_velocity,
            load.torque,
        );
        GearState::initial(
            pose,
            kinematics.velocity,
            kinematics.angular_velocity,
            load.force / inertia.mass,
            omega_dot,
            dt,
        )
    }

    /// The predictor: moves `pose` and the derivatives one step ahead (3.25) and returns
    /// the kinematics at the predicted state.
    fn predict(&mut self, pose: &mut Pose, _inertia: &Inertia, dt: f64) -> Kinematics {
        let mut r = [
            pose.position,
            self.position[0],
            self.position[1],
            self.position[2],
            self.position[3],
            self.position[4],
        ];
        predict_series(&mut r);
        let q0 = DVec4::from(pose.rotation);
        let mut q = [
            q0,
            self.rotation[0],
            self.rotation[1],
            self.rotation[2],
            self.rotation[3],
            self.rotation[4],
        ];
        predict_series(&mut q);
        pose.position = r[0];
        self.position.copy_from_slice(&r[1..]);
        // The predicted quaternion is renormalised before forces see it: the pose must be
        // a rotation. Its drift from unit length is of the order of the truncation error.
        let rotation = DQuat::from_vec4(q[0]).normalize();
        pose.rotation = rotation;
        self.rotation.copy_from_slice(&q[1..]);
        Kinematics {
            pose: *pose,
            velocity: self.position[0] / dt,
            angular_velocity: angular_velocity(DVec4::from(rotation), self.rotation[0] / dt),
        }
    }

    /// The corrector: with the total `load` (gravity included) found at the predicted
    /// state, corrects pose and derivatives (3.28–3.30), then renormalises q and makes q̇
    /// orthogonal to it.
    fn correct(
        &mut self,
        pose: &mut Pose,
        load: &Load,
        inertia: &Inertia,
        kinematics: &Kinematics,
        dt: f64,
    ) {
        let predicted = *pose;
        let half_dt2 = 0.5 * dt * dt;
        let delta_r = load.force / inertia.mass * half_dt2 - self.position[1];
        pose.position += delta_r * CORRECTOR[0];
        for (n, r) in self.position.iter_mut().enumerate() {
            *r += delta_r * CORRECTOR[n + 1];
        }

        let q = DVec4::from(pose.rotation);
        let q_dot = self.rotation[0] / dt;
        let omega = kinematics.angular_velocity;
        let omega_dot = angular_acceleration(pose.rotation, inertia.principal, omega, load.torque);
        let delta_q =
            quaternion_acceleration(q, q_dot, omega, omega_dot) * half_dt2 - self.rotation[1];
        let q0 = (q + delta_q * CORRECTOR[0]).normalize();
        for (n, d) in self.rotation.iter_mut().enumerate() {
            *d += delta_q * CORRECTOR[n + 1];
        }
        self.rotation[0] -= q0 * q0.dot(self.rotation[0]);
        pose.rotation = DQuat::from_vec4(q0);
        self.corrected = Reach::between(&predicted, pose);
    }

    fn corrected(&self) -> Reach {
        self.corrected
    }

    fn velocities(&self, pose: &Pose, _inertia: &Inertia, dt: f64) -> (DVec3, DVec3) {
        (self.velocity(dt), self.angular_velocity(pose, dt))
    }

    /// The n-th scaled derivative holds dtⁿ: it scales with ratioⁿ.
    fn rescale(&mut self, ratio: f64) {
        let mut scale = 1.0;
        for n in 0..5 {
            scale *= ratio;
            self.position[n] *= scale;
            self.rotation[n] *= scale;
        }
    }
}
