//! The flow rule of a chute-flow sweep ([`crate::analysis::chute`]): from runs over
//! inclines (and bed depths, seeds), the inclines where the flow is steady for each bed, the
//! depth `h_stop(θ)` below which it stops, and Pouliquen's β in `Fr = β h / h_stop(θ)`.
//! Written as `OUT/flow_rule.json`, drawn as `OUT/plots/froude_vs_depth_ratio.png`, and
//! shown in the sweep's report.

use serde::Serialize;

use crate::analysis::chute::{ChuteRun, h_stop_brackets, pouliquen_beta};
use crate::output::plot::{Plot, Series, SeriesStyle};
use crate::sweep::plan::Plan;
use crate::sweep::table::{RunRecord, Scalar};

/// The file of the flow rule in a sweep's directory.
pub const FLOW_RULE_FILE: &str = "flow_rule.json";
/// The stem of its plot under `plots/`.
pub const FLOW_RULE_PLOT: &str = "froude_vs_depth_ratio";

/// One run of the sweep as the flow rule sees it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChuteRunRecord {
    /// The run's folder.
    pub run: String,
    /// The values of the varied keys other than the incline (the bed it is).
    pub bed: String,
    /// Incline (degrees).
    pub incline_deg: f64,
    /// `steady`, `stopped`, `accelerating` or `decelerating`.
    pub state: String,
    /// Flow depth (or the depth of the bed at rest) (m).
    pub depth_m: f64,
    /// Froude number.
    pub froude: f64,
}

/// For one bed, the inclines of its runs by state: where steady flow exists.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SteadyRange {
    /// The bed (values of the varied keys other than the incline).
    pub bed: String,
    /// The steepest incline at which it stopped: θ_stop lies above (NaN if none).
    pub steepest_stopped_deg: f64,
    /// The gentlest and steepest inclines at which it flowed steadily (NaN if none).
    pub steady_deg: (f64, f64),
    /// The gentlest incline at which it accelerated: steady flow ends below (NaN if none).
    pub gentlest_accelerating_deg: f64,
}

/// The flow rule of a sweep.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FlowRule {
    /// Every run with a flow state.
    pub runs: Vec<ChuteRunRecord>,
    /// Where each bed flows steadily.
    pub steady_ranges: Vec<SteadyRange>,
    /// `h_stop(θ)` bracketed per incline: (incline, deepest stopped bed, shallowest steady
    /// one) (m); NaN on an open side.
    pub h_stop_m: Vec<(f64, f64, f64)>,
    /// β with its standard error and the number of steady runs it rests on.
    pub beta: Option<(f64, f64, usize)>,
}

/// The flow rule of the runs of `plan`, `None` unless it varies `incline_deg` and its runs
/// measure a chute flow.
#[must_use]
pub fn flow_rule(plan: &Plan, records: &[RunRecord]) -> Option<FlowRule> {
    let incline = plan.axes.iter().position(|a| a.key == "incline_deg")?;
    let number = |r: &RunRecord, key: &str| match r.scalars.get(key) {
        Some(Scalar::Number(x)) => *x,
        _ => f64::NAN,
    };
    let runs: Vec<ChuteRunRecord> = records
        .iter()
        .filter_map(|r| {
            let Some(Scalar::Text(state)) = r.scalars.get("flow_state") else {
                return None;
            };
            let bed = plan
                .axes
                .iter()
                .zip(&r.values)
                .enumerate()
                .filter(|(i, _)| *i != incline)
                .map(|(_, (a, v))| format!("{}={v}", a.key))
                .collect::<Vec<_>>()
                .join(", ");
            Some(ChuteRunRecord {
                run: r.name.clone(),
                bed,
                incline_deg: number(r, "incline_deg"),
                state: state.clone(),
                depth_m: number(r, "flow_depth_m"),
                froude: number(r, "froude_number"),
            })
        })
        .collect();
    if runs.is_empty() {
        return None;
    }
    let mut beds: Vec<String> = runs.iter().map(|r| r.bed.clone()).collect();
    beds.sort();
    beds.dedup();
    let steady_ranges = beds
        .into_iter()
        .map(|bed| {
            let of_bed = &bed;
            let angles = |state: &'static str| {
                runs.iter()
                    .filter(move |r| &r.bed == of_bed && r.state == state)
                    .map(|r| r.incline_deg)
            };
            SteadyRange {
                steepest_stopped_deg: angles("stopped").fold(f64::NAN, f64::max),
                steady_deg: (
                    angles("steady").fold(f64::NAN, f64::min),
                    angles("steady").fold(f64::NAN, f64::max),
                ),
                gentlest_accelerating_deg: angles("accelerating").fold(f64::NAN, f64::min),
                bed,
            }
        })
        .collect();
    // Runs still on their way (accelerating or decelerating) tell nothing of h_stop.
    let settled: Vec<ChuteRun> = runs
        .iter()
        .filter(|r| r.state == "steady" || r.state == "stopped")
        .map(|r| ChuteRun {
            angle_deg: r.incline_deg,
            depth: r.depth_m,
            flows: r.state == "steady",
            froude: r.froude,
        })
        .collect();
    Some(FlowRule {
        h_stop_m: h_stop_brackets(&settled),
        beta: pouliquen_beta(&settled),
        steady_ranges,
        runs,
    })
}

