//! Transport on a vibrating conveyor (§1.2.2, fig. 1.4): the grains' mean position along
//! the transport direction at every output time, the mean velocity over a steady window
//! with the spread between its sub-windows, and Γ of the driving plate.

use serde::{Deserialize, Serialize};
use talus_geom::glam::DVec3;
use talus_sim::exact_sum::ExactSum;
use talus_sim::wall::WallGeometry;

use super::{Sample, SummaryItems, repose::json_number};
use crate::analysis::transport::{
    TransportFit, peak_acceleration_ratio, running_velocity, transport_velocity,
};
use crate::build::Experiment;
use crate::journal::{AppendLog, Journaled};
use crate::output::csv::Column;
use crate::output::plot::{Plot, Series, SeriesStyle};
use crate::schema::{MeasurementSpec, MotionSpec, Vec3};
use crate::walls::v3;

/// Default number of sub-windows.
pub const DEFAULT_SUB_WINDOWS: usize = 4;

/// The driver's oscillation as two displacement amplitude vectors, the second's phase
/// lead and the frequency (zero for a driver that does not oscillate).
#[must_use]
pub fn driver_motion(motion: &MotionSpec) -> (DVec3, DVec3, f64, f64) {
    match motion {
        MotionSpec::Oscillate {
            direction,
            amplitude,
            frequency,
            second,
            ..
        } => {
            let unit = |d: Vec3| v3(d).try_normalize().unwrap_or(DVec3::ZERO);
            let (b, lag) = second.as_ref().map_or((DVec3::ZERO, 0.0), |s| {
                (unit(s.direction) * s.amplitude, s.phase)
            });
            (unit(*direction) * *amplitude, b, lag, *frequency)
        }
        _ => (DVec3::ZERO, DVec3::ZERO, 0.0, 0.0),
    }
}

/// The default transport direction: the horizontal part of the driver's first component,
/// or of its second if the first is vertical; `None` if both are vertical.
#[must_use]
pub fn default_direction(motion: &MotionSpec, up: DVec3) -> Option<DVec3> {
    let (a, b, _, _) = driver_motion(motion);
    let horizontal = |v: DVec3| (v - up * up.dot(v)).try_normalize();
    horizontal(a)
        .filter(|h| h.dot(a).abs() > 1e-9 * a.length())
        .or_else(|| horizontal(b))
}

/// What some of the grains give the measurement (one process's, or all), summed exactly so
/// that the sums merged over the processes are those of all grains, whatever the split.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TransportSums {
    grains: u64,
    /// Σ position and Σ velocity along the direction.
    position: ExactSum,
    velocity: ExactSum,
    /// Grains fallen off the driver.
    fallen: u64,
}

impl TransportSums {
    /// Takes in the sums of other grains.
    pub fn merge(&mut self, other: &TransportSums) {
        self.grains += other.grains;
        self.position.merge(&other.position);
        self.velocity.merge(&other.velocity);
        self.fallen += other.fallen;
    }
}

/// The probe's set-up and what it has seen.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Transport {
    direction: DVec3,
    window: (f64, f64),
    sub_windows: usize,
    frequency: f64,
    amplitude: f64,
    gamma: f64,
    gamma_vertical: f64,
    /// Height (along up) below which a grain has fallen off the driver: its lowest point
    /// at the bottom of its swing; none for a plane.
    below: Option<f64>,
    /// (time, mean position along the direction, grains, grains fallen off) per sample.
    samples: AppendLog<(f64, f64, u32, u32)>,
}

