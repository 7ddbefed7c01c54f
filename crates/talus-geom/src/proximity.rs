//! The answer of a closest-feature query.

use glam::DVec3;

use crate::feature::Feature;

/// Whether two grains are apart (and how far), or penetrate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Proximity {
    /// The grains do not penetrate; `distance` may be 0 when they just touch.
    Separated {
        /// Distance between the grains.
        distance: f64,
        /// Closest point on grain `a`, world frame.
        point_a: DVec3,
        /// Closest point on grain `b`, world frame.
        point_b: DVec3,
    },
    /// The grains penetrate; the witness features intersect (an edge crossing a face) or
    /// one lies inside the other (a vertex inside the other grain).
    Penetrating {
        /// Witness feature on grain `a`.
        feature_a: Feature,
        /// Witness feature on grain `b`.
        feature_b: Feature,
    },
}

impl Proximity {
    /// The distance, or `None` when penetrating.
    #[must_use]
    pub fn distance(&self) -> Option<f64> {
        match self {
            Proximity::Separated { distance, .. } => Some(*distance),
            Proximity::Penetrating { .. } => None,
        }
    }

    /// Whether the grains penetrate.
    #[must_use]
    pub fn is_penetrating(&self) -> bool {
        matches!(self, Proximity::Penetrating { .. })
    }
}
