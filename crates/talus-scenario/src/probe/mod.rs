//! Measurements during a run ("probes"): each turns the grains at an output time into
//! columns of the time series, may act after every step (the hopper's outlet removes
//! grains), and at the end gives its numbers for the summary and its plots.
//!
//! A probe's state is plain data, saved in checkpoints with the rest of the run.
//! * [`repose`]: angle of repose of a pile's free surface (§1.2.1);
//! * [`vibration`]: vibrated bed, layer packing, granular temperature, intruder (§1.2.2);
//! * [`discharge`]: hopper outflow, clogging, wall force and its spectrum (§1.2.3);
//! * [`stability`]: maximum angle of stability and angle of repose of a fed heap (§1.2.1);
//! * [`transport`]: transport on a vibrating conveyor (§1.2.2, fig. 1.4);
//! * [`chute`]: steady flow down a rough incline, periodic along and across it.

pub mod census;
pub mod chute;
pub mod discharge;
pub mod repose;
pub mod stability;
pub mod transport;
pub mod vibration;

use serde::{Deserialize, Serialize};
use talus_geom::glam::DVec3;
use talus_sim::{GrainId, GrainState};

pub use census::{Census, Partial};

use crate::build::Experiment;
use crate::journal::Journaled;
use crate::output::csv::Column;
use crate::output::plot::Plot;
use crate::schema::MeasurementSpec;

/// One grain at an output time.
#[derive(Debug, Clone, Copy)]
pub struct GrainRecord {
    /// Its state.
    pub state: GrainState,
    /// Index of its population.
    pub population: usize,
    /// Its volume.
    pub volume: f64,
    /// Its highest point along "up" (against gravity).
    pub top: f64,
}

/// The grains at an output time.
#[derive(Debug, Clone)]
pub struct Sample {
    /// Simulated time.
    pub time: f64,
    /// Unit vector against gravity (+z without gravity).
    pub up: DVec3,
    /// Every grain, in id order.
    pub grains: Vec<GrainRecord>,
}

impl Sample {
    /// Each grain's highest point: (distance along `direction`, height).
    #[must_use]
    pub fn tops_along(&self, direction: DVec3) -> Vec<(f64, f64)> {
        self.grains
            .iter()
            .map(|g| (direction.dot(g.state.pose.position), g.top))
            .collect()
    }
}

/// A measurement's state.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum Probe {
    /// Angle of repose.
    Repose(repose::Repose),
    /// Vibrated bed.
    Vibration(vibration::Vibration),
    /// Hopper discharge.
    Discharge(discharge::Discharge),
    /// Maximum angle of stability.
    Stability(stability::Stability),
    /// Conveyor transport.
    Transport(transport::Transport),
    /// Chute flow.
    Chute(chute::Chute),
}

/// What a probe adds to the summary: named JSON values.
pub type SummaryItems = Vec<(String, serde_json::Value)>;

impl Probe {
    /// The probe of a measurement in a built experiment (each kind's constructor accepts
    /// exactly its own variant, which this match hands it).
    #[must_use]
    pub fn new(spec: &MeasurementSpec, exp: &Experiment) -> Option<Probe> {
        match spec {
            MeasurementSpec::AngleOfRepose { .. } => {
                repose::Repose::new(spec, exp).map(Probe::Repose)
            }
            MeasurementSpec::Vibration { .. } => {
                vibration::Vibration::new(spec, exp).map(Probe::Vibration)
            }
            MeasurementSpec::Discharge { .. } => {
                discharge::Discharge::new(spec, exp).map(Probe::Discharge)
            }
            MeasurementSpec::MaxStability { .. } => {
                stability::Stability::new(spec, exp).map(Probe::Stability)
            }
            MeasurementSpec::Transport { .. } => {
                transport::Transport::new(spec, exp).map(Probe::Transport)
            }
            MeasurementSpec::ChuteFlow { .. } => chute::Chute::new(spec, exp).map(Probe::Chute),
        }
    }

