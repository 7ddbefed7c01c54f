//! Vibrated bed and the Brazil-nut effect (thesis §1.2.2).
//!
//! The floor of an open box moves as z(t) = A sin(2πft). The thesis asks for the
//! density in the different layers (fluidised at the top, nearly frozen below), for
//! the agitation of the grains, and — with grains of different sizes — for how far
//! a large grain rises. The strength of the shaking is the dimensionless
//! acceleration Γ.

use serde::{Deserialize, Serialize};
use talus_sim::exact_sum::ExactSum;

use crate::analysis::finite_positive;

/// Dimensionless peak acceleration of the floor, Γ = A (2πf)² / g.
///
/// `amplitude` A (m), `frequency` f (Hz), `gravity` g (m/s²). A and g enter as
/// magnitudes (signs are ignored, so a gravity stored as −9.81 works). Γ > 1 is
/// needed for the bed to leave the floor. Infinite when g = 0; NaN when an input is.
#[must_use]
pub fn gamma(amplitude: f64, frequency: f64, gravity: f64) -> f64 {
    let omega = std::f64::consts::TAU * frequency;
    amplitude.abs() * omega * omega / gravity.abs()
}

/// Solid fraction per horizontal layer.
///
/// `z_and_volume` holds each grain's centre height z (m) and volume (m³).
/// `[z_min, z_max]` is cut into `layers` equal layers; each layer's value is the
/// volume of the grains whose centre lies in it, divided by the layer volume
/// `cross_section_area · (z_max − z_min) / layers`. Index 0 is the lowest layer.
///
/// Simplification: a grain's whole volume goes to the layer holding its centre,
/// even where it straddles a layer boundary. That is exact on average but noisy for
/// layers thinner than a few grain diameters (a single value can exceed 1); use
/// layers of at least about two grain diameters.
///
/// Grains outside `[z_min, z_max]` (a centre exactly at `z_max` belongs to the top
/// layer) or with a non-finite value are ignored. The result is empty when `layers`
/// is 0 or too large to allocate, the height range is empty or not finite, or
/// `cross_section_area` is not a finite positive number.
#[must_use]
pub fn layer_packing(
    z_and_volume: &[(f64, f64)],
    z_min: f64,
    z_max: f64,
    layers: usize,
    cross_section_area: f64,
) -> Vec<f64> {
    let mut volumes = LayerVolumes::new(z_min, z_max, layers);
    for &(z, volume) in z_and_volume {
        volumes.add(z, volume);
    }
    volumes.packing(cross_section_area)
}

/// The grains' volume per layer of [`layer_packing`], summed exactly: the volumes of two
/// sets of grains merged are those of their union, to the bit, whatever the split (a
/// decomposed run's processes each sum their own grains).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LayerVolumes {
    z_min: f64,
    z_max: f64,
    /// Σ volume per layer, bottom first; empty when the layers are not usable (see
    /// [`layer_packing`]).
    volume: Vec<ExactSum>,
}

impl LayerVolumes {
    /// No grains yet, in `layers` layers over `[z_min, z_max]`.
    #[must_use]
    pub fn new(z_min: f64, z_max: f64, layers: usize) -> LayerVolumes {
        let height = z_max - z_min;
        let mut volume = Vec::new();
        // A fallible reservation so an absurd layer count yields an empty result, not an
        // allocation failure.
        if layers > 0
            && z_min.is_finite()
            && z_max.is_finite()
            && finite_positive(height)
            && volume.try_reserve_exact(layers).is_ok()
        {
            volume.resize(layers, ExactSum::new());
        }
        LayerVolumes {
            z_min,
            z_max,
            volume,
        }
    }

