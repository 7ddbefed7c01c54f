//! The figures and tables of `docs/validation.md`, from the sweeps of
//! `docs/validation/studies/` (run by `docs/validation/regenerate.sh`).
//!
//! Run with `cargo run --release --example validation_report -- SWEEPS DOCS`: SWEEPS holds
//! one sweep directory per study (`SWEEPS/repose_friction/`, …), DOCS receives the figures
//! (`<study>.png`) and `results.md`, the tables the text of `validation.md` quotes. A study
//! whose sweep is missing is listed as not run.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use talus::scenario::analysis::chute::{ChuteRun, h_stop_brackets, pouliquen_beta};
use talus::scenario::analysis::{BeverlooFit, fit_beverloo};
use talus::scenario::load::parse;
use talus::scenario::number::plus_minus;
use talus::scenario::output::plot::{Plot, Series, SeriesStyle, render_png};
use talus::scenario::sweep::dir::{MEANS_FILE, RUNS_DIR};
use talus::scenario::sweep::plan::Plan;
use talus::scenario::sweep::table::Spread;

/// Solid fraction assumed for the bulk density ρ_b = φ ρ_s when Beverloo's C is given (the
/// value the hopper measurement assumes too).
const BULK_PACKING: f64 = 0.6;

/// Writes a study's figure into the docs folder and its tables into the text.
type Report<'a> = dyn Fn(&Study, &Path, &mut String) + 'a;

/// One row of `sweep_means.csv` by column name.
type Row = std::collections::BTreeMap<String, String>;

/// The grid points of a sweep: its plan and its means.
struct Study {
    name: &'static str,
    plan: Plan,
    rows: Vec<Row>,
}

impl Study {
    fn read(sweeps: &Path, name: &'static str) -> Option<Study> {
        let dir = sweeps.join(name);
        let plan = Plan::read(&dir).ok()??;
        let text = std::fs::read_to_string(dir.join(MEANS_FILE)).ok()?;
        let mut lines = text.lines();
        let header: Vec<&str> = lines.next()?.split(',').collect();
        let rows = lines
            .map(|l| {
                header
                    .iter()
                    .zip(l.split(','))
                    .map(|(h, v)| (h.to_string(), v.to_string()))
                    .collect()
            })
            .collect();
        Some(Study { name, plan, rows })
    }

    /// Mean, sd and count of `answer` at every grid point, against the column `x` (an
    /// axis key or another answer's mean), sorted by x.
    fn points(&self, x: &str, answer: &str) -> Vec<(f64, f64, f64, usize)> {
        let num = |r: &Row, k: &str| r.get(k).and_then(|v| v.parse::<f64>().ok());
        let mut out: Vec<(f64, f64, f64, usize)> = self
            .rows
            .iter()
            .filter_map(|r| {
                Some((
                    num(r, x)?,
                    num(r, &format!("{answer}_mean"))?,
                    num(r, &format!("{answer}_sd"))?,
                    num(r, &format!("{answer}_n"))? as usize,
                ))
            })
            .collect();
        out.sort_by(|a, b| a.0.total_cmp(&b.0));
        out
    }

    /// The base scenario's grain: its equivalent-sphere diameter (m) and density (kg/m³).
    fn grain(&self) -> (f64, f64) {
        let s = parse(&self.plan.base, &self.plan.scenario_file).expect("the plan's scenario");
        let pop = &s.grains[0];
        // The studies' scenarios make their grains with the ellipsoid generator.
        let (a, b, c) = pop.semi_axes.expect("grains from the ellipsoid generator");
        let density = s
            .materials
            .iter()
            .find(|m| m.name == pop.material)
            .map_or(f64::NAN, |m| m.density);
        (2.0 * (a * b * c).cbrt(), density)
    }
}

/// Mean line and error bars of `points` (x, mean, sd, n).
fn mean_series(label: &str, points: &[(f64, f64, f64, usize)]) -> Vec<Series> {
    vec![
        Series {
            label: label.to_string(),
            points: points.iter().map(|p| (p.0, p.1)).collect(),
            style: SeriesStyle::Points,
        },
        Series {
            label: String::new(),
            points: points
                .iter()
                .flat_map(|p| [(p.0, p.1 - p.2), (p.0, p.1 + p.2)])
                .collect(),
            style: SeriesStyle::Spread,
        },
    ]
}

