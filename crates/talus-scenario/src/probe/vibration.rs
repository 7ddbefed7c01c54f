//! A vibrated bed (§1.2.2): solid fraction per horizontal layer, granular temperature, and
//! the height of a large intruder grain (the Brazil-nut effect), with the dimensionless
//! acceleration Γ = A(2πf)²/g of the driving wall.

use serde::{Deserialize, Serialize};
use talus_geom::glam::DVec3;

use talus_sim::GrainId;
use talus_sim::exact_sum::ExactSum;

use super::{GrainRecord, Sample, SummaryItems, equivalent_diameter, repose::json_number};
use crate::analysis::vibration::{LayerVolumes, TemperatureSums, gamma, rise_in_diameters};
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
    /// Phase of the drive at which the stroboscopic samples are taken (rad).
    strobe_phase: f64,
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
    /// Once per cycle of the drive, at its strobe phase (by default 0: the container at its
    /// mean height, rising): everything measured, stroboscopically.
    strobes: AppendLog<Strobe>,
}

/// What the probe measures at one instant.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measured {
    /// The intruder's centre above the moving container (m; NaN without an intruder).
    pub intruder_height: f64,
    /// Granular temperature of the bed (m²/s²).
    pub temperature: f64,
    /// Height of the bed's centre of mass above the moving container (m).
    pub centre_of_mass: f64,
    /// Solid fraction per layer, bottom first.
    pub packing: Vec<f64>,
}

/// What some of the grains give the measurement (one process's, or all), summed exactly
/// so that the sums merged over the processes are those of all grains, whatever the split.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BedSums {
    /// The intruder among them (the first grain of its population): its id, its centre
    /// above the moving container and its diameter.
    intruder: Option<(GrainId, f64, f64)>,
    /// The bed's mass, and Σ m h of its grains' heights above the moving container.
    mass: ExactSum,
    moment: ExactSum,
    /// The bed's volume per layer.
    layers: LayerVolumes,
    /// The bed's granular temperature (two passes).
    temperature: TemperatureSums,
}

impl BedSums {
    /// Takes in the sums of other grains, or the second pass over all.
    pub fn merge(&mut self, other: &BedSums) {
        // The intruder of the lowest id, as the first of its population in id order.
        if let Some(theirs) = other.intruder
            && self.intruder.is_none_or(|mine| theirs.0 < mine.0)
        {
            self.intruder = Some(theirs);
        }
        self.mass.merge(&other.mass);
        self.moment.merge(&other.moment);
        self.layers.merge(&other.layers);
        self.temperature.merge(&other.temperature);
    }

    /// Whether the temperature's second pass is still to be taken.
    #[must_use]
    pub fn needs_second_pass(&self) -> bool {
        self.temperature.fluctuation.is_none()
    }
}

/// One stroboscopic sample: the drive's cycle and time, and what was measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Strobe {
    /// Cycles of the drive completed (counted from t = 0).
    pub cycle: u64,
    /// Simulated time.
    pub time: f64,
    /// The measurement.
    pub measured: Measured,
}