    /// Adds a grain of `volume` centred at height `z` (ignored outside the layers or with a
    /// value that is not finite).
    pub fn add(&mut self, z: f64, volume: f64) {
        let layers = self.volume.len();
        if layers == 0 || !z.is_finite() || !volume.is_finite() || z < self.z_min || z > self.z_max
        {
            return;
        }
        // `as` saturates; the clamp puts z == z_max into the top layer.
        let height = self.z_max - self.z_min;
        let layer =
            ((((z - self.z_min) / height) * layers as f64).floor() as usize).min(layers - 1);
        self.volume[layer].add(volume);
    }

    /// Takes in the grains of `other` (over the same layers).
    pub fn merge(&mut self, other: &LayerVolumes) {
        for (mine, theirs) in self.volume.iter_mut().zip(&other.volume) {
            mine.merge(theirs);
        }
    }

    /// The solid fraction per layer in a container of `cross_section_area` (empty as
    /// [`layer_packing`] says).
    #[must_use]
    pub fn packing(&self, cross_section_area: f64) -> Vec<f64> {
        if !finite_positive(cross_section_area) {
            return Vec::new();
        }
        let layer_volume =
            cross_section_area * (self.z_max - self.z_min) / self.volume.len() as f64;
        self.volume
            .iter()
            .map(|v| v.value() / layer_volume)
            .collect()
    }
}

/// Granular temperature: fluctuation kinetic energy per unit mass and per degree of
/// freedom, T = (1/3) Σ m_i |v_i − V|² / Σ m_i, in m²/s².
///
/// V = Σ m_i v_i / Σ m_i is the mass-weighted mean velocity, so a bed that moves as
/// a whole (riding on the floor) has T = 0. Only translational velocities enter;
/// spin is not counted. Grains are paired by index (`velocities[i]`, `masses[i]`;
/// entries beyond the shorter slice are ignored) and a grain with a non-finite
/// velocity or a mass that is not finite and positive is skipped. 0 when no grain
/// remains.
#[must_use]
pub fn granular_temperature(velocities: &[[f64; 3]], masses: &[f64]) -> f64 {
    let grains = || velocities.iter().zip(masses);
    let mut sums = TemperatureSums::default();
    for (v, &m) in grains() {
        sums.add_motion(m, *v);
    }
    let Some(mean) = sums.mean() else {
        return 0.0;
    };
    let mut fluctuation = ExactSum::new();
    for (v, &m) in grains() {
        fluctuation.add(TemperatureSums::fluctuation(m, *v, mean));
    }
    sums.fluctuation = Some(fluctuation);
    sums.temperature()
}

/// The sums [`granular_temperature`] is made of, in two passes over the grains: their mass
/// and momentum, which give the mean velocity V, then Σ m |v − V|² about it (a second pass:
/// the difference of two large sums, Σ m v² − M V², would lose a small fluctuation under a
/// fast common motion of the bed). Each sum is exact, so that the sums of two sets of
/// grains merged are those of their union, to the bit, whatever the split (a decomposed
/// run's processes each sum their own grains, and all take V from the merged first pass).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TemperatureSums {
    /// Σ m of the grains counted.
    pub mass: ExactSum,
    /// Σ m v, per component.
    pub momentum: [ExactSum; 3],
    /// Σ m |v − V|² about the mean of the merged first pass, once the second pass is done.
    pub fluctuation: Option<ExactSum>,
}

impl TemperatureSums {
    /// Whether a grain counts: a finite velocity and a finite positive mass.
    fn counts(m: f64, v: [f64; 3]) -> bool {
        v.iter().all(|c| c.is_finite()) && m.is_finite() && m > 0.0
    }

    /// First pass: adds a grain's mass and momentum (a grain that does not count is
    /// skipped).
    pub fn add_motion(&mut self, m: f64, v: [f64; 3]) {
        if !Self::counts(m, v) {
            return;
        }
        self.mass.add(m);
        for (p, c) in self.momentum.iter_mut().zip(v) {
            p.add(m * c);
        }
    }

    /// The mass-weighted mean velocity of the first pass; `None` without mass.
    #[must_use]
    pub fn mean(&self) -> Option<[f64; 3]> {
        let mass = self.mass.value();
        finite_positive(mass).then(|| self.momentum.clone().map(|p| p.value() / mass))
    }

