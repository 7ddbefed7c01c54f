//! The directory of a sweep: its plan, one run directory per grid point under `runs/`, the
//! tables and the plots; locked while a sweep writes into it.
//!
//! Like a run's directory (see [`crate::output::RunDir`]), it is never made to lose a file
//! of the user's: a directory that holds files under the names a sweep writes but no plan
//! of a sweep is refused, and a sweep different from the one the directory holds is only
//! replaced when asked to (and then only run by run, through each run's own manifest).

use std::fs::{self, File};
use std::path::{Path, PathBuf};

use crate::error::ScenarioError;
use crate::output::run_dir::{REPORT_FILE, dir_error, lock};
use crate::run::io_error;
use crate::sweep::plan::{PLAN_FILE, Plan};

/// The lock held while a sweep writes into its directory.
pub const SWEEP_LOCK_FILE: &str = ".talus-sweep.lock";
/// One row per run.
pub const TABLE_FILE: &str = "sweep.csv";
/// One row per grid point: the mean and spread over the seeds.
pub const MEANS_FILE: &str = "sweep_means.csv";
/// Folder of the run directories.
pub const RUNS_DIR: &str = "runs";
/// Folder of the plots.
pub const PLOTS_DIR: &str = "plots";

/// A sweep's directory, locked, with its plan written.
#[derive(Debug)]
pub struct SweepDir {
    root: PathBuf,
    /// Held open for the lifetime of the value: closing it releases the lock.
    _lock: File,
}

impl SweepDir {
    /// Opens (creating it if needed) and locks `root` for `plan`, and writes the plan.
    ///
    /// # Errors
    /// [`ScenarioError::OutputDir`]: not a directory, another process writes into it, it
    /// holds files a sweep writes but no plan (they are the user's), or it holds a different
    /// sweep and `replace` is false; [`ScenarioError::Io`] for the file system's failures.
    pub fn open(root: &Path, plan: &Plan, replace: bool) -> Result<SweepDir, ScenarioError> {
        if root.exists() && !root.is_dir() {
            return Err(dir_error(
                root,
                "is not a directory; choose a directory for the sweep with --out".into(),
            ));
        }
        fs::create_dir_all(root).map_err(|source| io_error(root, source))?;
        let lock = lock(root, SWEEP_LOCK_FILE)?;
        match Plan::read(root)? {
            Some(old) => {
                if let Some(difference) = old.difference(plan)
                    && !replace
                {
                    return Err(dir_error(
                        root,
                        format!(
                            "holds another sweep: {difference}; choose another --out, or pass \
                             --force to run this sweep here (the earlier sweep's runs that \
                             this one repeats are replaced)"
                        ),
                    ));
                }
            }
            None => {
                let present: Vec<&str> = [TABLE_FILE, MEANS_FILE, REPORT_FILE, RUNS_DIR, PLOTS_DIR]
                    .into_iter()
                    .filter(|name| root.join(name).symlink_metadata().is_ok())
                    .collect();
                if !present.is_empty() {
                    return Err(dir_error(
                        root,
                        format!(
                            "holds {} but no {PLAN_FILE}, so not a sweep of talus: talus \
                             never overwrites files that are not its own; move them elsewhere \
                             or choose another --out",
                            present.join(", ")
                        ),
                    ));
                }
            }
        }
        plan.write(root)?;
        Ok(SweepDir {
            root: root.to_path_buf(),
            _lock: lock,
        })
    }

    /// The directory.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.root
    }

    /// The directory of the run named `name`.
    #[must_use]
    pub fn run_path(&self, name: &str) -> PathBuf {
        self.root.join(RUNS_DIR).join(name)
    }
}
