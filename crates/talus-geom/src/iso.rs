//! Rigid transforms between two bodies' frames, as a matrix and a translation.

use glam::{DMat3, DVec3};

use crate::pose::Pose;

/// `x ↦ rotation · x + translation`; cheaper to apply than a quaternion.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Iso {
    pub rotation: DMat3,
    pub translation: DVec3,
}

impl Iso {
    /// The transform from the body frame of `from` to the body frame of `to`.
    #[inline]
    pub fn between(from: &Pose, to: &Pose) -> Iso {
        // Unit quaternions: the conjugate is the inverse, and their product is a unit
        // quaternion up to round-off that the matrix conversion does not amplify.
        let to_inverse = to.rotation.conjugate();
        let rotation = DMat3::from_quat(to_inverse * from.rotation);
        let translation = to_inverse * (from.position - to.position);
        Iso {
            rotation,
            translation,
        }
    }

    /// The inverse transform.
    #[inline]
    pub fn inverse(&self) -> Iso {
        let rotation = self.rotation.transpose();
        Iso {
            rotation,
            translation: -(rotation * self.translation),
        }
    }

    #[inline]
    pub fn point(&self, p: DVec3) -> DVec3 {
        self.rotation * p + self.translation
    }

    #[inline]
    pub fn vector(&self, v: DVec3) -> DVec3 {
        self.rotation * v
    }
}
