//! `report.html`: a run on one page, for a person, beside `summary.json` for programs.
//!
//! In this order: the scenario's name; the parameters that make the run what it is (grain
//! populations, time step and end, integrator, force model and coefficients, seed); the
//! status with its warnings or error; the answers (every scalar of the summary, a value
//! beside its uncertainty as `value ± uncertainty`, and the scalars of a group of answers
//! such as the chute's `bagnold` fit as `bagnold.amplitude_A`); for a scenario run with
//! several seeds, each answer's mean, spread and values over them; every plot; how long each
//! stage of the step took; links to the run's other files, the tables its measurements
//! wrote among them. The page is built from the summary as written, so the two never
//! disagree.

use std::path::Path;

use serde_json::{Map, Value};

use crate::error::ScenarioError;
use crate::number::{plus_minus, short};
use crate::output::atomic::write_atomic;
use crate::output::report::{Cell, Figure, ReportPage};
use crate::output::run_dir::{
    CHUTE_PROFILE_FILE, PVD_FILE, REPORT_FILE, SCENARIO_FILE, STROBE_FILE, SUMMARY_FILE,
};
use crate::probe::Probe;
use crate::run::{Runner, TIMESERIES_FILE, io_error};
use crate::schema::Scenario;

/// Summary entries shown with the status rather than among the answers.
const STATUS_KEYS: [&str; 5] = ["scenario", "file", "status", "stopped", "error"];

/// Summary entries that say how fast the run went, not what it found: shown under the
/// timings.
const TIMING_KEYS: [&str; 5] = [
    "stage_seconds",
    "wall_seconds",
    "grain_steps_per_second",
    "threads",
    "distribution",
];

/// Parts of a summary key (between `_`) that make it the uncertainty of the key without
/// that part: `discharge_rate_err` of `discharge_rate`, `repose_angle_spread_deg` of
/// `repose_angle_deg`.
const UNCERTAINTY_MARKERS: [&str; 6] = ["err", "error", "sd", "std", "spread", "sigma"];

/// Writes `report.html` into the run's directory from its `summary` and the plots
/// `figures` it drew.
///
/// # Errors
/// [`ScenarioError::Io`] if a plot cannot be read or the page cannot be written.
pub fn write_report(
    runner: &mut Runner,
    summary: &Value,
    figures: &[Figure],
) -> Result<(), ScenarioError> {
    let frames = !runner.state.frames.is_empty();
    let dir = runner.out_dir().to_path_buf();
    let tables: Vec<String> = runner
        .state
        .probes
        .iter()
        .flat_map(Probe::tables)
        .map(|(stem, _)| format!("{stem}.csv"))
        .collect();
    let html = run_report(
        &runner.exp.scenario,
        summary,
        &dir,
        figures,
        frames,
        &tables,
    )
    .map_err(|source| io_error(&dir, source))?;
    let path = runner.claim(REPORT_FILE)?;
    write_atomic(&path, html.as_bytes()).map_err(|source| io_error(&path, source))
}

