//! The end of a run: `summary.json` (the machine-readable result), `report.html` (the same
//! for a person, see [`crate::run_report`]), the plots, and the final time series.
//!
//! The summary is written after every other output, the report included, so that a
//! summary that says a run finished is never beside outputs that failed to be written;
//! when writing them, or the report, fails, the summary says `failed` (if it can still be
//! written at all), and `talus resume` writes them again once the cause is removed. A run that reached its end
//! but whose answer cannot be trusted (grains that could not be poured, overlaps beyond the
//! range of the contact model, a measurement that could not be fitted) is reported as
//! `suspect`, with the reasons in `warnings`, never as a clean `finished`.

use serde_json::{Map, Value};

use crate::error::ScenarioError;
use crate::output::atomic::write_atomic;
use crate::output::plot::{Plot, Series, SeriesStyle, render_png};
use crate::output::report::Figure;
use crate::output::run_dir::{PLOTS_DIR, REPORT_FILE, SUMMARY_FILE};
use crate::probe::Probe;
use crate::probe::repose::json_number;
use crate::run::{Runner, TIMESERIES_FILE, io_error};
use crate::run_report::write_report;
use crate::seeds::{over_seeds, seed_count};

/// Overlaps deeper than this fraction of the grain size are outside the range where the
/// volumetric contact laws are calibrated (they are meant for overlaps of a few per cent);
/// a run that reached them is suspect even though it did not blow up.
const SUSPECT_OVERLAP_RATIO: f64 = 0.1;

/// How a run ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Status {
    /// It reached its end time.
    Finished,
    /// It ended early because the grains came to rest.
    AtRest,
    /// It blew up; the message says why.
    BlewUp(String),
    /// It stopped because an output could not be written or another error; the message
    /// says which.
    Failed(String),
}

/// Writes the time series, the plots (if the scenario asks for them), `report.html` and
/// then `summary.json`. If an output fails, the summary says `failed` with the error (when it
/// can still be written) and the error is returned.
///
/// # Errors
/// [`ScenarioError::Io`] if a file cannot be written, or a plot cannot be drawn.
pub fn write_outputs(runner: &mut Runner, status: Status) -> Result<(), ScenarioError> {
    let mut figures = Vec::new();
    match write_results(runner, &mut figures) {
        Ok(()) => write_summary_and_report(runner, &status, &figures),
        Err(error) => {
            // Best effort: on a full disk even this may fail, and the first error matters.
            let failed = Status::Failed(error.to_string());
            let _ = write_summary_and_report(runner, &failed, &figures);
            Err(error)
        }
    }
}

/// Writes `report.html` for `status` with the plots `figures`, then `summary.json`: the
/// summary is the last file a run writes, so that it never says the run finished beside an
/// output that is missing. When the report cannot be written, the summary says `failed`
/// with the report's error (unless it says `failed` already: the first error matters); when
/// the summary itself cannot be written, the report (which states the run's status too) is
/// removed, so that no file says a run finished whose summary is missing.
///
/// # Errors
/// [`ScenarioError::Io`] if either cannot be written.
pub fn write_summary_and_report(
    runner: &mut Runner,
    status: &Status,
    figures: &[Figure],
) -> Result<(), ScenarioError> {
    let json = summary(runner, status);
    if let Err(error) = write_report(runner, &json, figures) {
        let failed = match status {
            Status::Failed(_) => status.clone(),
            _ => Status::Failed(error.to_string()),
        };
        // Best effort, as above.
        let _ = write_summary(runner, &failed);
        return Err(error);
    }
    write_summary_json(runner, &json).inspect_err(|_| {
        // Best effort: a report whose run has no summary would speak for a run that, by
        // its exit code, failed.
        let _ = std::fs::remove_file(runner.out_dir().join(REPORT_FILE));
    })
}

/// Writes `summary.json` for `status`.
///
/// # Errors
/// [`ScenarioError::Io`] if it cannot be written.
pub fn write_summary(runner: &mut Runner, status: &Status) -> Result<(), ScenarioError> {
    let json = summary(runner, status);
    write_summary_json(runner, &json)
}

fn write_summary_json(runner: &mut Runner, summary: &Value) -> Result<(), ScenarioError> {
    let path = runner.claim(SUMMARY_FILE)?;
    let text = serde_json::to_string_pretty(summary).map_err(|e| ScenarioError::Engine {
        path: path.clone(),
        context: "summary".into(),
        message: e.to_string(),
    })?;
    write_atomic(&path, text.as_bytes()).map_err(|source| io_error(&path, source))
}

