//! `talus run`, `talus check`, `talus resume` and `talus models`: experiments from RON
//! scenario files.

use std::path::{Component, Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use talus_scenario::ScenarioError;
use talus_scenario::check::check;
use talus_scenario::load::{apply_overrides, blame_overrides, read};
use talus_scenario::number::short;
use talus_scenario::output::RunDir;
use talus_scenario::output::run_dir::SUMMARY_FILE;
use talus_scenario::pairs::Source;
use talus_scenario::resources::{bytes, estimate, shortfalls};
use talus_scenario::schema::Scenario;
use talus_scenario::seeds::seed_count;
use talus_scenario::{Progress, Runner};
use talus_sim::force::{CoefficientSpec, ForceModelRegistry, MAX_HISTORY};

use crate::cluster::{DEFAULT_REBALANCE_EVERY, Process, Scratch};
use crate::terminal::escape_controls;

/// Exit code of a run that reached its end but whose results cannot be trusted (status
/// `suspect` in `summary.json`, with the reasons in its `warnings`).
pub const EXIT_SUSPECT: u8 = 3;

/// More worker threads than this many per core only add overhead: refused.
const THREADS_PER_CORE_LIMIT: usize = 4;

/// Arguments of `talus run`.
#[derive(Debug, Args)]
#[command(after_help = "Example:\n  talus run configs/angle_of_repose.ron --out out/repose")]
pub struct RunArgs {
    /// The scenario file (RON).
    pub file: PathBuf,
    /// Output directory [default: out/<file name without extension>].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Worker threads of the contact stage; 0 uses every core. Results do not depend on it.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub threads: usize,
    /// Override a value of the scenario, e.g. --set time.end=0.5 --set grains[0].count=200.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub overrides: Vec<String>,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
    /// Replace the results of an earlier run in the output directory (only the files that
    /// run wrote are removed).
    #[arg(long)]
    pub force: bool,
    /// Run even when the estimated memory or disk exceeds what the machine has, or the
    /// output exceeds 20 GiB.
    #[arg(long)]
    pub allow_large: bool,
    /// Under mpirun: steps between two cuts of the scene into one region per process.
    /// Results do not depend on it.
    #[arg(long, value_name = "STEPS", default_value_t = DEFAULT_REBALANCE_EVERY)]
    pub rebalance_every: u64,
}

/// Arguments of `talus check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The scenario file (RON).
    pub file: PathBuf,
    /// Override a value of the scenario before checking it.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub overrides: Vec<String>,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `talus resume`.
#[derive(Debug, Args)]
pub struct ResumeArgs {
    /// The output directory of the run (it holds checkpoint.bin).
    pub dir: PathBuf,
    /// Worker threads of the contact stage; 0 uses every core.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub threads: usize,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
    /// Under mpirun: steps between two cuts of the scene into one region per process.
    #[arg(long, value_name = "STEPS", default_value_t = DEFAULT_REBALANCE_EVERY)]
    pub rebalance_every: u64,
}

/// `talus check`.
pub fn check_file(args: &CheckArgs) -> Result<ExitCode, String> {
    let scenario = read(&args.file).map_err(|e| e.to_string())?;
    let scenario = apply_overrides(&scenario, &args.overrides).map_err(|e| e.to_string())?;
    let registry = ForceModelRegistry::default();
    let report = check(&scenario, &args.file, &registry)
        .map_err(|errors| report_errors(errors, &args.overrides))?;
    if args.json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?
        );
        return Ok(ExitCode::SUCCESS);
    }
    outln!(
        "{}: ok — scenario '{}'",
        args.file.display(),
        escape_controls(&report.scenario, false)
    );
    outln!(
        "  grains:           {} ({} placed at the start, {} poured or dripped)",
        report.grains,
        report.placed,
        report.grains - report.placed
    );
    outln!("  walls:            {} plates and planes", report.walls);
    for (axis, faces) in ["x", "y", "z"].iter().zip(scenario.periodic.axes()) {
        if let Some((lower, upper)) = faces {
            outln!(
                "  periodic {axis}:       {} to {} m (period {} m)",
                short(lower),
                short(upper),
                short(upper - lower)
            );
        }
    }
    if let Some(angle) = scenario.incline_deg {
        let g = scenario.gravity_vector();
        outln!(
            "  incline:          {}° (gravity ({:.4}, {:.4}, {:.4}) m/s²)",
            short(angle),
            g.x,
            g.y,
            g.z
        );
    }
    outln!(
        "  time step:        {:.3e} s (critical {:.3e} s, ratio {:.2})",
        report.dt,
        report.critical_dt,
        report.dt / report.critical_dt
    );
    if report.seeds.len() > 1 {
        outln!(
            "  seeds:            {} runs, seeds {} to {} (summary.json gives each answer's \
             spread over them)",
            report.seeds.len(),
            report.seeds[0],
            report.seeds[report.seeds.len() - 1]
        );
    }
    outln!(
        "  steps:            {} per run ({:.2e} grain-steps in all)",
        report.steps,
        report.grain_steps
    );
    outln!("  memory estimate:  {}", bytes(report.memory_bytes));
    outln!(
        "  output estimate:  {} ({} frames)",
        bytes(report.disk_bytes),
        report.frames
    );
    outln!("  contact pairs:");
    for pair in &report.pairs {
        let mut meets = Vec::new();
        if pair.grains {
            meets.push("grains".to_string());
        }
        if !pair.walls.is_empty() {
            meets.push(format!("walls {}", pair.walls.join(", ")));
        }
        let coefficients: Vec<String> = pair
            .coefficients
            .iter()
            .map(|c| {
                let source = match c.source {
                    Source::Law => "",
                    Source::Material => " (material)",
                    Source::Mixed => " (mixed)",
                    Source::Pair => " (pair)",
                };
                format!("{} {}{source}", c.label, short(c.value))
            })
            .collect();
        outln!(
            "    {}–{} ({}): {}",
            escape_controls(&pair.materials.0, false),
            escape_controls(&pair.materials.1, false),
            escape_controls(&meets.join("; "), false),
            coefficients.join(", ")
        );
    }
    if !report.file_shapes.is_empty() {
        outln!("  file shapes (a grain is the convex hull of its shape; file units):");
    }
    for f in &report.file_shapes {
        let added = match (f.input_volume, f.added_volume, f.added_fraction) {
            (Some(input), Some(added), Some(fraction)) => format!(
                "mesh volume {}, hull adds {} ({:.1} %)",
                short(input),
                short(added),
                100.0 * fraction
            ),
            _ => "input volume unknown (a point cloud or an open mesh)".to_string(),
        };
        outln!(
            "    {} {} '{}': {} points, hull of {} vertices, hull volume {}; {added}",
            escape_controls(&f.population, false),
            escape_controls(&f.file, false),
            escape_controls(&f.object, false),
            f.points,
            f.hull_vertices,
            short(f.hull_volume)
        );
    }
    for w in &report.warnings {
        outln!("warning: {}", escape_controls(w, false));
    }
    Ok(ExitCode::SUCCESS)
}