/// The page of the run of `scenario` whose summary is `summary`, with the plots `figures`
/// (their files under `dir`), linking `frames.pvd` when the run wrote `frames`, and each
/// of the measurements' `tables` (CSV files, relative to `dir`) that is in `dir`.
///
/// # Errors
/// The error of reading a plot.
pub fn run_report(
    scenario: &Scenario,
    summary: &Value,
    dir: &Path,
    figures: &[Figure],
    frames: bool,
    tables: &[String],
) -> std::io::Result<String> {
    let empty = Map::new();
    let entries = summary.as_object().unwrap_or(&empty);
    let mut page = ReportPage::new(&scenario.name);

    page.section("Parameters");
    parameters(&mut page, scenario, entries);

    page.section("Status");
    let status = entries
        .get("status")
        .and_then(Value::as_str)
        .unwrap_or("unknown");
    let mut notes = Vec::new();
    if let Some(error) = entries.get("error").and_then(Value::as_str) {
        notes.push(format!("error: {error}"));
    }
    for w in entries
        .get("warnings")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        notes.push(format!("warning: {}", w.as_str().unwrap_or_default()));
    }
    page.status(status, &notes);
    if let Some(stopped) = entries.get("stopped").and_then(Value::as_str) {
        page.paragraph(&format!("stopped: {stopped}"));
    }

    page.section("Answers");
    page.table(&["quantity", "value"], &answer_rows(entries));
    if let Some(seeds) = entries.get("seeds").and_then(Value::as_object) {
        over_seeds(&mut page, seeds);
    }

    if !figures.is_empty() {
        page.section("Plots");
        page.figures(dir, figures)?;
    }

    page.section("Timings");
    timings(&mut page, entries);

    page.section("Files");
    let mut links = vec![
        link(TIMESERIES_FILE, "one row per output interval"),
        link(SUMMARY_FILE, "the answers for programs"),
        link(SCENARIO_FILE, "the scenario as run"),
    ];
    // A table the run was to write but did not (it failed before, or the disk was full)
    // would be a dead link.
    for table in tables.iter().filter(|t| dir.join(t).is_file()) {
        links.push(link(table, table_description(table)));
    }
    if frames {
        links.push(link(PVD_FILE, "the frames, for ParaView"));
    }
    page.links(&links);
    Ok(page.finish())
}

fn link(file: &str, what: &str) -> (String, String) {
    (file.to_string(), format!("{file} — {what}"))
}

/// What a measurement's table holds, for its link.
fn table_description(file: &str) -> &'static str {
    match file {
        STROBE_FILE => "the stroboscopic samples, one row per cycle of the drive",
        CHUTE_PROFILE_FILE => "the mean profiles across the depth, one row per layer",
        _ => "a table of the measurement",
    }
}

/// The key parameters of `scenario`: time stepping and seed, the grains, the materials and
/// the force model.
fn parameters(page: &mut ReportPage, scenario: &Scenario, entries: &Map<String, Value>) {
    let t = &scenario.time;
    let g = scenario.gravity_vector();
    let (gx, gy, gz) = (g.x, g.y, g.z);
    let mut rows = Vec::new();
    if let Some(file) = entries.get("file").and_then(Value::as_str) {
        rows.push(vec![Cell::text("scenario file"), Cell::text(file)]);
    }
    rows.extend([
        vec![Cell::text("seed"), Cell::number(scenario.seed.to_string())],
        vec![
            Cell::text("integrator"),
            Cell::text(format!("{:?}", scenario.integrator)),
        ],
        vec![Cell::text("time step [s]"), Cell::number(short(t.dt))],
        vec![Cell::text("end time [s]"), Cell::number(short(t.end))],
        vec![
            Cell::text("output interval [s]"),
            Cell::number(short(t.output_interval)),
        ],
        vec![
            Cell::text("gravity [m/s²]"),
            Cell::text(format!("({}, {}, {})", short(gx), short(gy), short(gz))),
        ],
    ]);
    if let Some(angle) = scenario.incline_deg {
        rows.push(vec![Cell::text("incline [°]"), Cell::number(short(angle))]);
    }
    for (axis, faces) in ["x", "y", "z"].iter().zip(scenario.periodic.axes()) {
        if let Some((lower, upper)) = faces {
            rows.push(vec![
                Cell::text(format!("periodic along {axis} [m]")),
                Cell::text(format!("{} to {}", short(lower), short(upper))),
            ]);
        }
    }
    page.table(&["parameter", "value"], &rows);

    let grains: Vec<Vec<Cell>> = scenario
        .grains
        .iter()
        .map(|pop| {
            let shape = match (pop.ellipsoid(), &pop.shape) {
                (Some((vertices, (a, b, c))), _) => format!(
                    "{vertices} vertices on an ellipsoid of semi-axes ({}, {}, {}) m",
                    short(a),
                    short(b),
                    short(c)
                ),
                (None, Some(shape)) => format!("from {}", shape.paths().join(", ")),
                (None, None) => String::new(),
            };
            vec![
                Cell::text(&pop.name),
                Cell::number(pop.count.to_string()),
                Cell::text(&pop.material),
                Cell::text(shape),
            ]
        })
        .collect();
    page.table(&["grains", "count", "material", "shape"], &grains);

    let materials: Vec<Vec<Cell>> = scenario
        .materials
        .iter()
        .map(|m| {
            vec![
                Cell::text(&m.name),
                Cell::number(short(m.density)),
                Cell::text(coefficients(&m.coefficients)),
            ]
        })
        .collect();
    page.table(&["material", "density [kg/m³]", "coefficients"], &materials);

    let model = &scenario.force_model;
    let mut rows = vec![vec![
        Cell::text("model"),
        Cell::text(&model.name),
        Cell::text(coefficients(&model.coefficients)),
    ]];
    if let Some(parts) = &model.parts {
        for (role, part) in parts.chosen() {
            rows.push(vec![
                Cell::text(role.name()),
                Cell::text(&part.name),
                Cell::text(coefficients(&part.coefficients)),
            ]);
        }
    }
    for pair in &model.pairs {
        rows.push(vec![
            Cell::text("pair"),
            Cell::text(format!("{} – {}", pair.materials.0, pair.materials.1)),
            Cell::text(coefficients(&pair.coefficients)),
        ]);
    }
    page.table(&["force model", "name", "coefficients"], &rows);
}

