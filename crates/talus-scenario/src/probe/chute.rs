//! Steady flow down a rough incline, periodic along and across the flow
//! ([`crate::analysis::chute`]): at every output time the grains' mean velocity down the
//! incline and the bed's height; over the window, the profiles of velocity and solid
//! fraction across the depth, the flow depth, the Froude number, the Bagnold profile fitted
//! to the velocity, and whether the flow is steady.

use serde::{Deserialize, Serialize};
use talus_geom::glam::DVec3;
use talus_sim::exact_sum::ExactSum;

use super::{Sample, SummaryItems, repose::json_number};
use crate::analysis::chute::{
    BagnoldFit, FlowState, Layer, MAX_LAYERS, ProfileSums, bagnold_fit, bagnold_inertial_number,
    flow_depth, flow_state,
};
use crate::analysis::repose::higher;
use crate::build::Experiment;
use crate::journal::{AppendLog, Journaled};
use crate::output::csv::{Column, TimeSeries};
use crate::output::plot::{Plot, Series, SeriesStyle};
use crate::schema::{InclineRamp, MeasurementSpec, WallShape};

/// Mean speed, in units of √(g d), above which a bed on a steepening incline counts as
/// flowing.
pub const START_SPEED: f64 = 0.1;

/// What some of the grains give the measurement (one process's, or all), summed exactly so
/// that the sums merged over the processes are those of all grains, whatever the split.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ChuteSums {
    grains: u64,
    /// Σ velocity down the incline, and the highest centre above the base.
    velocity: ExactSum,
    top: Option<f64>,
    /// Σ equal-volume diameters.
    diameters: ExactSum,
    /// In the window: the profile's sums of this sample, and Σ 2r of the equal-volume
    /// spheres the profile counts.
    window: Option<(ProfileSums, ExactSum)>,
}

impl ChuteSums {
    /// Takes in the sums of other grains.
    pub fn merge(&mut self, other: &ChuteSums) {
        self.grains += other.grains;
        self.velocity.merge(&other.velocity);
        self.top = match (self.top, other.top) {
            (Some(a), Some(b)) => Some(higher(a, b)),
            (a, b) => a.or(b),
        };
        self.diameters.merge(&other.diameters);
        match (&mut self.window, &other.window) {
            (Some((profile, d)), Some((their_profile, their_d))) => {
                profile.merge(their_profile);
                d.merge(their_d);
            }
            (None, Some(theirs)) => self.window = Some(theirs.clone()),
            _ => {}
        }
    }
}

/// The probe's set-up and what it has seen.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Chute {
    window: (f64, f64),
    /// Height of the base z is measured from (m).
    base: f64,
    /// Area of the periodic box's base (m²).
    area: f64,
    /// Incline (degrees, as given) and the magnitude of gravity (m/s²).
    incline_deg: f64,
    g: f64,
    /// The incline's steepening, if any, and the incline it starts from (degrees).
    ramp: Option<InclineRamp>,
    start_deg: f64,
    /// Under a ramp: the time and incline (degrees) at which the bed started to flow.
    started: Option<(f64, f64)>,
    /// Sums of the profiles over the samples in the window.
    sums: ProfileSums,
    /// Sum of the grains' equal-volume diameters and their count over the window's
    /// samples: the mean diameter d.
    diameter_sum: f64,
    grain_samples: u64,
    /// (time, mean velocity down the incline, highest grain centre above the base) per
    /// sample.
    samples: AppendLog<(f64, f64, f64)>,
}

impl Chute {
    /// The probe of a `ChuteFlow` measurement.
    #[must_use]
    pub fn new(spec: &MeasurementSpec, exp: &Experiment) -> Option<Chute> {
        let MeasurementSpec::ChuteFlow { window, base, bin } = spec else {
            return None;
        };
        let s = &exp.scenario;
        let length = |faces: Option<(f64, f64)>| faces.map_or(f64::NAN, |(lo, hi)| hi - lo);
        let base = base.unwrap_or_else(|| default_base(s));
        let bin = bin.unwrap_or(0.25 * crate::validate::smallest_grain_diameter(s));
        Some(Chute {
            window: *window,
            base,
            area: length(s.periodic.x) * length(s.periodic.y),
            // Under a ramp, the incline of the window's end.
            incline_deg: s.incline_at(window.1).unwrap_or(0.0),
            g: s.gravity_vector().length(),
            ramp: s.incline_ramp,
            start_deg: s.incline_deg.unwrap_or(0.0),
            started: None,
            sums: ProfileSums::new(bin),
            diameter_sum: 0.0,
            grain_samples: 0,
            samples: AppendLog::new(),
        })
    }

