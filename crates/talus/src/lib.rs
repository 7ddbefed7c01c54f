//! talus: a discrete element method engine for rigid convex polyhedral grains.
//!
//! This facade re-exports the workspace crates under one name so that applications,
//! the top-level `examples/` and the end-to-end `tests/` share a single import path.
//!
//! * [`geom`] — convex polyhedra, mass properties, bounding boxes, grain generators,
//!   closest features and overlaps.
//! * [`sim`] — the engine: a world of grains and walls, integrators, broad phase, contact
//!   force models.

pub use talus_geom as geom;
pub use talus_geom::glam;
pub use talus_scenario as scenario;
pub use talus_sim as sim;