impl Transport {
    /// The probe of a `Transport` measurement.
    #[must_use]
    pub fn new(spec: &MeasurementSpec, exp: &Experiment) -> Option<Transport> {
        let MeasurementSpec::Transport {
            driver,
            direction,
            window,
            sub_windows,
        } = spec
        else {
            return None;
        };
        let s = &exp.scenario;
        let up = super::up_direction(s.gravity_vector());
        let motion = s
            .walls
            .iter()
            .find(|w| &w.name == driver)
            .map(|w| w.motion.clone())
            .unwrap_or_default();
        let (a, b, lag, frequency) = driver_motion(&motion);
        let direction = match direction {
            Some(d) => v3(*d).normalize(),
            None => default_direction(&motion, up).unwrap_or(DVec3::X),
        };
        let g = v3(s.gravity).length();
        let amplitude = crate::analysis::transport::peak_displacement(a, b, lag);
        let vertical = |v: DVec3| up * up.dot(v);
        let below = exp
            .walls
            .iter()
            .find(|w| &w.name == driver)
            .and_then(|group| {
                group
                    .parts
                    .iter()
                    .filter_map(|id| {
                        let wall = exp.world.walls().get(id.0 as usize)?;
                        match &wall.geometry {
                            WallGeometry::Body(poly) => Some(
                                poly.vertices()
                                    .iter()
                                    .map(|v| up.dot(wall.start.transform_point(*v)))
                                    .fold(f64::INFINITY, f64::min),
                            ),
                            WallGeometry::HalfSpace { .. } => None,
                        }
                    })
                    .reduce(f64::min)
            })
            .map(|lowest| lowest - amplitude);
        Some(Transport {
            direction,
            window: *window,
            sub_windows: sub_windows.unwrap_or(DEFAULT_SUB_WINDOWS),
            frequency,
            amplitude,
            gamma: peak_acceleration_ratio(a, b, lag, frequency, g),
            gamma_vertical: peak_acceleration_ratio(vertical(a), vertical(b), lag, frequency, g),
            below,
            samples: AppendLog::new(),
        })
    }

    /// The lists that grow during the run (see [`crate::journal`]).
    pub fn logs(&self) -> Vec<&dyn Journaled> {
        vec![&self.samples]
    }

    /// See [`Transport::logs`].
    pub fn logs_mut(&mut self) -> Vec<&mut dyn Journaled> {
        vec![&mut self.samples]
    }

    /// Columns: the mean position and velocity along the transport direction.
    #[must_use]
    pub fn columns(&self) -> Vec<Column> {
        vec![
            Column::new("transport_position", "m"),
            Column::new("transport_velocity_now", "m/s"),
        ]
    }

    /// What the grains of `sample` (one process's, or all) give the measurement.
    #[must_use]
    pub fn partial(&self, sample: &Sample) -> TransportSums {
        let mut sums = TransportSums::default();
        for g in &sample.grains {
            sums.grains += 1;
            // Unwrapped: with a periodic trough the grains' travel, not where they are in the box.
            sums.position
                .add(self.direction.dot(g.state.unwrapped_position));
            sums.velocity.add(self.direction.dot(g.state.velocity));
            if self
                .below
                .is_some_and(|z| sample.up.dot(g.state.pose.position) < z)
            {
                sums.fallen += 1;
            }
        }
        sums
    }

    /// Values at time `time` from the sums over all grains.
    pub fn take(&mut self, time: f64, total: &TransportSums) -> Vec<f64> {
        let n = total.grains;
        let (x, v) = if n == 0 {
            (f64::NAN, f64::NAN)
        } else {
            (
                total.position.value() / n as f64,
                total.velocity.value() / n as f64,
            )
        };
        self.samples.push((time, x, n as u32, total.fallen as u32));
        vec![x, v]
    }

    fn positions(&self) -> Vec<(f64, f64)> {
        self.samples.iter().map(|s| (s.0, s.1)).collect()
    }

    fn fit(&self) -> Option<TransportFit> {
        transport_velocity(&self.positions(), self.window, self.sub_windows)
    }

    /// The samples inside the window.
    fn in_window(&self) -> impl Iterator<Item = &(f64, f64, u32, u32)> {
        self.samples
            .iter()
            .filter(|s| s.0 >= self.window.0 && s.0 <= self.window.1)
    }

