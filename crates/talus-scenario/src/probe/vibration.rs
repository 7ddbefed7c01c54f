//! A vibrated bed (§1.2.2): solid fraction per horizontal layer, granular temperature, and
//! the height of a large intruder grain (the Brazil-nut effect), with the dimensionless
//! acceleration Γ = A(2πf)²/g of the driving wall.

use serde::{Deserialize, Serialize};
use talus_geom::glam::DVec3;

use super::{Sample, SummaryItems, equivalent_diameter, repose::json_number};
use crate::analysis::vibration::{gamma, granular_temperature, layer_packing, rise_in_diameters};
use crate::build::Experiment;
use crate::journal::{AppendLog, Journaled};
use crate::output::csv::Column;
use crate::output::plot::{Plot, Series, SeriesStyle};
use crate::schema::{MeasurementSpec, MotionSpec};
use crate::walls::v3;

/// Default number of layers.
const DEFAULT_LAYERS: usize = 10;

/// The probe's set-up and what it has seen.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Vibration {
    gamma: f64,
    amplitude: f64,
    frequency: f64,
    phase: f64,
    /// The driver's displacement direction (unit).
    direction: DVec3,
    intruder: Option<usize>,
    min: DVec3,
    max: DVec3,
    layers: usize,
    /// Height of the intruder above the moving container at the first sample, and its
    /// diameter.
    start: Option<(f64, f64)>,
    /// (time, intruder height above the moving container) at every sample.
    heights: AppendLog<(f64, f64)>,
    /// (time, packing per layer) at every sample.
    profiles: AppendLog<(f64, Vec<f64>)>,
    /// Granular temperature at every sample.
    temperatures: AppendLog<f64>,
}

impl Vibration {
    /// The probe of a `Vibration` measurement.
    #[must_use]
    pub fn new(spec: &MeasurementSpec, exp: &Experiment) -> Option<Vibration> {
        let MeasurementSpec::Vibration {
            driver,
            intruder,
            min,
            max,
            layers,
        } = spec
        else {
            return None;
        };
        let s = &exp.scenario;
        let (amplitude, frequency, phase, direction) = s
            .walls
            .iter()
            .find(|w| &w.name == driver)
            .and_then(|w| match w.motion {
                MotionSpec::Oscillate {
                    amplitude,
                    frequency,
                    phase,
                    direction,
                    ..
                } => Some((amplitude, frequency, phase, v3(direction).normalize())),
                _ => None,
            })
            .unwrap_or((0.0, 0.0, 0.0, DVec3::Z));
        let g = v3(s.gravity).length();
        Some(Vibration {
            gamma: gamma(amplitude, frequency, g),
            amplitude,
            frequency,
            phase,
            direction,
            intruder: intruder
                .as_ref()
                .and_then(|name| exp.populations.iter().position(|p| &p.name == name)),
            min: v3(*min),
            max: v3(*max),
            layers: layers.unwrap_or(DEFAULT_LAYERS),
            start: None,
            heights: AppendLog::new(),
            profiles: AppendLog::new(),
            temperatures: AppendLog::new(),
        })
    }

    /// The lists that grow during the run, in a fixed order (see [`crate::journal`]).
    pub fn logs(&self) -> Vec<&dyn Journaled> {
        vec![&self.heights, &self.profiles, &self.temperatures]
    }

    /// See [`Vibration::logs`].
    pub fn logs_mut(&mut self) -> Vec<&mut dyn Journaled> {
        vec![
            &mut self.heights,
            &mut self.profiles,
            &mut self.temperatures,
        ]
    }

    /// Columns: intruder height and rise, granular temperature, packing per layer.
    #[must_use]
    pub fn columns(&self) -> Vec<Column> {
        let mut c = vec![
            Column::new("intruder_height_in_container", "m"),
            Column::new("intruder_rise", "diameters"),
            Column::new("granular_temperature", "m^2/s^2"),
        ];
        for k in 0..self.layers {
            c.push(Column::new(format!("packing_layer_{k}"), "1"));
        }
        c
    }

