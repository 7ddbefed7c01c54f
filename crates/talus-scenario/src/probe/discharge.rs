//! Hopper discharge (§1.2.3): grains whose centre passes below the outlet height are
//! counted and removed; the discharged mass over time gives the flow rate over its steady
//! part (compared with Beverloo's law), a long enough stop of the outflow is a clog, and
//! the force on the funnel walls is sampled for its power spectrum (fig. 1.5).

use serde::{Deserialize, Serialize};
use talus_geom::glam::DVec3;
use talus_sim::GrainId;
use talus_sim::wall::WallId;

use super::{SummaryItems, equivalent_diameter, repose::json_number};
use crate::analysis::fit::fit_line;
use crate::analysis::flow::{Orifice, beverloo_rate, clogged, steady_rate};
use crate::analysis::spectrum::{PowerLaw, WELCH_SEGMENTS, power_law_band, welch_spectrum};
use crate::build::Experiment;
use crate::journal::{AppendLog, Journaled};
use crate::output::csv::Column;
use crate::output::plot::{Plot, Series, SeriesStyle};
use crate::schema::{HopperKind, MeasurementSpec, WallShape};
use crate::walls::v3;

/// Default length of a stop of the outflow that counts as a clog (s).
const DEFAULT_CLOG_WINDOW: f64 = 0.2;
/// Default interval between wall-force samples (s).
const DEFAULT_FORCE_INTERVAL: f64 = 1e-3;
/// Default fraction of the final discharged mass between which the rate is fitted.
const DEFAULT_FIT: (f64, f64) = (0.2, 0.8);
/// Beverloo's constants for a circular orifice (Nedderman 1992): C ≈ 0.58, k ≈ 1.5.
const BEVERLOO_C: f64 = 0.58;
/// See [`BEVERLOO_C`].
const BEVERLOO_K: f64 = 1.5;
/// Solid fraction assumed for the bulk density in Beverloo's law.
const BULK_PACKING: f64 = 0.6;

/// A rate fitted with a lower coefficient of determination is not a steady flow.
const MIN_R_SQUARED: f64 = 0.9;

/// The probe's set-up and what it has recorded.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Discharge {
    outlet_z: f64,
    up: DVec3,
    gate_open: f64,
    clog_window: f64,
    force_walls: Vec<WallId>,
    force_every: u64,
    fit: (f64, f64),
    /// (time, cumulative discharged mass) after each step that discharged a grain.
    events: AppendLog<(f64, f64)>,
    discharged_mass: f64,
    discharged_grains: usize,
    /// Sum of the grains' masses at the start and now (for "hopper empty").
    remaining_grains: usize,
    /// Force on the force walls along "up", one sample every `force_every` steps.
    force_samples: AppendLog<f64>,
    force_dt: f64,
    last_time: f64,
}

impl Discharge {
    /// The probe of a `Discharge` measurement.
    #[must_use]
    pub fn new(spec: &MeasurementSpec, exp: &Experiment) -> Option<Discharge> {
        let MeasurementSpec::Discharge {
            outlet_z,
            gate,
            clog_window,
            force_walls,
            force_sample_interval,
            fit,
        } = spec
        else {
            return None;
        };
        let s = &exp.scenario;
        let gate_open = s
            .walls
            .iter()
            .find(|w| &w.name == gate)
            .and_then(|w| w.removed_at)
            .unwrap_or(0.0);
        let force_walls = exp
            .walls
            .iter()
            .filter(|g| force_walls.contains(&g.name))
            .flat_map(|g| g.parts.iter().copied())
            .collect();
        let dt = s.time.dt;
        let interval = force_sample_interval.unwrap_or(DEFAULT_FORCE_INTERVAL);
        let force_every = ((interval / dt).round() as u64).max(1);
        Some(Discharge {
            outlet_z: *outlet_z,
            up: super::up_direction(s.gravity_vector()),
            gate_open,
            clog_window: clog_window.unwrap_or(DEFAULT_CLOG_WINDOW),
            force_walls,
            force_every,
            fit: fit.unwrap_or(DEFAULT_FIT),
            events: AppendLog::new(),
            discharged_mass: 0.0,
            discharged_grains: 0,
            remaining_grains: 0,
            force_samples: AppendLog::new(),
            force_dt: force_every as f64 * dt,
            last_time: 0.0,
        })
    }

