//! The end of a run: `summary.json` (the machine-readable result), the plots, and the
//! final time series.

use serde_json::{Map, Value};

use crate::error::ScenarioError;
use crate::output::atomic::write_atomic;
use crate::output::plot::{Plot, Series, SeriesStyle, render_png};
use crate::probe::repose::json_number;
use crate::run::{Runner, TIMESERIES_FILE, io_error};

/// How a run ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Status {
    /// It reached its end time.
    Finished,
    /// It ended early because the grains came to rest.
    AtRest,
    /// It blew up; the message says why.
    BlewUp(String),
}

/// Writes `summary.json`, the plots (if the scenario asks for them) and the time series.
///
/// # Errors
/// [`ScenarioError::Io`] if a file cannot be written, or a plot cannot be drawn.
pub fn write_outputs(runner: &Runner, status: Status) -> Result<(), ScenarioError> {
    let out = runner.out_dir();
    let summary = summary(runner, &status);
    let text = serde_json::to_string_pretty(&summary).map_err(|e| ScenarioError::Engine {
        path: out.join("summary.json"),
        context: "summary".into(),
        message: e.to_string(),
    })?;
    let path = out.join("summary.json");
    write_atomic(&path, text.as_bytes()).map_err(|source| io_error(&path, source))?;
    let path = out.join(TIMESERIES_FILE);
    runner
        .state
        .series
        .write(&path)
        .map_err(|source| io_error(&path, source))?;
    if runner.exp.scenario.outputs.plots {
        for (stem, plot) in plots(runner) {
            let path = out.join("plots").join(format!("{stem}.png"));
            render_png(&path, &plot).map_err(|e| ScenarioError::Engine {
                path: path.clone(),
                context: "plot".into(),
                message: e.to_string(),
            })?;
        }
    }
    Ok(())
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
    put(
        "status",
        Value::from(match status {
            Status::Finished => "finished",
            Status::AtRest => "at_rest",
            Status::BlewUp(_) => "blew_up",
        }),
    );
    if let Status::BlewUp(message) = status {
        put("error", Value::from(message.clone()));
    }
    put("grains", Value::from(world.grain_count()));
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
        "final_kinetic_energy",
        json_number(Some(runner.kinetic_energy())),
    );
    put("threads", Value::from(world.params().threads));
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
    Value::Object(m)
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
