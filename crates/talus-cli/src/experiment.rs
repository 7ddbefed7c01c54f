//! `talus run`, `talus check`, `talus resume` and `talus models`: experiments from RON
//! scenario files.

use std::path::{Path, PathBuf};

use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use talus_scenario::check::check;
use talus_scenario::load::{apply_overrides, read};
use talus_scenario::{Progress, Runner};
use talus_sim::force::ForceModelRegistry;

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
    /// Overwrite the results of an earlier run in the output directory.
    #[arg(long)]
    pub force: bool,
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
}

/// `talus check`.
pub fn check_file(args: &CheckArgs) -> Result<(), String> {
    let scenario = read(&args.file).map_err(|e| e.to_string())?;
    let scenario = apply_overrides(&scenario, &args.overrides).map_err(|e| e.to_string())?;
    let registry = ForceModelRegistry::default();
    let report = check(&scenario, &args.file, &registry).map_err(|errors| {
        let lines: Vec<String> = errors.iter().map(ToString::to_string).collect();
        lines.join("\nerror: ")
    })?;
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?
        );
        return Ok(());
    }
    println!(
        "{}: ok — scenario '{}'",
        args.file.display(),
        report.scenario
    );
    println!(
        "  grains:           {} ({} placed at the start, {} poured)",
        report.grains,
        report.placed,
        report.grains - report.placed
    );
    println!("  walls:            {} plates and planes", report.walls);
    println!(
        "  time step:        {:.3e} s (critical {:.3e} s, ratio {:.2})",
        report.dt,
        report.critical_dt,
        report.dt / report.critical_dt
    );
    println!(
        "  steps:            {} ({:.2e} grain-steps)",
        report.steps, report.grain_steps
    );
    println!(
        "  memory estimate:  {:.1} MiB",
        report.memory_bytes as f64 / (1024.0 * 1024.0)
    );
    for w in &report.warnings {
        println!("warning: {w}");
    }
    Ok(())
}

/// `talus run`.
pub fn run_file(args: &RunArgs) -> Result<(), String> {
    let scenario = read(&args.file).map_err(|e| e.to_string())?;
    let scenario = apply_overrides(&scenario, &args.overrides).map_err(|e| e.to_string())?;
    let out = args.out.clone().unwrap_or_else(|| {
        Path::new("out").join(
            args.file
                .file_stem()
                .map_or_else(|| "run".into(), |s| s.to_os_string()),
        )
    });
    let errors = talus_scenario::validate::validate(&scenario, &args.file);
    if !errors.is_empty() {
        let lines: Vec<String> = errors.iter().map(ToString::to_string).collect();
        return Err(lines.join("\nerror: "));
    }
    if args.force {
        // The earlier run's results go, so that none of them can be mistaken for this
        // run's (or resumed in its place).
        for file in [
            "checkpoint.bin",
            "summary.json",
            "timeseries.csv",
            "frames.pvd",
            "scenario.ron",
        ] {
            remove(&out.join(file), |p| std::fs::remove_file(p))?;
        }
        for dir in ["frames", "plots"] {
            remove(&out.join(dir), |p| std::fs::remove_dir_all(p))?;
        }
    } else {
        for file in ["checkpoint.bin", "summary.json"] {
            if out.join(file).exists() {
                return Err(format!(
                    "{} already holds a run ({file}); continue it with `talus resume {}`, \
                     choose another --out, or pass --force to overwrite it",
                    out.display(),
                    out.display()
                ));
            }
        }
    }
    let registry = ForceModelRegistry::default();
    let mut runner = Runner::start(&scenario, &args.file, &registry, args.threads, &out)
        .map_err(|e| e.to_string())?;
    drive(&mut runner, args.quiet)
}

/// Removes `path` if it exists.
fn remove(path: &Path, how: fn(&Path) -> std::io::Result<()>) -> Result<(), String> {
    match how(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(format!(
            "{}: cannot remove the earlier run's output: {e}",
            path.display()
        )),
        _ => Ok(()),
    }
}

/// `talus resume`.
pub fn resume_dir(args: &ResumeArgs) -> Result<(), String> {
    let checkpoint = args.dir.join(talus_scenario::run::CHECKPOINT_FILE);
    if !checkpoint.exists() {
        return Err(format!(
            "{} holds no checkpoint ({}); a run writes one every time.checkpoint_interval and at its end",
            args.dir.display(),
            checkpoint.display()
        ));
    }
    let registry = ForceModelRegistry::default();
    let mut runner =
        Runner::resume(&args.dir, &registry, args.threads).map_err(|e| e.to_string())?;
    if !args.quiet {
        eprintln!(
            "resuming at t = {:.6} s (step {} of {})",
            runner.exp.world.time(),
            runner.exp.world.steps(),
            runner.total_steps()
        );
    }
    drive(&mut runner, args.quiet)
}

/// `talus models`: the registered force models and their coefficients.
pub fn list_models() -> Result<(), String> {
    let registry = ForceModelRegistry::default();
    for entry in registry.entries() {
        println!("{}: {}", entry.name, entry.description);
        for c in entry.coefficients {
            let default = c
                .default
                .map_or_else(|| "required".to_string(), |d| format!("default {d}"));
            println!(
                "  {:<18} [{}] {}; {} ({default})",
                c.name, c.unit, c.doc, c.allowed
            );
        }
    }
    Ok(())
}

/// Runs to the end with a progress bar and prints where the results are.
fn drive(runner: &mut Runner, quiet: bool) -> Result<(), String> {
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
        bar.set_message(format!(
            "t = {:.4}/{:.4} s, {:.0} steps/s, {} grains, {} contacts",
            p.time, p.end, p.steps_per_second, p.grains, p.contacts
        ));
    };
    let result = runner.run(None, &mut update);
    bar.finish_and_clear();
    result.map_err(|e| e.to_string())?;
    let out = runner.out_dir();
    if !quiet {
        eprintln!(
            "done: t = {:.4} s, {} steps; results in {}",
            runner.exp.world.time(),
            runner.exp.world.steps(),
            out.display()
        );
    }
    let summary = std::fs::read_to_string(out.join("summary.json")).map_err(|e| e.to_string())?;
    println!("{summary}");
    Ok(())
}
