//! Walls: half-spaces and kinematic convex bodies with prescribed motion (design §5).
//!
//! A wall has infinite mass: contacts push grains, never the wall. Its motion is given as a
//! function of time: fixed; a sinusoidal translation `A sin(2π f t + φ)` along a direction
//! (a vibrating floor, §1.2.2, or a tilted vibrating conveyor); a constant rotation about an
//! axis (a drum); and a wall can be removed at a given time (releasing a pile).

use std::f64::consts::TAU;
use std::sync::Arc;

use talus_geom::glam::{DQuat, DVec3};
use talus_geom::{Aabb, ConvexPolyhedron, Pose};

use crate::error::{SimError, finite, positive};
use crate::material::MaterialId;

/// Index of a wall in the world.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub struct WallId(pub u32);

/// The solid a wall is.
#[derive(Debug, Clone)]
pub enum WallGeometry {
    /// The half-space `normal · x ≤ 0` of the wall's frame: `normal` (unit) points out of the
    /// solid, into the space where grains are.
    HalfSpace {
        /// Outward unit normal, wall frame.
        normal: DVec3,
    },
    /// A convex polyhedron (a box, a slab, a funnel plate) in the wall's frame.
    Body(Arc<ConvexPolyhedron>),
}

/// How a wall moves; its pose at time t is the motion applied to its pose at t = 0.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Motion {
    /// At rest.
    Fixed,
    /// `x(t) = x₀ + direction · A sin(2π f t + φ)`.
    Oscillate {
        /// Unit direction.
        direction: DVec3,
        /// Amplitude A.
        amplitude: f64,
        /// Frequency f (Hz).
        frequency: f64,
        /// Phase φ (rad).
        phase: f64,
    },
    /// `x(t) = x₀ + a sin(2π f t + φ) + b sin(2π f t + φ + ψ)`: two components of one
    /// frequency, an ellipse in the plane of `a` and `b` — how vibrating conveyors are
    /// driven (§1.2.2, fig. 1.4).
    Elliptic {
        /// First component's displacement amplitude (m): direction times amplitude.
        a: DVec3,
        /// Second component's displacement amplitude (m).
        b: DVec3,
        /// Frequency f (Hz).
        frequency: f64,
        /// Phase φ (rad).
        phase: f64,
        /// Phase lead ψ of the second component (rad).
        lag: f64,
    },
    /// Rotation at a constant rate about the axis through `center`.
    Rotate {
        /// Unit axis.
        axis: DVec3,
        /// A point of the axis.
        center: DVec3,
        /// Angular velocity (rad/s; positive counter-clockwise about `axis`).
        angular_velocity: f64,
    },
}

/// A wall.
#[derive(Debug, Clone)]
pub struct Wall {
    /// A name for output.
    pub name: String,
    /// Its solid, in its own frame.
    pub geometry: WallGeometry,
    /// Its pose at t = 0.
    pub start: Pose,
    /// Its motion.
    pub motion: Motion,
    /// The time from which it no longer exists, if any.
    pub removed_at: Option<f64>,
    /// What it is made of: its contacts follow the law of the pair of materials. Without
    /// one a grain meets it with the law of the grain's material with itself.
    pub material: Option<MaterialId>,
}

/// A wall's pose and velocity field at one time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WallState {
    /// Pose.
    pub pose: Pose,
    /// Velocity of the frame's origin.
    pub velocity: DVec3,
    /// Angular velocity.
    pub angular_velocity: DVec3,
}

impl WallState {
    /// Velocity of the wall's material at world point `x`.
    #[must_use]
    pub fn velocity_at(&self, x: DVec3) -> DVec3 {
        self.velocity + self.angular_velocity.cross(x - self.pose.position)
    }
}

