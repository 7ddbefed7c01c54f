//! Running the runs of a sweep, several at a time, each in its own directory.
//!
//! Each run is an ordinary run (the same files as `talus run`), so it can be looked at,
//! resumed or rerun on its own. A run is in one of three states when the sweep starts:
//! ended (its summary says how: kept as it is), interrupted after a checkpoint (resumed from
//! it, bit-identical to an uninterrupted run), or not started or interrupted before its
//! first checkpoint (started afresh, its earlier files replaced).

use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use talus_sim::force::ForceModelRegistry;

use crate::error::ScenarioError;
use crate::load::{apply_overrides, parse};
use crate::output::RunDir;
use crate::output::run_dir::{CHECKPOINT_FILE, SUMMARY_FILE};
use crate::run::Runner;
use crate::summary::{Status, write_outputs};
use crate::sweep::dir::SweepDir;
use crate::sweep::plan::Plan;

/// Summary statuses of a run that has ended for good: running it again gives the same.
const ENDED: [&str; 4] = ["finished", "at_rest", "suspect", "blew_up"];

/// How the sweep runs.
#[derive(Debug, Clone, Copy)]
pub struct SweepOptions {
    /// Runs at the same time (at least 1).
    pub jobs: usize,
    /// Worker threads of each run's contact stage (0: one per core).
    pub threads: usize,
    /// Start every run afresh, replacing what an earlier sweep left.
    pub restart: bool,
}

/// What happened to a run.
#[derive(Debug, Clone, PartialEq)]
pub enum RunEvent {
    /// It had ended before: kept as it was.
    Kept {
        /// The status in its summary.
        status: String,
    },
    /// It is starting (from the beginning, or resumed from its checkpoint).
    Started {
        /// Resumed from a checkpoint.
        resumed: bool,
    },
    /// It ran to its end now.
    Ended {
        /// The status in its summary.
        status: String,
        /// Wall-clock seconds this sweep spent on it.
        seconds: f64,
    },
    /// It could not be run (the message says why); the sweep goes on with the others.
    Failed {
        /// Why.
        message: String,
    },
}

/// Runs every run of `plan` in `dir` that has not ended, `options.jobs` at a time, calling
/// `report(index, event)` as runs start and end (from the worker threads). Returns the last
/// event of each run, in the plan's order.
pub fn execute(
    plan: &Plan,
    dir: &SweepDir,
    options: SweepOptions,
    report: &(dyn Fn(usize, &RunEvent) + Sync),
) -> Vec<RunEvent> {
    let next = AtomicUsize::new(0);
    let outcomes: Mutex<Vec<Option<RunEvent>>> = Mutex::new(vec![None; plan.runs.len()]);
    let jobs = options.jobs.clamp(1, plan.runs.len().max(1));
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            scope.spawn(|| {
                let registry = ForceModelRegistry::default();
                loop {
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    if index >= plan.runs.len() {
                        break;
                    }
                    let event = run_one(plan, index, dir, &registry, options, report);
                    report(index, &event);
                    if let Ok(mut outcomes) = outcomes.lock() {
                        outcomes[index] = Some(event);
                    }
                }
            });
        }
    });
    outcomes
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .into_iter()
        .map(|e| {
            e.unwrap_or(RunEvent::Failed {
                message: "the run's worker thread ended unexpectedly".into(),
            })
        })
        .collect()
}

/// The status in the summary of the run in `run_dir`, if it has ended for good.
#[must_use]
pub fn ended_status(run_dir: &Path) -> Option<String> {
    let text = std::fs::read_to_string(run_dir.join(SUMMARY_FILE)).ok()?;
    let summary: serde_json::Value = serde_json::from_str(&text).ok()?;
    let status = summary["status"].as_str()?;
    ENDED.contains(&status).then(|| status.to_string())
}

/// Brings run `index` to its end (see the module docs for its three starting states).
fn run_one(
    plan: &Plan,
    index: usize,
    dir: &SweepDir,
    registry: &ForceModelRegistry,
    options: SweepOptions,
    report: &(dyn Fn(usize, &RunEvent) + Sync),
) -> RunEvent {
    let run = &plan.runs[index];
    let path = dir.run_path(&run.name);
    if !options.restart
        && let Some(status) = ended_status(&path)
    {
        return RunEvent::Kept { status };
    }
    let resumed = !options.restart && path.join(CHECKPOINT_FILE).is_file();
    report(index, &RunEvent::Started { resumed });
    let clock = Instant::now();
    let result = if resumed {
        continue_run(&path, registry, options.threads, &mut |_| {})
    } else {
        start(plan, index, &path, registry, options.threads)
    };
    match result {
        // A run that blew up has written its summary (status `blew_up`): an answer too.
        Ok(()) | Err(ScenarioError::BlowUp(_)) => match ended_status(&path) {
            Some(status) => RunEvent::Ended {
                status,
                seconds: clock.elapsed().as_secs_f64(),
            },
            None => RunEvent::Failed {
                message: format!("{} holds no summary after the run", path.display()),
            },
        },
        Err(error) => RunEvent::Failed {
            message: error.to_string(),
        },
    }
}

/// Starts run `index` afresh in `path` (replacing the files an interrupted or earlier run
/// left there).
fn start(
    plan: &Plan,
    index: usize,
    path: &Path,
    registry: &ForceModelRegistry,
    threads: usize,
) -> Result<(), ScenarioError> {
    let base = parse(&plan.base, &plan.scenario_file)?;
    let scenario = apply_overrides(&base, &plan.assignments(&plan.runs[index]))?;
    let dir = RunDir::create(path, true)?;
    let mut runner = Runner::start_in(&scenario, &plan.scenario_file, registry, threads, dir)?;
    runner.run(None, &mut |_| {})
}

/// Continues the run in `path` from its checkpoint to its end, calling `progress` as it
/// goes; a run killed between its last checkpoint and its summary only writes its outputs.
///
/// # Errors
/// As [`Runner::resume_in`] and [`Runner::run`].
pub(crate) fn continue_run(
    path: &Path,
    registry: &ForceModelRegistry,
    threads: usize,
    progress: &mut dyn FnMut(&crate::run::Progress),
) -> Result<(), ScenarioError> {
    let mut runner = Runner::resume_in(RunDir::open(path)?, None, registry, threads)?;
    if runner.finished() {
        // Killed between its last checkpoint and its summary: only the outputs are missing.
        let status = if runner.state.at_rest {
            Status::AtRest
        } else {
            Status::Finished
        };
        return write_outputs(&mut runner, status);
    }
    runner.run(None, progress)
}