    /// The lists that grow during the run (see [`crate::journal`]).
    pub fn logs(&self) -> Vec<&dyn Journaled> {
        vec![&self.samples]
    }

    /// See [`Chute::logs`].
    pub fn logs_mut(&mut self) -> Vec<&mut dyn Journaled> {
        vec![&mut self.samples]
    }

    /// Columns: the mean velocity down the incline and the bed's top.
    #[must_use]
    pub fn columns(&self) -> Vec<Column> {
        vec![
            Column::new("chute_mean_velocity", "m/s"),
            Column::new("chute_top", "m"),
        ]
    }

    /// What the grains of `sample` (one process's, or all) give the measurement; in the
    /// window, their profile too.
    #[must_use]
    pub fn partial(&self, sample: &Sample) -> ChuteSums {
        let in_window = sample.time >= self.window.0 && sample.time <= self.window.1;
        let mut sums = ChuteSums {
            window: in_window.then(|| (ProfileSums::new(self.sums.bin), ExactSum::new())),
            ..ChuteSums::default()
        };
        for g in &sample.grains {
            let z = g.state.pose.position.z - self.base;
            let vx = g.state.velocity.dot(DVec3::X);
            sums.grains += 1;
            sums.velocity.add(vx);
            sums.top = Some(sums.top.map_or(z, |top| higher(top, z)));
            sums.diameters.add(super::equivalent_diameter(g.volume));
            if let Some((profile, diameters)) = &mut sums.window {
                let r = (0.75 * g.volume / std::f64::consts::PI).cbrt();
                profile.add_grain(z, r, vx);
                diameters.add(2.0 * r);
            }
        }
        sums
    }

    /// Values at time `time` from the sums over all grains; in the window, the profiles
    /// take the sample too.
    pub fn take(&mut self, time: f64, total: &ChuteSums) -> Vec<f64> {
        if let Some((profile, diameters)) = &total.window {
            self.sums.merge(profile);
            self.sums.samples += 1;
            self.diameter_sum += diameters.value();
            self.grain_samples += total.grains;
        }
        let n = total.grains as f64;
        let v = if total.grains == 0 {
            f64::NAN
        } else {
            total.velocity.value() / n
        };
        let top = total.top.unwrap_or(f64::NAN);
        self.samples.push((time, v, top));
        // Under a ramp, the bed starts to flow when its mean velocity first exceeds a tenth
        // of √(g d) after the ramp began.
        if let Some(ramp) = self.ramp
            && self.started.is_none()
            && time > ramp.from
            && total.grains > 0
        {
            let d = total.diameters.value() / n;
            if v > START_SPEED * (self.g * d).sqrt() {
                self.started = Some((time, ramp.angle(self.start_deg, time)));
            }
        }
        vec![v, top]
    }

    /// Mean grain diameter over the window (NaN before it).
    fn diameter(&self) -> f64 {
        self.diameter_sum / self.grain_samples as f64
    }

    fn profile(&self) -> Vec<Layer> {
        self.sums.profile(self.area)
    }

    fn window_velocities(&self) -> Vec<(f64, f64)> {
        self.samples
            .iter()
            .filter(|s| s.0 >= self.window.0 && s.0 <= self.window.1)
            .map(|s| (s.0, s.1))
            .collect()
    }

    /// The flow's numbers over the window.
    fn results(&self) -> ChuteResults {
        let layers = self.profile();
        let d = self.diameter();
        let velocities = self.window_velocities();
        let mean = if velocities.is_empty() {
            f64::NAN
        } else {
            velocities.iter().map(|s| s.1).sum::<f64>() / velocities.len() as f64
        };
        let (depth, phi) = flow_depth(&layers).unwrap_or((f64::NAN, f64::NAN));
        let fit = bagnold_fit(&layers, depth);
        ChuteResults {
            state: flow_state(&velocities, d, self.g),
            mean_velocity: mean,
            depth,
            solid_fraction: phi,
            froude: mean / (self.g * depth * self.incline_deg.to_radians().cos()).sqrt(),
            diameter: d,
            inertial_number: fit.map_or(f64::NAN, |f| {
                let angle = self.incline_deg.to_radians();
                bagnold_inertial_number(f.bagnold.slope, d, phi, self.g, angle)
            }),
            fit,
        }
    }