impl Wall {
    /// A wall, checked.
    ///
    /// # Errors
    /// [`SimError::InvalidParameter`] for a zero or non-finite normal, direction or axis,
    /// a negative or non-finite amplitude, frequency or rate, a non-unit rotation, or a
    /// non-finite removal time.
    pub fn new(
        name: &str,
        geometry: WallGeometry,
        start: Pose,
        motion: Motion,
        removed_at: Option<f64>,
    ) -> Result<Wall, SimError> {
        let unit = |what: &'static str, v: DVec3| {
            v.try_normalize()
                .filter(|u| u.is_finite())
                .ok_or(SimError::InvalidParameter {
                    name: what,
                    value: format!("{v:?}"),
                    allowed: "a non-zero finite vector",
                })
        };
        let geometry = match geometry {
            WallGeometry::HalfSpace { normal } => WallGeometry::HalfSpace {
                normal: unit("wall normal", normal)?,
            },
            body => body,
        };
        finite("wall position", start.position)?;
        if !(start.rotation.is_finite() && (start.rotation.length() - 1.0).abs() < 1e-6) {
            return Err(SimError::InvalidParameter {
                name: "wall orientation",
                value: format!("{:?}", start.rotation),
                allowed: "a unit quaternion",
            });
        }
        let motion = match motion {
            Motion::Fixed => Motion::Fixed,
            Motion::Oscillate {
                direction,
                amplitude,
                frequency,
                phase,
            } => {
                if !(amplitude.is_finite() && amplitude >= 0.0 && phase.is_finite()) {
                    return Err(SimError::InvalidParameter {
                        name: "oscillation amplitude or phase",
                        value: format!("{amplitude}, {phase}"),
                        allowed: "a finite amplitude ≥ 0 and a finite phase",
                    });
                }
                Motion::Oscillate {
                    direction: unit("oscillation direction", direction)?,
                    amplitude,
                    frequency: positive("oscillation frequency", frequency)?,
                    phase,
                }
            }
            Motion::Elliptic {
                a,
                b,
                frequency,
                phase,
                lag,
            } => {
                if !(a.is_finite() && b.is_finite() && phase.is_finite() && lag.is_finite()) {
                    return Err(SimError::InvalidParameter {
                        name: "elliptic oscillation amplitudes or phases",
                        value: format!("{a:?}, {b:?}, {phase}, {lag}"),
                        allowed: "finite amplitude vectors and phases",
                    });
                }
                Motion::Elliptic {
                    a,
                    b,
                    frequency: positive("oscillation frequency", frequency)?,
                    phase,
                    lag,
                }
            }
            Motion::Rotate {
                axis,
                center,
                angular_velocity,
            } => {
                if !angular_velocity.is_finite() {
                    return Err(SimError::InvalidParameter {
                        name: "wall angular velocity",
                        value: angular_velocity.to_string(),
                        allowed: "a finite rate",
                    });
                }
                Motion::Rotate {
                    axis: unit("rotation axis", axis)?,
                    center: finite("rotation centre", center)?,
                    angular_velocity,
                }
            }
        };
        if removed_at.is_some_and(|t| !t.is_finite()) {
            return Err(SimError::InvalidParameter {
                name: "wall removal time",
                value: format!("{removed_at:?}"),
                allowed: "a finite time",
            });
        }
        Ok(Wall {
            name: name.to_string(),
            geometry,
            start: Pose::new(start.position, start.rotation.normalize()),
            motion,
            removed_at,
            material: None,
        })
    }

    /// The same wall made of `material` (one the world has; with another, its contacts take
    /// the world's default law).
    #[must_use]
    pub fn with_material(self, material: MaterialId) -> Wall {
        Wall {
            material: Some(material),
            ..self
        }
    }

    /// Whether the wall exists at time `t`.
    #[must_use]
    pub fn is_present(&self, t: f64) -> bool {
        self.removed_at.is_none_or(|r| t < r)
    }

    /// Pose and velocities at time `t`.
    #[must_use]
    pub fn state(&self, t: f64) -> WallState {
        match self.motion {
            Motion::Fixed => WallState {
                pose: self.start,
                velocity: DVec3::ZERO,
                angular_velocity: DVec3::ZERO,
            },
            Motion::Oscillate {
                direction,
                amplitude,
                frequency,
                phase,
            } => {
                let w = TAU * frequency;
                let arg = w * t + phase;
                WallState {
                    pose: Pose::new(
                        self.start.position + direction * (amplitude * arg.sin()),
                        self.start.rotation,
                    ),
                    velocity: direction * (amplitude * w * arg.cos()),
                    angular_velocity: DVec3::ZERO,
                }
            }
            Motion::Elliptic {
                a,
                b,
                frequency,
                phase,
                lag,
            } => {
                let w = TAU * frequency;
                let arg = w * t + phase;
                WallState {
                    pose: Pose::new(
                        self.start.position + a * arg.sin() + b * (arg + lag).sin(),
                        self.start.rotation,
                    ),
                    velocity: (a * arg.cos() + b * (arg + lag).cos()) * w,
                    angular_velocity: DVec3::ZERO,
                }
            }
            Motion::Rotate {
                axis,
                center,
                angular_velocity,
            } => {
                let turn = DQuat::from_axis_angle(axis, angular_velocity * t);
                let position = center + turn * (self.start.position - center);
                let omega = axis * angular_velocity;
                WallState {
                    pose: Pose::new(position, (turn * self.start.rotation).normalize()),
                    velocity: omega.cross(position - center),
                    angular_velocity: omega,
                }
            }
        }
    }

    /// The wall's bounding box at `pose` (infinite along the plane of a half-space).
    #[must_use]
    pub fn aabb(&self, pose: &Pose) -> Aabb {
        match &self.geometry {
            WallGeometry::Body(poly) => poly.aabb(pose),
            WallGeometry::HalfSpace { normal } => {
                let n = pose.rotation * *normal;
                let p = pose.position;
                let mut min = DVec3::NEG_INFINITY;
                let mut max = DVec3::INFINITY;
                // Along an axis the normal is aligned with, the half-space ends at its plane.
                for i in 0..3 {
                    let others = (0..3).filter(|&j| j != i).all(|j| n[j] == 0.0);
                    if others {
                        if n[i] > 0.0 {
                            max[i] = p[i];
                        } else {
                            min[i] = p[i];
                        }
                    }
                }
                Aabb { min, max }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_elliptic_motion_traces_its_ellipse_with_the_derivative_as_velocity() {
        // Perpendicular components a quarter period apart: (x/a)² + (z/b)² = 1 at all times.
        let (a, b) = (0.002, 0.001);
        let w = Wall::new(
            "conveyor",
            WallGeometry::HalfSpace { normal: DVec3::Z },
            Pose::IDENTITY,
            Motion::Elliptic {
                a: DVec3::new(a, 0.0, 0.0),
                b: DVec3::new(0.0, 0.0, b),
                frequency: 7.0,
                phase: 0.3,
                lag: std::f64::consts::FRAC_PI_2,
            },
            None,
        )
        .unwrap();
        let h = 1e-7;
        for k in 0..50 {
            let t = 0.0031 * f64::from(k);
            let p = w.state(t).pose.position;
            let on_ellipse = (p.x / a).powi(2) + (p.z / b).powi(2);
            assert!((on_ellipse - 1.0).abs() < 1e-12, "{on_ellipse}");
            let numeric = (w.state(t + h).pose.position - w.state(t - h).pose.position) / (2.0 * h);
            assert!((numeric - w.state(t).velocity).length() < 1e-7);
        }
        let bad = Wall::new(
            "bad",
            WallGeometry::HalfSpace { normal: DVec3::Z },
            Pose::IDENTITY,
            Motion::Elliptic {
                a: DVec3::X,
                b: DVec3::new(f64::NAN, 0.0, 0.0),
                frequency: 1.0,
                phase: 0.0,
                lag: 0.0,
            },
            None,
        );
        assert!(bad.is_err());
    }

    #[test]
    fn motions_match_their_laws() {
        let w = Wall::new(
            "floor",
            WallGeometry::HalfSpace { normal: DVec3::Z },
            Pose::IDENTITY,
            Motion::Oscillate {
                direction: DVec3::new(0.0, 0.0, 2.0),
                amplitude: 0.01,
                frequency: 10.0,
                phase: 0.0,
            },
            None,
        )
        .unwrap();
        let s = w.state(0.0125);
        assert!((s.pose.position.z - 0.01 * (TAU * 10.0 * 0.0125).sin()).abs() < 1e-15);
        assert!((s.velocity.z - 0.01 * TAU * 10.0 * (TAU * 0.125).cos()).abs() < 1e-12);
        let drum = Wall::new(
            "drum",
            WallGeometry::Body(Arc::new(talus_geom::generate::cube(0.1).unwrap())),
            Pose::from_translation(DVec3::new(1.0, 0.0, 0.0)),
            Motion::Rotate {
                axis: DVec3::Y,
                center: DVec3::ZERO,
                angular_velocity: std::f64::consts::FRAC_PI_2,
            },
            Some(5.0),
        )
        .unwrap();
        let s = drum.state(1.0);
        assert!((s.pose.position - DVec3::new(0.0, 0.0, -1.0)).length() < 1e-15);
        assert!(
            (s.velocity_at(s.pose.position) - DVec3::new(-std::f64::consts::FRAC_PI_2, 0.0, 0.0))
                .length()
                < 1e-15
        );
        assert!(drum.is_present(4.9) && !drum.is_present(5.0));
        assert!(
            Wall::new(
                "bad",
                WallGeometry::HalfSpace {
                    normal: DVec3::ZERO
                },
                Pose::IDENTITY,
                Motion::Fixed,
                None
            )
            .is_err()
        );
    }

    #[test]
    fn half_space_boxes() {
        let floor = Wall::new(
            "floor",
            WallGeometry::HalfSpace { normal: DVec3::Z },
            Pose::from_translation(DVec3::new(0.0, 0.0, -1.0)),
            Motion::Fixed,
            None,
        )
        .unwrap();
        let b = floor.aabb(&floor.start);
        assert_eq!(b.max.z, -1.0);
        assert_eq!(b.min.z, f64::NEG_INFINITY);
        assert_eq!(b.max.x, f64::INFINITY);
        let tilted = Wall::new(
            "ramp",
            WallGeometry::HalfSpace {
                normal: DVec3::new(0.0, 1.0, 1.0),
            },
            Pose::IDENTITY,
            Motion::Fixed,
            None,
        )
        .unwrap();
        let b = tilted.aabb(&tilted.start);
        assert!(!b.max.is_nan() && b.max.z == f64::INFINITY);
    }
}