/// `talus run`.
pub fn run_file(args: &RunArgs, process: &Process) -> Result<ExitCode, String> {
    let set_up = || -> Result<(Runner, Option<Scratch>, String), String> {
        check_threads(args.threads)?;
        check_rebalance(args.rebalance_every)?;
        let scenario = read(&args.file).map_err(|e| e.to_string())?;
        let scenario = apply_overrides(&scenario, &args.overrides).map_err(|e| e.to_string())?;
        let out = match &args.out {
            Some(out) => out.clone(),
            None => default_out(&args.file)?,
        };
        let errors = talus_scenario::validate::validate(&scenario, &args.file);
        if !errors.is_empty() {
            return Err(report_errors(errors, &args.overrides));
        }
        one_seed_if_distributed(&scenario, process)?;
        let needs = estimate(&scenario);
        if !args.allow_large {
            let problems = shortfalls(&needs, &out);
            if !problems.is_empty() {
                return Err(format!(
                    "{}: {}; --allow-large runs it anyway",
                    args.file.display(),
                    problems.join("; ")
                ));
            }
        }
        let (dir, scratch) = if process.is_first() {
            (RunDir::create(&out, args.force), None)
        } else {
            let scratch = Scratch(process.scratch());
            (RunDir::create(scratch.path(), true), Some(scratch))
        };
        let dir = dir.map_err(|e| e.to_string())?;
        let registry = ForceModelRegistry::default();
        let threads = process.default_threads(args.threads);
        // Over several processes, each adds the grains of its region alone.
        let decomposition = process.exchange().map(|e| (e, args.rebalance_every));
        let mut runner = Runner::prepare_in(
            &scenario,
            &args.file,
            &registry,
            threads,
            dir,
            decomposition,
        )
        .map_err(|e| report_errors(vec![e], &args.overrides))?;
        runner.write_pieces_into(&out);
        let line = format!(
            "{} grains, {} steps, {}{} threads; about {} of memory and {} of output",
            needs.grains,
            runner.total_steps(),
            processes_note(process),
            runner.exp.world.thread_count(),
            bytes(needs.memory_bytes),
            bytes(needs.disk_bytes)
        );
        Ok((runner, scratch, line))
    };
    let (mut runner, _scratch, line) = agreed(process, set_up())?;
    // Over several processes each adds its own grains now (the regions are cut from where
    // they are placed, a collective step), and may find one of them in a wall or another.
    let placed = runner
        .place_start()
        .map_err(|e| report_errors(vec![e], &args.overrides));
    agreed(process, placed)?;
    if !process.is_first() {
        runner.without_outputs();
    }
    if let Err(error) = runner.begin() {
        // The others write the start of the run with this process and would wait for it.
        return Err(stop_all(process, &error));
    }
    if !args.quiet && process.is_first() {
        eprintln!("{line}");
    }
    drive(&mut runner, args.quiet, process)
}