/// A table of `points` under the headers given.
fn table(out: &mut String, x: &str, y: &str, points: &[(f64, f64, f64, usize)]) {
    let _ = writeln!(out, "| {x} | {y} (mean ± sd) | runs |\n|---|---|---|");
    for p in points {
        // The grid value as given (a step of 1.5625e-5 s would read 0.0000 in fixed digits).
        let _ = writeln!(out, "| {} | {:.4} ± {:.4} | {} |", p.0, p.1, p.2, p.3);
    }
    out.push('\n');
}

fn figure(docs: &Path, name: &str, plot: &Plot) {
    let path = docs.join(format!("{name}.png"));
    render_png(&path, plot).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
}

/// Angle of repose against friction.
fn repose(study: &Study, docs: &Path, out: &mut String) {
    let key = &study.plan.axes[0].key;
    let points = study.points(key, "angle_of_repose_deg");
    table(out, "friction μ", "angle of repose Θ_r [°]", &points);
    figure(
        docs,
        study.name,
        &Plot {
            title: "Angle of repose against friction".into(),
            x_label: "friction coefficient μ".into(),
            y_label: "angle of repose [deg]".into(),
            log_y: false,
            log_x: false,
            series: mean_series("talus, angular grains (mean ± sd over seeds)", &points),
        },
    );
}

/// Angle of repose at the shipped step and half of it.
fn repose_dt(study: &Study, _docs: &Path, out: &mut String) {
    let key = &study.plan.axes[0].key;
    let points = study.points(key, "angle_of_repose_deg");
    table(out, "time step dt [s]", "angle of repose Θ_r [°]", &points);
    if let [half, full] = &points[..] {
        // The difference of two means, each over its seeds: its standard error.
        let error = error_of_difference((half.2, half.3), (full.2, full.3));
        let _ = writeln!(
            out,
            "Halving dt moves the mean angle by {:+.2}° (standard error of the difference {:.2}°).\n",
            half.1 - full.1,
            error
        );
    }
}

/// The angle of repose of the periodic slab beside the walled channel's (`repose_dt` at
/// the shipped step, the same seeds).
fn repose_periodic(study: &Study, sweeps: &Path, out: &mut String) {
    let slab = study.rows.first().and_then(|row| {
        let get = |k: &str| row.get(k).and_then(|v| v.parse::<f64>().ok());
        Some((
            get("angle_of_repose_deg_mean")?,
            get("angle_of_repose_deg_sd")?,
            get("angle_of_repose_deg_n")? as usize,
        ))
    });
    let walled = Study::read(sweeps, "repose_dt").and_then(|s| {
        let key = s.plan.axes[0].key.clone();
        // The shipped step: the longer of the two.
        s.points(&key, "angle_of_repose_deg")
            .into_iter()
            .max_by(|p, q| p.0.total_cmp(&q.0))
    });
    let _ = writeln!(
        out,
        "| pile | angle of repose Θ_r [°] (mean ± sd) | runs |\n|---|---|---|"
    );
    if let Some(w) = walled {
        let _ = writeln!(
            out,
            "| channel, side walls 4 cm apart | {:.2} ± {:.2} | {} |",
            w.1, w.2, w.3
        );
    }
    if let Some(p) = slab {
        let _ = writeln!(
            out,
            "| slab periodic across, 4 cm | {:.2} ± {:.2} | {} |",
            p.0, p.1, p.2
        );
    }
    if let (Some(w), Some(p)) = (walled, slab) {
        let error = error_of_difference((w.2, w.3), (p.1, p.2));
        let _ = writeln!(
            out,
            "\nThe side walls raise the angle by {:+.2}° (standard error of the difference {:.2}°).",
            w.1 - p.0,
            error
        );
    }
    out.push('\n');
}

/// Each run's summary in the sweep `name` of `sweeps`, with its seed (from the run's name,
/// `…seed=N`), in the order of the runs' names; empty when the sweep is missing.
fn run_summaries(sweeps: &Path, name: &str) -> Vec<(u64, serde_json::Value)> {
    let Ok(dirs) = std::fs::read_dir(sweeps.join(name).join(RUNS_DIR)) else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = dirs.filter_map(|d| Some(d.ok()?.path())).collect();
    paths.sort();
    paths
        .iter()
        .filter_map(|dir| {
            let seed = dir
                .file_name()?
                .to_str()?
                .rsplit_once("seed=")?
                .1
                .parse()
                .ok()?;
            let text = std::fs::read_to_string(dir.join("summary.json")).ok()?;
            Some((seed, serde_json::from_str(&text).ok()?))
        })
        .collect()
}