    /// The lists that grow during the run, in a fixed order (see [`crate::journal`]).
    pub fn logs(&self) -> Vec<&dyn Journaled> {
        vec![&self.events, &self.force_samples]
    }

    /// See [`Discharge::logs`].
    pub fn logs_mut(&mut self) -> Vec<&mut dyn Journaled> {
        vec![&mut self.events, &mut self.force_samples]
    }

    /// Columns: discharged mass and grains, force on the walls.
    #[must_use]
    pub fn columns(&self) -> Vec<Column> {
        vec![
            Column::new("discharged_mass", "kg"),
            Column::new("discharged_grains", "1"),
            Column::new("wall_force", "N"),
        ]
    }

    /// Values now, with `grains` grains left in the run.
    pub fn take(&mut self, grains: u64) -> Vec<f64> {
        self.remaining_grains = grains as usize;
        vec![
            self.discharged_mass,
            self.discharged_grains as f64,
            self.force_samples.last().copied().unwrap_or(0.0),
        ]
    }

    /// Removes the grains below the outlet and samples the wall force. In a decomposed
    /// run each process finds its own grains below the outlet and all remove what all
    /// found (a ghost copy elsewhere goes with its grain), in the order of the grains' ids,
    /// so that every process counts the same mass the same way.
    pub fn after_step(&mut self, exp: &mut Experiment) -> Vec<GrainId> {
        let world = &mut exp.world;
        let time = world.time();
        self.last_time = time;
        let below: Vec<(GrainId, f64)> = world
            .grain_positions()
            .filter(|&(_, position, _)| position.z < self.outlet_z)
            .map(|(id, _, mass)| (id, mass))
            .collect();
        let mut below = world.gather_owned(below);
        below.sort_unstable_by_key(|&(id, _)| id);
        let mut removed = Vec::with_capacity(below.len());
        for (id, mass) in below {
            // Not held here (another process's grain, far from this one's): nothing to
            // remove, but the grain is gone from the run.
            let _ = world.remove_grain(id);
            self.discharged_mass += mass;
            self.discharged_grains += 1;
            removed.push(id);
        }
        if !removed.is_empty() {
            self.events.push((time, self.discharged_mass));
        }
        if world.steps() % self.force_every == 0 {
            let loads = world.wall_loads();
            let force: f64 = self
                .force_walls
                .iter()
                .filter_map(|w| loads.get(w.0 as usize))
                .map(|l| -self.up.dot(l.force))
                .sum();
            self.force_samples.push(force);
        }
        self.remaining_grains = world.stats().grains.saturating_sub(removed.len());
        removed
    }

    fn rate(&self) -> Option<(f64, f64)> {
        self.rate_fit().map(|f| (f.slope, f.intercept))
    }

    fn rate_fit(&self) -> Option<crate::analysis::fit::LineFit> {
        // Mass counted from the gate's opening: grains that fell out before it (through a
        // gap, or an outlet set inside the hopper) are not part of the flow.
        let before = self
            .events
            .iter()
            .take_while(|e| e.0 < self.gate_open)
            .last()
            .map_or(0.0, |e| e.1);
        let (t, m): (Vec<f64>, Vec<f64>) = std::iter::once((self.gate_open, 0.0))
            .chain(
                self.events
                    .iter()
                    .filter(|e| e.0 >= self.gate_open)
                    .map(|e| (e.0, e.1 - before)),
            )
            .unzip();
        steady_rate(&t, &m, self.fit.0, self.fit.1)
    }

    fn is_clogged(&self) -> bool {
        let (t, m): (Vec<f64>, Vec<f64>) = self.events.iter().copied().unzip();
        self.remaining_grains > 0
            && clogged(&t, &m, self.gate_open, self.clog_window, self.last_time)
    }

    /// Samples of the wall force after the gate opened.
    /// Samples of the wall force while grains flow (from the gate's opening to the last
    /// discharge), with their linear trend removed: the hopper's emptying would otherwise
    /// fill the lowest frequencies of the spectrum.
    fn flowing_force(&self) -> Vec<f64> {
        let index =
            |t: f64| ((t / self.force_dt).ceil().max(0.0) as usize).min(self.force_samples.len());
        let start = index(self.gate_open);
        let end = self
            .events
            .last()
            .map_or(self.force_samples.len(), |e| index(e.0))
            .max(start);
        let samples = &self.force_samples[start..end];
        let points: Vec<(f64, f64)> = samples
            .iter()
            .enumerate()
            .map(|(i, &f)| (i as f64, f))
            .collect();
        match fit_line(&points) {
            Some(trend) => points.iter().map(|&(i, f)| f - trend.at(i)).collect(),
            None => samples.to_vec(),
        }
    }

