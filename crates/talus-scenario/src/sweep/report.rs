//! `OUT/report.html`: a sweep on one page — its scenario, the varied keys and seeds, how
//! its runs ended, each grid point's answers as mean ± standard deviation over the seeds,
//! every answer-against-key plot, and a link to each run's own page.

use std::path::Path;

use crate::number::{plus_minus, short};
use crate::output::report::{Cell, Figure, ReportPage};
use crate::output::run_dir::REPORT_FILE;
use crate::sweep::dir::{MEANS_FILE, RUNS_DIR, TABLE_FILE};
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
