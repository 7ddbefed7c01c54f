//! Steady flow down a rough incline (GDR MiDi, Eur. Phys. J. E 14, 341, 2004; Silbert et
//! al., Phys. Rev. E 64, 051302, 2001): profiles across the depth, the flow depth, the
//! Bagnold profile, and the flow rule of Pouliquen (Phys. Fluids 11, 542, 1999).
//!
//! * Profiles: each grain counted as its sphere of equal volume, sliced by the layers it
//!   spans, so that the solid fraction of a layer thinner than a grain is the fraction of
//!   its volume the grains fill, and the velocity of a layer the volume-weighted mean of
//!   theirs.
//! * Flow depth h: where the solid fraction falls to half of the bed's (the free surface
//!   as a density profile shows it).
//! * Bagnold profile: for a dense flow on a rough base with a local rheology μ(I), the
//!   shear rate grows like the square root of the depth below the surface, and the
//!   velocity is `v(z) = v_s + A [h^{3/2} − (h − z)^{3/2}]`, with
//!   `A = (2/3) I √(φ g cos θ) / d` (GDR MiDi §4.1, eq. 8; Silbert et al. eq. 11): a
//!   straight-line fit of v against `h^{3/2} − (h − z)^{3/2}` gives A, the slip `v_s`,
//!   and I.
//! * Flow rule: flows stop below a depth `h_stop(θ)`; above it the Froude number
//!   `Fr = ū / √(g h cos θ)` grows linearly with `h / h_stop(θ)`: `Fr = β h / h_stop`
//!   (Pouliquen 1999, eq. 4; β ≈ 0.14 for glass beads, 0.65 ± 0.1 is reported for sand
//!   and angular materials by Forterre & Pouliquen, Annu. Rev. Fluid Mech. 40, 1, 2008).

use serde::{Deserialize, Serialize};
use talus_sim::exact_sum::ExactSum;

use super::fit::{LineFit, fit_line};

/// Volume of the slice between heights `z0 < z1` of a sphere of radius `r` centred at
/// height `c`.
#[must_use]
pub fn sphere_slice(c: f64, r: f64, z0: f64, z1: f64) -> f64 {
    let (a, b) = ((z0 - c).clamp(-r, r), (z1 - c).clamp(-r, r));
    // ∫_a^b π (r² − u²) du.
    std::f64::consts::PI * (r * r * (b - a) - (b * b * b - a * a * a) / 3.0)
}

/// Most layers of a profile: a thousand grain diameters at the finest bin allowed.
pub const MAX_LAYERS: usize = 100_000;

/// Sums over the samples of a window, per layer of thickness `bin` above the base: the
/// grains' volume in the layer and its product with their velocity down the incline. Each
/// sum is exact, so that the sums of two sets of grains merged are those of their union, to
/// the bit, whatever the split (a decomposed run's processes each sum their own grains).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ProfileSums {
    /// Thickness of a layer (m).
    pub bin: f64,
    /// Σ volume per layer (m³).
    pub volume: Vec<ExactSum>,
    /// Σ volume · velocity per layer (m⁴/s).
    pub flux: Vec<ExactSum>,
    /// Samples summed.
    pub samples: u64,
}

impl ProfileSums {
    /// Empty sums over layers of thickness `bin`.
    #[must_use]
    pub fn new(bin: f64) -> Self {
        ProfileSums {
            bin,
            ..ProfileSums::default()
        }
    }

    /// Makes room for layers up to `last`.
    fn reach(&mut self, last: usize) {
        if last >= self.volume.len() {
            self.volume.resize(last + 1, ExactSum::new());
            self.flux.resize(last + 1, ExactSum::new());
        }
    }

    /// Adds one grain: centre at height `z` above the base, equal-volume radius `r`,
    /// velocity `v` down the incline. Parts below the base are left out.
    /// Parts more than [`MAX_LAYERS`] layers above the base are left out too: a grain that
    /// flew far above the bed (or a base far below it) must not make the profile take all
    /// memory.
    pub fn add_grain(&mut self, z: f64, r: f64, v: f64) {
        if !(z.is_finite() && r > 0.0 && v.is_finite()) {
            return;
        }
        let layer = |h: f64| (h.max(0.0) / self.bin).floor().min(MAX_LAYERS as f64) as usize;
        let (first, last) = (layer(z - r), layer(z + r).min(MAX_LAYERS - 1));
        if first >= MAX_LAYERS {
            return;
        }
        self.reach(last);
        for k in first..=last {
            let lo = k as f64 * self.bin;
            let part = sphere_slice(z, r, lo, lo + self.bin);
            self.volume[k].add(part);
            self.flux[k].add(part * v);
        }
    }