    /// The lists it grows during the run, in a fixed order (see [`crate::journal`]).
    pub fn logs(&self) -> Vec<&dyn Journaled> {
        match self {
            Probe::Repose(p) => p.logs(),
            Probe::Vibration(p) => p.logs(),
            Probe::Discharge(p) => p.logs(),
            Probe::Stability(p) => p.logs(),
            Probe::Transport(p) => p.logs(),
            Probe::Chute(p) => p.logs(),
        }
    }

    /// See [`Probe::logs`].
    pub fn logs_mut(&mut self) -> Vec<&mut dyn Journaled> {
        match self {
            Probe::Repose(p) => p.logs_mut(),
            Probe::Vibration(p) => p.logs_mut(),
            Probe::Discharge(p) => p.logs_mut(),
            Probe::Stability(p) => p.logs_mut(),
            Probe::Transport(p) => p.logs_mut(),
            Probe::Chute(p) => p.logs_mut(),
        }
    }

    /// Its columns of the time series.
    #[must_use]
    pub fn columns(&self) -> Vec<Column> {
        match self {
            Probe::Repose(p) => p.columns(),
            Probe::Vibration(p) => p.columns(),
            Probe::Discharge(p) => p.columns(),
            Probe::Stability(p) => p.columns(),
            Probe::Transport(p) => p.columns(),
            Probe::Chute(p) => p.columns(),
        }
    }

    /// What the grains of `sample` (one process's, or all) give it at an output time; the
    /// processes' parts merged ([`Partial::merge`]) give what all grains give.
    #[must_use]
    pub fn partial(&self, sample: &Sample) -> Partial {
        match self {
            Probe::Repose(p) => Partial::Repose(p.partial(sample)),
            Probe::Vibration(p) => Partial::Vibration(p.partial(sample, None)),
            Probe::Discharge(_) => Partial::Discharge(sample.grains.len() as u64),
            Probe::Stability(p) => Partial::Stability(p.partial(sample)),
            Probe::Transport(p) => Partial::Transport(p.partial(sample)),
            Probe::Chute(p) => Partial::Chute(p.partial(sample)),
        }
    }

    /// What the grains of `sample` give a second pass that needs the first's totals over
    /// all grains, `first` (the vibrated bed's granular temperature about the bed's mean
    /// velocity); `None` when the probe needs none.
    #[must_use]
    pub fn second_partial(&self, sample: &Sample, first: &Partial) -> Option<Partial> {
        match (self, first) {
            (Probe::Vibration(p), Partial::Vibration(bed)) if bed.needs_second_pass() => {
                Some(Partial::Vibration(p.partial(sample, Some(bed))))
            }
            _ => None,
        }
    }

    /// Its values at output time `time`, one per column, from what all grains give
    /// (`total`, the processes' partials merged).
    pub fn take(&mut self, time: f64, total: &Partial) -> Vec<f64> {
        match (self, total) {
            (Probe::Repose(p), Partial::Repose(t)) => p.take(time, t),
            (Probe::Vibration(p), Partial::Vibration(t)) => p.take(time, t),
            (Probe::Discharge(p), Partial::Discharge(grains)) => p.take(*grains),
            (Probe::Stability(p), Partial::Stability(t)) => p.take(t),
            (Probe::Transport(p), Partial::Transport(t)) => p.take(time, t),
            (Probe::Chute(p), Partial::Chute(t)) => p.take(time, t),
            (p, _) => vec![f64::NAN; p.columns().len()],
        }
    }

    /// The scene is quiet at time `time` and a dripped grain is about to be released (see
    /// [`crate::schema::Placement::Drip`]); `total` is what all grains give.
    pub fn before_release(&mut self, time: f64, total: &Partial) {
        if let (Probe::Stability(p), Partial::Stability(heap)) = (self, total) {
            p.before_release(time, heap);
        }
    }