/// The time series and the plots; each plot drawn is added to `figures` (so that the report
/// shows those drawn before a failure).
fn write_results(runner: &mut Runner, figures: &mut Vec<Figure>) -> Result<(), ScenarioError> {
    let path = runner.claim(TIMESERIES_FILE)?;
    runner
        .state
        .series
        .write(&path)
        .map_err(|source| io_error(&path, source))?;
    let tables: Vec<(String, crate::output::csv::TimeSeries)> =
        runner.state.probes.iter().flat_map(Probe::tables).collect();
    for (stem, table) in tables {
        let path = runner.claim(&format!("{stem}.csv"))?;
        table
            .write(&path)
            .map_err(|source| io_error(&path, source))?;
    }
    if runner.exp.scenario.outputs.plots {
        for (stem, plot) in plots(runner) {
            let file = format!("{PLOTS_DIR}/{stem}.png");
            let path = runner.claim(&file)?;
            render_png(&path, &plot).map_err(|e| ScenarioError::Engine {
                path: path.clone(),
                context: "plot".into(),
                message: e.to_string(),
            })?;
            figures.push(Figure {
                file,
                title: plot.title,
            });
        }
    }
    Ok(())
}

/// Why the results of a run cannot be trusted, if they cannot: grains that were never
/// poured, overlaps beyond the contact model's range, and each measurement's own doubts.
#[must_use]
pub fn warnings(runner: &Runner) -> Vec<String> {
    let exp = &runner.exp;
    let state = &runner.state;
    let mut out = Vec::new();
    for (p, pop) in exp.populations.iter().enumerate() {
        let dripped = state.poured.get(p).copied().unwrap_or(0);
        if pop.drip.is_some() && dripped < pop.count {
            let blocked = state.drip_blocked.get(p).copied().unwrap_or(0);
            let why = if blocked > 0 {
                format!(
                    "the release point was taken by a grain at {blocked} quiet moments: the heap \
                     has grown up to it (raise the release point or drip fewer grains)"
                )
            } else {
                "the scene was not quiet often enough: run longer, or raise threshold_speed"
                    .to_string()
            };
            out.push(format!(
                "grains[{p}] ('{}'): only {dripped} of {} grains were dripped; {why}",
                pop.name, pop.count
            ));
        }
        let Some(pour) = &pop.pour else { continue };
        let poured = state.poured.get(p).copied().unwrap_or(0);
        if poured < pop.count {
            let due = pour.start + (pop.count as f64 - 1.0) / pour.rate;
            let why = if due > exp.world.time() {
                format!(
                    "the last of them was due at t = {} s, after the run ended",
                    crate::number::short(due)
                )
            } else {
                "the pouring region had no free site when they were due: pour more slowly, \
                 enlarge the region, or run longer"
                    .to_string()
            };
            out.push(format!(
                "grains[{p}] ('{}'): only {poured} of {} grains were poured; {why}",
                pop.name, pop.count
            ));
        }
    }
    if state.max_overlap_ratio > SUSPECT_OVERLAP_RATIO {
        out.push(format!(
            "overlaps reached {:.1} % of the grain size at t = {} s (above {:.0} %, where the \
             volumetric contact laws no longer describe a contact): raise the stiffness (with \
             a smaller time step) or slow the impacts",
            100.0 * state.max_overlap_ratio,
            crate::number::short(state.max_overlap_time),
            100.0 * SUSPECT_OVERLAP_RATIO
        ));
    }
    let energy = runner.kinetic_energy();
    if !energy.is_finite() {
        out.push("the final kinetic energy is not finite".into());
    }
    for probe in &state.probes {
        out.extend(probe.warnings());
    }
    out
}