    /// The flow state, mean velocity, depth, solid fraction, Froude number and the Bagnold
    /// fit.
    #[must_use]
    pub fn summary(&self) -> SummaryItems {
        let r = self.results();
        let n = |x: f64| json_number(Some(x));
        let fit = r.fit;
        let line = |f: Option<crate::analysis::LineFit>| -> serde_json::Value {
            serde_json::json!({
                "slope": json_number(f.map(|f| f.slope)),
                "slope_error": json_number(f.map(|f| f.slope_error)),
                "intercept": json_number(f.map(|f| f.intercept)),
                "intercept_error": json_number(f.map(|f| f.intercept_error)),
                "r_squared": json_number(f.map(|f| f.r_squared)),
                "layers": f.map_or(0, |f| f.points),
            })
        };
        vec![
            ("incline_deg".into(), n(self.incline_deg)),
            (
                "theta_start_deg".into(),
                json_number(self.started.map(|s| s.1)),
            ),
            (
                "flow_start_time_s".into(),
                json_number(self.started.map(|s| s.0)),
            ),
            (
                "flow_state".into(),
                r.state
                    .map_or(serde_json::Value::Null, |s| s.0.name().into()),
            ),
            (
                "mean_velocity_change".into(),
                json_number(r.state.map(|s| s.1)),
            ),
            ("mean_velocity_m_s".into(), n(r.mean_velocity)),
            ("flow_depth_m".into(), n(r.depth)),
            ("flow_depth_diameters".into(), n(r.depth / r.diameter)),
            ("solid_fraction".into(), n(r.solid_fraction)),
            ("froude_number".into(), n(r.froude)),
            ("mean_diameter_m".into(), n(r.diameter)),
            (
                "bagnold".into(),
                serde_json::json!({
                    "profile": "v(z) = v_s + A (h^1.5 - (h - z)^1.5)",
                    "amplitude_A": json_number(fit.map(|f| f.bagnold.slope)),
                    "amplitude_A_err": json_number(fit.map(|f| f.bagnold.slope_error)),
                    "slip_velocity_m_s": json_number(fit.map(|f| f.bagnold.intercept)),
                    "slip_velocity_err_m_s": json_number(fit.map(|f| f.bagnold.intercept_error)),
                    "r_squared": json_number(fit.map(|f| f.bagnold.r_squared)),
                    "inertial_number": n(r.inertial_number),
                    "linear_fit": line(fit.map(|f| f.linear)),
                }),
            ),
            (
                "window_s".into(),
                serde_json::json!([self.window.0, self.window.1]),
            ),
        ]
    }

    /// Why the numbers cannot be trusted: a window the run did not reach, a flow that is
    /// not steady, a profile too thin to fit.
    #[must_use]
    pub fn warnings(&self) -> Vec<String> {
        let r = self.results();
        let mut out = Vec::new();
        let reach = MAX_LAYERS as f64 * self.sums.bin;
        if self
            .samples
            .iter()
            .any(|&(t, _, top)| t >= self.window.0 && t <= self.window.1 && top > reach)
        {
            out.push(format!(
                "chute flow: grains lay more than {MAX_LAYERS} layers ({} m) above the base in \
                 the window; the profiles leave them out (a base nearer the bed, or a thicker bin)",
                crate::number::short(reach)
            ));
        }
        if let Some(ramp) = self.ramp
            && self.started.is_none()
        {
            out.push(format!(
                "chute flow: the bed did not start to flow on the incline steepened to {}° \
                 (a steeper to_deg, or a longer run): no theta_start_deg",
                crate::number::short(ramp.to_deg)
            ));
        }
        match r.state {
            None => out.push(format!(
                "chute flow: the window ({}, {}) s holds fewer than three samples: the run ended \
                 before it, or output_interval is too long",
                crate::number::short(self.window.0),
                crate::number::short(self.window.1)
            )),
            Some((state @ (FlowState::Accelerating | FlowState::Decelerating), change)) => {
                out.push(format!(
                    "chute flow: the mean velocity changed by {:+.0} % over the window: the flow \
                     is {}, not steady (a later window, a longer run, or this incline has no \
                     steady flow at this depth)",
                    100.0 * change,
                    state.name()
                ));
            }
            Some(_) => {}
        }
        if r.fit.is_none() && r.state.is_some_and(|s| s.0 != FlowState::Stopped) {
            out.push(
                "chute flow: fewer than three layers below the flow depth: no Bagnold fit (a \
                 thinner bin, or a deeper bed)"
                    .into(),
            );
        }
        out
    }

