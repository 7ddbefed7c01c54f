//! The talus engine: a world of rigid convex polyhedral grains, integrated in time.
//!
//! * [`shape`]: the shape library; each shape stored once in its principal frame.
//! * [`material`]: grain materials.
//! * [`integrate`]: the 6-value Gear predictor–corrector and velocity Verlet.
//! * [`broad`]: which grains' bounding boxes overlap, kept up to date step by step.
//! * [`force`]: contact force models and their registry by name.
//! * [`wall`]: half-spaces and kinematic bodies with motion laws.
//! * [`periodic`]: periodic boundaries, the wrap and the minimum image.
//! * [`kind`]: kinds of grain and the critical time step.
//! * [`World`]: grains as hecs entities, the step pipeline.
//! * [`distribute`]: one world on several processes, the same bits as on one.
//! * [`snapshot`]: checkpoints of a world's dynamic state ([`World::snapshot`],
//!   [`World::restore`]).

pub mod broad;
mod contact;
pub mod distribute;
mod error;
pub mod exact_sum;
mod fixed_sum;
pub mod force;
pub mod integrate;
mod joined_pairs;
pub mod kind;
mod laws;
mod load_sums;
pub mod material;
pub mod motion;
mod numbering;
pub mod periodic;
pub mod renumber;
pub mod shape;
pub mod snapshot;
mod step;
pub mod wall;
mod wall_sums;
mod workers;
mod world;

pub use error::SimError;
pub use snapshot::{PairRecord, WorldSnapshot};
pub use world::DEFAULT_RENUMBER_EVERY;
pub use world::{
    BodyRef, BoundingMethod, ContactReport, FieldInput, GrainDesc, GrainId, GrainState, SimParams,
    StepStats, World,
};
