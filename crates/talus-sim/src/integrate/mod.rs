//! Time integration of rigid grains: the 6-value Gear predictor–corrector (thesis §3.7)
//! and velocity Verlet as a reference.
//!
//! Both are split into the two halves around the one force evaluation of a step:
//! `predict` moves the grain to where the forces are evaluated and says how fast it moves
//! there ([`Kinematics`]); `correct` takes the [`Load`] found there and completes the step.

mod gear;
mod quaternion;
mod verlet;

pub use gear::{CORRECTOR, GearState};
pub use quaternion::{angular_acceleration, quaternion_acceleration};
pub use verlet::VerletState;

use talus_geom::Pose;
use talus_geom::glam::DVec3;

/// Which integrator a world uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub enum IntegratorKind {
    /// The 6-value Gear predictor–corrector (thesis §3.7), for positions and quaternions.
    #[default]
    Gear,
    /// Velocity Verlet for positions; for rotations, half kicks of the angular momentum
    /// around a drift by the exact quaternion of the half-step angular velocity.
    Verlet,
}

/// An integration scheme as the step uses it: the state it keeps per grain (an ECS
/// component) and the two halves of a step around the one force evaluation. The step is
/// generic over it, so the choice of scheme is made once per step, not per grain.
pub trait Integrator: hecs::Component + Sized {
    /// The state of a grain that starts at `kinematics` under `load` (gravity included),
    /// consistent with that load from the first step.
    fn initial(kinematics: &Kinematics, inertia: &Inertia, load: &Load, dt: f64) -> Self;

    /// Moves the grain to where the forces are evaluated and says how it moves there.
    fn predict(&mut self, pose: &mut Pose, inertia: &Inertia, dt: f64) -> Kinematics;

    /// Completes the step with the `load` found at the predicted `kinematics`.
    fn correct(
        &mut self,
        pose: &mut Pose,
        load: &Load,
        inertia: &Inertia,
        kinematics: &Kinematics,
        dt: f64,
    );

    /// Velocity and world angular velocity of a grain at `pose`.
    fn velocities(&self, pose: &Pose, inertia: &Inertia, dt: f64) -> (DVec3, DVec3);

    /// Adapts the state to a time step `ratio` times the old one (nothing for schemes that
    /// keep plain velocities).
    fn rescale(&mut self, ratio: f64) {
        let _ = ratio;
    }
}

/// The largest `ω dt` at which the 6-value Gear predictor–corrector (with c₀ = 3/16) stays
/// stable on an undamped harmonic oscillator of angular frequency ω: where the spectral
/// radius of its step's amplification matrix (the Pascal predictor, one force evaluation at
/// the predicted position, the corrector) first exceeds one.
pub const GEAR_STABILITY_LIMIT: f64 = 0.312_971_6;

impl IntegratorKind {
    /// The largest `ω dt` at which the scheme stays stable on an undamped harmonic
    /// oscillator of angular frequency ω: 2 for velocity Verlet, [`GEAR_STABILITY_LIMIT`]
    /// (about 0.313) for the Gear predictor–corrector. A contact of stiffness K between
    /// grains of effective mass m* has ω = √(K/m*); several contacts on one grain, and the
    /// rotations they drive, raise the highest ω further.
    #[must_use]
    pub fn stability_limit(self) -> f64 {
        match self {
            IntegratorKind::Gear => GEAR_STABILITY_LIMIT,
            IntegratorKind::Verlet => 2.0,
        }
    }

    /// Bytes of the state the scheme keeps per grain.
    #[must_use]
    pub fn state_bytes(self) -> usize {
        match self {
            IntegratorKind::Gear => size_of::<GearState>(),
            IntegratorKind::Verlet => size_of::<VerletState>(),
        }
    }
}

/// Force and torque on a grain, world frame; the torque is about the centre of mass.
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct Load {
    /// Force.
    pub force: DVec3,
    /// Torque about the centre of mass.
    pub torque: DVec3,
}

impl std::ops::AddAssign for Load {
    fn add_assign(&mut self, other: Load) {
        self.force += other.force;
        self.torque += other.torque;
    }
}

/// Where a grain is and how it moves at the point of a step where forces are evaluated.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Kinematics {
    /// Pose (centre of mass and body-to-world rotation).
    pub pose: Pose,
    /// Velocity of the centre of mass.
    pub velocity: DVec3,
    /// Angular velocity, world frame.
    pub angular_velocity: DVec3,
}

/// Mass and principal moments of inertia of a grain (body frame diagonal).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Inertia {
    /// Mass.
    pub mass: f64,
    /// Principal moments of inertia: the diagonal of the body-frame tensor.
    pub principal: DVec3,
}
