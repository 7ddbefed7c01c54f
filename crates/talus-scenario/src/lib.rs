//! Experiments for the talus DEM engine: a scenario file in RON describes a whole
//! experiment (the thesis' parameter file, app. D); this crate reads and checks it, builds
//! the world, runs it with measurements and outputs, and writes and resumes checkpoints.
//!
//! * [`schema`]: the file's format; [`load`]: reading it and `--set` overrides;
//!   [`validate`]: range and reference checks; [`check`]: the report of `talus check`;
//!   [`resources`]: the memory and disk a run needs and the machine has;
//! * [`build`]: the world a scenario describes, with [`walls`], [`placement`], the
//!   contact coefficients of each pair of materials ([`pairs`]) and grain shapes read from
//!   files ([`shape_file`] reads one file, [`grain_shapes`] those of every population);
//! * [`run`]: the run loop, with [`probe`] (measurements), [`analysis`] (their math),
//!   [`frames`], [`summary`] and its page [`run_report`], [`checkpoint`] with its
//!   [`journal`] and [`checksum`], and [`blowup`] detection; [`sweep`]: parameter sweeps
//!   over many runs;
//! * [`output`]: file writers (atomic writes, CSV, VTK, PVD, PNG plots, HTML reports) and
//!   the run's locked output directory; [`number`]: numbers in messages.

pub mod analysis;
pub mod blowup;
pub mod build;
pub mod check;
pub mod checkpoint;
pub mod checksum;
pub mod error;
pub mod fill;
pub mod frames;
pub mod grain_shapes;
pub mod journal;
pub mod load;
pub mod number;
pub mod output;
pub mod pairs;
pub mod placement;
pub mod population_ids;
pub mod probe;
pub mod resources;
pub mod run;
pub mod run_report;
pub mod schema;
pub mod seeds;
pub mod shape_file;
mod start_grains;
pub mod summary;
pub mod sweep;
pub mod validate;
pub mod walls;

pub use build::{Experiment, build};
pub use error::ScenarioError;
pub use run::{Progress, Runner};
pub use schema::Scenario;
