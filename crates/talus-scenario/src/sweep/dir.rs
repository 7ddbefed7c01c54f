//! The directory of a sweep: its plan, one run directory per grid point under `runs/`, the
//! tables, the plots and the report; locked while a sweep writes into it.
//!
//! It is protected as a run's directory is, with the same machinery
//! ([`crate::output::run_dir`]):
//! * every file the sweep writes at its top and in `plots/` (the plan, the tables, the
//!   report, the flow rule, the plots) is recorded in the manifest [`SWEEP_MANIFEST_FILE`]
//!   before it is first written;
//! * a directory that holds a file under one of those names that the manifest does not list
//!   is refused: that file is the user's (and a directory that holds such names but no plan
//!   is not a sweep's at all); files of the user's under other names, in `plots/` or beside
//!   it, are never touched;
//! * it takes the lock file of a run's directory, [`LOCK_FILE`], so that a sweep excludes a
//!   `talus run`, a `talus resume` or another sweep on the same directory, and they it;
//! * temporary files of atomic writes that a killed sweep left behind are removed when the
//!   directory is next opened;
//! * a sweep different from the one the directory holds is only replaced when asked to (and
//!   then only run by run, through each run's own manifest).
//!
//! The manifest is not a run's [`MANIFEST_FILE`]: the sweep's `report.html` is not a run's
//! report, and a `talus run` into a sweep's directory is refused for it, as for any file of
//! that name it did not write.
//!
//! [`LOCK_FILE`]: crate::output::run_dir::LOCK_FILE
//! [`MANIFEST_FILE`]: crate::output::run_dir::MANIFEST_FILE

use std::fs;
use std::path::{Path, PathBuf};

use crate::error::ScenarioError;
use crate::output::run_dir::{OwnNames, OwnedDir, REPORT_FILE, dir_error};
use crate::run::io_error;
use crate::sweep::flow_rule::{FLOW_RULE_FILE, FLOW_RULE_PLOT};
use crate::sweep::grid::plain_name;
use crate::sweep::plan::{PLAN_FILE, Plan};
use crate::sweep::plots::stem_ending;

/// The list of the files the sweep wrote into its directory, one relative path per line.
pub const SWEEP_MANIFEST_FILE: &str = ".talus-sweep-files";
/// One row per run.
pub const TABLE_FILE: &str = "sweep.csv";
/// One row per grid point: the mean and spread over the seeds.
pub const MEANS_FILE: &str = "sweep_means.csv";
/// Folder of the run directories.
pub const RUNS_DIR: &str = "runs";
/// Folder of the plots.
pub const PLOTS_DIR: &str = "plots";

/// Files at the top of the directory that a sweep writes.
const TOP_FILES: [&str; 5] = [
    PLAN_FILE,
    TABLE_FILE,
    MEANS_FILE,
    REPORT_FILE,
    FLOW_RULE_FILE,
];

/// The names of the files a sweep of a plan writes: [`TOP_FILES`] and its plots,
/// `plots/<answer>_vs_<axis>.png` for the plan's axes and the flow rule's plot.
#[derive(Debug, Clone)]
pub struct SweepNames {
    /// How the file stems of the plots against each axis end.
    endings: Vec<String>,
}

impl SweepNames {
    /// The names a sweep of `plan` writes.
    #[must_use]
    pub fn of(plan: &Plan) -> SweepNames {
        SweepNames {
            // As the plots are named when they are written: the stem made plain as a whole,
            // character by character, so its ending is the plain ending.
            endings: (0..plan.axes.len())
                .map(|a| plain_name(&stem_ending(&plan.axes, a)))
                .collect(),
        }
    }
}

impl OwnNames for SweepNames {
    fn manifest(&self) -> &'static str {
        SWEEP_MANIFEST_FILE
    }

    fn folders(&self) -> &'static [&'static str] {
        &[PLOTS_DIR]
    }

    fn is_own(&self, rel: &str) -> bool {
        if TOP_FILES.contains(&rel) {
            return true;
        }
        let Some(stem) = rel
            .strip_prefix("plots/")
            .and_then(|name| name.strip_suffix(".png"))
        else {
            return false;
        };
        !stem.contains('/')
            && (stem == FLOW_RULE_PLOT
                || self
                    .endings
                    .iter()
                    .any(|e| stem.len() > e.len() && stem.ends_with(e.as_str())))
    }
}

/// A sweep's directory, locked, with its plan written.
#[derive(Debug)]
pub struct SweepDir {
    dir: OwnedDir<SweepNames>,
}

