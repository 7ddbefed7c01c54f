//! `talus sweep`: a grid of runs of one scenario, varying some of its values, each with
//! several seeds; resumable; the answers gathered in `sweep.csv`, `sweep_means.csv` and
//! plots.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};

use clap::Args;
use talus_scenario::load::blame_overrides;
use talus_scenario::output::run_dir::SUMMARY_FILE;
use talus_scenario::resources::{estimate, shortfalls};
use talus_scenario::sweep::dir::{MEANS_FILE, SweepDir, TABLE_FILE};
use talus_scenario::sweep::execute::{RunEvent, SweepOptions, execute};
use talus_scenario::sweep::spec::read_sweep_file;
use talus_scenario::sweep::{SweepRequest, plan, write_results};

use crate::experiment::{EXIT_SUSPECT, check_threads, default_out};
use crate::terminal::escape_controls;

/// Arguments of `talus sweep`.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  talus sweep configs/angle_of_repose.ron \\\n      \
    --vary force_model.coefficients.friction=0.1,0.2,0.4,0.6,0.9 --seeds 3 --jobs 2 \\\n      \
    --out out/repose_friction\n  talus sweep docs/validation/studies/repose_friction.ron   (a sweep file: \
    Sweep(scenario: …, vary: […], seeds: 3))\n\nValues: a list a,b,c (commas inside (…) \
    belong to the value), lin(from,to,count) or log(from,to,count).\nRunning the same sweep \
    again resumes it: finished runs are kept, interrupted runs resume from their checkpoint."
)]
pub struct SweepArgs {
    /// The scenario file (RON), or a sweep file (`Sweep(scenario: …, vary: […], …)`).
    pub file: PathBuf,
    /// A varied key and its values, e.g. --vary force_model.coefficients.friction=0.2,0.4,0.6;
    /// several --vary make a grid.
    #[arg(long = "vary", value_name = "KEY=V1,V2,…")]
    pub vary: Vec<String>,
    /// Override a value of the scenario in every run, e.g. --set time.end=0.5.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub overrides: Vec<String>,
    /// Seeds per grid point: the scenario's seed and the ones after it [default: the sweep
    /// file's, or the scenario's `seeds`, or 1].
    #[arg(long, value_name = "N")]
    pub seeds: Option<u64>,
    /// Runs at the same time [default: 1, or the sweep file's].
    #[arg(long, value_name = "N")]
    pub jobs: Option<usize>,
    /// Worker threads of each run's contact stage; 0: the cores shared out among the jobs.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub threads: usize,
    /// Output directory [default: out/<file name without extension>].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Run every run afresh, replacing the runs an earlier sweep left in the directory (only
    /// the files talus wrote are removed).
    #[arg(long)]
    pub force: bool,
    /// Run even when one run's estimated memory or disk times the jobs exceeds what the
    /// machine has.
    #[arg(long)]
    pub allow_large: bool,
    /// One line per run only when it fails.
    #[arg(long)]
    pub quiet: bool,
}