/// The message of `error`, which happened on this process alone: in a distributed run,
/// printed with the process's rank before every process is stopped (the others would wait
/// for this one at their next exchange).
fn stop_all(process: &Process, error: &ScenarioError) -> String {
    if process.is_distributed() {
        eprintln!(
            "error: process {}: {}",
            process.rank(),
            escape_controls(&error.to_string(), true)
        );
        process.abort(1);
    }
    error.to_string()
}

/// "N processes × " under mpirun, nothing otherwise.
fn processes_note(process: &Process) -> String {
    if process.is_distributed() {
        format!("{} processes × ", process.size())
    } else {
        String::new()
    }
}

/// `result` once every process has set up: an error on any of them stops all.
fn agreed<T>(process: &Process, result: Result<T, String>) -> Result<T, String> {
    let failure = process.first_failure(result.as_ref().err().map(String::as_str));
    match (result, failure) {
        // Said by the first process: another's error is said with its rank.
        (Ok(_), Some((rank, message))) => Err(format!(
            "process {rank} of the run could not set it up: {message}"
        )),
        (result, _) => result,
    }
}

/// Refuses a scenario run with several seeds over several processes: its companion runs
/// (see [`talus_scenario::seeds`]) are runs of one process.
fn one_seed_if_distributed(scenario: &Scenario, process: &Process) -> Result<(), String> {
    let seeds = seed_count(scenario);
    if process.is_distributed() && seeds > 1 {
        return Err(format!(
            "seeds: {seeds}: a run over several processes runs the scenario's own seed only; \
             run it with --set seeds=1, and the other seeds as a sweep (`talus sweep FILE \
             --seeds {seeds}`) or one process each"
        ));
    }
    Ok(())
}