    /// Takes in the sums of `other` (over layers of the same thickness): its grains and its
    /// samples.
    pub fn merge(&mut self, other: &ProfileSums) {
        if let Some(last) = other.volume.len().checked_sub(1) {
            self.reach(last);
        }
        for (mine, theirs) in self.volume.iter_mut().zip(&other.volume) {
            mine.merge(theirs);
        }
        for (mine, theirs) in self.flux.iter_mut().zip(&other.flux) {
            mine.merge(theirs);
        }
        self.samples += other.samples;
    }

    /// The mean profile over the samples for a base of `area`: per layer, the height of its
    /// middle, the solid fraction and the mean velocity (NaN where no grain was).
    #[must_use]
    pub fn profile(&self, area: f64) -> Vec<Layer> {
        let samples = self.samples.max(1) as f64;
        self.volume
            .iter()
            .zip(&self.flux)
            .enumerate()
            .map(|(k, (v, q))| {
                let (v, q) = (v.value(), q.value());
                Layer {
                    z: (k as f64 + 0.5) * self.bin,
                    solid_fraction: v / (samples * area * self.bin),
                    velocity: if v > 0.0 { q / v } else { f64::NAN },
                }
            })
            .collect()
    }
}

/// One layer of a mean profile.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Layer {
    /// Height of its middle above the base (m).
    pub z: f64,
    /// Fraction of its volume the grains fill.
    pub solid_fraction: f64,
    /// Mean velocity down the incline of the grains in it (m/s).
    pub velocity: f64,
}

/// The flow depth: the height where the solid fraction, coming down from the surface,
/// first reaches half of the bed's (the median of the layers at least a tenth as dense as
/// the densest), interpolated between layers; with the bed's solid fraction, the mean over
/// the layers between 20 % and 80 % of the depth. `None` for an empty profile.
#[must_use]
pub fn flow_depth(layers: &[Layer]) -> Option<(f64, f64)> {
    let densest = layers.iter().map(|l| l.solid_fraction).fold(0.0, f64::max);
    if densest <= 0.0 {
        return None;
    }
    let mut dense: Vec<f64> = layers
        .iter()
        .map(|l| l.solid_fraction)
        .filter(|&f| f >= 0.1 * densest)
        .collect();
    dense.sort_by(f64::total_cmp);
    let half = 0.5 * dense[dense.len() / 2];
    let top = layers.iter().rposition(|l| l.solid_fraction >= half)?;
    let depth = match layers.get(top + 1) {
        Some(above) => {
            let below = layers[top];
            let t = (below.solid_fraction - half) / (below.solid_fraction - above.solid_fraction);
            below.z + t * (above.z - below.z)
        }
        None => layers[top].z,
    };
    let core: Vec<f64> = layers
        .iter()
        .filter(|l| l.z >= 0.2 * depth && l.z <= 0.8 * depth)
        .map(|l| l.solid_fraction)
        .collect();
    let bulk = if core.is_empty() {
        layers[top].solid_fraction
    } else {
        core.iter().sum::<f64>() / core.len() as f64
    };
    Some((depth, bulk))
}

/// The Bagnold profile fitted to the layers below the depth `h`: `v = v_s + A f(z)` with
/// `f(z) = h^{3/2} − (h − z)^{3/2}` (slope A, intercept the slip `v_s`), and a straight
/// line `v = v_0 + γ̇ z` fitted to the same layers for comparison.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BagnoldFit {
    /// The fit against `f(z)`.
    pub bagnold: LineFit,
    /// The fit against z.
    pub linear: LineFit,
}

/// See [`BagnoldFit`]; `None` with fewer than three layers with grains below `h`.
#[must_use]
pub fn bagnold_fit(layers: &[Layer], h: f64) -> Option<BagnoldFit> {
    let inside: Vec<&Layer> = layers
        .iter()
        .filter(|l| l.z < h && l.velocity.is_finite())
        .collect();
    if inside.len() < 3 {
        return None;
    }
    let shape = |z: f64| h.powf(1.5) - (h - z).powf(1.5);
    let bagnold: Vec<(f64, f64)> = inside.iter().map(|l| (shape(l.z), l.velocity)).collect();
    let linear: Vec<(f64, f64)> = inside.iter().map(|l| (l.z, l.velocity)).collect();
    Some(BagnoldFit {
        bagnold: fit_line(&bagnold)?,
        linear: fit_line(&linear)?,
    })
}

/// The inertial number of a Bagnold profile of amplitude `a`: `I = 3 a d / (2 √(φ g cos θ))`
/// (GDR MiDi eq. 8 solved for I).
#[must_use]
pub fn bagnold_inertial_number(a: f64, d: f64, phi: f64, g: f64, theta: f64) -> f64 {
    1.5 * a * d / (phi * g * theta.cos()).sqrt()
}

