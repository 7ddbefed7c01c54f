//! Angle of repose (§1.2.1): the highest points of the grains, binned along the direction
//! in which the free surface falls, and a line fitted over the middle of the slope.

use serde::{Deserialize, Serialize};
use talus_geom::glam::DVec3;

use super::{Sample, SummaryItems};
use crate::analysis::repose::{angle_of_repose, surface_profile};
use crate::build::Experiment;
use crate::output::csv::Column;
use crate::output::plot::{Plot, Series, SeriesStyle};
use crate::schema::MeasurementSpec;
use crate::walls::v3;

/// Default number of bins along the slope.
const DEFAULT_BINS: usize = 24;
/// Default fraction of the pile height between which the slope is fitted.
const DEFAULT_FIT: (f64, f64) = (0.2, 0.8);

/// Fewer surface points than this make a fitted slope too uncertain to report as clean.
const MIN_FIT_POINTS: usize = 4;

/// The probe's set-up and its latest result.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Repose {
    direction: DVec3,
    floor: f64,
    range: (f64, f64),
    bins: usize,
    fit: (f64, f64),
    /// Latest profile: (distance along the direction, height of the surface).
    profile: Vec<(f64, f64)>,
    /// Latest fit: angle in degrees, slope, intercept and the profile points fitted.
    angle_deg: Option<f64>,
    line: Option<(f64, f64)>,
    used: Vec<(f64, f64)>,
}

impl Repose {
    /// The probe of an `AngleOfRepose` measurement.
    #[must_use]
    pub fn new(spec: &MeasurementSpec, _exp: &Experiment) -> Option<Repose> {
        let MeasurementSpec::AngleOfRepose {
            direction,
            floor,
            range,
            bins,
            fit,
        } = spec
        else {
            return None;
        };
        Some(Repose {
            direction: v3(*direction).normalize(),
            floor: *floor,
            range: *range,
            bins: bins.unwrap_or(DEFAULT_BINS),
            fit: fit.unwrap_or(DEFAULT_FIT),
            profile: Vec::new(),
            angle_deg: None,
            line: None,
            used: Vec::new(),
        })
    }

    /// Columns: the angle.
    #[must_use]
    pub fn columns(&self) -> Vec<Column> {
        vec![Column::new("angle_of_repose", "deg")]
    }

    /// The angle of the surface now (NaN while it cannot be fitted).
    pub fn sample(&mut self, sample: &Sample) -> Vec<f64> {
        let points: Vec<(f64, f64)> = sample
            .grains
            .iter()
            .map(|g| (self.direction.dot(g.state.pose.position), g.top))
            .collect();
        self.profile = surface_profile(&points, self.range.0, self.range.1, self.bins);
        match angle_of_repose(&self.profile, self.floor, self.fit.0, self.fit.1) {
            Some(fit) => {
                self.angle_deg = Some(fit.angle_deg);
                self.line = Some((fit.fit.slope, fit.fit.intercept));
                self.used = fit.used;
            }
            None => {
                self.angle_deg = None;
                self.line = None;
                self.used.clear();
            }
        }
        vec![self.angle_deg.unwrap_or(f64::NAN)]
    }

    /// `angle_of_repose_deg` (null if the surface could not be fitted) and the fit.
    #[must_use]
    pub fn summary(&self) -> SummaryItems {
        vec![
            ("angle_of_repose_deg".into(), json_number(self.angle_deg)),
            (
                "repose_fit_points".into(),
                serde_json::Value::from(self.used.len()),
            ),
        ]
    }

    /// Why the angle cannot be trusted, if it cannot: no fit, a fit on too few points, or
    /// a surface that does not fall along the measured direction.
    #[must_use]
    pub fn warnings(&self) -> Vec<String> {
        match self.angle_deg {
            None => vec![
                "angle of repose: the pile's surface could not be fitted at the end (no run of \
                 bins with grains across the fitted heights): the grains may have left the \
                 measured range, or range and bins do not match the pile"
                    .into(),
            ],
            Some(a) if !(a > 0.0 && a < 90.0) => vec![format!(
                "angle of repose: the fitted surface does not fall along the measured direction \
                 ({a:.1}°); the direction points from the pile's toe to its back"
            )],
            Some(_) if self.used.len() < MIN_FIT_POINTS => vec![format!(
                "angle of repose: fitted on only {} points of the surface (at least \
                 {MIN_FIT_POINTS} make a slope worth reporting): use more bins or a larger pile",
                self.used.len()
            )],
            Some(_) => Vec::new(),
        }
    }

    /// The pile profile with the fitted line.
    #[must_use]
    pub fn plots(&self) -> Vec<(String, Plot)> {
        let mut series = vec![Series {
            label: "surface (highest grain point per bin)".into(),
            points: self.profile.clone(),
            style: SeriesStyle::Points,
        }];
        if let (Some((slope, intercept)), Some(angle)) = (self.line, self.angle_deg) {
            let (x0, x1) = self
                .used
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| {
                    (a.min(p.0), b.max(p.0))
                });
            series.push(Series {
                label: format!("fit: {angle:.1}°"),
                points: vec![(x0, slope * x0 + intercept), (x1, slope * x1 + intercept)],
                style: SeriesStyle::Line,
            });
        }
        series.push(Series {
            label: "floor".into(),
            points: vec![(self.range.0, self.floor), (self.range.1, self.floor)],
            style: SeriesStyle::Dashed,
        });
        vec![(
            "pile_profile".into(),
            Plot {
                title: "Pile profile and angle of repose".into(),
                x_label: "distance along the slope direction [m]".into(),
                y_label: "height [m]".into(),
                log_y: false,
                series,
            },
        )]
    }
}

/// A JSON number, or null for none or a non-finite value.
#[must_use]
pub fn json_number(x: Option<f64>) -> serde_json::Value {
    x.and_then(serde_json::Number::from_f64)
        .map_or(serde_json::Value::Null, serde_json::Value::Number)
}
