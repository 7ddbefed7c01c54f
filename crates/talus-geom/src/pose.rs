//! Rigid placement of a body in the world.

use glam::{DMat3, DQuat, DVec3};

/// Position and orientation of a body: `world = rotation · body + position`.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Pose {
    /// Where the body-frame origin is in the world.
    pub position: DVec3,
    /// Unit quaternion turning body-frame vectors into world-frame vectors.
    pub rotation: DQuat,
}

impl Default for Pose {
    fn default() -> Self {
        Self::IDENTITY
    }
}

impl Pose {
    /// Body frame equal to the world frame.
    pub const IDENTITY: Pose = Pose {
        position: DVec3::ZERO,
        rotation: DQuat::IDENTITY,
    };

    /// A pose from a position and a unit quaternion.
    #[must_use]
    pub fn new(position: DVec3, rotation: DQuat) -> Self {
        Pose { position, rotation }
    }

    /// A pure translation.
    #[must_use]
    pub fn from_translation(position: DVec3) -> Self {
        Pose {
            position,
            rotation: DQuat::IDENTITY,
        }
    }

    /// The rotation as a matrix (cheaper when many points are transformed).
    #[must_use]
    pub fn rotation_matrix(&self) -> DMat3 {
        DMat3::from_quat(self.rotation)
    }

    /// A body-frame point in the world frame.
    #[must_use]
    pub fn transform_point(&self, body: DVec3) -> DVec3 {
        self.rotation * body + self.position
    }

    /// A world-frame point in the body frame.
    #[must_use]
    pub fn inverse_transform_point(&self, world: DVec3) -> DVec3 {
        self.rotation.inverse() * (world - self.position)
    }
}