/// Whether a flow has settled to a steady state over a window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum FlowState {
    /// The mean velocity changes by less than [`STEADY_CHANGE`] of itself over the window.
    Steady,
    /// The grains are at rest: the mean velocity at the end of the window below
    /// [`STOPPED_SPEED`] √(g d).
    Stopped,
    /// The mean velocity grows by more than [`STEADY_CHANGE`].
    Accelerating,
    /// The mean velocity falls by more than [`STEADY_CHANGE`]: on its way to a stop.
    Decelerating,
}

/// Largest relative change of the mean velocity over the window of a steady flow.
pub const STEADY_CHANGE: f64 = 0.1;
/// Speed, in units of √(g d), below which a bed counts as stopped.
pub const STOPPED_SPEED: f64 = 0.01;

impl FlowState {
    /// The name in the summary.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            FlowState::Steady => "steady",
            FlowState::Stopped => "stopped",
            FlowState::Accelerating => "accelerating",
            FlowState::Decelerating => "decelerating",
        }
    }
}

/// The state of a flow from its mean velocity `(t, ū)` over a window, for grains of
/// diameter `d` under gravity `g`; with the relative change of ū over the window (the
/// fitted line's rise over its mean). `None` with fewer than three samples.
#[must_use]
pub fn flow_state(samples: &[(f64, f64)], d: f64, g: f64) -> Option<(FlowState, f64)> {
    let line = fit_line(samples)?;
    if line.points < 3 {
        return None;
    }
    let (t0, t1) = line.x_range;
    let mean = line.intercept + line.slope * 0.5 * (t0 + t1);
    let end = line.intercept + line.slope * t1;
    let change = line.slope * (t1 - t0) / mean.abs().max(f64::MIN_POSITIVE);
    let state = if end.abs() < STOPPED_SPEED * (g * d).sqrt() {
        FlowState::Stopped
    } else if change > STEADY_CHANGE {
        FlowState::Accelerating
    } else if change < -STEADY_CHANGE {
        FlowState::Decelerating
    } else {
        FlowState::Steady
    };
    Some((state, change))
}

/// One run of a chute-flow sweep: its incline, flow depth, state and Froude number.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChuteRun {
    /// Incline (degrees).
    pub angle_deg: f64,
    /// Thickness of the bed: its flow depth if it flows, its depth at rest if not (m).
    pub depth: f64,
    /// Whether it flows steadily (else it stopped; accelerating and decelerating runs are
    /// left out by the caller).
    pub flows: bool,
    /// Its Froude number (steady runs).
    pub froude: f64,
}

/// `h_stop(θ)` bracketed by the runs at each incline: the deepest bed that stopped and the
/// shallowest that flowed, as (angle, deepest stopped, shallowest flowing); the estimate
/// is their middle. Inclines where every bed flowed or every bed stopped give an open
/// bracket (NaN on that side).
#[must_use]
pub fn h_stop_brackets(runs: &[ChuteRun]) -> Vec<(f64, f64, f64)> {
    let mut angles: Vec<f64> = runs.iter().map(|r| r.angle_deg).collect();
    angles.sort_by(f64::total_cmp);
    angles.dedup();
    angles
        .into_iter()
        .map(|a| {
            let at = runs.iter().filter(|r| r.angle_deg == a);
            let stopped = at
                .clone()
                .filter(|r| !r.flows)
                .map(|r| r.depth)
                .fold(f64::NAN, f64::max);
            let flowing = at
                .filter(|r| r.flows)
                .map(|r| r.depth)
                .fold(f64::NAN, f64::min);
            (a, stopped, flowing)
        })
        .collect()
}

