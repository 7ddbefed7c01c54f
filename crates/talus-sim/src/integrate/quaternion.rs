//! Rigid-body rotation in quaternions (thesis §2.3, app. A).

use talus_geom::glam::{DQuat, DVec3, DVec4};

/// ω̇ from Euler's equations (thesis eq. 2.24, `ω̇ = I⁻¹ (D + Iω × ω)`), evaluated in the
/// body frame where the inertia tensor is diagonal: `rotation` turns body into world
/// vectors, `torque` and `omega` are world-frame, the result too.
#[must_use]
pub fn angular_acceleration(
    rotation: DQuat,
    principal: DVec3,
    omega: DVec3,
    torque: DVec3,
) -> DVec3 {
    let to_body = rotation.conjugate();
    let omega_b = to_body * omega;
    let torque_b = to_body * torque;
    let omega_dot_b = (torque_b - omega_b.cross(principal * omega_b)) / principal;
    rotation * omega_dot_b
}

/// q̈ = ½ (ω̇ q + ω q̇), the quaternion products of the pure quaternions `[0, ω̇]` and `[0, ω]`
/// (thesis eq. 2.21).
#[must_use]
pub fn quaternion_acceleration(q: DVec4, q_dot: DVec4, omega: DVec3, omega_dot: DVec3) -> DVec4 {
    let pure = |v: DVec3| DQuat::from_xyzw(v.x, v.y, v.z, 0.0);
    let a = pure(omega_dot) * DQuat::from_vec4(q);
    let b = pure(omega) * DQuat::from_vec4(q_dot);
    0.5 * (DVec4::from(a) + DVec4::from(b))
}

/// ω = 2 q̇ q* (thesis eq. 2.25), the vector part; the scalar part, 2 q·q̇, vanishes for a
/// unit quaternion and is dropped.
#[must_use]
pub fn angular_velocity(q: DVec4, q_dot: DVec4) -> DVec3 {
    let w = DQuat::from_vec4(q_dot) * DQuat::from_vec4(q).conjugate();
    2.0 * DVec3::new(w.x, w.y, w.z)
}

/// q̇ = ½ ω q (thesis eq. 2.20).
#[must_use]
pub fn quaternion_velocity(q: DVec4, omega: DVec3) -> DVec4 {
    let w = DQuat::from_xyzw(omega.x, omega.y, omega.z, 0.0) * DQuat::from_vec4(q);
    0.5 * DVec4::from(w)
}

/// The rotation by angle |ω| dt about ω, as a unit quaternion (thesis eq. 2.15).
#[must_use]
pub fn rotation_step(omega: DVec3, dt: f64) -> DQuat {
    DQuat::from_scaled_axis(omega * dt)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn velocity_round_trip() {
        let q = DVec4::from(DQuat::from_euler(
            talus_geom::glam::EulerRot::XYZ,
            0.3,
            -0.4,
            1.2,
        ));
        let omega = DVec3::new(0.5, -2.0, 1.5);
        let back = angular_velocity(q, quaternion_velocity(q, omega));
        assert!((back - omega).length() < 1e-15);
    }

    #[test]
    fn torque_free_principal_axis_spin_is_steady() {
        let q = DQuat::from_rotation_z(0.7);
        let principal = DVec3::new(1.0, 2.0, 3.0);
        let omega = q * DVec3::new(0.0, 4.0, 0.0);
        assert!(angular_acceleration(q, principal, omega, DVec3::ZERO).length() < 1e-15);
        // Off a principal axis the body precesses: ω̇ = I⁻¹ (Iω × ω) in the body frame.
        let omega_b = DVec3::new(1.0, 1.0, 0.0);
        let expected_b = (principal * omega_b).cross(omega_b) / principal;
        let got = angular_acceleration(q, principal, q * omega_b, DVec3::ZERO);
        assert!((got - q * expected_b).length() < 1e-15);
    }
}
