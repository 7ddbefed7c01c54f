//! Maximum angle of stability Θ_m beside the angle of repose Θ_r (§1.2.1, fig. 1.1): the
//! slope of a heap fed by a `Drip` population, measured each time the heap is quiet just
//! before a grain is released, and the avalanches in that sequence.

use serde::{Deserialize, Serialize};
use talus_geom::glam::DVec3;

use super::{Sample, SummaryItems, repose::json_number};
use crate::analysis::repose::{angle_of_repose, surface_profile};
use crate::analysis::stability::{StabilityAngles, stability_angles};
use crate::build::Experiment;
use crate::journal::{AppendLog, Journaled};
use crate::output::csv::Column;
use crate::output::plot::{Plot, Series, SeriesStyle};
use crate::schema::MeasurementSpec;
use crate::walls::v3;

/// Default number of bins along the slope.
const DEFAULT_BINS: usize = 24;
/// Default fraction of the heap height between which the slope is fitted.
const DEFAULT_FIT: (f64, f64) = (0.2, 0.8);
/// Default smallest fall of the quiet slope that is an avalanche (degrees): about twice
/// the scatter of a slope fitted to a heap a dozen grains high.
pub const DEFAULT_AVALANCHE_DROP_DEG: f64 = 2.0;

/// The probe's set-up and what it has seen.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Stability {
    direction: DVec3,
    floor: f64,
    range: (f64, f64),
    bins: usize,
    fit: (f64, f64),
    drop_deg: f64,
    min_grains: usize,
    /// (grains on the scene, time, slope in degrees or NaN) at each quiet state, just
    /// before a grain is released.
    quiet: AppendLog<(f64, f64, f64)>,
    /// The slope at the latest output time (degrees), if it could be fitted.
    latest: Option<f64>,
}

impl Stability {
    /// The probe of a `MaxStability` measurement.
    #[must_use]
    pub fn new(spec: &MeasurementSpec, _exp: &Experiment) -> Option<Stability> {
        let MeasurementSpec::MaxStability {
            direction,
            floor,
            range,
            bins,
            fit,
            avalanche_drop_deg,
            min_grains,
        } = spec
        else {
            return None;
        };
        Some(Stability {
            direction: v3(*direction).normalize(),
            floor: *floor,
            range: *range,
            bins: bins.unwrap_or(DEFAULT_BINS),
            fit: fit.unwrap_or(DEFAULT_FIT),
            drop_deg: avalanche_drop_deg.unwrap_or(DEFAULT_AVALANCHE_DROP_DEG),
            min_grains: min_grains.unwrap_or(0),
            quiet: AppendLog::new(),
            latest: None,
        })
    }

    /// The lists that grow during the run (see [`crate::journal`]).
    pub fn logs(&self) -> Vec<&dyn Journaled> {
        vec![&self.quiet]
    }

    /// See [`Stability::logs`].
    pub fn logs_mut(&mut self) -> Vec<&mut dyn Journaled> {
        vec![&mut self.quiet]
    }

    /// Columns: the heap's slope now.
    #[must_use]
    pub fn columns(&self) -> Vec<Column> {
        vec![Column::new("heap_slope", "deg")]
    }

    /// The slope of the heap's surface in `sample` (degrees), if it can be fitted.
    fn slope(&self, sample: &Sample) -> Option<f64> {
        let points: Vec<(f64, f64)> = sample
            .grains
            .iter()
            .map(|g| (self.direction.dot(g.state.pose.position), g.top))
            .collect();
        let profile = surface_profile(&points, self.range.0, self.range.1, self.bins);
        angle_of_repose(&profile, self.floor, self.fit.0, self.fit.1).map(|f| f.angle_deg)
    }

    /// The slope now (NaN while it cannot be fitted).
    pub fn sample(&mut self, sample: &Sample) -> Vec<f64> {
        self.latest = self.slope(sample);
        vec![self.latest.unwrap_or(f64::NAN)]
    }

    /// The heap is quiet and a grain is about to be released: its slope is recorded.
    pub fn before_release(&mut self, sample: &Sample) {
        let slope = self.slope(sample).unwrap_or(f64::NAN);
        self.quiet
            .push((sample.grains.len() as f64, sample.time, slope));
    }

