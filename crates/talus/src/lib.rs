//! talus: a discrete element method engine for rigid convex polyhedral grains.
//!
//! This facade re-exports the workspace crates under one name so that applications,
//! the top-level `examples/` and the end-to-end `tests/` share a single import path.
//!
//! * [`geom`] — convex polyhedra, mass properties, bounding boxes, grain generators.

pub use talus_geom as geom;
pub use talus_geom::glam;