/// The standard error of the difference of two means, each given as (sd, runs).
fn error_of_difference(a: (f64, usize), b: (f64, usize)) -> f64 {
    (a.0.powi(2) / a.1 as f64 + b.0.powi(2) / b.1 as f64).sqrt()
}

/// The slumped pile at scale (`repose_scale`: 3 000 grains), run by run and its mean over
/// the seeds, beside the same pile at half the step (`repose_scale_dt`) and in the slab
/// periodic across the channel (`repose_scale_periodic`).
fn repose_scale(study: &Study, sweeps: &Path, out: &mut String) {
    let (diameter, _) = study.grain();
    let num = |v: &serde_json::Value, k: &str| v[k].as_f64().unwrap_or(f64::NAN);
    let full = run_summaries(sweeps, "repose_scale");
    let half = run_summaries(sweeps, "repose_scale_dt");
    let slab = run_summaries(sweeps, "repose_scale_periodic");
    let _ = writeln!(
        out,
        "| pile | dt [s] | seed | Θ_r [°] (± fit error) | pile height [m] (grain diameters) | \
         largest overlap [% of size] | status | simulated [s] | wall [s] |\n\
         |---|---|---|---|---|---|---|---|---|"
    );
    let piles = [
        ("walls 4 cm apart", &full),
        ("walls 4 cm apart", &half),
        ("periodic across, 4 cm", &slab),
    ];
    for (pile, runs) in piles {
        for (seed, s) in runs {
            let height = num(s, "pile_height_m");
            let _ = writeln!(
                out,
                "| {pile} | {} | {seed} | {:.2} ± {:.2} | {:.3} ({:.1}) | {:.2} | {} | {:.2} | {:.0} |",
                num(s, "dt"),
                num(s, "angle_of_repose_deg"),
                num(s, "angle_of_repose_deg_err"),
                height,
                height / diameter,
                100.0 * num(s, "max_overlap_ratio"),
                s["status"].as_str().unwrap_or("–"),
                num(s, "sim_time"),
                num(s, "wall_seconds"),
            );
        }
    }
    out.push('\n');
    // Mean and spread of the angle over a sweep's runs.
    let angles = |runs: &[(u64, serde_json::Value)]| {
        Spread::of(runs.iter().map(|(_, s)| num(s, "angle_of_repose_deg")))
    };
    let walled = angles(&full);
    let _ = writeln!(
        out,
        "Walled, over the {} seeds: Θ_r = {:.2} ± {:.2}° (mean ± sd).",
        walled.n, walled.mean, walled.sd
    );
    for (seed, s) in &half {
        let angle = num(s, "angle_of_repose_deg");
        let same_seed = full
            .iter()
            .find(|(f, _)| f == seed)
            .map_or(f64::NAN, |(_, f)| num(f, "angle_of_repose_deg"));
        let _ = writeln!(
            out,
            "Half the step, seed {seed}: {angle:.2}°, {:+.2}° from the same seed at the full \
             step and {:+.2}° from the mean over the seeds (its standard error {:.2}°).",
            angle - same_seed,
            angle - walled.mean,
            walled.sd / (walled.n as f64).sqrt()
        );
    }
    if !slab.is_empty() {
        let periodic = angles(&slab);
        // The difference of two means, each over its seeds: its standard error.
        let error = error_of_difference((walled.sd, walled.n), (periodic.sd, periodic.n));
        let _ = writeln!(
            out,
            "Periodic slab, over the {} seeds: Θ_r = {:.2} ± {:.2}°; the side walls raise the \
             angle by {:+.2}° (standard error of the difference {:.2}°).",
            periodic.n,
            periodic.mean,
            periodic.sd,
            walled.mean - periodic.mean,
            error
        );
    }
    out.push('\n');
}