    /// The quiet slopes that count: those of heaps with at least `min_grains` grains.
    fn counted(&self) -> Vec<(f64, f64)> {
        self.quiet
            .iter()
            .filter(|q| q.0 >= self.min_grains as f64)
            .map(|q| (q.0, q.2))
            .collect()
    }

    fn angles(&self) -> Option<StabilityAngles> {
        let slopes: Vec<f64> = self.counted().iter().map(|q| q.1).collect();
        stability_angles(&slopes, self.drop_deg)
    }

    /// Θ_m, Θ_r, their spreads and difference, the number of avalanches, the quiet states
    /// measured and the slope at the end.
    #[must_use]
    pub fn summary(&self) -> SummaryItems {
        let angles = self.angles();
        let fitted = self.counted().iter().filter(|q| q.1.is_finite()).count();
        vec![
            (
                "max_stability_angle_deg".into(),
                json_number(angles.as_ref().map(|a| a.max_stability_deg)),
            ),
            (
                "max_stability_angle_spread_deg".into(),
                json_number(angles.as_ref().map(|a| a.max_stability_spread_deg)),
            ),
            (
                "repose_angle_deg".into(),
                json_number(angles.as_ref().map(|a| a.repose_deg)),
            ),
            (
                "repose_angle_spread_deg".into(),
                json_number(angles.as_ref().map(|a| a.repose_spread_deg)),
            ),
            (
                "stability_minus_repose_deg".into(),
                json_number(angles.as_ref().map(|a| a.max_stability_deg - a.repose_deg)),
            ),
            (
                "avalanches".into(),
                serde_json::Value::from(angles.as_ref().map_or(0, |a| a.avalanches.len())),
            ),
            ("quiet_states".into(), serde_json::Value::from(fitted)),
            ("final_slope_deg".into(), json_number(self.latest)),
        ]
    }

    /// Why Θ_m and Θ_r cannot be trusted: no avalanche (the heap never reached Θ_m, or the
    /// drop is too large for its scatter), or a single one (no spread).
    #[must_use]
    pub fn warnings(&self) -> Vec<String> {
        match self.angles() {
            None => vec![format!(
                "max stability: no avalanche (a fall of the quiet slope by more than {}°) among \
                 {} quiet states: drip more grains, or lower avalanche_drop_deg",
                crate::number::short(self.drop_deg),
                self.counted().len()
            )],
            Some(a) if a.avalanches.len() < 2 => {
                vec!["max stability: a single avalanche; Θ_m and Θ_r rest on one value each".into()]
            }
            Some(_) => Vec::new(),
        }
    }

    /// The quiet slope against the grains on the scene, with the avalanches' ends and the
    /// two angles.
    #[must_use]
    pub fn plots(&self) -> Vec<(String, Plot)> {
        let counted = self.counted();
        let points: Vec<(f64, f64)> = counted
            .iter()
            .copied()
            .filter(|q| q.1.is_finite())
            .collect();
        let mut series = vec![Series {
            label: "quiet slope before each release".into(),
            points,
            style: SeriesStyle::Line,
        }];
        if let Some(a) = self.angles() {
            let at = |i: usize| counted.get(i).copied();
            series.push(Series {
                label: "just before an avalanche".into(),
                points: a.avalanches.iter().filter_map(|v| at(v.before)).collect(),
                style: SeriesStyle::Points,
            });
            series.push(Series {
                label: "just after".into(),
                points: a.avalanches.iter().filter_map(|v| at(v.after)).collect(),
                style: SeriesStyle::Points,
            });
            let (x0, x1) = counted
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |r, q| {
                    (r.0.min(q.0), r.1.max(q.0))
                });
            for (label, y) in [
                (
                    format!("Θ_m = {:.1}°", a.max_stability_deg),
                    a.max_stability_deg,
                ),
                (format!("Θ_r = {:.1}°", a.repose_deg), a.repose_deg),
            ] {
                series.push(Series {
                    label,
                    points: vec![(x0, y), (x1, y)],
                    style: SeriesStyle::Dashed,
                });
            }
        }
        vec![(
            "heap_slope".into(),
            Plot {
                title: "Slope of the quiet heap (maximum angle of stability)".into(),
                x_label: "grains on the scene".into(),
                y_label: "slope [deg]".into(),
                log_y: false,
                log_x: false,
                series,
            },
        )]
    }
}