/// `name = value, …`, in the scenario's (alphabetical) order.
fn coefficients(values: &std::collections::BTreeMap<String, f64>) -> String {
    values
        .iter()
        .map(|(k, v)| format!("{k} = {}", short(*v)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The key whose uncertainty `key` is (see [`UNCERTAINTY_MARKERS`]), if `entries` has it.
fn uncertainty_of<'a>(key: &str, entries: &'a Map<String, Value>) -> Option<&'a str> {
    let parts: Vec<&str> = key.split('_').collect();
    (1..parts.len())
        .filter(|&i| UNCERTAINTY_MARKERS.contains(&parts[i]))
        .find_map(|i| {
            let mut base = parts.clone();
            base.remove(i);
            entries
                .get_key_value(&base.join("_"))
                .map(|(k, _)| k.as_str())
        })
}

/// Whether `value` is shown among the answers: a number, a boolean, text, nothing (a
/// measurement that could not be made) or a list of those.
fn is_scalar(value: &Value) -> bool {
    match value {
        Value::Array(items) => items.iter().all(|v| !v.is_array() && !v.is_object()),
        Value::Object(_) => false,
        _ => true,
    }
}

/// The answers, one row each, in the summary's (alphabetical) order: every scalar entry that
/// is neither status nor timing, and every scalar inside an entry that groups answers (an
/// object, such as the chute's `bagnold` fit), named `group.key`; an entry with an
/// uncertainty shows it after `±`, and the uncertainty has no row of its own. Groups inside
/// groups are left out: the page shows one level, `summary.json` has them all.
fn answer_rows(entries: &Map<String, Value>) -> Vec<Vec<Cell>> {
    let mut rows = Vec::new();
    for (key, value) in entries {
        if STATUS_KEYS.contains(&key.as_str())
            || TIMING_KEYS.contains(&key.as_str())
            || ["warnings", "seeds"].contains(&key.as_str())
        {
            continue;
        }
        match value {
            Value::Object(group) => rows.extend(scalar_rows(group, &format!("{key}."))),
            _ => rows.extend(scalar_row(key, value, entries, "")),
        }
    }
    rows
}

/// The answers over the scenario's seeds (the summary's `seeds` entry, see
/// [`crate::seeds`]): which runs, how each ended, and for each answer its mean ± sample
/// standard deviation, its range and every seed's value.
fn over_seeds(page: &mut ReportPage, seeds: &Map<String, Value>) {
    let list = |key: &str| -> Vec<String> {
        seeds
            .get(key)
            .and_then(Value::as_array)
            .map(|items| items.iter().map(text).collect())
            .unwrap_or_default()
    };
    let (numbers, runs, statuses) = (list("seeds"), list("runs"), list("statuses"));
    page.section(&format!("Over {} seeds", numbers.len()));
    let described: Vec<String> = numbers
        .iter()
        .zip(&runs)
        .zip(&statuses)
        .map(|((seed, run), status)| format!("seed {seed} ({run}): {status}"))
        .collect();
    page.paragraph(&described.join("; "));
    let number = |entry: &Map<String, Value>, key: &str| {
        entry.get(key).and_then(Value::as_f64).unwrap_or(f64::NAN)
    };
    let rows: Vec<Vec<Cell>> = seeds
        .get("answers")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter_map(|(key, entry)| {
            let entry = entry.as_object()?;
            let values = entry.get("values").map(text).unwrap_or_default();
            Some(vec![
                Cell::text(key.as_str()),
                Cell::number(plus_minus(number(entry, "mean"), number(entry, "sd"))),
                Cell::number(format!(
                    "{} – {}",
                    short(number(entry, "min")),
                    short(number(entry, "max"))
                )),
                Cell::text(values),
            ])
        })
        .collect();
    page.table(&["quantity", "mean ± sd", "range", "values"], &rows);
}

/// The rows of the scalar entries of `entries`, their names after `prefix`.
fn scalar_rows(entries: &Map<String, Value>, prefix: &str) -> Vec<Vec<Cell>> {
    entries
        .iter()
        .filter_map(|(k, v)| scalar_row(k, v, entries, prefix))
        .collect()
}

/// The row of the entry `key` = `value` of `entries` (with its uncertainty, from the same
/// entries), named `prefix` + `key`; `None` for an entry that is not a scalar, or that is
/// the uncertainty of another.
fn scalar_row(
    key: &str,
    value: &Value,
    entries: &Map<String, Value>,
    prefix: &str,
) -> Option<Vec<Cell>> {
    // An uncertainty is shown beside its value, not on a row of its own.
    if !is_scalar(value) || (!value.is_array() && uncertainty_of(key, entries).is_some()) {
        return None;
    }
    let error = entries
        .iter()
        .find(|(k, e)| is_scalar(e) && !e.is_array() && uncertainty_of(k, entries) == Some(key));
    let shown = match (value.as_f64(), error) {
        (Some(x), Some((_, e))) if !value.is_u64() && !value.is_i64() => {
            plus_minus(x, e.as_f64().unwrap_or(f64::NAN))
        }
        _ => text(value),
    };
    let cell = if value.is_number() || value.is_null() {
        Cell::number(shown)
    } else {
        Cell::text(shown)
    };
    Some(vec![Cell::text(format!("{prefix}{key}")), cell])
}

/// A scalar of the summary as text: whole numbers in full, others to six significant
/// digits, `—` for a value that could not be measured, lists in brackets.
fn text(value: &Value) -> String {
    match value {
        Value::Null => "—".into(),
        Value::Bool(b) => if *b { "yes" } else { "no" }.into(),
        Value::Number(n) => match (n.as_u64(), n.as_i64()) {
            (Some(u), _) => u.to_string(),
            (None, Some(i)) => i.to_string(),
            _ => short(n.as_f64().unwrap_or(f64::NAN)),
        },
        Value::String(s) => s.clone(),
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(text).collect::<Vec<_>>().join(", ")
        ),
        Value::Object(_) => String::new(),
    }
}