    /// Whether the probe takes a stroboscopic sample after the step from time `before` to
    /// `after` (a vibrated bed, once per cycle of its drive).
    #[must_use]
    pub fn strobe_due(&self, before: f64, after: f64) -> bool {
        match self {
            Probe::Vibration(p) => p.strobe_due(before, after),
            _ => false,
        }
    }

    /// Takes the stroboscopic sample [`Probe::strobe_due`] asked for at time `time`, from
    /// what all grains give (`total`).
    pub fn strobe(&mut self, time: f64, total: &Partial) {
        if let (Probe::Vibration(p), Partial::Vibration(bed)) = (self, total) {
            p.strobe(time, bed);
        }
    }

    /// Tables it writes beside the time series, as (file stem, table).
    #[must_use]
    pub fn tables(&self) -> Vec<(String, crate::output::csv::TimeSeries)> {
        match self {
            Probe::Vibration(p) => vec![(
                crate::output::run_dir::STROBE_FILE
                    .trim_end_matches(".csv")
                    .into(),
                p.strobe_table(),
            )],
            Probe::Chute(p) => vec![(
                crate::output::run_dir::CHUTE_PROFILE_FILE
                    .trim_end_matches(".csv")
                    .into(),
                p.profile_table(),
            )],
            _ => Vec::new(),
        }
    }

    /// Work after every step; returns the grains it removed.
    pub fn after_step(&mut self, exp: &mut Experiment) -> Vec<GrainId> {
        match self {
            Probe::Discharge(p) => p.after_step(exp),
            Probe::Repose(_)
            | Probe::Vibration(_)
            | Probe::Stability(_)
            | Probe::Transport(_)
            | Probe::Chute(_) => Vec::new(),
        }
    }

    /// Its results for the summary.
    #[must_use]
    pub fn summary(&self, exp: &Experiment) -> SummaryItems {
        match self {
            Probe::Repose(p) => p.summary(),
            Probe::Vibration(p) => p.summary(),
            Probe::Discharge(p) => p.summary(exp),
            Probe::Stability(p) => p.summary(),
            Probe::Transport(p) => p.summary(),
            Probe::Chute(p) => p.summary(),
        }
    }

    /// Why its results cannot be trusted, if they cannot (for the summary's warnings).
    #[must_use]
    pub fn warnings(&self) -> Vec<String> {
        match self {
            Probe::Repose(p) => p.warnings(),
            Probe::Vibration(p) => p.warnings(),
            Probe::Discharge(p) => p.warnings(),
            Probe::Stability(p) => p.warnings(),
            Probe::Transport(p) => p.warnings(),
            Probe::Chute(p) => p.warnings(),
        }
    }

    /// Its plots, with file stems.
    #[must_use]
    pub fn plots(&self, exp: &Experiment) -> Vec<(String, Plot)> {
        match self {
            Probe::Repose(p) => p.plots(),
            Probe::Vibration(p) => p.plots(),
            Probe::Discharge(p) => p.plots(exp),
            Probe::Stability(p) => p.plots(),
            Probe::Transport(p) => p.plots(),
            Probe::Chute(p) => p.plots(),
        }
    }
}

/// Unit vector against gravity; +z when there is none.
#[must_use]
pub fn up_direction(gravity: DVec3) -> DVec3 {
    (-gravity).try_normalize().unwrap_or(DVec3::Z)
}

/// Diameter of the sphere of equal volume.
#[must_use]
pub fn equivalent_diameter(volume: f64) -> f64 {
    2.0 * (0.75 * volume / std::f64::consts::PI).cbrt()
}

/// Kinetic energy of a grain, translation plus rotation.
#[must_use]
pub fn kinetic_energy(state: &GrainState) -> f64 {
    let omega_body = state.pose.rotation.conjugate() * state.angular_velocity;
    0.5 * state.inertia.mass * state.velocity.length_squared()
        + 0.5 * (state.inertia.principal * omega_body * omega_body).element_sum()
}