impl SweepDir {
    /// Opens (creating it if needed) and locks `root` for `plan`, and writes the plan.
    ///
    /// A directory that holds a plan but no manifest is a sweep of a talus that kept no
    /// manifest: the files under a sweep's names beside that plan are taken as the sweep's.
    ///
    /// # Errors
    /// [`ScenarioError::OutputDir`]: not a directory, another talus process writes into it
    /// (a sweep, a run or a resume), it holds files a sweep writes but no plan, or files
    /// under a sweep's names that its manifest does not list (they are the user's), or it
    /// holds a different sweep and `replace` is false; [`ScenarioError::Io`] for the file
    /// system's failures.
    pub fn open(root: &Path, plan: &Plan, replace: bool) -> Result<SweepDir, ScenarioError> {
        if root.exists() && !root.is_dir() {
            return Err(dir_error(
                root,
                "is not a directory; choose a directory for the sweep with --out".into(),
            ));
        }
        fs::create_dir_all(root).map_err(|source| io_error(root, source))?;
        let mut dir = OwnedDir::lock(root, SweepNames::of(plan))?;
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
                if !dir.has_manifest() {
                    for rel in dir.present()? {
                        dir.adopt(&rel)?;
                    }
                }
            }
            None => {
                let present: Vec<&str> = [
                    TABLE_FILE,
                    MEANS_FILE,
                    REPORT_FILE,
                    FLOW_RULE_FILE,
                    RUNS_DIR,
                    PLOTS_DIR,
                ]
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
        dir.refuse_foreign(if replace {
            " (--force reruns the runs; it replaces no file that talus did not write)"
        } else {
            ""
        })?;
        dir.remove_stale_temps()?;
        dir.claim(PLAN_FILE)?;
        plan.write(root)?;
        Ok(SweepDir { dir })
    }

    /// The directory.
    #[must_use]
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// The directory of the run named `name`.
    #[must_use]
    pub fn run_path(&self, name: &str) -> PathBuf {
        self.dir.join(RUNS_DIR).join(name)
    }

    /// Records `rel` (a name a sweep writes: a table, the report, a plot) in the manifest
    /// before it is first written, and returns its path; folders on the way are created.
    ///
    /// # Errors
    /// [`ScenarioError::OutputDir`] if a file the manifest does not list is already there
    /// (the user's); [`ScenarioError::Io`] if the manifest cannot be extended.
    pub fn claim(&mut self, rel: &str) -> Result<PathBuf, ScenarioError> {
        self.dir.claim(rel)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::grid::Axis;

    fn plan(vary: &[&str]) -> Plan {
        let axes = vary.iter().map(|v| Axis::parse(v).unwrap()).collect();
        Plan::new(Path::new("s.ron"), "base".into(), Vec::new(), axes, vec![1])
    }

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("talus-sweep-dir-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_sweep_of_a_talus_without_a_manifest_keeps_its_files_and_refuses_the_users() {
        // A sweep an older talus wrote: its plan and table, no manifest.
        let root = scratch("legacy");
        let p = plan(&["force_model.coefficients.friction=0.1,0.2"]);
        p.write(&root).unwrap();
        fs::write(root.join(TABLE_FILE), "run,seed\n").unwrap();
        let dir = SweepDir::open(&root, &p, false).unwrap();
        drop(dir);
        let manifest = fs::read_to_string(root.join(SWEEP_MANIFEST_FILE)).unwrap();
        assert!(manifest.lines().any(|l| l == TABLE_FILE), "{manifest}");
        assert!(manifest.lines().any(|l| l == PLAN_FILE), "{manifest}");
        // A plot of the user's under a name the sweep draws, put there since: refused, and
        // kept; a plot under another name is no concern of the sweep's.
        fs::create_dir_all(root.join(PLOTS_DIR)).unwrap();
        fs::write(root.join("plots/mine_vs_friction.png"), b"mine").unwrap();
        fs::write(root.join("plots/mine.png"), b"mine").unwrap();
        let err = SweepDir::open(&root, &p, true).unwrap_err().to_string();
        assert!(
            err.contains("plots/mine_vs_friction.png") && err.contains("never overwrites"),
            "{err}"
        );
        fs::remove_file(root.join("plots/mine_vs_friction.png")).unwrap();
        drop(SweepDir::open(&root, &p, false).unwrap());
        assert_eq!(fs::read(root.join("plots/mine.png")).unwrap(), b"mine");
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn a_flow_rule_without_a_plan_is_not_a_sweeps() {
        let root = scratch("no-plan");
        fs::write(root.join(FLOW_RULE_FILE), "{}").unwrap();
        let p = plan(&["incline_deg=30,33"]);
        let err = SweepDir::open(&root, &p, true).unwrap_err().to_string();
        assert!(
            err.contains("flow_rule.json") && err.contains("no sweep.json"),
            "{err}"
        );
        assert!(!root.join(PLAN_FILE).exists());
        assert_eq!(fs::read_to_string(root.join(FLOW_RULE_FILE)).unwrap(), "{}");
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn a_sweeps_names_are_its_tables_report_and_plots_against_its_axes() {
        let names = SweepNames::of(&plan(&[
            "force_model.coefficients.friction=0.1,0.2",
            "grains[0].count=10,20",
            "grains[1].count=5",
        ]));
        for own in [
            "sweep.json",
            "sweep.csv",
            "sweep_means.csv",
            "report.html",
            "flow_rule.json",
            "plots/angle_of_repose_deg_vs_friction.png",
            "plots/mean_coordination_vs_count1.png",
            "plots/froude_vs_depth_ratio.png",
        ] {
            assert!(names.is_own(own), "{own}");
        }
        for other in [
            "plots/mine.png",
            "plots/_vs_friction.png",
            "plots/x_vs_count.png",
            "plots/x_vs_friction.jpg",
            "plots/sub/x_vs_friction.png",
            "summary.json",
            "runs/000_seed=1/summary.json",
            "notes.txt",
        ] {
            assert!(!names.is_own(other), "{other}");
        }
    }
}