/// `talus sweep`.
pub fn sweep(args: &SweepArgs) -> Result<ExitCode, String> {
    check_threads(args.threads)?;
    let spec = read_sweep_file(&args.file).map_err(|e| e.to_string())?;
    let (scenario_file, request, jobs) = match &spec {
        Some(spec) => {
            let mut set = spec.set.clone();
            set.extend(args.overrides.iter().cloned());
            let mut vary = spec.vary.clone();
            vary.extend(args.vary.iter().cloned());
            let request = SweepRequest {
                set,
                vary,
                seeds: args.seeds.or(spec.seeds),
            };
            (spec.scenario.clone(), request, args.jobs.or(spec.jobs))
        }
        None => {
            let request = SweepRequest {
                set: args.overrides.clone(),
                vary: args.vary.clone(),
                seeds: args.seeds,
            };
            (args.file.clone(), request, args.jobs)
        }
    };
    let jobs = jobs.unwrap_or(1);
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    if jobs == 0 || jobs > 4 * cores {
        return Err(format!(
            "--jobs {jobs}: allowed: 1 to {} (four runs per core of this machine)",
            4 * cores
        ));
    }
    // A sweep resumed from another folder must find the same scenario file.
    let scenario_file = std::fs::canonicalize(&scenario_file).unwrap_or(scenario_file);
    let registry = talus_sim::force::ForceModelRegistry::default();
    let plan = plan(&scenario_file, &request, &registry).map_err(|errors| {
        blame_overrides(errors, &request.set)
            .iter()
            .map(|e| escape_controls(&e.to_string(), false))
            .collect::<Vec<_>>()
            .join("\nerror: ")
    })?;
    if request.vary.is_empty() && plan.seeds.len() <= 1 {
        return Err(
            "nothing to sweep: give at least one --vary KEY=V1,V2,… or --seeds N with N > 1".into(),
        );
    }
    let out = match &args.out {
        Some(out) => out.clone(),
        None => default_out(&args.file)?,
    };
    if !args.allow_large {
        let base = talus_scenario::load::parse(&plan.base, &plan.scenario_file)
            .map_err(|e| e.to_string())?;
        let mut needs = estimate(&base);
        needs.memory_bytes = needs.memory_bytes.saturating_mul(jobs as u64);
        needs.disk_bytes = needs.disk_bytes.saturating_mul(plan.runs.len() as u64);
        let problems = shortfalls(&needs, &out);
        if !problems.is_empty() {
            return Err(format!(
                "{} runs of {} ({jobs} at a time): {}; --allow-large runs it anyway",
                plan.runs.len(),
                scenario_file.display(),
                problems.join("; ")
            ));
        }
    }
    let mut dir = SweepDir::open(&out, &plan, args.force).map_err(|e| e.to_string())?;
    let threads = if args.threads == 0 {
        (cores / jobs).max(1)
    } else {
        args.threads
    };
    let total = plan.runs.len();
    if !args.quiet {
        eprintln!(
            "{total} runs ({} grid points × {} seeds), {jobs} at a time with {threads} threads \
             each; results in {}",
            total / plan.seeds.len().max(1),
            plan.seeds.len(),
            escape_controls(&out.display().to_string(), false)
        );
    }
    let done = AtomicUsize::new(0);
    let report = |index: usize, event: &RunEvent| {
        let name = escape_controls(&plan.runs[index].name, false);
        let line = match event {
            RunEvent::Started { resumed } => (!args.quiet).then(|| {
                format!(
                    "  {} {name}",
                    if *resumed { "resuming" } else { "starting" }
                )
            }),
            RunEvent::Kept { status } => {
                let n = done.fetch_add(1, Ordering::Relaxed) + 1;
                (!args.quiet).then(|| format!("[{n}/{total}] {name}: {status} earlier, kept"))
            }
            RunEvent::Ended { status, seconds } => {
                let n = done.fetch_add(1, Ordering::Relaxed) + 1;
                (!args.quiet || !matches!(status.as_str(), "finished" | "at_rest"))
                    .then(|| format!("[{n}/{total}] {name}: {status} in {seconds:.1} s"))
            }
            RunEvent::Failed { message } => {
                let n = done.fetch_add(1, Ordering::Relaxed) + 1;
                Some(format!(
                    "[{n}/{total}] {name}: failed: {}",
                    escape_controls(message, false)
                ))
            }
        };
        if let Some(line) = line {
            eprintln!("{line}");
        }
    };
    let options = SweepOptions {
        jobs,
        threads,
        restart: args.force,
    };
    let events = execute(&plan, &dir, options, &report);
    let results = write_results(&plan, &mut dir, &events).map_err(|e| e.to_string())?;
    let count = |statuses: &[&str]| {
        results
            .records
            .iter()
            .filter(|r| statuses.contains(&r.status.as_str()))
            .count()
    };
    let clean = count(&["finished", "at_rest"]);
    let suspect = count(&["suspect"]);
    let broken = total - clean - suspect;
    outln!(
        "{clean} of {total} runs finished, {suspect} suspect, {broken} blew up or failed; \
         {} and {} ({} answers), {} plots in {}",
        TABLE_FILE,
        MEANS_FILE,
        results.answers.len(),
        results.plots.len(),
        escape_controls(&out.display().to_string(), false)
    );
    if broken > 0 {
        for r in results
            .records
            .iter()
            .filter(|r| !matches!(r.status.as_str(), "finished" | "at_rest" | "suspect"))
        {
            eprintln!(
                "error: run {} ended '{}': see {}",
                escape_controls(&r.name, false),
                r.status,
                escape_controls(
                    &dir.run_path(&r.name)
                        .join(SUMMARY_FILE)
                        .display()
                        .to_string(),
                    false
                )
            );
        }
        return Ok(ExitCode::FAILURE);
    }
    if suspect > 0 {
        eprintln!(
            "{suspect} runs are suspect (their warnings are in sweep.csv and their summary.json)"
        );
        return Ok(ExitCode::from(EXIT_SUSPECT));
    }
    Ok(ExitCode::SUCCESS)
}