/// The chute flow over inclines and depths: each run's state, depth and Froude number,
/// h_stop(θ) and β, from the runs listed in the `flow_rule.json` of this study's sweep and of
/// `chute_depth`'s (more depths at two of the inclines), read together.
fn chute(sweeps: &Path, docs: &Path, out: &mut String) {
    let mut runs: Vec<serde_json::Value> = Vec::new();
    for name in ["chute_flow", "chute_depth"] {
        let path = sweeps.join(name).join("flow_rule.json");
        match std::fs::read_to_string(&path)
            .ok()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        {
            Some(rule) => runs.extend(rule["runs"].as_array().cloned().unwrap_or_default()),
            None => {
                let _ = writeln!(out, "No {}.\n", path.display());
            }
        }
    }
    let num = |v: &serde_json::Value| v.as_f64().unwrap_or(f64::NAN);
    // Inclines as given (the summaries may carry a last-bit difference).
    let angle = |v: &serde_json::Value| (num(v) * 1e6).round() / 1e6;
    runs.sort_by(|a, b| {
        angle(&a["incline_deg"])
            .total_cmp(&angle(&b["incline_deg"]))
            .then(num(&a["depth_m"]).total_cmp(&num(&b["depth_m"])))
    });
    let _ = writeln!(
        out,
        "| incline [°] | bed | state | flow depth h [m] | Froude number |\n|---|---|---|---|---|"
    );
    for r in &runs {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {:.4} | {:.3} |",
            angle(&r["incline_deg"]),
            r["bed"].as_str().unwrap_or(""),
            r["state"].as_str().unwrap_or(""),
            num(&r["depth_m"]),
            num(&r["froude"])
        );
    }
    let settled: Vec<ChuteRun> = runs
        .iter()
        .filter(|r| matches!(r["state"].as_str(), Some("steady" | "stopped")))
        .map(|r| ChuteRun {
            angle_deg: angle(&r["incline_deg"]),
            depth: num(&r["depth_m"]),
            flows: r["state"].as_str() == Some("steady"),
            froude: num(&r["froude"]),
        })
        .collect();
    let brackets = h_stop_brackets(&settled);
    let _ = writeln!(
        out,
        "\n| incline [°] | deepest bed that stopped [m] | shallowest steady bed [m] |\n|---|---|---|"
    );
    let depth = |x: f64| {
        if x.is_finite() {
            format!("{x:.4}")
        } else {
            "–".to_string()
        }
    };
    for b in &brackets {
        let _ = writeln!(out, "| {} | {} | {} |", b.0, depth(b.1), depth(b.2));
    }
    let Some((beta, error, n)) = pouliquen_beta(&settled) else {
        out.push_str("\nNo incline brackets h_stop: no β.\n\n");
        return;
    };
    // One run has no scatter to give an error with.
    if n > 1 {
        let _ = writeln!(out, "\nβ = {beta:.3} ± {error:.3} from {n} steady runs.\n");
    } else {
        let _ = writeln!(
            out,
            "\nβ = {beta:.3} from one steady run (no scatter to give an error).\n"
        );
    }
    let h_stop = |a: f64| {
        brackets
            .iter()
            .find(|b| b.0 == a)
            .map(|b| 0.5 * (b.1 + b.2))
            .filter(|h| h.is_finite())
    };
    let points: Vec<(f64, f64)> = settled
        .iter()
        .filter(|r| r.flows)
        .filter_map(|r| Some((r.depth / h_stop(r.angle_deg)?, r.froude)))
        .collect();
    let largest = points.iter().map(|p| p.0).fold(0.0, f64::max);
    figure(
        docs,
        "chute_flow",
        &Plot {
            title: "Chute flow: Froude number against h / h_stop(θ)".into(),
            x_label: "h / h_stop(θ)".into(),
            y_label: "Fr = ū / √(g h cos θ)".into(),
            log_y: false,
            log_x: false,
            series: vec![
                Series {
                    label: "talus, steady runs".into(),
                    points,
                    style: SeriesStyle::Points,
                },
                Series {
                    label: format!("Fr = β h/h_stop, β = {beta:.3}"),
                    points: vec![(0.0, 0.0), (largest, beta * largest)],
                    style: SeriesStyle::Dashed,
                },
                Series {
                    label: "β = 0.136, glass beads (Pouliquen 1999)".into(),
                    points: vec![(0.0, 0.0), (largest, 0.136 * largest)],
                    style: SeriesStyle::Line,
                },
                Series {
                    label: "β = 0.65, sand (Forterre & Pouliquen 2003)".into(),
                    points: vec![(0.0, 0.0), (largest, 0.65 * largest)],
                    style: SeriesStyle::Line,
                },
            ],
        },
    );
}