    /// Second pass: a grain's term m |v − V|² (0 for a grain that does not count).
    #[must_use]
    pub fn fluctuation(m: f64, v: [f64; 3], mean: [f64; 3]) -> f64 {
        if !Self::counts(m, v) {
            return 0.0;
        }
        m * v
            .iter()
            .zip(&mean)
            .map(|(c, c0)| (c - c0) * (c - c0))
            .sum::<f64>()
    }

    /// Takes in the first pass of other grains (the second pass is taken in as it is).
    pub fn merge(&mut self, other: &TemperatureSums) {
        self.mass.merge(&other.mass);
        for (mine, theirs) in self.momentum.iter_mut().zip(&other.momentum) {
            mine.merge(theirs);
        }
        match (&mut self.fluctuation, &other.fluctuation) {
            (Some(mine), Some(theirs)) => mine.merge(theirs),
            (None, Some(theirs)) => self.fluctuation = Some(theirs.clone()),
            _ => {}
        }
    }

    /// T = (1/3) Σ m |v − V|² / Σ m; 0 without mass or before the second pass.
    #[must_use]
    pub fn temperature(&self) -> f64 {
        let mass = self.mass.value();
        match &self.fluctuation {
            Some(f) if finite_positive(mass) => f.value() / (3.0 * mass),
            _ => 0.0,
        }
    }
}