/// Stroboscopic profiles averaged at the end: the last this many cycles (or the later half
/// of the cycles, when fewer).
const PROFILE_CYCLES: usize = 20;

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
            strobe_phase_deg,
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
            strobe_phase: strobe_phase_deg.unwrap_or(0.0).to_radians(),
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
            strobes: AppendLog::new(),
        })
    }

    /// The lists that grow during the run, in a fixed order (see [`crate::journal`]).
    pub fn logs(&self) -> Vec<&dyn Journaled> {
        vec![
            &self.heights,
            &self.profiles,
            &self.temperatures,
            &self.strobes,
        ]
    }

    /// See [`Vibration::logs`].
    pub fn logs_mut(&mut self) -> Vec<&mut dyn Journaled> {
        vec![
            &mut self.heights,
            &mut self.profiles,
            &mut self.temperatures,
            &mut self.strobes,
        ]
    }

    /// Columns: intruder height and rise, granular temperature, packing per layer.
    #[must_use]
    pub fn columns(&self) -> Vec<Column> {
        let mut c = vec![
            Column::new("intruder_height_in_container", "m"),
            Column::new("intruder_rise", "diameters"),
            Column::new("granular_temperature", "m^2/s^2"),
            Column::new("bed_centre_of_mass_in_container", "m"),
        ];
        for k in 0..self.layers {
            c.push(Column::new(format!("packing_layer_{k}"), "1"));
        }
        c
    }

    /// The drive's displacement along "up" at time `t`: the container's height above its
    /// rest position.
    fn shift(&self, up: DVec3, t: f64) -> f64 {
        up.dot(self.direction)
            * self.amplitude
            * (std::f64::consts::TAU * self.frequency * t + self.phase).sin()
    }

    /// Whether a grain belongs to the bed: not the intruder, inside the region (which moves
    /// with the container, up by `shift`) across.
    fn in_bed(&self, g: &GrainRecord, up: DVec3, shift: f64) -> bool {
        let (lo, hi) = (self.min + up * shift, self.max + up * shift);
        let p = g.state.pose.position;
        Some(g.population) != self.intruder
            && (lo.x..=hi.x).contains(&p.x)
            && (lo.y..=hi.y).contains(&p.y)
    }

    /// What the grains of `sample` (one process's) give the measurement: the first pass
    /// without `first`; with the first pass's totals over all grains, the second (the
    /// granular temperature's fluctuation about the mean velocity, see
    /// [`TemperatureSums`]).
    #[must_use]
    pub fn partial(&self, sample: &Sample, first: Option<&BedSums>) -> BedSums {
        let up = sample.up;
        let shift = self.shift(up, sample.time);
        let bed = sample.grains.iter().filter(|g| self.in_bed(g, up, shift));
        if let Some(first) = first {
            let mut fluctuation = ExactSum::new();
            if let Some(mean) = first.temperature.mean() {
                fluctuation.extend(bed.map(|g| {
                    TemperatureSums::fluctuation(
                        g.state.inertia.mass,
                        g.state.velocity.to_array(),
                        mean,
                    )
                }));
            }
            return BedSums {
                temperature: TemperatureSums {
                    fluctuation: Some(fluctuation),
                    ..TemperatureSums::default()
                },
                ..BedSums::default()
            };
        }
        // The intruder: the first grain of its population.
        let intruder = self.intruder.and_then(|p| {
            sample.grains.iter().find(|g| g.population == p).map(|g| {
                (
                    g.state.id,
                    up.dot(g.state.pose.position) - shift,
                    equivalent_diameter(g.volume),
                )
            })
        });
        // Layers are horizontal slices of the moving region.
        let mut sums = BedSums {
            intruder,
            layers: LayerVolumes::new(self.min.z, self.max.z, self.layers),
            ..BedSums::default()
        };
        for g in bed {
            let (m, p) = (g.state.inertia.mass, g.state.pose.position);
            sums.temperature.add_motion(m, g.state.velocity.to_array());
            sums.mass.add(m);
            sums.moment.add(m * (up.dot(p) - shift));
            sums.layers.add(p.z - up.z * shift, g.volume);
        }
        sums
    }

    /// Everything the probe measures in the totals `total` of all grains, heights relative
    /// to the moving container (which moves by A sin(2πft + φ) along the driver's
    /// direction: the intruder's rise is its motion through the bed, not the shaking).
    fn measure(&mut self, total: &BedSums) -> Measured {
        let intruder = total.intruder.map(|(_, h, d)| (h, d));
        if self.start.is_none() {
            self.start = intruder;
        }
        let extent = self.max - self.min;
        Measured {
            intruder_height: intruder.map_or(f64::NAN, |(h, _)| h),
            temperature: total.temperature.temperature(),
            centre_of_mass: total.moment.value() / total.mass.value(),
            packing: total.layers.packing(extent.x * extent.y),
        }
    }

    /// Values at time `time` from the totals of all grains.
    pub fn take(&mut self, time: f64, total: &BedSums) -> Vec<f64> {
        let m = self.measure(total);
        let rise = match self.start {
            Some((h0, d)) if m.intruder_height.is_finite() => {
                self.heights.push((time, m.intruder_height));
                rise_in_diameters(h0, m.intruder_height, d)
            }
            _ => f64::NAN,
        };
        self.temperatures.push(m.temperature);
        let mut row = vec![m.intruder_height, rise, m.temperature, m.centre_of_mass];
        row.extend((0..self.layers).map(|k| m.packing.get(k).copied().unwrap_or(f64::NAN)));
        self.profiles.push((time, m.packing));
        row
    }

    /// The strobe phase passed at time `t` (counted from 0 at the first time after t = 0
    /// that the drive's phase 2πft + φ passes the strobe phase θₛ modulo 2π): ⌊(2πft + φ −
    /// θₛ) / 2π⌋; `None` without a drive.
    fn cycle(&self, t: f64) -> Option<i64> {
        let turns = self.frequency * t + (self.phase - self.strobe_phase) / std::f64::consts::TAU;
        (self.frequency > 0.0 && turns.is_finite()).then(|| turns.floor() as i64)
    }

    /// The time at which the drive's phase passes the strobe phase for the `cycle`-th time
    /// (the inverse of [`Vibration::cycle`]): 2πft + φ = θₛ + 2π·cycle.
    fn time_of_cycle(&self, cycle: f64) -> f64 {
        (cycle - (self.phase - self.strobe_phase) / std::f64::consts::TAU) / self.frequency
    }

    /// Whether the step from `before` to `after` passed the strobe phase of the drive: a
    /// stroboscopic sample is due (taken at the step's end, at most one step late, a phase
    /// error of 360° · f · dt).
    #[must_use]
    pub fn strobe_due(&self, before: f64, after: f64) -> bool {
        matches!((self.cycle(before), self.cycle(after)), (Some(a), Some(b)) if b > a)
    }

    /// Takes the stroboscopic sample of the cycle just completed at time `time`, from the
    /// totals of all grains.
    pub fn strobe(&mut self, time: f64, total: &BedSums) {
        let Some(cycle) = self.cycle(time).and_then(|c| u64::try_from(c).ok()) else {
            return;
        };
        let measured = self.measure(total);
        self.strobes.push(Strobe {
            cycle,
            time,
            measured,
        });
    }

    /// The intruder's rise rate in its diameters per cycle: a line fitted to its
    /// stroboscopic heights against the cycle.
    fn rise_rate(&self) -> Option<(crate::analysis::fit::LineFit, f64)> {
        let (_, d) = self.start?;
        let points: Vec<(f64, f64)> = self
            .strobes
            .iter()
            .map(|s| (s.cycle as f64, s.measured.intruder_height))
            .collect();
        crate::analysis::fit::fit_line(&points).map(|fit| (fit, d))
    }

    /// The stroboscopic profiles of the last cycles: per layer, the mean and the sample
    /// standard deviation, and how many cycles.
    fn mean_profile(&self) -> Option<(Vec<(f64, f64)>, usize)> {
        let n = self.strobes.len();
        if n == 0 {
            return None;
        }
        let take = PROFILE_CYCLES.min(n.div_ceil(2));
        let last = &self.strobes[n - take..];
        let layers = (0..self.layers)
            .map(|k| {
                let values: Vec<f64> = last
                    .iter()
                    .filter_map(|s| s.measured.packing.get(k).copied())
                    .collect();
                let count = values.len() as f64;
                let mean = values.iter().sum::<f64>() / count;
                let sd = if values.len() > 1 {
                    (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (count - 1.0)).sqrt()
                } else {
                    f64::NAN
                };
                (mean, sd)
            })
            .collect();
        Some((layers, take))
    }

    /// The stroboscopic samples as a table, one row per cycle.
    #[must_use]
    pub fn strobe_table(&self) -> crate::output::csv::TimeSeries {
        let mut columns = vec![
            Column::new("cycle", "1"),
            Column::new("time", "s"),
            Column::new("intruder_height_in_container", "m"),
            Column::new("granular_temperature", "m^2/s^2"),
            Column::new("bed_centre_of_mass_in_container", "m"),
        ];
        for k in 0..self.layers {
            columns.push(Column::new(format!("packing_layer_{k}"), "1"));
        }
        let mut table = crate::output::csv::TimeSeries::new(columns);
        for s in self.strobes.iter() {
            let m = &s.measured;
            let mut row = vec![
                s.cycle as f64,
                s.time,
                m.intruder_height,
                m.temperature,
                m.centre_of_mass,
            ];
            row.extend((0..self.layers).map(|k| m.packing.get(k).copied().unwrap_or(f64::NAN)));
            table
                .push(row)
                .expect("a stroboscopic row has one value per column");
        }
        table
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
            (
                "strobe_cycles".into(),
                serde_json::Value::from(self.strobes.len()),
            ),
            (
                "intruder_rise_rate".into(),
                json_number(self.rise_rate().map(|(f, d)| f.slope / d)),
            ),
            (
                "intruder_rise_rate_err".into(),
                json_number(self.rise_rate().map(|(f, d)| f.slope_error / d)),
            ),
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

    /// The solid fraction per layer averaged over the last cycles at phase 0 of the drive,
    /// with its spread; the intruder's height over time, continuously and once per cycle,
    /// with its fitted rise.
    #[must_use]
    pub fn plots(&self) -> Vec<(String, Plot)> {
        let lo = self.min.z;
        let thickness = (self.max.z - lo) / self.layers.max(1) as f64;
        let layer_z = |k: usize| lo + (k as f64 + 0.5) * thickness;
        let mut series = Vec::new();
        if let Some((profile, cycles)) = self.mean_profile() {
            series.push(Series {
                label: format!(
                    "mean of the last {cycles} cycles at phase {}°",
                    crate::number::short(self.strobe_phase.to_degrees())
                ),
                points: profile
                    .iter()
                    .enumerate()
                    .map(|(k, &(mean, _))| (mean, layer_z(k)))
                    .collect(),
                style: SeriesStyle::Line,
            });
            series.push(Series {
                label: "± one standard deviation".into(),
                points: profile
                    .iter()
                    .enumerate()
                    .flat_map(|(k, &(mean, sd))| [(mean - sd, layer_z(k)), (mean + sd, layer_z(k))])
                    .collect(),
                style: SeriesStyle::Spread,
            });
        } else if let Some((t, profile)) = self.profiles.last() {
            // A run shorter than one cycle: its last instantaneous profile.
            series.push(Series {
                label: format!("t = {t:.2} s"),
                points: profile
                    .iter()
                    .enumerate()
                    .map(|(k, &phi)| (phi, layer_z(k)))
                    .collect(),
                style: SeriesStyle::Line,
            });
        }
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
            let mut series = vec![Series {
                label: "intruder, every output".into(),
                points: self.heights.to_vec(),
                style: SeriesStyle::Line,
            }];
            if !self.strobes.is_empty() {
                series.push(Series {
                    label: format!(
                        "once per cycle, at phase {}°",
                        crate::number::short(self.strobe_phase.to_degrees())
                    ),
                    points: self
                        .strobes
                        .iter()
                        .map(|s| (s.time, s.measured.intruder_height))
                        .collect(),
                    style: SeriesStyle::Points,
                });
            }
            if let Some((fit, d)) = self.rise_rate() {
                // Over the cycles it was fitted to, drawn against their times: the times at
                // which the drive passed the strobe phase, where the points were taken.
                let (c0, c1) = fit.x_range;
                series.push(Series {
                    label: format!(
                        "rise {} diameters per cycle",
                        crate::number::plus_minus(fit.slope / d, fit.slope_error / d)
                    ),
                    points: vec![
                        (self.time_of_cycle(c0), fit.at(c0)),
                        (self.time_of_cycle(c1), fit.at(c1)),
                    ],
                    style: SeriesStyle::Dashed,
                });
            }
            out.push((
                "intruder_height".into(),
                Plot {
                    title: "Intruder height".into(),
                    x_label: "time [s]".into(),
                    y_label: "intruder centre above the moving container [m]".into(),
                    log_y: false,
                    log_x: false,
                    series,
                },
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::fit::fit_line;

    /// A probe of a drive at `frequency` and `phase`, without grains to look at.
    fn probe(frequency: f64, phase: f64, strobe_phase: f64) -> Vibration {
        Vibration {
            gamma: 3.0,
            amplitude: 0.01,
            frequency,
            phase,
            strobe_phase,
            direction: DVec3::Z,
            intruder: None,
            min: DVec3::ZERO,
            max: DVec3::ONE,
            layers: 4,
            start: None,
            heights: AppendLog::new(),
            profiles: AppendLog::new(),
            temperatures: AppendLog::new(),
            strobes: AppendLog::new(),
        }
    }

    #[test]
    fn strobes_fall_once_per_cycle_at_phase_zero_and_see_through_the_oscillation() {
        // A height that rises slowly while it swings with the drive: h(t) = r·t + a·sin(θ + ψ)
        // with θ = 2πft + φ the drive's phase. Sampled at phase 0 of every cycle it reads
        // r·t_k + a·sin ψ: the swing is gone and the rise per cycle is r / f.
        let (f, phi, dt) = (10.0, 1.1, 1e-4);
        let (r, a, psi) = (0.02, 0.015, 0.7);
        let p = probe(f, phi, 0.0);
        let theta = |t: f64| std::f64::consts::TAU * f * t + phi;
        let h = |t: f64| r * t + a * (theta(t) + psi).sin();
        let mut strobes = Vec::new();
        let mut all = Vec::new();
        for step in 1..=30_000 {
            let (before, after) = ((step - 1) as f64 * dt, step as f64 * dt);
            all.push((after * f, h(after)));
            if p.strobe_due(before, after) {
                strobes.push((p.cycle(after).unwrap(), after, h(after)));
            }
        }
        // One per cycle: the drive starts at phase 1.1 rad, so 30 cycles complete by 3 s.
        assert_eq!(strobes.len(), 30);
        for (k, &(cycle, t, _)) in strobes.iter().enumerate() {
            assert_eq!(cycle, k as i64 + 1);
            // Within one step after the drive's phase passed 2π·cycle.
            let exact = (cycle as f64 * std::f64::consts::TAU - phi) / (std::f64::consts::TAU * f);
            assert!(t >= exact && t - exact <= dt + 1e-12, "{t} vs {exact}");
        }
        let fit = fit_line(
            &strobes
                .iter()
                .map(|&(c, _, v)| (c as f64, v))
                .collect::<Vec<_>>(),
        )
        .unwrap();
        assert!(
            (fit.slope - r / f).abs() < 1e-5,
            "{} vs {}",
            fit.slope,
            r / f
        );
        assert!(fit.r_squared > 0.9999);
        // The same fit through every sample carries the swing: a far worse line.
        let continuous = fit_line(&all).unwrap();
        assert!(continuous.r_squared < 0.9, "{}", continuous.r_squared);
    }

    #[test]
    fn strobes_at_another_phase_read_the_swing_there() {
        // Strobed at θₛ = 90°, a swing a·sin(θ + ψ) reads a·sin(90° + ψ) = a·cos ψ each cycle.
        let (f, phi, dt, a, psi) = (7.0, 0.3, 2e-5, 1.0, 0.4);
        let p = probe(f, phi, 90f64.to_radians());
        let theta = |t: f64| std::f64::consts::TAU * f * t + phi;
        let mut reads = Vec::new();
        for step in 1..=20_000 {
            let (before, after) = ((step - 1) as f64 * dt, step as f64 * dt);
            if p.strobe_due(before, after) {
                reads.push(a * (theta(after) + psi).sin());
            }
        }
        // 2.8 cycles' worth of phase from θ = 0.3 rad: crossings of 90° + 360°k, k = 0, 1, 2.
        assert_eq!(reads.len(), 3);
        for r in reads {
            // One step late at most: 360° · 7 Hz · 2e-5 s of phase.
            let tolerance = std::f64::consts::TAU * f * dt;
            assert!((r - a * psi.cos()).abs() <= tolerance, "{r}");
        }
    }

    #[test]
    fn the_fitted_rise_is_drawn_through_the_stroboscopic_points_at_any_strobe_phase() {
        // An intruder rising at r m/s while it swings with the drive, strobed at θₛ = 200°
        // of a drive that starts at phase φ: the k-th strobe falls at
        // t_k = (θₛ − φ + 2πk) / (2πf), where the height reads r·t_k + a·sin(θₛ + ψ). The
        // rise is steep enough that drawing the line θₛ / (2πf) off in time would put it
        // r·θₛ / (2πf) ≈ 0.056 m away from the points.
        let (f, phi, dt) = (10.0, 0.4, 1e-4);
        let strobe_phase = 200f64.to_radians();
        let (r, a, psi, d) = (1.0, 0.003, 0.3, 0.01);
        let mut p = probe(f, phi, strobe_phase);
        let theta = |t: f64| std::f64::consts::TAU * f * t + phi;
        let h = |t: f64| r * t + a * (theta(t) + psi).sin();
        let measured = |height: f64| Measured {
            intruder_height: height,
            temperature: 0.0,
            centre_of_mass: 0.0,
            packing: vec![0.5; 4],
        };
        p.start = Some((h(0.0), d));
        for step in 1..=20_000 {
            let (before, after) = ((step - 1) as f64 * dt, step as f64 * dt);
            p.heights.push((after, h(after)));
            if p.strobe_due(before, after) {
                let cycle = u64::try_from(p.cycle(after).unwrap()).unwrap();
                p.strobes.push(Strobe {
                    cycle,
                    time: after,
                    measured: measured(h(after)),
                });
            }
        }
        assert_eq!(p.strobes.len(), 20);
        let exact_time =
            |k: f64| (strobe_phase - phi + std::f64::consts::TAU * k) / (std::f64::consts::TAU * f);
        for s in p.strobes.iter() {
            // Taken within one step of the analytic strobe time.
            let t = exact_time(s.cycle as f64);
            assert!(s.time >= t && s.time - t <= dt + 1e-12, "{} vs {t}", s.time);
        }
        let plots = p.plots();
        let plot = &plots
            .iter()
            .find(|(stem, _)| stem == "intruder_height")
            .unwrap()
            .1;
        let line = plot
            .series
            .iter()
            .find(|s| s.style == SeriesStyle::Dashed)
            .expect("the fitted rise is drawn");
        let [(t0, h0), (t1, h1)] = line.points[..] else {
            panic!("a line of two ends: {:?}", line.points);
        };
        // Its ends at the analytic times of the first and last strobes, on the analytic
        // stroboscopic height r·t + a·sin(θₛ + ψ).
        let (first, last) = (p.strobes[0].cycle as f64, p.strobes[19].cycle as f64);
        assert!(
            (t0 - exact_time(first)).abs() < 1e-12,
            "{t0} vs {}",
            exact_time(first)
        );
        assert!(
            (t1 - exact_time(last)).abs() < 1e-12,
            "{t1} vs {}",
            exact_time(last)
        );
        let strobed = |t: f64| r * t + a * (strobe_phase + psi).sin();
        // A strobe up to one step late reads up to (r + 2πf·a)·dt higher.
        let tolerance = (r + std::f64::consts::TAU * f * a) * dt;
        assert!(
            (h0 - strobed(t0)).abs() < tolerance,
            "{h0} vs {}",
            strobed(t0)
        );
        assert!(
            (h1 - strobed(t1)).abs() < tolerance,
            "{h1} vs {}",
            strobed(t1)
        );
        // Every stroboscopic point lies on the drawn line.
        let on_line = |t: f64| h0 + (h1 - h0) * (t - t0) / (t1 - t0);
        let points = &plot
            .series
            .iter()
            .find(|s| s.style == SeriesStyle::Points)
            .unwrap()
            .points;
        assert_eq!(points.len(), 20);
        for &(t, height) in points {
            assert!(
                (height - on_line(t)).abs() < 2.0 * tolerance,
                "({t}, {height}) is {} off the line",
                height - on_line(t)
            );
        }
    }

    #[test]
    fn no_drive_no_strobes() {
        let p = probe(0.0, 0.0, 0.0);
        assert!(!p.strobe_due(0.0, 10.0));
    }
}
