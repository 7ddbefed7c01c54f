//! Parameter sweeps: the grid of scenarios that vary some values of one scenario (through
//! the `--set` machinery), each run with several seeds, and the answers gathered in tables
//! and plots.
//!
//! * [`grid`]: the varied keys and their values, crossed with the seeds;
//! * [`spec`]: the sweep file, the command line as RON;
//! * [`plan`]: what a sweep runs, kept in its directory so that it can be resumed;
//! * [`dir`]: the sweep's locked directory and the manifest of the files it wrote there;
//! * [`execute`]: running the runs, several at a time, resuming interrupted ones;
//! * [`table`]: `sweep.csv` and `sweep_means.csv`; [`plots`]: each answer against each key;
//!   [`report`]: `report.html`, the sweep on one page.

pub mod dir;
pub mod execute;
pub mod flow_rule;
pub mod grid;
pub mod plan;
pub mod plots;
pub mod report;
pub mod spec;
pub mod table;

use std::path::Path;

use talus_sim::force::ForceModelRegistry;

use crate::check::check;
use crate::error::ScenarioError;
use crate::load::{apply_overrides, blame_overrides, read, split_key, to_ron};
use crate::output::atomic::write_atomic;
use crate::output::plot::{Plot, render_png};
use crate::output::run_dir::REPORT_FILE;
use crate::run::io_error;
use crate::seeds::{seed_count, seeds_from};
use dir::{MEANS_FILE, PLOTS_DIR, SweepDir, TABLE_FILE};
use execute::RunEvent;
use grid::{Axis, MAX_SEEDS};
use plan::Plan;
use table::{RunRecord, answers, collect, grid_stats, write_means, write_table};

/// What a sweep is asked to run.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepRequest {
    /// `--set` assignments for every run.
    pub set: Vec<String>,
    /// The varied keys, `key=value,value,…` each.
    pub vary: Vec<String>,
    /// Seeds per grid point: the scenario's seed and the ones after it; `None`: the
    /// scenario's `seeds` (1 if it gives none). Each run of a sweep runs one seed.
    pub seeds: Option<u64>,
}

/// Most runs in one sweep: more is almost certainly a mistake in a `lin`/`log` count, and
/// would take months.
pub const MAX_RUNS: u64 = 100_000;

/// The plan of the sweep `request` on the scenario file `file`, with every grid point
/// checked as `talus check` checks a scenario (ranges, references, the force model and its
/// coefficients, the placement) before anything runs, so that the tenth value of a key is
/// not found to be out of range hours into the sweep.
///
/// # Errors
/// Every problem found: the scenario file, a `--set` or `--vary` that does not apply, a key
/// varied twice or both set and varied, a seed count out of range, a grid point that is not
/// a valid scenario (blamed on the assignment that gave the value).
pub fn plan(
    file: &Path,
    request: &SweepRequest,
    registry: &ForceModelRegistry,
) -> Result<Plan, Vec<ScenarioError>> {
    let scenario = read(file).map_err(|e| vec![e])?;
    let mut base = apply_overrides(&scenario, &request.set).map_err(|e| vec![e])?;
    // The sweep runs the seeds itself, each as a run of its own.
    let seed_count = request.seeds.unwrap_or_else(|| seed_count(&base));
    base.seeds = None;
    let mut errors = Vec::new();
    let mut axes: Vec<Axis> = Vec::new();
    for spec in &request.vary {
        match Axis::parse(spec) {
            Ok(axis) => axes.push(axis),
            Err(e) => errors.push(e),
        }
    }
    let fail = |assignment: &str, problem: String| ScenarioError::Override {
        assignment: assignment.to_string(),
        problem,
    };
    let set_keys: Vec<String> = request
        .set
        .iter()
        .filter_map(|a| a.split_once('=').map(|(k, _)| split_key(k.trim())))
        .collect();
    for (i, axis) in axes.iter().enumerate() {
        let key = split_key(&axis.key);
        if axes[..i].iter().any(|a| split_key(&a.key) == key) {
            errors.push(fail(
                &format!("(--vary) {}", axis.key),
                "this key is varied twice; give all its values in one --vary".into(),
            ));
        }
        if set_keys.contains(&key) {
            errors.push(fail(
                &format!("(--vary) {}", axis.key),
                "this key is also given by --set; a varied key takes its values from --vary \
                 alone"
                    .into(),
            ));
        }
        if key == "seed" || key == "seeds" {
            errors.push(fail(
                &format!("(--vary) {}", axis.key),
                "the seed is varied by --seeds N (the scenario's seed and the N − 1 after it)"
                    .into(),
            ));
        }
    }
    if set_keys.iter().any(|k| k == "seeds") {
        errors.push(fail(
            "(--set) seeds",
            "a sweep's seeds per grid point are given by --seeds N".into(),
        ));
    }
    if !(1..=MAX_SEEDS).contains(&seed_count) {
        errors.push(fail(
            &format!("(--seeds) {seed_count}"),
            format!("seeds per grid point must be from 1 to {MAX_SEEDS}"),
        ));
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    // The grid's size before any of it is built: a few long `lin`/`log` lists crossed with
    // many seeds would otherwise build (and check) billions of points first.
    let runs = axes
        .iter()
        .fold(seed_count, |n, a| n.saturating_mul(a.values.len() as u64));
    if runs > MAX_RUNS {
        return Err(vec![fail(
            "(--vary, --seeds)",
            format!(
                "the grid has {runs} runs; allowed: at most {MAX_RUNS} in one sweep (fewer \
                 values, or fewer seeds)"
            ),
        )]);
    }
    let base_text = to_ron(&base).map_err(|e| vec![e])?;
    let seeds = seeds_from(base.seed, seed_count);
    let plan = Plan::new(file, base_text, request.set.clone(), axes, seeds);
    let mut seen = Vec::new();
    let mut seen_errors: Vec<String> = Vec::new();
    for run in &plan.runs {
        if seen.contains(&&run.point.values) {
            continue;
        }
        seen.push(&run.point.values);
        let assignments = plan.assignments(run);
        match apply_overrides(&base, &assignments) {
            Err(e) => errors.push(e),
            Ok(scenario) => {
                let found = check(&scenario, file, registry).err().unwrap_or_default();
                let point: Vec<&String> = assignments[..plan.axes.len()].iter().collect();
                for e in blame_overrides(found, &assignments) {
                    let text = e.to_string();
                    if seen_errors.contains(&text) {
                        continue;
                    }
                    seen_errors.push(text.clone());
                    // An error the values' fields do not name is still the grid point's.
                    errors.push(match e {
                        ScenarioError::Override { .. } | ScenarioError::InvalidOverride { .. } => e,
                        _ => fail(
                            &format!(
                                "(grid point) {}",
                                point
                                    .iter()
                                    .map(|a| a.as_str())
                                    .collect::<Vec<_>>()
                                    .join(" ")
                            ),
                            text,
                        ),
                    });
                }
            }
        }
    }
    if errors.is_empty() {
        Ok(plan)
    } else {
        Err(errors)
    }
}

/// What a sweep found, once its tables and plots are written.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepResults {
    /// One row per run.
    pub records: Vec<RunRecord>,
    /// The numeric answers averaged and plotted.
    pub answers: Vec<String>,
    /// The plots written, as paths relative to the sweep directory.
    pub plots: Vec<String>,
}

