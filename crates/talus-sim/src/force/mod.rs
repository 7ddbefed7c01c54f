//! Contact force models (design §5): how the overlap of two grains turns into a force.
//!
//! A model receives the geometry of one contact ([`ContactInput`]: overlap volume,
//! centroid, normal and area from `talus_geom::overlap`, or the gap for a law that reaches
//! across one, the relative velocity at the centroid and the relative angular velocity, the
//! pair's effective mass and characteristic length) and its per-contact history, and returns a [`ContactLoad`]: the force on the
//! second grain of the pair, applied at the overlap's centroid, and a torque on it (a
//! couple: twisting or rolling resistance); the first grain feels the opposite of both.
//!
//! Models are looked up by name in a [`ForceModelRegistry`], so that a scenario file can
//! pick one and an application can add its own without editing talus:
//!
//! ```
//! use talus_sim::force::{Coefficients, ForceModelRegistry};
//! let registry = ForceModelRegistry::default();
//! let coefficients = Coefficients::from([("stiffness", 1e7), ("restitution", 0.5), ("friction", 0.5)]);
//! let model = registry.build("volumetric", &coefficients).unwrap();
//! assert_eq!(model.name(), "volumetric");
//! ```

mod cohesion;
mod damping;
mod energy;
mod friction;
mod part;
mod registry;
mod rolling;
mod twisting;
mod volumetric;
mod yade;

pub use crate::kind::{GrainKind, Limit, critical_time_step, critical_time_step_and_limit};
pub use cohesion::{AreaCohesion, CapillaryBridge};
pub use damping::{NoDamping, RestitutionDamping, UnloadingDamping, damping_ratio};
pub use energy::FengNormal;
pub use friction::{NoTangential, TangentialSpring};
pub use part::{ComposedLaw, CompositionError, Part, PartEntry, Partial, Role, Spring};
pub use registry::{
    CoefficientSpec, Coefficients, ForceModelError, ForceModelRegistry, Mixing, ModelEntry,
    PartChoice,
};
pub use rolling::RollingResistance;
pub use twisting::TwistingSpring;
pub use volumetric::VolumetricNormal;
pub use yade::{YadeNormal, YadeShear};

use talus_geom::Overlap;
use talus_geom::glam::DVec3;

/// What a force model sees of one contact.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ContactInput {
    /// The overlap of the two grains: volume, centroid, unit normal from the first grain
    /// towards the second, projected contact area.
    pub overlap: Overlap,
    /// Velocity of the second grain's material at the centroid relative to the first's.
    pub relative_velocity: DVec3,
    /// Angular velocity of the second grain relative to the first's (world frame).
    pub relative_angular_velocity: DVec3,
    /// Effective mass `m_a m_b / (m_a + m_b)` (the grain's mass against a wall).
    pub effective_mass: f64,
    /// Characteristic length of the pair: the harmonic mean `2 r_a r_b / (r_a + r_b)` of the
    /// grains' equivalent-sphere radii (`2 r` against a wall).
    pub length: f64,
    /// Time step.
    pub dt: f64,
    /// Whether this is the first step of the contact (its history is fresh).
    pub new_contact: bool,
    /// The distance between the grains when they do not touch (zero when they do): a law
    /// with a range ([`ForceModel::range`]) meets pairs up to that far apart, with an
    /// overlap of no volume and no area at the middle of their closest points, its normal
    /// from the first grain's closest point to the second's.
    pub gap: f64,
}

impl ContactInput {
    /// The normal component of the relative velocity: negative while the grains approach.
    #[must_use]
    pub fn normal_velocity(&self) -> f64 {
        self.relative_velocity.dot(self.overlap.normal)
    }

    /// The relative velocity in the tangent plane.
    #[must_use]
    pub fn tangential_velocity(&self) -> DVec3 {
        self.relative_velocity - self.overlap.normal * self.normal_velocity()
    }
}

#[cfg(test)]
impl ContactInput {
    /// A still, face-on contact along z of a square millimetre, 1 µm deep, for the parts'
    /// tests.
    pub(crate) fn face_on() -> ContactInput {
        ContactInput {
            overlap: Overlap {
                volume: 1e-9,
                centroid: DVec3::ZERO,
                normal: DVec3::Z,
                area: 1e-6,
                area_moment: DVec3::ZERO,
            },
            relative_velocity: DVec3::ZERO,
            relative_angular_velocity: DVec3::ZERO,
            effective_mass: 1.0,
            length: 1e-3,
            dt: 1e-5,
            new_contact: false,
            gap: 0.0,
        }
    }
}

/// What a contact law gives for one contact: the force on the second body, applied at the
/// overlap's centroid, and a couple on it; the first body feels the opposite of both.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ContactLoad {
    /// Force on the second body (world frame).
    pub force: DVec3,
    /// Couple on the second body (world frame): a torque that comes with no force, such as
    /// a resistance to twisting or rolling. The moment of `force` about each body's centre
    /// is added by the engine.
    pub torque: DVec3,
}

impl ContactLoad {
    /// A force alone.
    #[must_use]
    pub fn from_force(force: DVec3) -> Self {
        ContactLoad {
            force,
            torque: DVec3::ZERO,
        }
    }
}

/// The stiffest springs of a contact law beside its normal one at one contact: what the
/// critical time step counts beside the normal stiffness (see [`crate::kind`]).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct SideSprings {
    /// The stiffest force in the tangent plane, per displacement there (N/m).
    pub force: f64,
    /// The stiffest couple, per radian of relative turn (N m/rad).
    pub couple: f64,
}

/// Most history values a force model may keep per contact: they are stored inline in the
/// contact list, without a heap allocation per contact.
pub const MAX_HISTORY: usize = 8;

/// A contact force law.
pub trait ForceModel: Send + Sync {
    /// The name the model is registered under.
    fn name(&self) -> &str;

    /// Number of history values the model keeps per contact (zero-initialised when a
    /// contact starts, kept as long as the pair of grains stays in contact); at most
    /// [`MAX_HISTORY`].
    fn history_len(&self) -> usize;

    /// The force on the second grain of the pair, applied at the overlap's centroid, and
    /// the couple on it.
    fn load(&self, contact: &ContactInput, history: &mut [f64]) -> ContactLoad;

    /// The stiffness dF/dδ of the normal force for a contact of projected area `area`
    /// between grains of characteristic length `length`: the basis of the critical time
    /// step.
    fn normal_stiffness(&self, area: f64, length: f64) -> f64;

    /// The stiffest of the law's tangential, twisting and rolling springs at a contact of
    /// projected area `area` between grains of characteristic length `length`, each at its
    /// largest lever (see [`crate::kind`]): the critical time step counts them where they
    /// are stiffer than the normal spring. None by default.
    fn side_springs(&self, area: f64, length: f64) -> SideSprings {
        let _ = (area, length);
        SideSprings::default()
    }

    /// The damping ratio ζ of the normal dashpot (zero without one): with the stiffness,
    /// what the integrator's stable step depends on ([`critical_time_step`]).
    fn damping_ratio(&self) -> f64 {
        0.0
    }

    /// The largest gap between two bodies at which the law still acts (a liquid bridge's
    /// rupture distance); zero for a law of touching bodies only. Bounding boxes are grown
    /// to find such pairs, and a pair beyond the range forgets its history.
    fn range(&self) -> f64 {
        0.0
    }
}
