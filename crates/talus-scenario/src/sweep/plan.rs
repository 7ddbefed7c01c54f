//! The plan of a sweep, kept in its directory (`sweep.json`): the base scenario, the axes,
//! the seeds and the runs. Starting the same sweep again finds the plan and resumes it; a
//! different sweep in the same directory is refused, so that runs of two sweeps are never
//! mixed in one table.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::ScenarioError;
use crate::output::atomic::write_atomic;
use crate::output::run_dir::dir_error;
use crate::run::io_error;
use crate::sweep::grid::{Axis, GridPoint, assignments, points, run_name};

/// The plan's file in the sweep directory.
pub const PLAN_FILE: &str = "sweep.json";

/// Version of the plan's format.
const FORMAT: u32 = 1;

/// One run of the sweep.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlannedRun {
    /// Its folder under `runs/`.
    pub name: String,
    /// Its axis values and seed.
    pub point: GridPoint,
}

/// What a sweep runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Plan {
    /// Version of this format.
    pub format: u32,
    /// The scenario file, as given.
    pub scenario_file: PathBuf,
    /// The scenario every run starts from, as RON, with the sweep's `--set` applied (so an
    /// edited scenario file is noticed when the sweep is resumed).
    pub base: String,
    /// The `--set` assignments common to every run.
    pub set: Vec<String>,
    /// The varied keys.
    pub axes: Vec<Axis>,
    /// The seeds of every grid point.
    pub seeds: Vec<u64>,
    /// The runs, in order.
    pub runs: Vec<PlannedRun>,
}

impl Plan {
    /// The plan of `axes` × `seeds` on the scenario `base` (RON text) from `scenario_file`.
    #[must_use]
    pub fn new(
        scenario_file: &Path,
        base: String,
        set: Vec<String>,
        axes: Vec<Axis>,
        seeds: Vec<u64>,
    ) -> Plan {
        let runs = points(&axes, &seeds)
            .into_iter()
            .enumerate()
            .map(|(i, point)| PlannedRun {
                name: run_name(i, &axes, &point),
                point,
            })
            .collect();
        Plan {
            format: FORMAT,
            scenario_file: scenario_file.to_path_buf(),
            base,
            set,
            axes,
            seeds,
            runs,
        }
    }

    /// The `--set` assignments that make run `run` from the base scenario (which holds the
    /// common ones already): its axis values and its seed.
    #[must_use]
    pub fn assignments(&self, run: &PlannedRun) -> Vec<String> {
        assignments(&self.axes, &run.point)
    }

    /// The plan stored in `dir`, if there is one.
    ///
    /// # Errors
    /// [`ScenarioError::OutputDir`] for a plan that cannot be read as one (damaged, or a file
    /// of the user's under the same name).
    pub fn read(dir: &Path) -> Result<Option<Plan>, ScenarioError> {
        let path = dir.join(PLAN_FILE);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(source) => return Err(io_error(&path, source)),
        };
        let plan: Plan = serde_json::from_str(&text).map_err(|e| {
            dir_error(
                &path,
                format!(
                    "is not the plan of a talus sweep ({e}); move it elsewhere or choose another \
                     --out"
                ),
            )
        })?;
        if plan.format != FORMAT {
            return Err(dir_error(
                &path,
                format!(
                    "holds a sweep of format {} (this talus writes format {FORMAT}); choose \
                     another --out",
                    plan.format
                ),
            ));
        }
        Ok(Some(plan))
    }

    /// Writes the plan into `dir`, atomically.
    ///
    /// # Errors
    /// [`ScenarioError::Io`] if it cannot be written.
    pub fn write(&self, dir: &Path) -> Result<(), ScenarioError> {
        let path = dir.join(PLAN_FILE);
        let text = serde_json::to_string_pretty(self).map_err(|e| ScenarioError::Engine {
            path: path.clone(),
            context: "sweep plan".into(),
            message: e.to_string(),
        })?;
        write_atomic(&path, text.as_bytes()).map_err(|source| io_error(&path, source))
    }

    /// How `self` (the stored plan) differs from `other`, in words, or `None` if they run
    /// the same scenarios.
    #[must_use]
    pub fn difference(&self, other: &Plan) -> Option<String> {
        if self.base != other.base {
            Some(format!(
                "the scenario ({} with --set {}) is not the one the sweep started with (was the \
                 file edited?)",
                other.scenario_file.display(),
                if other.set.is_empty() {
                    "none".to_string()
                } else {
                    other.set.join(" ")
                }
            ))
        } else if self.axes != other.axes {
            let show = |axes: &[Axis]| {
                axes.iter()
                    .map(|a| format!("{}={}", a.key, a.values.join(",")))
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            Some(format!(
                "it varies {}, not {}",
                show(&self.axes),
                show(&other.axes)
            ))
        } else if self.seeds != other.seeds {
            Some(format!(
                "its seeds are {:?}, not {:?}",
                self.seeds, other.seeds
            ))
        } else {
            None
        }
    }
}