/// The wall-clock time, the throughput, the threads, the seconds of each stage of the step
/// with its share, and the exchange between processes of a distributed run.
fn timings(page: &mut ReportPage, entries: &Map<String, Value>) {
    let rows: Vec<Vec<Cell>> = [
        ("wall_seconds", "wall-clock time [s]"),
        ("grain_steps_per_second", "grain steps per second"),
        ("threads", "threads"),
    ]
    .into_iter()
    .filter_map(|(key, label)| {
        entries
            .get(key)
            .map(|v| vec![Cell::text(label), Cell::number(text(v))])
    })
    .collect();
    page.table(&["quantity", "value"], &rows);
    if let Some(stages) = entries.get("stage_seconds").and_then(Value::as_object) {
        let total: f64 = stages.values().filter_map(Value::as_f64).sum();
        let rows: Vec<Vec<Cell>> = stages
            .iter()
            .map(|(stage, seconds)| {
                let share = seconds
                    .as_f64()
                    .filter(|_| total > 0.0)
                    .map_or_else(|| "—".to_string(), |s| format!("{:.1}", 100.0 * s / total));
                vec![
                    Cell::text(stage),
                    Cell::number(text(seconds)),
                    Cell::number(share),
                ]
            })
            .collect();
        page.table(&["stage", "seconds", "share [%]"], &rows);
        page.paragraph(
            "Shares of the stages' total. With several threads the broad phase runs beside \
             the narrow phase, on another thread: its seconds then count in both.",
        );
    }
    if let Some(distribution) = entries.get("distribution").and_then(Value::as_object) {
        let rows: Vec<Vec<Cell>> = distribution
            .iter()
            .map(|(k, v)| vec![Cell::text(k), Cell::number(text(v))])
            .collect();
        page.table(&["distribution", "value"], &rows);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(json: &str) -> Map<String, Value> {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn uncertainties_are_found_by_their_marker_anywhere_in_the_name() {
        let e = entries(
            r#"{"discharge_rate":1.0,"discharge_rate_err":0.1,"repose_angle_deg":30.0,
                "repose_angle_spread_deg":2.0,"transport_velocity_m_s":0.01,
                "transport_velocity_spread_m_s":0.001,"spread":3.0,"alpha_sd":1.0,
                "errand":2.0,"errand_x":1.0}"#,
        );
        assert_eq!(
            uncertainty_of("discharge_rate_err", &e),
            Some("discharge_rate")
        );
        assert_eq!(
            uncertainty_of("repose_angle_spread_deg", &e),
            Some("repose_angle_deg")
        );
        assert_eq!(
            uncertainty_of("transport_velocity_spread_m_s", &e),
            Some("transport_velocity_m_s")
        );
        // No value to belong to, a marker that is the whole name, or only part of a word.
        assert_eq!(uncertainty_of("alpha_sd", &e), None);
        assert_eq!(uncertainty_of("spread", &e), None);
        assert_eq!(uncertainty_of("errand_x", &e), None);
        assert_eq!(uncertainty_of("discharge_rate", &e), None);
    }

    /// The answers as (name, text) pairs.
    fn shown(json: &str) -> Vec<(String, String)> {
        answer_rows(&entries(json))
            .into_iter()
            .map(|row| {
                let cells: Vec<String> = row
                    .into_iter()
                    .map(|c| match c {
                        Cell::Text(t) | Cell::Number(t) | Cell::Link { text: t, .. } => t,
                    })
                    .collect();
                (cells[0].clone(), cells[1].clone())
            })
            .collect()
    }

    #[test]
    fn answers_are_short_paired_with_their_errors_and_leave_out_status_and_timings() {
        let rows = shown(
            r#"{"scenario":"s","status":"finished","warnings":["w"],"steps":12345678,
                "wall_seconds":1.5,"stage_seconds":{"narrow":1.0},"threads":2,
                "final_kinetic_energy":0.30000000000000004,"discharge_rate":1.44142673,
                "discharge_rate_err":0.00197242,"clogged":false,"beverloo_rate":null,
                "band_hz":[2.0,47.123456789],"note":"<b>"}"#,
        );
        let expected: Vec<(String, String)> = [
            ("steps", "12345678"),
            ("final_kinetic_energy", "0.3"),
            ("discharge_rate", "1.4414 ± 0.0020"),
            ("clogged", "no"),
            ("beverloo_rate", "—"),
            ("band_hz", "[2, 47.1235]"),
            ("note", "<b>"),
        ]
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
        // serde_json keeps keys sorted, so compare as sets.
        let mut rows = rows;
        let mut expected = expected;
        rows.sort();
        expected.sort();
        assert_eq!(rows, expected);
    }

    /// The chute's summary in part: a group of answers (the Bagnold fit), with uncertainties
    /// inside it, a group inside the group, and timings.
    const CHUTE: &str = r#"{"status":"finished","flow_depth_m":0.0412,"flow_state":"steady",
        "stage_seconds":{"narrow":1.0},
        "bagnold":{"profile":"v(z) = v_s + A (h^1.5 - (h - z)^1.5)","amplitude_A":118.123,
            "amplitude_A_err":3.456,"slip_velocity_m_s":0.0213,"slip_velocity_err_m_s":0.0041,
            "r_squared":0.987654,"inertial_number":null,
            "linear_fit":{"slope":12.0,"slope_error":0.5}}}"#;

    #[test]
    fn groups_of_answers_show_their_scalars_with_their_errors() {
        let mut rows = shown(CHUTE);
        rows.sort();
        let mut expected: Vec<(String, String)> = [
            ("flow_depth_m", "0.0412"),
            ("flow_state", "steady"),
            // 3.456 to two digits is 3.5, one decimal: the value to the same place.
            ("bagnold.amplitude_A", "118.1 ± 3.5"),
            ("bagnold.slip_velocity_m_s", "0.0213 ± 0.0041"),
            ("bagnold.r_squared", "0.987654"),
            ("bagnold.inertial_number", "—"),
            ("bagnold.profile", "v(z) = v_s + A (h^1.5 - (h - z)^1.5)"),
        ]
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
        expected.sort();
        // Neither the errors on rows of their own, nor the group inside the group, nor the
        // timings.
        assert_eq!(rows, expected);
    }

    #[test]
    fn the_page_links_the_tables_the_run_wrote_and_shows_grouped_answers() {
        let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs/chute_flow.ron");
        let scenario = crate::load::read(&file).unwrap();
        let dir =
            std::env::temp_dir().join(format!("talus-run-report-tables-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(CHUTE_PROFILE_FILE), "z,velocity\n0.001,0.1\n").unwrap();
        let summary: Value = serde_json::from_str(CHUTE).unwrap();
        let tables = [STROBE_FILE.to_string(), CHUTE_PROFILE_FILE.to_string()];
        let html = run_report(&scenario, &summary, &dir, &[], false, &tables).unwrap();
        // The profile is there and linked; the stroboscopic table was not written, so no
        // link leads nowhere.
        assert!(html.contains("href=\"chute_profile.csv\""), "{html}");
        assert!(!html.contains("href=\"stroboscopic.csv\""), "{html}");
        assert!(!html.contains("href=\"frames.pvd\""));
        std::fs::write(dir.join(STROBE_FILE), "cycle,time\n1,0.1\n").unwrap();
        let html = run_report(&scenario, &summary, &dir, &[], true, &tables).unwrap();
        for link in ["stroboscopic.csv", "chute_profile.csv", "frames.pvd"] {
            assert!(html.contains(&format!("href=\"{link}\"")), "{link}");
        }
        assert!(html.contains("<td>bagnold.amplitude_A</td><td class=\"num\">118.1 ± 3.5</td>"));
        assert!(html.contains("<td>bagnold.slip_velocity_m_s</td>"));
        let _ = std::fs::remove_dir_all(dir);
    }
}