/// Discharge rate against orifice width, with Beverloo fits (n free and n fixed).
fn hopper(study: &Study, docs: &Path, out: &mut String, fixed_n: f64, slot_length: Option<f64>) {
    let key = &study.plan.axes[0].key;
    let points = study.points(key, "discharge_rate");
    let (d, density) = study.grain();
    table(out, "orifice D [m]", "discharge rate W [kg/s]", &points);
    let data: Vec<(f64, f64)> = points.iter().map(|p| (p.0, p.1)).collect();
    let scale = BULK_PACKING * density * 9.81f64.sqrt() * slot_length.unwrap_or(1.0);
    let mut series = mean_series("talus (mean ± sd over seeds)", &points);
    let _ = writeln!(
        out,
        "Grain diameter d = {:.5} m (equivalent sphere); C = A / (ρ_b √g{}) with ρ_b = {BULK_PACKING} ρ_s.\n",
        d,
        if slot_length.is_some() { " L" } else { "" }
    );
    let _ = writeln!(
        out,
        "Each constant with its standard error from the fit's covariance.\n\n\
         | fit | n | k | C | rms of ln W |\n|---|---|---|---|---|"
    );
    let lo = points.first().map_or(0.0, |p| p.0);
    let hi = points.last().map_or(1.0, |p| p.0);
    for (label, exponent) in [("n free", None), ("n fixed", Some(fixed_n))] {
        match fit_beverloo(&data, d, exponent) {
            Some(fit) => {
                // A given exponent has no error: it is shown as given.
                let n = if exponent.is_some() {
                    format!("{} (given)", fit.n)
                } else {
                    plus_minus(fit.n, fit.n_error)
                };
                let _ = writeln!(
                    out,
                    "| {label} | {n} | {} | {} | {:.3} |",
                    plus_minus(fit.k, fit.k_error),
                    plus_minus(fit.prefactor / scale, fit.prefactor_error / scale),
                    fit.rms_log_residual
                );
                series.push(curve(&fit, d, lo, hi, label));
            }
            None => {
                let _ = writeln!(out, "| {label} | – | – | – | too few points to fit |");
            }
        }
    }
    out.push('\n');
    figure(
        docs,
        study.name,
        &Plot {
            title: format!("Discharge rate against orifice width ({})", study.name),
            x_label: "orifice width D [m]".into(),
            y_label: "discharge rate W [kg/s]".into(),
            log_y: false,
            log_x: false,
            series,
        },
    );
}

fn curve(fit: &BeverlooFit, d: f64, lo: f64, hi: f64, label: &str) -> Series {
    Series {
        label: format!(
            "Beverloo, {label}: n = {}, k = {}",
            plus_minus(fit.n, fit.n_error),
            plus_minus(fit.k, fit.k_error)
        ),
        points: (0..=50)
            .map(|i| {
                let x = lo + (hi - lo) * f64::from(i) / 50.0;
                (x, fit.rate(x, d))
            })
            .collect(),
        style: SeriesStyle::Dashed,
    }
}

/// Intruder rise against Γ.
fn intruder(study: &Study, docs: &Path, out: &mut String) {
    let points = study.points("gamma_mean", "intruder_rise");
    table(out, "Γ", "intruder rise [diameters]", &points);
    figure(
        docs,
        study.name,
        &Plot {
            title: "Rise of the intruder against shaking strength".into(),
            x_label: "Γ = A (2πf)² / g".into(),
            y_label: "intruder rise [intruder diameters]".into(),
            log_y: false,
            log_x: false,
            series: mean_series("talus (mean ± sd over seeds)", &points),
        },
    );
}

/// Transport velocity against the drive frequency, with Γ.
fn conveyor(study: &Study, docs: &Path, out: &mut String) {
    let key = &study.plan.axes[0].key;
    let points = study.points(key, "transport_velocity_m_s");
    let gammas = study.points(key, "gamma");
    let _ = writeln!(
        out,
        "| frequency [Hz] | Γ | transport velocity [m/s] (mean ± sd over seeds) | runs |\n|---|---|---|---|"
    );
    for (p, g) in points.iter().zip(&gammas) {
        let _ = writeln!(
            out,
            "| {:.1} | {:.2} | {:.4} ± {:.4} | {} |",
            p.0, g.1, p.1, p.2, p.3
        );
    }
    out.push('\n');
    figure(
        docs,
        study.name,
        &Plot {
            title: "Vibrating conveyor: transport velocity against frequency".into(),
            x_label: "drive frequency [Hz] (amplitude 1 mm, 20° from the vertical)".into(),
            y_label: "mean transport velocity [m/s]".into(),
            log_y: false,
            log_x: false,
            series: mean_series("talus (mean ± sd over seeds)", &points),
        },
    );
}