/// Refuses a rebalancing interval of zero steps.
fn check_rebalance(every: u64) -> Result<(), String> {
    if every == 0 {
        return Err("--rebalance-every 0: allowed: a positive number of steps".into());
    }
    Ok(())
}

/// The messages of `errors`, one per line, each blamed on the `--set` that gave its value
/// where one did, with control characters escaped.
fn report_errors(errors: Vec<ScenarioError>, overrides: &[String]) -> String {
    let lines: Vec<String> = blame_overrides(errors, overrides)
        .iter()
        .map(|e| escape_controls(&e.to_string(), false))
        .collect();
    lines.join("\nerror: ")
}

/// `out/<file name without extension>`, refused when the file name gives no plain folder
/// name (`...ron` would otherwise make `out/..`, the current directory).
pub fn default_out(file: &Path) -> Result<PathBuf, String> {
    let stem = file.file_stem().unwrap_or_default();
    let plain = !stem.is_empty()
        && !stem.to_string_lossy().starts_with('.')
        && Path::new(stem)
            .components()
            .all(|c| matches!(c, Component::Normal(_)));
    if plain {
        Ok(Path::new("out").join(stem))
    } else {
        Err(format!(
            "{}: no output folder can be named after this file name; choose one with --out DIR",
            file.display()
        ))
    }
}

/// Refuses absurd thread counts (they only add overhead: results do not depend on the
/// count) and warns above the machine's cores.
pub fn check_threads(threads: usize) -> Result<(), String> {
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    let limit = THREADS_PER_CORE_LIMIT * cores;
    if threads > limit {
        return Err(format!(
            "--threads {threads}: this machine has {cores} cores, and more than \
             {THREADS_PER_CORE_LIMIT} threads per core only slow the run down; allowed: 0 \
             (one per core) to {limit}"
        ));
    }
    if threads > cores {
        eprintln!(
            "warning: --threads {threads} is more than the {cores} cores of this machine; the \
             run will not be faster than with {cores}"
        );
    }
    Ok(())
}

/// `talus resume`.
pub fn resume_dir(args: &ResumeArgs, process: &Process) -> Result<ExitCode, String> {
    let set_up = || -> Result<(Runner, Option<Scratch>), String> {
        check_threads(args.threads)?;
        check_rebalance(args.rebalance_every)?;
        let checkpoint = args.dir.join(talus_scenario::run::CHECKPOINT_FILE);
        if !checkpoint.exists() {
            return Err(format!(
                "{} holds no checkpoint ({}); a run writes one every time.checkpoint_interval and at its end",
                args.dir.display(),
                checkpoint.display()
            ));
        }
        let (dir, scratch) = if process.is_first() {
            (RunDir::open(&args.dir).map_err(|e| e.to_string())?, None)
        } else {
            // A copy of the checkpoint, its history and the list of files: this process
            // continues the run in its own directory, reading nothing the first one writes.
            let scratch = Scratch(process.scratch());
            std::fs::create_dir_all(scratch.path())
                .map_err(|e| format!("{}: {e}", scratch.path().display()))?;
            for name in [
                talus_scenario::run::CHECKPOINT_FILE,
                talus_scenario::output::run_dir::HISTORY_FILE,
                talus_scenario::output::run_dir::MANIFEST_FILE,
            ] {
                std::fs::copy(args.dir.join(name), scratch.path().join(name))
                    .map_err(|e| format!("{}: {e}", args.dir.join(name).display()))?;
            }
            // The summary, when there is one, so that every process sees whether the run's
            // outputs are written and all take the same path.
            let summary = args.dir.join(SUMMARY_FILE);
            if summary.exists() {
                std::fs::copy(&summary, scratch.path().join(SUMMARY_FILE))
                    .map_err(|e| format!("{}: {e}", summary.display()))?;
            }
            let dir = RunDir::open(scratch.path()).map_err(|e| e.to_string())?;
            (dir, Some(scratch))
        };
        let registry = ForceModelRegistry::default();
        let threads = process.default_threads(args.threads);
        // Over several processes, each reads its share of a checkpoint in pieces.
        let mut runner = match process.exchange() {
            Some(exchange) => Runner::resume_decomposed(
                dir,
                &args.dir,
                &registry,
                threads,
                exchange,
                args.rebalance_every,
            ),
            None => Runner::resume_in(dir, Some(&args.dir), &registry, threads),
        }
        .map_err(|e| e.to_string())?;
        runner.write_pieces_into(&args.dir);
        one_seed_if_distributed(&runner.exp.scenario, process)?;
        Ok((runner, scratch))
    };
    let (mut runner, _scratch) = agreed(process, set_up())?;
    // The whole run's count, from every process's share (a collective operation; one
    // process counted its grains when it resumed).
    if process.is_distributed() {
        runner.take_stock();
    }
    // A run that ended without its outputs (they failed, or it was killed before its
    // summary) goes on to write them.
    if runner.finished() && runner.outputs_written() {
        if !process.is_first() {
            return Ok(ExitCode::SUCCESS);
        }
        eprintln!(
            "the run in {} already ended at t = {} s; nothing to resume",
            args.dir.display(),
            runner.exp.world.time()
        );
        return print_summary(runner.out_dir());
    }
    if !process.is_first() {
        runner.without_outputs();
    }
    if !args.quiet && process.is_first() {
        eprintln!(
            "resuming at t = {:.6} s (step {} of {}){}",
            runner.exp.world.time(),
            runner.exp.world.steps(),
            runner.total_steps(),
            if process.is_distributed() {
                format!(" on {} processes", process.size())
            } else {
                String::new()
            }
        );
    }
    drive(&mut runner, args.quiet, process)
}

