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

use crate::motion::Reach;
use talus_geom::glam::DVec3;

/// Which integrator a world uses. Velocity Verlet by default: with the damping of
/// inelastic contacts its stable step is several times the Gear scheme's
/// ([`IntegratorKind::damped_stability_limit`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub enum IntegratorKind {
    /// The 6-value Gear predictor–corrector (thesis §3.7), for positions and quaternions.
    Gear,
    /// Velocity Verlet for positions; for rotations, half kicks of the angular momentum
    /// around a drift by the exact quaternion of the half-step angular velocity.
    #[default]
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

    /// How far the last [`Integrator::correct`] moved the pose: nothing for a scheme whose
    /// correction keeps it.
    fn corrected(&self) -> Reach {
        Reach::default()
    }

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

/// Spacing of the damping ratios of [`GEAR_DAMPED_LIMITS`].
pub const GEAR_DAMPING_STEP: f64 = 0.05;

/// The largest `ω dt` at which the Gear predictor–corrector stays stable on a harmonic
/// oscillator with a dashpot of damping ratio ζ = 0, 0.05, …, 3 (its first instability from
/// below, less 10⁻⁶; the dashpot acts on the predicted velocity, as in the step). Damping
/// raises the limit a little at first, then lowers it as 0.0816/ζ: past ζ ≈ 0.1 the limit is
/// one on the dashpot's rate, `2 ζ ω dt ≲ 0.163`. The integrator tests recompute every entry
/// from the scheme's own step.
pub const GEAR_DAMPED_LIMITS: [f64; 61] = [
    0.312971, 0.627090, 0.498605, 0.404734, 0.336086, 0.285083, 0.246348, 0.216246, 0.192340,
    0.172979, 0.157028, 0.143686, 0.132378, 0.122682, 0.114283, 0.106941, 0.100472, 0.094730,
    0.089602, 0.084994, 0.080833, 0.077056, 0.073614, 0.070464, 0.067570, 0.064904, 0.062438,
    0.060152, 0.058027, 0.056046, 0.054195, 0.052462, 0.050836, 0.049307, 0.047868, 0.046509,
    0.045226, 0.044011, 0.042859, 0.041766, 0.040728, 0.039739, 0.038798, 0.037899, 0.037042,
    0.036222, 0.035438, 0.034687, 0.033967, 0.033276, 0.032612, 0.031975, 0.031362, 0.030772,
    0.030204, 0.029656, 0.029128, 0.028618, 0.028126, 0.027650, 0.027191,
];

impl IntegratorKind {
    /// The largest `ω dt` at which the scheme stays stable on a harmonic oscillator of
    /// angular frequency ω with a dashpot of damping ratio `zeta`, or less: for velocity
    /// Verlet `2 (√(1 + ζ²) − ζ)` (2 undamped); for Gear the least of its undamped limit and
    /// [`GEAR_DAMPED_LIMITS`] at the next tabulated ratio at or above ζ (the limit falls with
    /// ζ there), and beyond the table `0.0816/ζ` scaled from its last entry (`ζ λ(ζ)` grows
    /// towards 0.0816 there).
    #[must_use]
    pub fn damped_stability_limit(self, zeta: f64) -> f64 {
        let zeta = zeta.max(0.0);
        match self {
            IntegratorKind::Verlet => 2.0 * ((1.0 + zeta * zeta).sqrt() - zeta),
            IntegratorKind::Gear => {
                let last = GEAR_DAMPED_LIMITS.len() - 1;
                let at = (zeta / GEAR_DAMPING_STEP).ceil();
                let limit = if at <= last as f64 {
                    GEAR_DAMPED_LIMITS[at as usize]
                } else {
                    GEAR_DAMPED_LIMITS[last] * (last as f64 * GEAR_DAMPING_STEP) / zeta
                };
                limit.min(GEAR_DAMPED_LIMITS[0])
            }
        }
    }

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