/// Θ_m and Θ_r of the dripped heap, and of each of its flanks: one grid point, several
/// seeds.
fn stability(study: &Study, _docs: &Path, out: &mut String) {
    let _ = writeln!(
        out,
        "| quantity | mean ± sd over seeds | runs |\n|---|---|---|"
    );
    for (label, key) in [
        (
            "Θ_m, maximum angle of stability [°]",
            "max_stability_angle_deg",
        ),
        (
            "Θ_r, angle of repose after avalanches [°]",
            "repose_angle_deg",
        ),
        ("Θ_m − Θ_r [°]", "stability_minus_repose_deg"),
        (
            "Θ_m of the near face [°]",
            "max_stability_angle_near_face_deg",
        ),
        (
            "Θ_m of the far face [°]",
            "max_stability_angle_far_face_deg",
        ),
        ("Θ_r of the near face [°]", "repose_angle_near_face_deg"),
        ("Θ_r of the far face [°]", "repose_angle_far_face_deg"),
        ("avalanches", "avalanches"),
    ] {
        for row in &study.rows {
            let get = |suffix: &str| {
                row.get(&format!("{key}_{suffix}"))
                    .and_then(|v| v.parse::<f64>().ok())
                    .map_or_else(|| "–".into(), |v| format!("{v:.1}"))
            };
            let runs = row.get(&format!("{key}_n")).map_or("0", String::as_str);
            let _ = writeln!(
                out,
                "| {label} | {} ± {} | {runs} |",
                get("mean"),
                get("sd")
            );
        }
    }
    out.push('\n');
}

fn main() {
    let args: Vec<PathBuf> = std::env::args_os().skip(1).map(PathBuf::from).collect();
    let [sweeps, docs] = &args[..] else {
        eprintln!("usage: validation_report SWEEPS DOCS");
        std::process::exit(2);
    };
    std::fs::create_dir_all(docs).expect("the docs folder");
    let mut out = String::from(
        "# Validation results\n\nGenerated by `cargo run --release --example validation_report` \
         from the sweeps of `docs/validation/studies/` (see `docs/validation.md`).\n\n",
    );
    // A slot's Beverloo fit, with the slot's length from the study's scenario.
    let slot = |s: &Study, d: &Path, o: &mut String| {
        let length = parse(&s.plan.base, &s.plan.scenario_file)
            .ok()
            .and_then(|sc| {
                sc.walls.iter().find_map(|w| match w.shape {
                    talus::scenario::schema::WallShape::Hopper { depth, .. } => Some(depth),
                    _ => None,
                })
            });
        hopper(s, d, o, 1.5, length);
    };
    let studies: [(&str, &Report<'_>); 12] = [
        ("repose_friction", &|s, d, o| repose(s, d, o)),
        ("repose_dt", &|s, d, o| repose_dt(s, d, o)),
        ("repose_scale", &|s, _, o| repose_scale(s, sweeps, o)),
        ("hopper_slot", &slot),
        ("hopper_slot_long", &slot),
        ("hopper_square", &|s, d, o| hopper(s, d, o, 2.5, None)),
        ("hopper_square_large", &|s, d, o| hopper(s, d, o, 2.5, None)),
        ("intruder_gamma", &|s, d, o| intruder(s, d, o)),
        ("conveyor_frequency", &|s, d, o| conveyor(s, d, o)),
        ("max_stability", &|s, d, o| stability(s, d, o)),
        ("repose_periodic", &|s, _, o| repose_periodic(s, sweeps, o)),
        ("chute_flow", &|_, d, o| chute(sweeps, d, o)),
    ];
    for (name, report) in studies {
        let _ = writeln!(out, "## {name}\n");
        match Study::read(sweeps, name) {
            Some(study) => {
                report(&study, docs, &mut out);
                if docs.join(format!("{name}.png")).exists() {
                    let _ = writeln!(out, "![{name}]({name}.png)\n");
                }
            }
            None => {
                let _ = writeln!(
                    out,
                    "Not run (no sweep in {}).\n",
                    sweeps.join(name).display()
                );
            }
        }
    }
    let path = docs.join("results.md");
    std::fs::write(&path, out).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    println!("wrote {}", path.display());
}
