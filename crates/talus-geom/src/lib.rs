//! Geometry of convex polyhedral grains for the talus DEM engine.
//!
//! Pure geometry: no time, no forces, no ECS. It provides
//! * [`ConvexPolyhedron`]: hulls of point clouds with half-edge adjacency,
//! * [`MassProperties`]: volume, centre of mass and inertia by pyramid decomposition,
//! * [`Aabb`] and [`BoundingEllipsoid`]: the min-max and the ellipsoid bounding-box methods,
//! * [`generate`]: grains with vertices on an ellipsoid, platonic solids and boxes.
//!
//! The math types come from [`glam`], re-exported here so that every user shares one version.

pub use glam;

mod bounds;
mod eigen;
mod error;
mod face_merge;
pub mod generate;
mod hull;
mod mass;
mod polyhedron;
mod pose;
mod triangle_hull;

pub use bounds::{Aabb, BoundingEllipsoid};
pub use eigen::symmetric_eigen;
pub use error::GeomError;
pub use hull::{COORDINATE_LIMIT, FLATNESS_TOLERANCE, HULL_TOLERANCE, MIN_VOLUME_RATIO};
pub use mass::MassProperties;
pub use polyhedron::{ConvexPolyhedron, Face, HalfEdge, VertexHalfEdges, polygon_area_vector};
pub use pose::Pose;
