//! Geometry of convex polyhedral grains for the talus DEM engine.
//!
//! Pure geometry: no time, no forces, no ECS. It provides
//! * [`ConvexPolyhedron`]: hulls of point clouds with half-edge adjacency,
//! * [`MassProperties`]: volume, centre of mass and inertia by pyramid decomposition,
//! * [`Aabb`] and [`BoundingEllipsoid`]: the min-max and the ellipsoid bounding-box methods,
//! * [`generate`]: grains with vertices on an ellipsoid, platonic solids and boxes,
//! * [`closest_features`]: the closest-feature walk (V-Clip) with a per-pair [`FeatureCache`],
//! * [`overlap`]: volume, centroid, normal and area of the intersection of two grains.
//!
//! The math types come from [`glam`], re-exported here so that every user shares one version.

pub use glam;

mod bounds;
mod brute;
mod closest;
mod eigen;
mod error;
mod face_merge;
mod feature;
pub mod generate;
mod hull;
mod iso;
mod mass;
mod overlap;
mod overlap_half_space;
mod overlap_reuse;
mod overlap_trace;
mod polyhedron;
mod pose;
mod proximity;
mod segment;
mod tagged_polygon;
mod triangle_hull;

pub use bounds::{Aabb, BoundingEllipsoid};
pub use brute::closest_features_exhaustive;
pub use closest::{closest_features, exhaustive_fallbacks};
pub use eigen::symmetric_eigen;
pub use error::GeomError;
pub use feature::{Feature, FeatureCache};
pub use hull::{COORDINATE_LIMIT, FLATNESS_TOLERANCE, HULL_TOLERANCE, MIN_VOLUME_RATIO};
pub use mass::MassProperties;
pub use overlap::{Overlap, OverlapHint, overlap, overlap_coherent, overlap_with_hint};
pub use overlap_half_space::overlap_half_space;
pub use polyhedron::{
    ConvexPolyhedron, Face, HalfEdge, VertexHalfEdges, polygon_area_and_moment, polygon_area_vector,
};
pub use pose::Pose;
pub use proximity::Proximity;
pub use segment::{closest_on_segment, closest_segment_segment};
