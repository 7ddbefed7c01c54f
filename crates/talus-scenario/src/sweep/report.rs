//! `OUT/report.html`: a sweep on one page — its scenario, the varied keys and seeds, how
//! its runs ended, each grid point's answers as mean ± standard deviation over the seeds,
//! every answer-against-key plot, and a link to each run's own page.

use std::path::Path;

use crate::number::{plus_minus, short};
use crate::output::report::{Cell, Figure, ReportPage};
use crate::output::run_dir::REPORT_FILE;
use crate::sweep::dir::{MEANS_FILE, RUNS_DIR, TABLE_FILE};
use crate::sweep::flow_rule::{FLOW_RULE_FILE, FlowRule};
use crate::sweep::plan::Plan;
use crate::sweep::table::{GridStats, RunRecord};

/// The page of the sweep `plan` in `dir`, from its runs' `records`, the grid points'
/// `stats` of the answers `answers`, and its `plots` (paths relative to `dir`).
///
/// # Errors
/// The error of reading a plot.
pub fn sweep_report(
    plan: &Plan,
    dir: &Path,
    records: &[RunRecord],
    answers: &[String],
    stats: &[GridStats],
    plots: &[String],
    rule: Option<&FlowRule>,
) -> std::io::Result<String> {
    let name = plan
        .scenario_file
        .file_stem()
        .map_or_else(|| "sweep".to_string(), |s| s.to_string_lossy().into_owned());
    let mut page = ReportPage::new(&format!("Sweep of {name}"));
    page.section("Plan");
    let mut plan_lines = vec![format!("scenario: {}", plan.scenario_file.display())];
    plan_lines.extend(plan.set.iter().map(|s| format!("set for every run: {s}")));
    plan_lines.extend(
        plan.axes
            .iter()
            .map(|a| format!("varied: {} = {}", a.key, a.values.join(", "))),
    );
    plan_lines.push(format!(
        "seeds: {}",
        plan.seeds
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    ));
    page.list(&plan_lines);

    page.section("Runs");
    let count = |status: &str| records.iter().filter(|r| r.status == status).count();
    let ended_well = count("finished") + count("at_rest");
    let suspect = count("suspect");
    let others = records.len() - ended_well - suspect;
    let overall = if others > 0 {
        "failed"
    } else if suspect > 0 {
        "suspect"
    } else {
        "finished"
    };
    page.status(
        overall,
        &[format!(
            "{} runs: {ended_well} finished or at rest, {suspect} suspect, {others} blew up or failed",
            records.len()
        )],
    );

    page.section("Answers per grid point (mean ± standard deviation over the seeds)");
    let mut header: Vec<&str> = plan.axes.iter().map(|a| a.key.as_str()).collect();
    header.extend(["runs", "answered", "suspect"]);
    header.extend(answers.iter().map(String::as_str));
    let rows: Vec<Vec<Cell>> = stats
        .iter()
        .map(|point| {
            let mut row: Vec<Cell> = point.values.iter().map(Cell::text).collect();
            row.extend(
                [point.runs, point.answered, point.suspect].map(|n| Cell::number(n.to_string())),
            );
            row.extend(point.answers.iter().map(|s| {
                Cell::number(match s.n {
                    0 => "–".to_string(),
                    1 => short(s.mean),
                    n => format!("{} (n = {n})", plus_minus(s.mean, s.sd)),
                })
            }));
            row
        })
        .collect();
    page.table(&header, &rows);

    if let Some(rule) = rule {
        flow_rule_section(&mut page, rule);
    }

    if !plots.is_empty() {
        page.section("Answers against the varied keys");
        let figures: Vec<Figure> = plots
            .iter()
            .map(|p| Figure {
                file: p.clone(),
                title: Path::new(p).file_stem().map_or_else(String::new, |s| {
                    s.to_string_lossy().replace("_vs_", " against ")
                }),
            })
            .collect();
        page.figures(dir, &figures)?;
    }

    page.section("Files");
    let mut links = vec![
        (TABLE_FILE.to_string(), "one row per run".to_string()),
        (MEANS_FILE.to_string(), "one row per grid point".to_string()),
    ];
    links.extend(records.iter().map(|r| {
        (
            format!("{RUNS_DIR}/{}/{REPORT_FILE}", r.name),
            format!("{} ({})", r.name, r.status),
        )
    }));
    page.links(&links);
    Ok(page.finish())
}

/// The flow rule of a chute-flow sweep: where each bed flows steadily, h_stop(θ) and β.
fn flow_rule_section(page: &mut ReportPage, rule: &FlowRule) {
    page.section("Chute flow: steady inclines, h_stop(θ) and the flow rule");
    let angle = |x: f64| {
        if x.is_finite() {
            format!("{}°", short(x))
        } else {
            "–".to_string()
        }
    };
    let rows: Vec<Vec<Cell>> = rule
        .steady_ranges
        .iter()
        .map(|r| {
            vec![
                Cell::text(if r.bed.is_empty() { "the bed" } else { &r.bed }),
                Cell::number(angle(r.steepest_stopped_deg)),
                Cell::number(format!(
                    "{} – {}",
                    angle(r.steady_deg.0),
                    angle(r.steady_deg.1)
                )),
                Cell::number(angle(r.gentlest_accelerating_deg)),
            ]
        })
        .collect();
    page.table(
        &[
            "bed",
            "steepest incline where it stopped",
            "inclines where it flowed steadily",
            "gentlest incline where it accelerated",
        ],
        &rows,
    );
    let depth = |x: f64| {
        if x.is_finite() {
            format!("{} m", short(x))
        } else {
            "–".to_string()
        }
    };
    let rows: Vec<Vec<Cell>> = rule
        .h_stop_m
        .iter()
        .map(|(a, stopped, flowing)| {
            vec![
                Cell::number(angle(*a)),
                Cell::number(depth(*stopped)),
                Cell::number(depth(*flowing)),
            ]
        })
        .collect();
    page.table(
        &[
            "incline",
            "deepest bed that stopped",
            "shallowest bed that flowed steadily",
        ],
        &rows,
    );
    page.paragraph(&match rule.beta {
        Some((beta, error, n)) => format!(
            "Pouliquen's flow rule Fr = β h / h_stop(θ), h_stop the middle of each bracket: \
             β = {} from {n} steady runs ({FLOW_RULE_FILE}).",
            plus_minus(beta, error)
        ),
        None => format!(
            "No incline has both a bed that stopped and one that flowed steadily: h_stop(θ) \
             and β cannot be read from these runs ({FLOW_RULE_FILE})."
        ),
    });
}