/// The summary as JSON.
#[must_use]
pub fn summary(runner: &Runner, status: &Status) -> Value {
    let exp = &runner.exp;
    let world = &exp.world;
    let state = &runner.state;
    let mut m = Map::new();
    let mut put = |k: &str, v: Value| {
        m.insert(k.to_string(), v);
    };
    put("scenario", Value::from(exp.scenario.name.clone()));
    put("file", Value::from(exp.path.display().to_string()));
    let warnings = warnings(runner);
    let clean = warnings.is_empty();
    put(
        "status",
        Value::from(match status {
            Status::Finished if clean => "finished",
            Status::AtRest if clean => "at_rest",
            Status::Finished | Status::AtRest => "suspect",
            Status::BlewUp(_) => "blew_up",
            Status::Failed(_) => "failed",
        }),
    );
    put(
        "stopped",
        Value::from(match status {
            Status::Finished => "end_time",
            Status::AtRest => "at_rest",
            Status::BlewUp(_) => "blew_up",
            Status::Failed(_) => "error",
        }),
    );
    if let Status::BlewUp(message) | Status::Failed(message) = status {
        put("error", Value::from(message.clone()));
    }
    put(
        "warnings",
        Value::Array(warnings.into_iter().map(Value::from).collect()),
    );
    put("grains", Value::from(runner.grain_total()));
    put("steps", Value::from(world.steps()));
    put("sim_time", json_number(Some(world.time())));
    put("dt", json_number(Some(exp.scenario.time.dt)));
    put("critical_dt", json_number(Some(exp.critical_dt)));
    put("wall_seconds", json_number(Some(state.wall_seconds)));
    put(
        "grain_steps_per_second",
        json_number(Some(
            state.grain_steps as f64 / state.wall_seconds.max(1e-9),
        )),
    );
    put(
        "mean_coordination",
        json_number(Some(state.last_coordination)),
    );
    put("contacts", Value::from(state.last_contacts));
    put(
        "max_overlap_ratio",
        json_number(Some(state.max_overlap_ratio)),
    );
    put(
        "max_overlap_time",
        json_number(Some(state.max_overlap_time)),
    );
    put(
        "final_kinetic_energy",
        json_number(Some(runner.kinetic_energy())),
    );
    put("threads", Value::from(world.thread_count()));
    if world.ranks() > 1 {
        let t = world.traffic();
        let per_step = |x: f64| json_number(Some(x / t.steps.max(1) as f64));
        put(
            "distribution",
            serde_json::json!({
                "ranks": world.ranks(),
                "steps": t.steps,
                "bytes_sent_per_step": per_step(t.bytes_sent as f64),
                "exchange_seconds": json_number(Some(t.exchange.as_secs_f64())),
                "pairs_evaluated_per_step": per_step(t.pairs_evaluated as f64),
                "contacts_moved": t.contacts_moved,
                "rebalances": t.rebalances,
                "narrow_seconds_per_process":
                    t.processes.iter().map(|p| json_number(Some(p.narrow_seconds))).collect::<Vec<_>>(),
                "exchange_seconds_per_process":
                    t.processes.iter().map(|p| json_number(Some(p.exchange_seconds))).collect::<Vec<_>>(),
                "bytes_sent_per_step_per_process":
                    t.processes.iter().map(|p| per_step(p.bytes_sent as f64)).collect::<Vec<_>>(),
                "pairs_evaluated_per_process":
                    t.processes.iter().map(|p| p.pairs_evaluated).collect::<Vec<_>>(),
                "modelled_work_per_process":
                    t.processes.iter().map(|p| json_number(Some(p.modelled_work))).collect::<Vec<_>>(),
                "weight_factors_at_last_cut":
                    t.weight_factors.iter().map(|&f| json_number(Some(f))).collect::<Vec<_>>(),
            }),
        );
    }
    let stages = ["predict", "bounds", "broad", "narrow", "forces", "correct"];
    put(
        "stage_seconds",
        Value::Object(
            stages
                .iter()
                .zip(state.stage_seconds)
                .map(|(k, v)| (k.to_string(), json_number(Some(v))))
                .collect(),
        ),
    );
    for probe in &state.probes {
        for (k, v) in probe.summary(exp) {
            put(&k, v);
        }
    }
    if seed_count(&exp.scenario) > 1 && matches!(status, Status::Finished | Status::AtRest) {
        add_seeds(&mut m, runner);
    }
    Value::Object(m)
}

/// Adds the answers over the scenario's seeds to the summary `m` of a run that reached its
/// end (see [`crate::seeds`]); a companion run without a clean answer makes the run
/// suspect, with the reason among its warnings.
fn add_seeds(m: &mut Map<String, Value>, runner: &Runner) {
    let own = Value::Object(m.clone());
    let (block, seed_warnings) = over_seeds(&runner.exp.scenario, runner.out_dir(), &own);
    if !seed_warnings.is_empty() {
        if let Some(Value::Array(warnings)) = m.get_mut("warnings") {
            warnings.extend(seed_warnings.into_iter().map(Value::from));
        }
        m.insert("status".into(), Value::from("suspect"));
    }
    m.insert("seeds".into(), block);
}

/// The plots of every run (kinetic energy, coordination) and of its probes.
fn plots(runner: &Runner) -> Vec<(String, Plot)> {
    let series = &runner.state.series;
    let column = |name: &str| series.column(name).unwrap_or_default();
    let time = column("time");
    let pairs = |ys: Vec<f64>| -> Vec<(f64, f64)> { time.iter().copied().zip(ys).collect() };
    let mut out = vec![
        (
            "kinetic_energy".to_string(),
            Plot {
                title: "Kinetic energy of the grains".into(),
                x_label: "time [s]".into(),
                y_label: "kinetic energy [J]".into(),
                log_y: true,
                log_x: false,
                series: vec![Series {
                    label: "translation + rotation".into(),
                    points: pairs(column("kinetic_energy")),
                    style: SeriesStyle::Line,
                }],
            },
        ),
        (
            "coordination".to_string(),
            Plot {
                title: "Mean number of contacts per grain".into(),
                x_label: "time [s]".into(),
                y_label: "coordination [1]".into(),
                log_y: false,
                log_x: false,
                series: vec![Series {
                    label: "coordination".into(),
                    points: pairs(column("coordination")),
                    style: SeriesStyle::Line,
                }],
            },
        ),
    ];
    for probe in &runner.state.probes {
        out.extend(probe.plots(&runner.exp));
    }
    out
}
