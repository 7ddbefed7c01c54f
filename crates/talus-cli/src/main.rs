//! `talus`: the command-line tool of the talus DEM engine for rigid convex polyhedral grains.
//!
//! This file holds the top-level command-line definition and dispatches to the
//! subcommands:
//! * `talus shape`: build one grain (a random grain on an ellipsoid or a platonic solid) and
//!   print its vertex, edge and face counts and its mass properties ([`shape`]);
//! * `talus run`, `talus check`, `talus resume`, `talus models`: experiments from RON
//!   scenario files ([`experiment`]);
//! * `talus sweep`: a grid of runs of one scenario over values and seeds ([`sweep`]).
//!
//! Exit codes: 0 on success, 2 for invalid command-line arguments (reported by clap), 1 when
//! the arguments are well-formed but the work fails (a bad scenario, a grain that cannot be
//! built, a simulation that blows up, an output that cannot be written), 3 when a run
//! reached its end but its results are suspect (the warnings say why).

#[macro_use]
mod terminal;
mod cluster;
mod experiment;
mod output;
mod parse;
mod shape;
mod sweep;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// The command line of `talus`.
#[derive(Debug, Parser)]
#[command(
    name = "talus",
    version,
    about = "talus: discrete element simulation of rigid convex polyhedral grains",
    propagate_version = true
)]
struct Cli {
    /// What to do.
    #[command(subcommand)]
    command: Command,
}

/// The subcommands of `talus`.
#[derive(Debug, Subcommand)]
enum Command {
    /// Build one grain and print its vertex, edge and face counts and its mass properties.
    ///
    /// The grain is either a random grain with its vertices on an ellipsoid (--ellipsoid,
    /// --vertices, --seed) or a platonic solid (--solid, --size), centred at the origin.
    Shape(shape::ShapeArgs),
    /// Run an experiment from a scenario file, with a progress bar; writes summary.json,
    /// timeseries.csv, frames for ParaView, plots and checkpoints into the output directory.
    Run(experiment::RunArgs),
    /// Check a scenario file without running it: errors with their line and column or
    /// field, the grain count, the critical time step, a memory estimate and warnings.
    Check(experiment::CheckArgs),
    /// Continue a run from the checkpoint in its output directory.
    Resume(experiment::ResumeArgs),
    /// Run a scenario over a grid of values (--vary KEY=V1,V2,…) and seeds (--seeds N);
    /// writes one run directory per grid point and seed, sweep.csv, sweep_means.csv and
    /// plots of each answer against each varied key. Running it again resumes it.
    Sweep(sweep::SweepArgs),
    /// List the contact force models and their coefficients.
    Models,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let process = match cluster::Process::start() {
        Ok(process) => process,
        Err(message) => {
            eprintln!("error: {}", terminal::escape_controls(&message, true));
            return ExitCode::FAILURE;
        }
    };
    let result = match cli.command {
        Command::Run(args) => experiment::run_file(&args, &process),
        Command::Resume(args) => experiment::resume_dir(&args, &process),
        _ if process.is_distributed() => Err(
            "only `talus run` and `talus resume` run on several processes; start this command \
            without mpirun"
                .to_string(),
        ),
        Command::Shape(args) => shape::run(&args).map(|()| ExitCode::SUCCESS),
        Command::Check(args) => experiment::check_file(&args),
        Command::Sweep(args) => sweep::sweep(&args),
        Command::Models => experiment::list_models(),
    };
    match result {
        Ok(code) => code,
        Err(message) => {
            if process.is_first() {
                eprintln!("error: {}", terminal::escape_controls(&message, true));
            }
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn command_line_definition_is_consistent() {
        Cli::command().debug_assert();
    }
}