/// How far a grain has risen, in grain diameters: (`height` − `start_height`) /
/// `diameter`; negative when it sank. NaN when `diameter` is not a finite positive
/// number or a height is not finite.
#[must_use]
pub fn rise_in_diameters(start_height: f64, height: f64, diameter: f64) -> f64 {
    if !finite_positive(diameter) {
        return f64::NAN;
    }
    (height - start_height) / diameter
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::f64::consts::PI;

    #[test]
    fn gamma_by_hand() {
        // A = 2 mm, f = 20 Hz: (2π·20)² = 15791.367; · 0.002 / 9.81 = 3.219443.
        assert!((gamma(0.002, 20.0, 9.81) - 3.219443).abs() < 1e-6);
        assert_eq!(gamma(0.002, 20.0, -9.81), gamma(-0.002, 20.0, 9.81));
        // The amplitude at which the floor's peak acceleration equals g.
        let f = 50.0;
        let a = 9.81 / (2.0 * PI * f).powi(2);
        assert!((gamma(a, f, 9.81) - 1.0).abs() < 1e-12);
        assert_eq!(gamma(0.0, 20.0, 9.81), 0.0);
    }

    /// Spheres of diameter `a` on a simple cubic lattice: solid fraction π/6.
    fn cubic_lattice(a: f64, nx: usize, ny: usize, nz: usize, z0: f64) -> Vec<(f64, f64)> {
        let volume = PI * a * a * a / 6.0;
        let mut grains = Vec::new();
        for _ in 0..nx * ny {
            for k in 0..nz {
                grains.push((z0 + (k as f64 + 0.5) * a, volume));
            }
        }
        grains
    }

    #[test]
    fn uniform_lattice_has_uniform_packing() {
        let (a, z0) = (0.01, 0.3);
        let grains = cubic_lattice(a, 4, 5, 6, z0);
        let area = 4.0 * a * 5.0 * a;
        for layers in [6, 3, 2, 1] {
            let phi = layer_packing(&grains, z0, z0 + 6.0 * a, layers, area);
            assert_eq!(phi.len(), layers);
            for p in phi {
                assert!((p - PI / 6.0).abs() < 1e-12, "{layers}: {p}");
            }
        }
        // Twice the height with the upper half empty.
        let phi = layer_packing(&grains, z0, z0 + 12.0 * a, 2, area);
        assert!((phi[0] - PI / 6.0).abs() < 1e-12 && phi[1] == 0.0);
    }

    #[test]
    fn packing_boundaries_and_degenerate_inputs() {
        // Centre exactly at z_max goes to the top layer; outside and NaN are ignored.
        let grains = [
            (0.0, 1.0),
            (2.0, 3.0),
            (2.5, 7.0),
            (-0.1, 7.0),
            (f64::NAN, 7.0),
            (1.0, f64::NAN),
        ];
        assert_eq!(layer_packing(&grains, 0.0, 2.0, 2, 0.5), vec![2.0, 6.0]);
        assert!(layer_packing(&grains, 0.0, 2.0, 0, 1.0).is_empty());
        assert!(layer_packing(&grains, 2.0, 2.0, 2, 1.0).is_empty());
        assert!(layer_packing(&grains, 0.0, 2.0, 2, 0.0).is_empty());
        assert!(layer_packing(&grains, 0.0, f64::INFINITY, 2, 1.0).is_empty());
        assert!(layer_packing(&grains, 0.0, 2.0, usize::MAX, 1.0).is_empty());
        assert_eq!(layer_packing(&[], 0.0, 2.0, 3, 1.0), vec![0.0; 3]);
    }

    #[test]
    fn rigid_translation_has_zero_temperature() {
        let v = [[3.0e3, -2.0, 0.5]; 5];
        let m = [1.0, 2.0, 0.1, 7.0, 3.0];
        assert!(granular_temperature(&v, &m).abs() < 1e-20);
    }

    #[test]
    fn opposite_pairs_have_temperature_v2_over_3() {
        let u = [0.3, -1.2, 0.4];
        let speed2 = u.iter().map(|c| c * c).sum::<f64>();
        let minus = u.map(|c| -c);
        let drift = [5.0, 0.0, -1.0];
        // The same pairs riding on a common drift: the drift must not count.
        let shift = |w: [f64; 3]| [w[0] + drift[0], w[1] + drift[1], w[2] + drift[2]];
        let v = [u, minus, shift(u), shift(minus)];
        let m = [2.0, 2.0, 0.5, 0.5];
        assert!((granular_temperature(&v[..2], &m[..2]) - speed2 / 3.0).abs() < 1e-15);
        assert!((granular_temperature(&v[2..], &m[2..]) - speed2 / 3.0).abs() < 1e-13);
    }

    #[test]
    fn unequal_masses_by_hand() {
        // V = (1, 0, 0); Σ m |Δv|² = 1·9 + 3·1 = 12; T = 12 / (3·4) = 1.
        let t = granular_temperature(&[[4.0, 0.0, 0.0], [0.0, 0.0, 0.0]], &[1.0, 3.0]);
        assert!((t - 1.0).abs() < 1e-15);
        // Skipped entries: NaN velocity, zero and negative mass, surplus velocity.
        let t = granular_temperature(
            &[
                [4.0, 0.0, 0.0],
                [f64::NAN, 0.0, 0.0],
                [9.0, 9.0, 9.0],
                [0.0, 0.0, 0.0],
                [8.0, 0.0, 0.0],
                [1.0; 3],
            ],
            &[1.0, 1.0, 0.0, 3.0, -1.0],
        );
        assert!((t - 1.0).abs() < 1e-15);
        assert_eq!(granular_temperature(&[], &[]), 0.0);
        assert_eq!(granular_temperature(&[[1.0, 2.0, 3.0]], &[]), 0.0);
    }

    #[test]
    fn rise_by_hand() {
        assert!((rise_in_diameters(0.1, 0.16, 0.02) - 3.0).abs() < 1e-12);
        assert!((rise_in_diameters(0.16, 0.1, 0.02) + 3.0).abs() < 1e-12);
        assert!(rise_in_diameters(0.0, 1.0, 0.0).is_nan());
        assert!(rise_in_diameters(0.0, 1.0, -1.0).is_nan());
        assert!(rise_in_diameters(0.0, f64::NAN, 1.0).is_nan());
    }
}