/// Writes `sweep.csv`, `sweep_means.csv`, `plots/<answer>_vs_<key>.png` (for each numeric
/// answer and each varied key) and `report.html` from the runs' summaries; for a chute-flow
/// sweep over `incline_deg`, also `flow_rule.json` and its plot. Each file is recorded in
/// the directory's manifest before it is first written (see [`dir`]).
///
/// # Errors
/// [`ScenarioError::Io`] if a file cannot be written or a plot drawn;
/// [`ScenarioError::OutputDir`] if a file of the user's is under one of those names.
pub fn write_results(
    plan: &Plan,
    dir: &mut SweepDir,
    events: &[RunEvent],
) -> Result<SweepResults, ScenarioError> {
    let records = collect(plan, dir, events);
    let path = dir.claim(TABLE_FILE)?;
    write_table(&path, plan, &records).map_err(|source| io_error(&path, source))?;
    let keys = answers(&records);
    let stats = grid_stats(&records, &keys);
    let path = dir.claim(MEANS_FILE)?;
    write_means(&path, plan, &keys, &stats).map_err(|source| io_error(&path, source))?;
    let mut plots = Vec::new();
    let draw = |dir: &mut SweepDir, rel: &str, plot: &Plot| {
        let path = dir.claim(rel)?;
        render_png(&path, plot).map_err(|e| ScenarioError::Engine {
            path: path.clone(),
            context: "plot".into(),
            message: e.to_string(),
        })
    };
    for a in 0..plan.axes.len() {
        for (k, key) in keys.iter().enumerate() {
            let (stem, plot) = plots::answer_plot(&plan.axes, a, key, k, &stats);
            let stem = grid::plain_name(&stem);
            let rel = format!("{PLOTS_DIR}/{stem}.png");
            draw(dir, &rel, &plot)?;
            plots.push(rel);
        }
    }
    // A chute-flow sweep over inclines: the flow rule across its runs.
    let rule = flow_rule::flow_rule(plan, &records);
    if let Some(rule) = &rule {
        let path = dir.claim(flow_rule::FLOW_RULE_FILE)?;
        let json = serde_json::to_string_pretty(rule).map_err(|e| ScenarioError::Engine {
            path: path.clone(),
            context: "flow rule".into(),
            message: e.to_string(),
        })?;
        write_atomic(&path, json.as_bytes()).map_err(|source| io_error(&path, source))?;
        if let Some(plot) = rule.plot() {
            let rel = format!("{PLOTS_DIR}/{}.png", flow_rule::FLOW_RULE_PLOT);
            draw(dir, &rel, &plot)?;
            plots.push(rel);
        }
    }
    let html = report::sweep_report(
        plan,
        dir.path(),
        &records,
        &keys,
        &stats,
        &plots,
        rule.as_ref(),
    )
    .map_err(|source| io_error(dir.path(), source))?;
    let path = dir.claim(REPORT_FILE)?;
    write_atomic(&path, html.as_bytes()).map_err(|source| io_error(&path, source))?;
    Ok(SweepResults {
        records,
        answers: keys,
        plots,
    })
}
