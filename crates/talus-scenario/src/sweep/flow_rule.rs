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