/// `talus models`: the registered force models and the parts laws are composed of, with
/// their coefficients and the history each keeps per contact.
pub fn list_models() -> Result<ExitCode, String> {
    let registry = ForceModelRegistry::default();
    outln!("force models (force_model: (name: …, coefficients: {{…}})):");
    for entry in registry.entries() {
        outln!("{}: {}", entry.name, entry.description);
        print_coefficients(entry.coefficients);
        print_history(entry.history);
    }
    outln!();
    outln!(
        "parts (force_model: (name: …, parts: (normal: (name: …, coefficients: {{…}}), damping: …, tangential: …, twisting: …, rolling: …, cohesion: …))):"
    );
    outln!("(a law keeps at most {MAX_HISTORY} history values per contact over all its parts)");
    for entry in registry.part_entries() {
        outln!(
            "{} {}: {}",
            entry.role.name(),
            entry.name,
            entry.description
        );
        print_coefficients(entry.coefficients);
        print_history(entry.history);
    }
    Ok(ExitCode::SUCCESS)
}

/// The history a model or part keeps per contact: how many values, and their names (a law
/// keeps at most [`MAX_HISTORY`] in all, which is what limits the parts one law combines).
fn print_history(history: &[&str]) {
    if history.is_empty() {
        outln!("  history: none");
    } else {
        outln!(
            "  history: {} value{} per contact ({})",
            history.len(),
            if history.len() == 1 { "" } else { "s" },
            history.join(", ")
        );
    }
}

/// One line per coefficient: name, unit, meaning, range, default, and how two materials'
/// values make their pair's.
fn print_coefficients(coefficients: &[CoefficientSpec]) {
    for c in coefficients {
        let default = c
            .default
            .map_or_else(|| "required".to_string(), |d| format!("default {d}"));
        outln!(
            "  {:<18} [{}] {}; {} ({default}; pairs of materials: {})",
            c.name,
            c.unit,
            c.doc,
            c.allowed,
            c.mixing.name()
        );
    }
}