impl FlowRule {
    /// Fr against h / h_stop(θ) for the steady runs whose incline brackets h_stop, with the
    /// line of β; `None` without such runs.
    #[must_use]
    pub fn plot(&self) -> Option<Plot> {
        let (beta, error, _) = self.beta?;
        let h_stop = |angle: f64| {
            self.h_stop_m
                .iter()
                .find(|b| b.0 == angle)
                .map(|b| 0.5 * (b.1 + b.2))
                .filter(|h| h.is_finite())
        };
        let points: Vec<(f64, f64)> = self
            .runs
            .iter()
            .filter(|r| r.state == "steady")
            .filter_map(|r| Some((r.depth_m / h_stop(r.incline_deg)?, r.froude)))
            .collect();
        let largest = points.iter().map(|p| p.0).fold(0.0, f64::max);
        Some(Plot {
            title: "Flow rule: Froude number against depth over h_stop(θ)".into(),
            x_label: "h / h_stop(θ)".into(),
            y_label: "Fr = ū / √(g h cos θ)".into(),
            log_x: false,
            log_y: false,
            series: vec![
                Series {
                    label: "steady runs".into(),
                    points,
                    style: SeriesStyle::Points,
                },
                Series {
                    label: format!("Fr = β h/h_stop, β = {beta:.3} ± {error:.3}"),
                    points: vec![(0.0, 0.0), (largest, beta * largest)],
                    style: SeriesStyle::Dashed,
                },
            ],
        })
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use serde_json::{Value, json};

    use crate::output::run_dir::{REPORT_FILE, SUMMARY_FILE};
    use crate::sweep::dir::{PLOTS_DIR, SweepDir};
    use crate::sweep::execute::RunEvent;
    use crate::sweep::grid::Axis;
    use crate::sweep::plan::Plan;
    use crate::sweep::write_results;

    use super::*;

    /// Pouliquen's h_stop(θ) = A d (tan θ₂ − tan θ) / (tan θ − tan θ₁) with θ₁ = 20°,
    /// θ₂ = 32° and A d = 4 mm (Pouliquen, Phys. Fluids 11, 542, 1999, eq. 3).
    fn h_stop(theta_deg: f64) -> f64 {
        let t = |deg: f64| deg.to_radians().tan();
        0.004 * (t(32.0) - t(theta_deg)) / (t(theta_deg) - t(20.0))
    }

    const BETA: f64 = 0.41;

    /// The summary of the synthetic run of bed `bed` (0 to 3) at `incline` (degrees): on
    /// the gentle inclines the first bed 10 % below h_stop(θ) and at rest, the others 10 %,
    /// 60 % and 150 % above it flowing steadily with Fr = β h / h_stop(θ); on the steepest
    /// every bed accelerating.
    fn run_summary(incline: f64, bed: usize) -> Value {
        let (state, depth, froude) = if incline >= 30.0 {
            ("accelerating", 0.01 * (bed + 1) as f64, 3.0)
        } else {
            let depth = h_stop(incline) * [0.9, 1.1, 1.6, 2.5][bed];
            let state = if bed == 0 { "stopped" } else { "steady" };
            let froude = if bed == 0 {
                0.0
            } else {
                BETA * depth / h_stop(incline)
            };
            (state, depth, froude)
        };
        json!({
            "status": "finished",
            "incline_deg": incline,
            "flow_state": state,
            "flow_depth_m": depth,
            "froude_number": froude,
        })
    }

    #[test]
    fn flow_rule_json_plot_and_report_give_back_a_known_h_stop_and_beta() {
        let dir =
            std::env::temp_dir().join(format!("talus-sweep-flow-rule-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let axes = vec![
            Axis::parse("incline_deg=22,24,26,30").unwrap(),
            Axis::parse("grains[0].count=100,200,300,400").unwrap(),
        ];
        let plan = Plan::new(
            Path::new("chute_flow.ron"),
            String::new(),
            Vec::new(),
            axes,
            vec![11],
        );
        let mut sweep = SweepDir::open(&dir, &plan, false).unwrap();
        let mut events = Vec::new();
        for run in &plan.runs {
            let incline: f64 = run.point.values[0].parse().unwrap();
            let bed = ["100", "200", "300", "400"]
                .iter()
                .position(|c| *c == run.point.values[1])
                .unwrap();
            let path = sweep.run_path(&run.name);
            std::fs::create_dir_all(&path).unwrap();
            let summary = run_summary(incline, bed);
            std::fs::write(path.join(SUMMARY_FILE), summary.to_string()).unwrap();
            events.push(RunEvent::Ended {
                status: "finished".into(),
                seconds: 1.0,
            });
        }
        let results = write_results(&plan, &mut sweep, &events).unwrap();

        let text = std::fs::read_to_string(dir.join(FLOW_RULE_FILE)).unwrap();
        let rule: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(rule["runs"].as_array().unwrap().len(), 16);
        // h_stop(θ) bracketed on each gentle incline by the bed that stopped and the
        // shallowest that flowed; the steepest, where every bed accelerated, tells nothing.
        let brackets = rule["h_stop_m"].as_array().unwrap();
        assert_eq!(brackets.len(), 3, "{brackets:?}");
        for (b, incline) in brackets.iter().zip([22.0, 24.0, 26.0]) {
            let h = h_stop(incline);
            assert_eq!(b[0].as_f64(), Some(incline));
            assert!((b[1].as_f64().unwrap() - 0.9 * h).abs() < 1e-15, "{b}");
            assert!((b[2].as_f64().unwrap() - 1.1 * h).abs() < 1e-15, "{b}");
        }
        // β from the nine steady runs with a bracketed h_stop, whose Froude numbers lie on
        // the flow rule exactly.
        let beta = &rule["beta"];
        assert!((beta[0].as_f64().unwrap() - BETA).abs() < 1e-12, "{beta}");
        assert!(beta[1].as_f64().unwrap() < 1e-9, "{beta}");
        assert_eq!(beta[2].as_u64(), Some(9));
        // Where each bed flows steadily.
        let ranges = rule["steady_ranges"].as_array().unwrap();
        assert_eq!(ranges.len(), 4);
        assert_eq!(ranges[0]["bed"], "grains[0].count=100");
        assert_eq!(ranges[0]["steepest_stopped_deg"], 26.0);
        assert_eq!(ranges[0]["steady_deg"], json!([null, null]));
        for r in &ranges[1..] {
            assert_eq!(r["steepest_stopped_deg"], Value::Null, "{r}");
            assert_eq!(r["steady_deg"], json!([22.0, 26.0]), "{r}");
            assert_eq!(r["gentlest_accelerating_deg"], 30.0, "{r}");
        }

        // The plot: Fr against h / h_stop on the line of slope β.
        let plot_file = format!("{PLOTS_DIR}/{FLOW_RULE_PLOT}.png");
        assert!(results.plots.contains(&plot_file), "{:?}", results.plots);
        let bytes = std::fs::read(dir.join(&plot_file)).unwrap();
        let decoder = png::Decoder::new(std::io::Cursor::new(bytes));
        let info = decoder.read_info().unwrap().info().clone();
        assert_eq!((info.width, info.height), (800, 600));
        let plot = flow_rule(&plan, &results.records).unwrap().plot().unwrap();
        let steady = &plot.series[0].points;
        assert_eq!(steady.len(), 9);
        for &(x, fr) in steady {
            assert!(
                [1.1, 1.6, 2.5].iter().any(|r| (x - r).abs() < 1e-12),
                "h / h_stop = {x}"
            );
            assert!((fr - BETA * x).abs() < 1e-12);
        }

        // The report's section, with the plot embedded.
        let html = std::fs::read_to_string(dir.join(REPORT_FILE)).unwrap();
        assert!(html.contains("<h2>Chute flow: steady inclines, h_stop(θ) and the flow rule</h2>"));
        assert!(
            html.contains("from 9 steady runs (flow_rule.json)"),
            "{html}"
        );
        assert!(html.contains("β = 0.41"), "{html}");
        assert!(html.contains("froude against depth_ratio"));
        assert!(html.contains("src=\"data:image/png;base64,"));
        drop(sweep);
        let _ = std::fs::remove_dir_all(dir);
    }
}