    /// Welch's spectrum of the wall force while grains flow.
    fn spectrum(&self) -> Vec<(f64, f64)> {
        welch_spectrum(&self.flowing_force(), self.force_dt, WELCH_SEGMENTS)
    }

    /// The spectrum's power law over the band it holds best on, at least a decade wide.
    fn power_law(&self) -> Option<PowerLaw> {
        power_law_band(&self.spectrum(), 1.0)
    }

    /// `discharge_rate` with its standard error, `discharged_mass`, `clogged`, Beverloo's
    /// estimate, the spectrum's strongest frequency and its power law P ∝ f^−α.
    #[must_use]
    pub fn summary(&self, exp: &Experiment) -> SummaryItems {
        let spectrum = self.spectrum();
        let law = self.power_law();
        let peak = spectrum
            .iter()
            .skip(1)
            .fold(None::<(f64, f64)>, |best, &(f, p)| match best {
                Some((_, bp)) if bp >= p => best,
                _ => Some((f, p)),
            })
            .map(|(f, _)| f);
        vec![
            (
                "discharge_rate".into(),
                json_number(self.rate().map(|r| r.0)),
            ),
            (
                "discharge_rate_err".into(),
                json_number(self.rate_fit().map(|f| f.slope_error)),
            ),
            (
                "discharge_fit_r_squared".into(),
                json_number(self.rate_fit().map(|f| f.r_squared)),
            ),
            (
                "discharged_mass".into(),
                json_number(Some(self.discharged_mass)),
            ),
            (
                "discharged_grains".into(),
                serde_json::Value::from(self.discharged_grains),
            ),
            ("clogged".into(), serde_json::Value::Bool(self.is_clogged())),
            ("beverloo_rate".into(), json_number(beverloo(exp))),
            ("gate_open".into(), json_number(Some(self.gate_open))),
            ("wall_force_peak_frequency".into(), json_number(peak)),
            (
                "wall_force_spectrum_alpha".into(),
                json_number(law.map(|l| l.alpha)),
            ),
            (
                "wall_force_spectrum_alpha_err".into(),
                json_number(law.map(|l| l.alpha_error)),
            ),
            (
                "wall_force_spectrum_band_hz".into(),
                law.map_or(serde_json::Value::Null, |l| {
                    serde_json::json!([json_number(Some(l.band.0)), json_number(Some(l.band.1))])
                }),
            ),
            (
                "wall_force_spectrum_r_squared".into(),
                json_number(law.map(|l| l.r_squared)),
            ),
        ]
    }

