//! Features of a polyhedron (vertex, edge, face) and the per-pair cache of the closest
//! features that makes repeated queries cheap (thesis §4.2: temporal coherence).

use glam::DVec3;

use crate::overlap::Overlap;
use crate::polyhedron::ConvexPolyhedron;
use crate::pose::Pose;

/// A vertex, edge or face of a polyhedron, by index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Feature {
    /// Vertex index.
    Vertex(u32),
    /// Undirected edge index (see [`ConvexPolyhedron::edges`]).
    Edge(u32),
    /// Face index.
    Face(u32),
}

impl Feature {
    /// Whether the index is valid for `poly`.
    #[must_use]
    pub fn is_valid_for(self, poly: &ConvexPolyhedron) -> bool {
        let (v, e, f) = poly.counts();
        match self {
            Feature::Vertex(i) => (i as usize) < v,
            Feature::Edge(i) => (i as usize) < e,
            Feature::Face(i) => (i as usize) < f,
        }
    }

    /// 0 for a vertex, 1 for an edge, 2 for a face.
    #[must_use]
    pub fn dimension(self) -> u8 {
        match self {
            Feature::Vertex(_) => 0,
            Feature::Edge(_) => 1,
            Feature::Face(_) => 2,
        }
    }
}

/// The closest-feature pair of two grains, kept by the caller between queries.
///
/// `Default` is a cold start. A cache whose features do not exist on the polyhedra it is
/// used with (for instance one carried over from another pair) is treated as cold.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FeatureCache {
    /// The feature on the first grain (`a`).
    pub feature_a: Feature,
    /// The feature on the second grain (`b`).
    pub feature_b: Feature,
    /// Walk steps of the last query: 0 when the cached pair was still the answer.
    pub last_steps: u32,
    /// How many queries through this cache ended in the exhaustive fallback.
    pub fallbacks: u32,
    /// The contact normal of the pair's last overlap, in grain b's frame (zero if none):
    /// [`crate::overlap`] starts from it, which keeps its candidate faces few while the
    /// contact persists. Set by [`FeatureCache::remember_normal`].
    pub normal_hint: DVec3,
    /// How far the grains may still move towards each other and stay apart: set to their
    /// distance by a query that finds them apart, to zero by one that finds them touching
    /// (and by [`crate::overlap_coherent`] when they overlap). A caller that bounds how far
    /// every point of the two grains has moved since (the sum over both grains) takes that
    /// off, and knows the grains are still apart, with no query, while it stays positive:
    /// the conservative advancement of collision detection.
    pub clearance: f64,
}

impl FeatureCache {
    /// Keeps the normal of `overlap` (grain b at `pose_b`) for the pair's next overlap.
    pub fn remember_normal(&mut self, overlap: &Overlap, pose_b: &Pose) {
        let hint = pose_b.rotation.conjugate() * overlap.normal;
        self.normal_hint = if hint.is_finite() { hint } else { DVec3::ZERO };
    }
}

impl Default for FeatureCache {
    fn default() -> Self {
        FeatureCache {
            feature_a: Feature::Vertex(0),
            feature_b: Feature::Vertex(0),
            last_steps: 0,
            fallbacks: 0,
            normal_hint: DVec3::ZERO,
            clearance: 0.0,
        }
    }
}