    /// The transport velocity, its spread, Γ and the drive.
    #[must_use]
    pub fn summary(&self) -> SummaryItems {
        let fit = self.fit();
        vec![
            (
                "transport_velocity_m_s".into(),
                json_number(fit.as_ref().map(|f| f.velocity)),
            ),
            (
                "transport_velocity_spread_m_s".into(),
                json_number(fit.as_ref().map(|f| f.spread)),
            ),
            (
                "transport_sub_window_velocities_m_s".into(),
                serde_json::Value::Array(
                    fit.as_ref()
                        .map(|f| {
                            f.sub_velocities
                                .iter()
                                .map(|v| json_number(Some(*v)))
                                .collect()
                        })
                        .unwrap_or_default(),
                ),
            ),
            (
                "transport_window_s".into(),
                serde_json::Value::Array(match &fit {
                    Some(f) => vec![json_number(Some(f.window.0)), json_number(Some(f.window.1))],
                    None => Vec::new(),
                }),
            ),
            (
                "transport_direction".into(),
                serde_json::Value::Array(
                    self.direction
                        .to_array()
                        .iter()
                        .map(|c| json_number(Some(*c)))
                        .collect(),
                ),
            ),
            ("gamma".into(), json_number(Some(self.gamma))),
            (
                "gamma_vertical".into(),
                json_number(Some(self.gamma_vertical)),
            ),
            ("frequency".into(), json_number(Some(self.frequency))),
            ("amplitude".into(), json_number(Some(self.amplitude))),
        ]
    }

    /// Why the velocity cannot be trusted: a window the run did not reach, grains that fell
    /// off the conveyor or came and went during the window.
    #[must_use]
    pub fn warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.fit().is_none() {
            out.push(format!(
                "transport: the window ({}, {}) s does not hold two samples in each of its {} \
                 sub-windows: the run ended before it, or output_interval is too long",
                crate::number::short(self.window.0),
                crate::number::short(self.window.1),
                self.sub_windows
            ));
        }
        let fallen = self.in_window().map(|s| s.3).max().unwrap_or(0);
        if fallen > 0 {
            out.push(format!(
                "transport: {fallen} grains fell off the conveyor during the window; their fall \
                 is not transport (a longer trough, or an earlier window)"
            ));
        }
        let mut counts = self.in_window().map(|s| s.2);
        if let Some(first) = counts.next()
            && counts.any(|n| n != first)
        {
            out.push(
                "transport: grains were added or removed during the window; the mean \
                 displacement then mixes different grains"
                    .into(),
            );
        }
        out
    }

    /// The velocity averaged over each period of the drive against time, with the window's
    /// mean.
    #[must_use]
    pub fn plots(&self) -> Vec<(String, Plot)> {
        let positions = self.positions();
        let step = positions
            .windows(2)
            .map(|w| w[1].0 - w[0].0)
            .find(|d| *d > 0.0)
            .unwrap_or(1.0);
        let span = if self.frequency > 0.0 {
            ((1.0 / self.frequency) / step).round().max(1.0) as usize
        } else {
            1
        };
        let mut series = vec![Series {
            label: "mean over one period".into(),
            points: running_velocity(&positions, span),
            style: SeriesStyle::Line,
        }];
        if let Some(fit) = self.fit() {
            series.push(Series {
                label: format!("window mean {:.4} ± {:.4} m/s", fit.velocity, fit.spread),
                points: vec![(fit.window.0, fit.velocity), (fit.window.1, fit.velocity)],
                style: SeriesStyle::Dashed,
            });
        }
        vec![(
            "transport_velocity".into(),
            Plot {
                title: format!(
                    "Transport velocity (f = {} Hz, Γ = {:.2})",
                    crate::number::short(self.frequency),
                    self.gamma
                ),
                x_label: "time [s]".into(),
                y_label: "mean grain velocity along the transport direction [m/s]".into(),
                log_y: false,
                log_x: false,
                series,
            },
        )]
    }
}