    /// The profile table: per layer, its height, solid fraction and mean velocity.
    #[must_use]
    pub fn profile_table(&self) -> TimeSeries {
        let mut table = TimeSeries::new(vec![
            Column::new("z", "m"),
            Column::new("solid_fraction", "1"),
            Column::new("velocity", "m/s"),
        ]);
        for l in self.profile() {
            table
                .push(vec![l.z, l.solid_fraction, l.velocity])
                .expect("a profile row has one value per column");
        }
        table
    }

    /// The velocity profile with the Bagnold fit, the solid fraction profile, and the mean
    /// velocity against time.
    #[must_use]
    pub fn plots(&self) -> Vec<(String, Plot)> {
        let r = self.results();
        let layers = self.profile();
        let mut velocity = vec![Series {
            label: "measured (window mean)".into(),
            points: layers.iter().map(|l| (l.velocity, l.z)).collect(),
            style: SeriesStyle::Points,
        }];
        if let Some(fit) = r.fit {
            let h = r.depth;
            let (a, vs) = (fit.bagnold.slope, fit.bagnold.intercept);
            velocity.push(Series {
                label: format!(
                    "Bagnold v_s + A(h^1.5 − (h−z)^1.5), r² = {:.3}",
                    fit.bagnold.r_squared
                ),
                points: (0..=40)
                    .map(|k| {
                        let z = h * k as f64 / 40.0;
                        (vs + a * (h.powf(1.5) - (h - z).powf(1.5)), z)
                    })
                    .collect(),
                style: SeriesStyle::Line,
            });
            velocity.push(Series {
                label: format!("straight line, r² = {:.3}", fit.linear.r_squared),
                points: [0.0, h]
                    .iter()
                    .map(|&z| (fit.linear.intercept + fit.linear.slope * z, z))
                    .collect(),
                style: SeriesStyle::Dashed,
            });
        }
        let degrees = self.incline_deg;
        let fraction = vec![Series {
            label: format!("flow depth h = {:.4} m", r.depth),
            points: layers.iter().map(|l| (l.solid_fraction, l.z)).collect(),
            style: SeriesStyle::Line,
        }];
        let over_time = vec![Series {
            label: "all grains".into(),
            points: self.samples.iter().map(|s| (s.0, s.1)).collect(),
            style: SeriesStyle::Line,
        }];
        vec![
            (
                "chute_velocity_profile".into(),
                Plot {
                    title: format!("Velocity across the depth (θ = {degrees:.1}°)"),
                    x_label: "velocity down the incline [m/s]".into(),
                    y_label: "height above the base [m]".into(),
                    log_x: false,
                    log_y: false,
                    series: velocity,
                },
            ),
            (
                "chute_solid_fraction".into(),
                Plot {
                    title: format!("Solid fraction across the depth (θ = {degrees:.1}°)"),
                    x_label: "solid fraction".into(),
                    y_label: "height above the base [m]".into(),
                    log_x: false,
                    log_y: false,
                    series: fraction,
                },
            ),
            (
                "chute_mean_velocity".into(),
                Plot {
                    title: format!("Mean velocity down the incline (θ = {degrees:.1}°)"),
                    x_label: "time [s]".into(),
                    y_label: "mean velocity [m/s]".into(),
                    log_x: false,
                    log_y: false,
                    series: over_time,
                },
            ),
        ]
    }
}

/// The numbers of a chute flow over its window.
struct ChuteResults {
    state: Option<(FlowState, f64)>,
    mean_velocity: f64,
    depth: f64,
    solid_fraction: f64,
    froude: f64,
    diameter: f64,
    inertial_number: f64,
    fit: Option<BagnoldFit>,
}

/// The base of a chute: the plane of its rough base, or else the highest floor plane
/// (normal +z), or else z = 0.
fn default_base(s: &crate::schema::Scenario) -> f64 {
    let rough = s.walls.iter().find_map(|w| match &w.shape {
        WallShape::RoughBase { min, .. } => Some(min.2),
        _ => None,
    });
    rough
        .or_else(|| {
            s.walls
                .iter()
                .filter_map(|w| match &w.shape {
                    WallShape::Plane { point, normal } if normal.0 == 0.0 && normal.1 == 0.0 => {
                        (normal.2 > 0.0).then_some(point.2)
                    }
                    _ => None,
                })
                .reduce(f64::max)
        })
        .unwrap_or(0.0)
}