/// Runs to the end with a progress bar and prints the summary (the first process of a
/// distributed run; the others only say whether the run ended well).
fn drive(runner: &mut Runner, quiet: bool, process: &Process) -> Result<ExitCode, String> {
    let quiet = quiet || !process.is_first();
    let bar = ProgressBar::new(runner.total_steps());
    if quiet {
        bar.set_draw_target(ProgressDrawTarget::hidden());
    }
    bar.set_style(
        ProgressStyle::with_template("{bar:30} {percent:>3}% | {msg} | ETA {eta}")
            .map_err(|e| e.to_string())?,
    );
    bar.set_position(runner.exp.world.steps());
    let mut update = |p: &Progress| {
        bar.set_position(p.steps);
        let seed = if p.seed_count > 1 {
            format!("seed {}/{}: ", p.seed_index + 1, p.seed_count)
        } else {
            String::new()
        };
        bar.set_message(format!(
            "{seed}t = {:.4}/{:.4} s, {:.0} steps/s, {} grains, {} contacts",
            p.time, p.end, p.steps_per_second, p.grains, p.contacts
        ));
    };
    let result = runner.run(None, &mut update);
    bar.finish_and_clear();
    if let Err(error) = result {
        // A blow-up happens on every process at the same step; any other error (an output
        // that cannot be written) on this one alone, while the others wait for it.
        if matches!(error, ScenarioError::BlowUp(_)) {
            return Err(error.to_string());
        }
        return Err(stop_all(process, &error));
    }
    let out = runner.out_dir();
    // The first process wrote the summary; the others end as it says.
    let code = if process.is_first() {
        summary_code(&out.join(SUMMARY_FILE)).unwrap_or(EXIT_FAILED)
    } else {
        0
    };
    let code = process.first_says(code);
    if !process.is_first() {
        return match code {
            0 => Ok(ExitCode::SUCCESS),
            EXIT_SUSPECT => Ok(ExitCode::from(EXIT_SUSPECT)),
            _ => Err(format!(
                "process {}: the run did not end well (see the first process)",
                process.rank()
            )),
        };
    }
    if !quiet {
        eprintln!(
            "done: t = {:.4} s, {} steps; results in {}",
            runner.exp.world.time(),
            runner.exp.world.steps(),
            escape_controls(&out.display().to_string(), false)
        );
    }
    print_summary(out)
}

/// Prints the summary of the run in `out`, its warnings on stderr; the exit code says
/// whether its status is clean.
fn print_summary(out: &Path) -> Result<ExitCode, String> {
    let path = out.join(SUMMARY_FILE);
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    outln!("{}", escape_controls(&text, true));
    let summary: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    match summary["status"].as_str() {
        Some("finished" | "at_rest") => Ok(ExitCode::SUCCESS),
        Some("suspect") => {
            for w in summary["warnings"].as_array().into_iter().flatten() {
                eprintln!(
                    "warning: {}",
                    escape_controls(w.as_str().unwrap_or_default(), false)
                );
            }
            eprintln!(
                "the run ended, but its results are suspect (status \"suspect\" in {})",
                path.display()
            );
            Ok(ExitCode::from(EXIT_SUSPECT))
        }
        Some(other) => Err(format!(
            "the run in {} ended with status '{other}': {}",
            out.display(),
            summary["error"].as_str().unwrap_or("see its summary.json")
        )),
        None => Err(format!("{}: no status", path.display())),
    }
}

/// Exit code of a run that did not end well, as the processes of a distributed run tell
/// each other.
const EXIT_FAILED: u8 = 1;

/// The exit code the status in the summary at `path` calls for, printing nothing (for the
/// other processes of a distributed run).
fn summary_code(path: &Path) -> Result<u8, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let summary: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    match summary["status"].as_str() {
        Some("finished" | "at_rest") => Ok(0),
        Some("suspect") => Ok(EXIT_SUSPECT),
        _ => Err(format!("{}: the run did not end well", path.display())),
    }
}