    /// Why the measurement cannot be trusted, if it cannot: a gate that never opened
    /// during the run, or a flow rate that could not be fitted or was not steady.
    #[must_use]
    pub fn warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.gate_open >= self.last_time {
            out.push(format!(
                "discharge: the gate opens at t = {} s, but the run ended at t = {} s",
                crate::number::short(self.gate_open),
                crate::number::short(self.last_time)
            ));
            return out;
        }
        match self.rate_fit() {
            None if !self.is_clogged() => out.push(
                "discharge: the flow rate could not be fitted (too few grains were discharged \
                 after the gate opened)"
                    .into(),
            ),
            Some(fit) if fit.r_squared.is_nan() || fit.r_squared < MIN_R_SQUARED => {
                out.push(format!(
                    "discharge: the discharged mass did not grow steadily over the fitted part \
                 (r² = {} < {MIN_R_SQUARED}): the rate is not a steady flow rate",
                    crate::number::short(fit.r_squared)
                ))
            }
            _ => {}
        }
        out
    }

    /// Discharged mass over time with the fitted rate; the wall force and its spectrum.
    #[must_use]
    pub fn plots(&self, _exp: &Experiment) -> Vec<(String, Plot)> {
        let mut mass = vec![Series {
            label: "discharged mass".into(),
            points: std::iter::once((0.0, 0.0))
                .chain(self.events.iter().copied())
                .chain(std::iter::once((self.last_time, self.discharged_mass)))
                .collect(),
            style: SeriesStyle::Line,
        }];
        if let Some(fit) = self.rate_fit() {
            // Over the part of the discharge it was fitted to, and no farther.
            let (t0, t1) = fit.x_range;
            let before = self
                .events
                .iter()
                .take_while(|e| e.0 < self.gate_open)
                .last()
                .map_or(0.0, |e| e.1);
            mass.push(Series {
                label: format!(
                    "steady rate {} kg/s (fitted range)",
                    crate::number::plus_minus(fit.slope, fit.slope_error)
                ),
                points: vec![(t0, fit.at(t0) + before), (t1, fit.at(t1) + before)],
                style: SeriesStyle::Dashed,
            });
        }
        let force: Vec<(f64, f64)> = self
            .force_samples
            .iter()
            .enumerate()
            .map(|(i, &f)| ((i + 1) as f64 * self.force_dt, f))
            .collect();
        let spectrum: Vec<(f64, f64)> = self.spectrum().into_iter().skip(1).collect();
        let mut spectrum_series = vec![Series {
            label: format!("Welch, {WELCH_SEGMENTS} Hann segments"),
            points: spectrum,
            style: SeriesStyle::Line,
        }];
        if let Some(law) = self.power_law() {
            let (f0, f1) = law.band;
            let at = |f: f64| 10f64.powf(law.fit.at(f.log10()));
            spectrum_series.push(Series {
                label: format!(
                    "f^-α, α = {} over {}–{} Hz (r² = {})",
                    crate::number::plus_minus(law.alpha, law.alpha_error),
                    crate::number::significant(f0, 3),
                    crate::number::significant(f1, 3),
                    crate::number::significant(law.r_squared, 3)
                ),
                points: vec![(f0, at(f0)), (f1, at(f1))],
                style: SeriesStyle::Dashed,
            });
        }
        vec![
            (
                "discharged_mass".into(),
                Plot {
                    title: "Discharged mass".into(),
                    x_label: "time [s]".into(),
                    y_label: "mass [kg]".into(),
                    log_y: false,
                    log_x: false,
                    series: mass,
                },
            ),
            (
                "wall_force".into(),
                Plot {
                    title: "Vertical force on the funnel walls".into(),
                    x_label: "time [s]".into(),
                    y_label: "force [N]".into(),
                    log_y: false,
                    log_x: false,
                    series: vec![Series {
                        label: "force".into(),
                        points: force,
                        style: SeriesStyle::Line,
                    }],
                },
            ),
            (
                "force_spectrum".into(),
                Plot {
                    title: "Power spectrum of the wall force during discharge (detrended)".into(),
                    x_label: "frequency [Hz]".into(),
                    y_label: "power [N^2]".into(),
                    log_y: true,
                    log_x: true,
                    series: spectrum_series,
                },
            ),
        ]
    }
}

/// Beverloo's estimate of the mass flow rate for the scenario's first hopper, its grains'
/// mean equivalent diameter and density, at a solid fraction of 0.6.
fn beverloo(exp: &Experiment) -> Option<f64> {
    let s = &exp.scenario;
    let (orifice, shape) = s.walls.iter().find_map(|w| match &w.shape {
        WallShape::Hopper {
            orifice,
            depth,
            kind,
            ..
        } => Some((
            *orifice,
            match kind {
                HopperKind::Wedge => Orifice::Slot { length: *depth },
                HopperKind::Pyramid => Orifice::Circular,
            },
        )),
        _ => None,
    })?;
    let pop = exp.populations.first()?;
    let shapes = exp.world.shapes();
    let (mut volume, mut n) = (0.0, 0usize);
    for id in &pop.shapes {
        if let Ok(shape) = shapes.get(*id) {
            volume += shape.volume;
            n += 1;
        }
    }
    if n == 0 {
        return None;
    }
    let d = equivalent_diameter(volume / n as f64);
    let density = exp.world.materials().get(pop.material.0 as usize)?.density;
    Some(beverloo_rate(
        BULK_PACKING * density,
        v3(s.gravity).length(),
        orifice,
        d,
        BEVERLOO_C,
        BEVERLOO_K,
        shape,
    ))
}