/// Pouliquen's β: the slope of Fr against `h / h_stop(θ)` through the origin, fitted by
/// least squares over the steady runs whose incline has a closed bracket; with its
/// standard error and the number of runs. `None` without such runs.
#[must_use]
pub fn pouliquen_beta(runs: &[ChuteRun]) -> Option<(f64, f64, usize)> {
    let brackets = h_stop_brackets(runs);
    let h_stop = |a: f64| {
        brackets
            .iter()
            .find(|b| b.0 == a)
            .map(|b| 0.5 * (b.1 + b.2))
            .filter(|h| h.is_finite() && *h > 0.0)
    };
    let points: Vec<(f64, f64)> = runs
        .iter()
        .filter(|r| r.flows && r.froude.is_finite())
        .filter_map(|r| Some((r.depth / h_stop(r.angle_deg)?, r.froude)))
        .collect();
    if points.is_empty() {
        return None;
    }
    let sxx: f64 = points.iter().map(|p| p.0 * p.0).sum();
    let sxy: f64 = points.iter().map(|p| p.0 * p.1).sum();
    let beta = sxy / sxx;
    let n = points.len();
    let error = if n > 1 {
        let residual: f64 = points.iter().map(|p| (p.1 - beta * p.0).powi(2)).sum();
        (residual / (n - 1) as f64 / sxx).sqrt()
    } else {
        f64::NAN
    };
    Some((beta, error, n))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sphere_slices_add_up_to_the_sphere() {
        let r = 0.3;
        let whole = 4.0 / 3.0 * std::f64::consts::PI * r * r * r;
        let parts: f64 = (0..10)
            .map(|k| sphere_slice(1.0, r, 0.6 + 0.08 * k as f64, 0.68 + 0.08 * k as f64))
            .sum();
        assert!((parts - whole).abs() < 1e-12 * whole);
        // A half sphere.
        assert!((sphere_slice(0.0, r, -1.0, 0.0) - 0.5 * whole).abs() < 1e-15);
    }

    #[test]
    fn a_bagnold_profile_is_recovered_with_its_slip_and_depth() {
        // A bed of solid fraction 0.6 up to 0.05 m with a Bagnold profile.
        let (h, a, slip, bin) = (0.05, 120.0, 0.02, 0.0025);
        let layers: Vec<Layer> = (0..30)
            .map(|k| {
                let z = (k as f64 + 0.5) * bin;
                let inside = z < h;
                Layer {
                    z,
                    solid_fraction: if inside { 0.6 } else { 0.0 },
                    velocity: if inside {
                        slip + a * (h.powf(1.5) - (h - z).powf(1.5))
                    } else {
                        f64::NAN
                    },
                }
            })
            .collect();
        let (depth, phi) = flow_depth(&layers).unwrap();
        // The fraction falls from 0.6 to 0 between the layers at 0.04875 and 0.05125.
        assert!((depth - 0.05).abs() < 1e-12, "{depth}");
        assert!((phi - 0.6).abs() < 1e-12);
        let fit = bagnold_fit(&layers, depth).unwrap();
        assert!((fit.bagnold.slope - a).abs() < 1e-9 * a);
        assert!((fit.bagnold.intercept - slip).abs() < 1e-12);
        assert!(fit.bagnold.r_squared > 1.0 - 1e-12);
        assert!(fit.linear.r_squared < fit.bagnold.r_squared);
    }

    #[test]
    fn flow_states_follow_the_mean_velocity() {
        let (d, g) = (0.004, 9.81);
        let series = |f: &dyn Fn(f64) -> f64| -> Vec<(f64, f64)> {
            (0..20)
                .map(|i| (i as f64 * 0.1, f(i as f64 * 0.1)))
                .collect()
        };
        let state = |f: &dyn Fn(f64) -> f64| flow_state(&series(f), d, g).unwrap().0;
        assert_eq!(state(&|_| 0.3), FlowState::Steady);
        assert_eq!(state(&|t| 0.3 + 0.2 * t), FlowState::Accelerating);
        assert_eq!(state(&|t| 0.3 - 0.1 * t), FlowState::Decelerating);
        assert_eq!(state(&|_| 1e-4), FlowState::Stopped);
    }

    #[test]
    fn the_flow_rule_is_read_from_brackets_of_h_stop() {
        // h_stop = 4 mm at 24°, 2 mm at 28°; Fr = 0.5 h / h_stop for the flowing beds.
        let run = |angle_deg: f64, depth: f64, flows: bool, h_stop: f64| ChuteRun {
            angle_deg,
            depth,
            flows,
            froude: if flows { 0.5 * depth / h_stop } else { 0.0 },
        };
        let runs = [
            run(24.0, 0.003, false, 0.004),
            run(24.0, 0.005, true, 0.004),
            run(24.0, 0.008, true, 0.004),
            run(28.0, 0.001, false, 0.002),
            run(28.0, 0.003, true, 0.002),
            run(28.0, 0.006, true, 0.002),
            run(32.0, 0.004, true, 0.001),
        ];
        let b = h_stop_brackets(&runs);
        assert_eq!(b[0], (24.0, 0.003, 0.005));
        assert_eq!(b[1], (28.0, 0.001, 0.003));
        assert!(b[2].1.is_nan() && b[2].2 == 0.004);
        let (beta, error, n) = pouliquen_beta(&runs).unwrap();
        assert_eq!(n, 4);
        assert!(
            (beta - 0.5).abs() < 1e-12 && error < 1e-12,
            "{beta} ± {error}"
        );
    }
}