    /// Values now.
    pub fn sample(&mut self, sample: &Sample) -> Vec<f64> {
        let up = sample.up;
        // The intruder: the first grain of its population.
        // Heights are taken relative to the container, which moves by
        // A sin(2πft + φ) along the driver's direction: the intruder's rise is its motion
        // through the bed, not the shaking.
        let shift = up.dot(self.direction)
            * self.amplitude
            * (std::f64::consts::TAU * self.frequency * sample.time + self.phase).sin();
        let intruder = self.intruder.and_then(|p| {
            sample.grains.iter().find(|g| g.population == p).map(|g| {
                (
                    up.dot(g.state.pose.position) - shift,
                    equivalent_diameter(g.volume),
                )
            })
        });
        if self.start.is_none() {
            self.start = intruder;
        }
        let (height, rise) = match (intruder, self.start) {
            (Some((h, _)), Some((h0, d))) => {
                self.heights.push((sample.time, h));
                (h, rise_in_diameters(h0, h, d))
            }
            _ => (f64::NAN, f64::NAN),
        };
        // The bed: every grain but the intruder inside the region, which moves with the
        // container; layers are horizontal slices of it.
        let lo = self.min + up * shift;
        let hi = self.max + up * shift;
        let bed: Vec<_> = sample
            .grains
            .iter()
            .filter(|g| Some(g.population) != self.intruder)
            .filter(|g| {
                let p = g.state.pose.position;
                (lo.x..=hi.x).contains(&p.x) && (lo.y..=hi.y).contains(&p.y)
            })
            .collect();
        let velocities: Vec<[f64; 3]> = bed.iter().map(|g| g.state.velocity.to_array()).collect();
        let masses: Vec<f64> = bed.iter().map(|g| g.state.inertia.mass).collect();
        let temperature = granular_temperature(&velocities, &masses);
        self.temperatures.push(temperature);
        let extent = self.max - self.min;
        let area = extent.x * extent.y;
        let z_and_volume: Vec<(f64, f64)> = bed
            .iter()
            .map(|g| (g.state.pose.position.z - up.z * shift, g.volume))
            .collect();
        let packing = layer_packing(&z_and_volume, self.min.z, self.max.z, self.layers, area);
        let mut row = vec![height, rise, temperature];

        row.extend((0..self.layers).map(|k| packing.get(k).copied().unwrap_or(f64::NAN)));
        self.profiles.push((sample.time, packing));
        row
    }

    /// Γ, the intruder's rise and the mean granular temperature. The rise is the mean
    /// height above the container over the last quarter of the samples (which averages
    /// over the bed's bouncing) against the height at the start, in intruder diameters.
    #[must_use]
    pub fn summary(&self) -> SummaryItems {
        let tail = &self.heights[self.heights.len() - self.heights.len().div_ceil(4)..];
        let rise = match self.start {
            Some((h0, d)) if !tail.is_empty() => {
                let mean = tail.iter().map(|p| p.1).sum::<f64>() / tail.len() as f64;
                Some(rise_in_diameters(h0, mean, d))
            }
            _ => None,
        };
        let mean_t = if self.temperatures.is_empty() {
            None
        } else {
            Some(self.temperatures.iter().sum::<f64>() / self.temperatures.len() as f64)
        };
        vec![
            ("gamma".into(), json_number(Some(self.gamma))),
            ("amplitude".into(), json_number(Some(self.amplitude))),
            ("frequency".into(), json_number(Some(self.frequency))),
            ("intruder_rise".into(), json_number(rise)),
            (
                "intruder_diameter".into(),
                json_number(self.start.map(|s| s.1)),
            ),
            ("mean_granular_temperature".into(), json_number(mean_t)),
        ]
    }

    /// Why the measurement cannot be trusted, if it cannot: an intruder that was never
    /// found, or one that moved farther than the measured bed is high (it left the bed).
    #[must_use]
    pub fn warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.intruder.is_some() && self.start.is_none() {
            out.push("vibration: the intruder was not found among the grains".into());
        }
        let height = (self.max - self.min).dot(DVec3::Z).abs();
        if let Some((h0, _)) = self.start {
            let farthest = self
                .heights
                .iter()
                .map(|&(_, h)| (h - h0).abs())
                .fold(0.0, f64::max);
            if !farthest.is_finite() || farthest > height {
                out.push(format!(
                    "vibration: the intruder moved {} m from its start, farther than the \
                     measured region is high ({} m): it left the bed, so its rise says nothing \
                     about segregation",
                    crate::number::short(farthest),
                    crate::number::short(height)
                ));
            }
        }
        if self.temperatures.iter().any(|t| !t.is_finite()) {
            out.push("vibration: the granular temperature was not finite at some samples".into());
        }
        out
    }

    /// Density profiles at the start, middle and end; intruder height over time.
    #[must_use]
    pub fn plots(&self) -> Vec<(String, Plot)> {
        let lo = self.min.z;
        let thickness = (self.max.z - lo) / self.layers.max(1) as f64;
        let n = self.profiles.len();
        let mut picks: Vec<usize> = [0, n / 2, n.saturating_sub(1)]
            .into_iter()
            .filter(|&i| i < n)
            .collect();
        picks.dedup();
        let series = picks
            .into_iter()
            .map(|i| {
                let (t, ref profile) = self.profiles[i];
                Series {
                    label: format!("t = {t:.2} s"),
                    points: profile
                        .iter()
                        .enumerate()
                        .map(|(k, &phi)| (phi, lo + (k as f64 + 0.5) * thickness))
                        .collect(),
                    style: SeriesStyle::Line,
                }
            })
            .collect();
        let mut out = vec![(
            "density_profile".into(),
            Plot {
                title: format!("Solid fraction per layer (Γ = {:.2})", self.gamma),
                x_label: "solid fraction [1]".into(),
                y_label: "height [m]".into(),
                log_y: false,
                log_x: false,
                series,
            },
        )];
        if !self.heights.is_empty() {
            out.push((
                "intruder_height".into(),
                Plot {
                    title: "Intruder height".into(),
                    x_label: "time [s]".into(),
                    y_label: "intruder centre above the moving container [m]".into(),
                    log_y: false,
                    log_x: false,
                    series: vec![Series {
                        label: "intruder".into(),
                        points: self.heights.to_vec(),
                        style: SeriesStyle::Line,
                    }],
                },
            ));
        }
        out
    }
}
