//! Power spectrum of a wall-force time series (thesis §1.2.3, fig. 1.5).
//!
//! In hopper flow the force on a wall fluctuates with a 1/f^α spectrum over two
//! decades of frequency, turning into white noise only for very steep hopper walls.
//! [`power_spectrum`] turns a sampled force into a one-sided periodogram, [`welch_spectrum`]
//! averages the periodograms of overlapping segments (Welch's method) so that each bin is
//! not one noisy estimate, [`spectral_exponent`] fits α on a log–log scale over a frequency
//! band and [`power_law_band`] chooses that band from the spectrum itself.

use rustfft::FftPlanner;
use rustfft::num_complex::Complex;

use crate::analysis::finite_positive;
use crate::analysis::fit::{LineFit, fit_line};

/// One-sided, Hann-windowed periodogram of evenly spaced `samples`.
///
/// Returns `(frequency in Hz, power)` for the bins k = 0 ..= ⌊N/2⌋ at
/// f_k = k / (N · `sample_interval`), i.e. from 0 to the Nyquist frequency.
///
/// Steps: the mean is subtracted (a constant load would otherwise leak out of the
/// zero bin through the window), the periodic Hann window
/// w_n = ½ (1 − cos 2πn/N) is applied, and the DFT X_k is taken (any N; the FFT
/// handles lengths that are not powers of two).
///
/// Normalisation — a *power* spectrum, in units of the signal squared (N² for a
/// force), not a density: the two-sided value is S_k = |X_k|² / (N Σ w_n²), and the
/// one-sided power P_k doubles S_k for 0 < k < N/2 to fold in the negative
/// frequencies (the zero bin and, for even N, the Nyquist bin are not doubled).
/// Hence Σ_k P_k = Σ_n (x_n − x̄)² w_n² / Σ_n w_n², the window-weighted variance of
/// the signal, and a sinusoid of amplitude A contributes A²/2 summed over its peak
/// (the Hann main lobe spreads it over about three bins). For a density in
/// signal²/Hz divide each P_k by the bin width 1 / (N · `sample_interval`).
///
/// The result is empty when N < 2, when any sample is not finite, or when
/// `sample_interval` is not a finite positive number.
#[must_use]
pub fn power_spectrum(samples: &[f64], sample_interval: f64) -> Vec<(f64, f64)> {
    let n = samples.len();
    if n < 2 || !finite_positive(sample_interval) || samples.iter().any(|s| !s.is_finite()) {
        return Vec::new();
    }
    let nf = n as f64;
    let mean = samples.iter().sum::<f64>() / nf;
    let mut window_energy = 0.0;
    let mut buffer: Vec<Complex<f64>> = samples
        .iter()
        .enumerate()
        .map(|(i, s)| {
            // Periodic (not symmetric) Hann: it is the one whose DFT has exactly three
            // non-zero bins, so the A²/2 peak sum holds for on-bin tones, and N = 2
            // still gives a non-zero window.
            let w = 0.5 * (1.0 - (std::f64::consts::TAU * i as f64 / nf).cos());
            window_energy += w * w;
            Complex::new((s - mean) * w, 0.0)
        })
        .collect();
    FftPlanner::<f64>::new()
        .plan_fft_forward(n)
        .process(&mut buffer);
    let scale = 1.0 / (nf * window_energy);
    let df = 1.0 / (nf * sample_interval);
    (0..=n / 2)
        .map(|k| {
            let two_sided = buffer[k].norm_sqr() * scale;
            let folded = if k == 0 || 2 * k == n {
                two_sided
            } else {
                2.0 * two_sided
            };
            (k as f64 * df, folded)
        })
        .collect()
}

/// Log–log line fit of a spectrum over `[f_min, f_max]`, for a 1/f^α law.
///
/// Fits log10 P against log10 f over the bins with `f_min ≤ f ≤ f_max`, f > 0 and
/// P > 0 (the zero bin and empty bins have no logarithm). The spectral exponent is
/// α = −`slope`; `intercept` is log10 P at f = 1 Hz. `None` when fewer than three
/// bins qualify or the fit fails (see [`fit_line`]).
#[must_use]
pub fn spectral_exponent(spectrum: &[(f64, f64)], f_min: f64, f_max: f64) -> Option<LineFit> {
    let logs: Vec<(f64, f64)> = spectrum
        .iter()
        .filter(|&&(f, p)| {
            f >= f_min && f <= f_max && f > 0.0 && p > 0.0 && f.is_finite() && p.is_finite()
        })
        .map(|&(f, p)| (f.log10(), p.log10()))
        .collect();
    if logs.len() < 3 {
        return None;
    }
    fit_line(&logs)
}

/// Segments of [`welch_spectrum`] by default: eight halves-overlapping segments cut the
/// scatter of each bin to about a third of a single periodogram's (√8 with the overlap's
/// correlation), at an eighth of its frequency resolution... of the full record's.
pub const WELCH_SEGMENTS: usize = 8;

/// Welch's averaged periodogram: `samples` cut into `segments` segments of equal length
/// overlapping by half (length L = ⌊2N / (segments + 1)⌋), each made a Hann-windowed
/// periodogram by [`power_spectrum`] (its own mean removed), and the periodograms averaged
/// bin by bin. The normalisation is [`power_spectrum`]'s, for a segment: bins at
/// f_k = k / (L · `sample_interval`), power in signal² summing to the windowed variance.
///
/// Fewer samples than two segments of two samples each give a single periodogram of the
/// whole record; empty as [`power_spectrum`] is.
#[must_use]
pub fn welch_spectrum(samples: &[f64], sample_interval: f64, segments: usize) -> Vec<(f64, f64)> {
    let n = samples.len();
    let segments = segments.max(1);
    let length = 2 * n / (segments + 1);
    if segments == 1 || length < 4 {
        return power_spectrum(samples, sample_interval);
    }
    let hop = length / 2;
    let mut sum: Vec<(f64, f64)> = Vec::new();
    let mut count = 0usize;
    let mut start = 0;
    while start + length <= n {
        let part = power_spectrum(&samples[start..start + length], sample_interval);
        if part.is_empty() {
            return Vec::new();
        }
        if sum.is_empty() {
            sum = part;
        } else {
            for (acc, (_, p)) in sum.iter_mut().zip(part) {
                acc.1 += p;
            }
        }
        count += 1;
        start += hop;
    }
    for bin in &mut sum {
        bin.1 /= count as f64;
    }
    sum
}

/// A power law P(f) ∝ f^−α fitted to a spectrum over a band.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PowerLaw {
    /// The exponent α.
    pub alpha: f64,
    /// Its standard error (from the fit's scatter).
    pub alpha_error: f64,
    /// The band, Hz.
    pub band: (f64, f64),
    /// r² of the log–log line.
    pub r_squared: f64,
    /// Bins in the band.
    pub bins: usize,
    /// The fitted line, log10 P against log10 f.
    pub fit: LineFit,
}

/// The least r² of a band [`power_law_band`] takes as a power law.
pub const POWER_LAW_MIN_R_SQUARED: f64 = 0.9;

/// The most a band's log–log spectrum may bend away from a straight line for
/// [`power_law_band`] to take it as one power law, in decades of power: a parabola fitted
/// to it may depart from its chord by at most this much over the band. It tells a power law
/// with scatter (whose parabola is nearly straight) from a band across a change of slope.
pub const POWER_LAW_MAX_BEND: f64 = 0.1;

/// How far the least-squares parabola through `points` (log f, log P) bends over their
/// range: |c₂|·(w/2)² for the quadratic coefficient c₂ and the range w. `None` for fewer
/// than four points.
fn bend(points: &[(f64, f64)]) -> Option<f64> {
    if points.len() < 4 {
        return None;
    }
    let n = points.len() as f64;
    let mean = points.iter().map(|p| p.0).sum::<f64>() / n;
    // Normal equations of y = c₀ + c₁u + c₂u² in the centred u = x − x̄.
    let (mut s2, mut s3, mut s4, mut t0, mut t1, mut t2) = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
    for &(x, y) in points {
        let u = x - mean;
        s2 += u * u;
        s3 += u * u * u;
        s4 += u * u * u * u;
        t0 += y;
        t1 += u * y;
        t2 += u * u * y;
    }
    // | n  0  s2 | |c0|   |t0|
    // | 0  s2 s3 | |c1| = |t1|
    // | s2 s3 s4 | |c2|   |t2|
    let det = n * (s2 * s4 - s3 * s3) - s2 * (s2 * s2);
    if det == 0.0 || !det.is_finite() {
        return None;
    }
    let det2 = n * (s2 * t2 - s3 * t1) - s2 * (s2 * t0);
    let c2 = det2 / det;
    let (lo, hi) = points
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), p| {
            (lo.min(p.0), hi.max(p.0))
        });
    Some(c2.abs() * (0.5 * (hi - lo)).powi(2))
}

/// Band edges, and log-bins, per decade in [`power_law_band`].
const EDGES_PER_DECADE: f64 = 8.0;

/// The spectrum averaged in log-spaced bins, `EDGES_PER_DECADE` per decade from `f_low`:
/// (geometric mean frequency, mean power) of the bins of `spectrum` in each, for the bins
/// with `f_low ≤ f ≤ f_high`. A linear frequency grid puts nine tenths of its bins in the
/// top decade; averaged this way every decade weighs the same in a log–log fit, and the
/// scatter of the many high-frequency bins is averaged down.
fn log_binned(spectrum: &[(f64, f64)], f_low: f64, f_high: f64) -> Vec<(f64, f64)> {
    let mut out: Vec<(f64, f64)> = Vec::new();
    let mut current = None::<(i64, f64, f64, usize)>;
    for &(f, p) in spectrum.iter().filter(|b| b.0 >= f_low && b.0 <= f_high) {
        let bin = ((f / f_low).log10() * EDGES_PER_DECADE).floor() as i64;
        match &mut current {
            Some((b, log_f, power, n)) if *b == bin => {
                *log_f += f.log10();
                *power += p;
                *n += 1;
            }
            _ => {
                if let Some((_, log_f, power, n)) = current {
                    out.push((10f64.powf(log_f / n as f64), power / n as f64));
                }
                current = Some((bin, f.log10(), p, 1));
            }
        }
    }
    if let Some((_, log_f, power, n)) = current {
        out.push((10f64.powf(log_f / n as f64), power / n as f64));
    }
    out
}

/// The power law of `spectrum` over the band it holds best on. The spectrum between its
/// third bin (the lowest two carry what is left of the record's trend and the window's
/// leakage) and 80 % of its highest frequency (where aliasing folds power back) is averaged
/// in log-spaced bins, eight per decade; of the bands with edges on that grid at least
/// `min_decades` wide, the widest whose log–log fit has r² ≥ [`POWER_LAW_MIN_R_SQUARED`] and
/// bends less than [`POWER_LAW_MAX_BEND`] is taken, the best-fitting of equally wide ones. Without such a band, the best-fitting band
/// `min_decades` wide, whatever its r² (which the caller reports). `None` when the spectrum
/// spans less than `min_decades`.
#[must_use]
pub fn power_law_band(spectrum: &[(f64, f64)], min_decades: f64) -> Option<PowerLaw> {
    let usable: Vec<(f64, f64)> = spectrum
        .iter()
        .copied()
        .filter(|&(f, p)| f > 0.0 && p > 0.0 && f.is_finite() && p.is_finite())
        .collect();
    let f_low = usable.get(2)?.0;
    let f_high = 0.8 * usable.last()?.0;
    let span = (f_high / f_low).log10();
    if span.is_nan() || span < min_decades {
        return None;
    }
    let binned = log_binned(&usable, f_low, f_high);
    let min_width = (min_decades * EDGES_PER_DECADE).round() as usize;
    let mut best_any: Option<PowerLaw> = None;
    let mut best_good: Option<(f64, PowerLaw)> = None;
    for a in 0..binned.len() {
        for b in a + 1..binned.len() {
            let (lo, hi) = (binned[a].0, binned[b].0);
            let width = (hi / lo).log10();
            if b - a < min_width || width < min_decades - 0.5 / EDGES_PER_DECADE {
                continue;
            }
            let Some(fit) = spectral_exponent(&binned[a..=b], lo, hi) else {
                continue;
            };
            let law = PowerLaw {
                alpha: -fit.slope,
                alpha_error: fit.slope_error,
                band: (lo, hi),
                r_squared: fit.r_squared,
                bins: fit.points,
                fit,
            };
            if b - a == min_width && best_any.is_none_or(|x| law.r_squared > x.r_squared) {
                best_any = Some(law);
            }
            let wider = |(w, x): (f64, PowerLaw)| {
                width > w + 1e-9 || ((width - w).abs() <= 1e-9 && law.r_squared > x.r_squared)
            };
            let logs: Vec<(f64, f64)> = binned[a..=b]
                .iter()
                .map(|&(f, p)| (f.log10(), p.log10()))
                .collect();
            let straight = bend(&logs).is_some_and(|d| d <= POWER_LAW_MAX_BEND);
            if law.r_squared >= POWER_LAW_MIN_R_SQUARED && straight && best_good.is_none_or(wider) {
                best_good = Some((width, law));
            }
        }
    }
    best_good.map(|(_, law)| law).or(best_any)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use std::f64::consts::TAU;

    fn tone(n: usize, dt: f64, parts: &[(f64, f64)]) -> Vec<f64> {
        (0..n)
            .map(|i| {
                let t = i as f64 * dt;
                parts
                    .iter()
                    .map(|&(a, f)| a * (TAU * f * t).sin())
                    .sum::<f64>()
                    + 3.0
            })
            .collect()
    }

    fn peak(spec: &[(f64, f64)]) -> usize {
        (0..spec.len())
            .max_by(|&a, &b| spec[a].1.total_cmp(&spec[b].1))
            .unwrap_or(0)
    }

    fn power_near(spec: &[(f64, f64)], k: usize, half_width: usize) -> f64 {
        spec[k.saturating_sub(half_width)..=(k + half_width).min(spec.len() - 1)]
            .iter()
            .map(|p| p.1)
            .sum()
    }

    #[test]
    fn off_bin_sinusoid_peaks_at_its_frequency_with_power_a2_over_2() {
        // 1000 samples at 1 kHz: bins 1 Hz apart; 123.4 Hz falls between bins.
        let (n, dt, a, f0) = (1000, 1e-3, 2.0, 123.4);
        let spec = power_spectrum(&tone(n, dt, &[(a, f0)]), dt);
        assert_eq!(spec.len(), n / 2 + 1);
        let k = peak(&spec);
        assert!((spec[k].0 - f0).abs() <= 1.0, "{}", spec[k].0);
        let p = power_near(&spec, k, 4);
        assert!((p / (a * a / 2.0) - 1.0).abs() < 0.01, "{p}");
    }

    #[test]
    fn two_on_bin_sinusoids_give_their_squared_amplitude_ratio() {
        let (n, dt) = (2048, 1.0 / 2048.0);
        let spec = power_spectrum(&tone(n, dt, &[(1.0, 50.0), (0.25, 200.0)]), dt);
        assert_eq!(spec[50].0, 50.0);
        let (p1, p2) = (power_near(&spec, 50, 1), power_near(&spec, 200, 1));
        // On a bin the periodic Hann spreads a tone over exactly three bins.
        assert!((p1 - 0.5).abs() < 1e-12, "{p1}");
        assert!((p2 - 0.03125).abs() < 1e-12, "{p2}");
        assert!((p1 / p2 - 16.0).abs() < 1e-9);
        assert!(spec[100].1 < 1e-20);
    }

    #[test]
    fn total_power_is_the_windowed_variance() {
        for n in [997, 1000, 2, 3] {
            let mut rng = ChaCha8Rng::seed_from_u64(n as u64);
            let x: Vec<f64> = (0..n).map(|_| rng.random_range(-1.0..1.0) + 5.0).collect();
            let mean = x.iter().sum::<f64>() / n as f64;
            let (mut num, mut den) = (0.0, 0.0);
            for (i, v) in x.iter().enumerate() {
                let w = (std::f64::consts::PI * i as f64 / n as f64).sin().powi(2);
                num += ((v - mean) * w).powi(2);
                den += w * w;
            }
            let total: f64 = power_spectrum(&x, 0.5).iter().map(|p| p.1).sum();
            assert!((total / (num / den) - 1.0).abs() < 1e-10, "{n}: {total}");
        }
    }

    #[test]
    fn matches_a_direct_dft() {
        for n in [2usize, 3, 7, 8] {
            let x: Vec<f64> = (0..n).map(|i| ((i * i) % 5) as f64 - 1.5).collect();
            let mean = x.iter().sum::<f64>() / n as f64;
            let w: Vec<f64> = (0..n)
                .map(|i| (std::f64::consts::PI * i as f64 / n as f64).sin().powi(2))
                .collect();
            let w2: f64 = w.iter().map(|v| v * v).sum();
            let spec = power_spectrum(&x, 0.1);
            assert_eq!(spec.len(), n / 2 + 1);
            for (k, &(f, p)) in spec.iter().enumerate() {
                let (mut re, mut im) = (0.0, 0.0);
                for i in 0..n {
                    let phase = -TAU * (k * i) as f64 / n as f64;
                    re += (x[i] - mean) * w[i] * phase.cos();
                    im += (x[i] - mean) * w[i] * phase.sin();
                }
                // Bins with a negative-frequency twin carry both halves.
                let twins = if k == 0 || 2 * k == n { 1.0 } else { 2.0 };
                let expect = twins * (re * re + im * im) / (n as f64 * w2);
                assert!((p - expect).abs() < 1e-12, "n {n} k {k}: {p} vs {expect}");
                assert!((f - k as f64 / (n as f64 * 0.1)).abs() < 1e-12);
            }
        }
    }

    #[test]
    fn white_noise_is_flat() {
        let n = 8192;
        let mut rng = ChaCha8Rng::seed_from_u64(42);
        let x: Vec<f64> = (0..n).map(|_| rng.random_range(-0.5..0.5)).collect();
        let spec = power_spectrum(&x, 0.01);
        let band =
            |a: usize, b: usize| spec[a..b].iter().map(|p| p.1).sum::<f64>() / (b - a) as f64;
        let (low, high) = (band(1, n / 8), band(3 * n / 8, n / 2));
        assert!((low / high - 1.0).abs() < 0.15, "{low} {high}");
        // Variance 1/12 spread over N/2 one-sided bins.
        let expect = 2.0 / (12.0 * n as f64);
        assert!((band(1, n / 2) / expect - 1.0).abs() < 0.1);
    }

    #[test]
    fn exponent_of_a_power_law_and_of_a_random_walk() {
        let law: Vec<(f64, f64)> = (0..200)
            .map(|k| (k as f64 * 0.5, 3.0 * (k as f64 * 0.5).powf(-1.5)))
            .collect();
        let fit = spectral_exponent(&law, 1.0, 50.0).unwrap();
        assert!((fit.slope + 1.5).abs() < 1e-12);
        assert!((fit.intercept - 3f64.log10()).abs() < 1e-12);

        // Brownian motion has a 1/f² spectrum; average realisations to tame the scatter.
        let (n, dt) = (4096, 1e-3);
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let mut mean_spec = vec![(0.0, 0.0); n / 2 + 1];
        for _ in 0..16 {
            let mut z = 0.0;
            let walk: Vec<f64> = (0..n)
                .map(|_| {
                    z += rng.random_range(-1.0..1.0);
                    z
                })
                .collect();
            for (m, s) in mean_spec.iter_mut().zip(power_spectrum(&walk, dt)) {
                *m = (s.0, m.1 + s.1 / 16.0);
            }
        }
        let df = 1.0 / (n as f64 * dt);
        let fit = spectral_exponent(&mean_spec, 8.0 * df, (n / 8) as f64 * df).unwrap();
        assert!((fit.slope + 2.0).abs() < 0.15, "{}", fit.slope);
    }

    #[test]
    fn degenerate_inputs_give_empty() {
        assert!(power_spectrum(&[], 0.1).is_empty());
        assert!(power_spectrum(&[1.0], 0.1).is_empty());
        assert!(power_spectrum(&[1.0, f64::NAN, 2.0], 0.1).is_empty());
        assert!(power_spectrum(&[1.0, 2.0], 0.0).is_empty());
        assert!(power_spectrum(&[1.0, 2.0], f64::INFINITY).is_empty());
        assert_eq!(
            power_spectrum(&[4.0, 4.0, 4.0], 1.0),
            vec![(0.0, 0.0), (1.0 / 3.0, 0.0)]
        );
        assert!(spectral_exponent(&[], 0.0, 1.0).is_none());
        assert!(spectral_exponent(&[(0.0, 1.0), (1.0, 0.0), (2.0, 1.0)], 0.0, 10.0).is_none());
    }

    /// Noise with power spectrum ∝ f^−α: random phases, amplitudes f^(−α/2), inverse DFT.
    fn power_law_noise(n: usize, alpha: f64, seed: u64) -> Vec<f64> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut bins = vec![Complex::new(0.0, 0.0); n];
        for k in 1..n / 2 {
            let amplitude = (k as f64).powf(-alpha / 2.0);
            let phase = rng.random_range(0.0..TAU);
            bins[k] = Complex::from_polar(amplitude, phase);
            bins[n - k] = bins[k].conj();
        }
        FftPlanner::<f64>::new()
            .plan_fft_inverse(n)
            .process(&mut bins);
        bins.iter().map(|c| c.re).collect()
    }

    #[test]
    fn welch_keeps_the_power_and_cuts_the_scatter_of_white_noise() {
        let mut rng = ChaCha8Rng::seed_from_u64(8);
        let x: Vec<f64> = (0..16384).map(|_| rng.random_range(-1.0..1.0)).collect();
        let single = power_spectrum(&x, 1e-3);
        let welch = welch_spectrum(&x, 1e-3, WELCH_SEGMENTS);
        // Total power: the variance, 1/3, both ways.
        for spec in [&single, &welch] {
            let total: f64 = spec.iter().map(|b| b.1).sum();
            assert!((total - 1.0 / 3.0).abs() < 0.02, "{total}");
        }
        // Scatter of the bins about their mean: a periodogram's is about 1 (exponential
        // distribution); the average of 8 half-overlapping Hann segments about 1/√(8·0.9).
        let scatter = |spec: &[(f64, f64)]| {
            let inner = &spec[1..spec.len() - 1];
            let mean = inner.iter().map(|b| b.1).sum::<f64>() / inner.len() as f64;
            (inner
                .iter()
                .map(|b| (b.1 / mean - 1.0).powi(2))
                .sum::<f64>()
                / inner.len() as f64)
                .sqrt()
        };
        assert!((scatter(&single) - 1.0).abs() < 0.1, "{}", scatter(&single));
        assert!(scatter(&welch) < 0.45, "{}", scatter(&welch));
        // Frequencies: the segments' bins.
        let length = 2 * 16384 / 9;
        assert_eq!(welch.len(), length / 2 + 1);
        assert!((welch[1].0 - 1.0 / (length as f64 * 1e-3)).abs() < 1e-9);
    }

    #[test]
    fn power_law_band_recovers_alpha_of_synthetic_noise() {
        for (alpha, seed) in [(0.5, 1), (1.0, 2), (1.5, 3), (2.0, 4)] {
            let x = power_law_noise(1 << 15, alpha, seed);
            let spec = welch_spectrum(&x, 1e-3, WELCH_SEGMENTS);
            let law = power_law_band(&spec, 1.0).expect("a band");
            assert!(
                (law.alpha - alpha).abs() < 0.05,
                "α = {alpha}: fitted {} ± {} over {:?}",
                law.alpha,
                law.alpha_error,
                law.band
            );
            assert!(law.r_squared >= POWER_LAW_MIN_R_SQUARED);
            assert!(law.band.1 / law.band.0 >= 10.0);
            assert!(law.alpha_error > 0.0 && law.alpha_error < 0.05);
        }
    }

    #[test]
    fn power_law_band_takes_the_power_law_part_of_a_broken_spectrum() {
        // f^-2 below 10 Hz, flat above: the band lies below the break (with the
        // segments' leakage, within a few bins of it).
        let df = 0.05;
        let spec: Vec<(f64, f64)> = (0..=10_000)
            .map(|k| {
                let f = k as f64 * df;
                (f, if f < 10.0 { (f / 10.0).powi(-2) } else { 1.0 })
            })
            .collect();
        let law = power_law_band(&spec, 1.0).unwrap();
        assert!((law.alpha - 2.0).abs() < 0.1, "{}", law.alpha);
        assert!(law.band.1 <= 15.0, "{:?}", law.band);
        assert!(power_law_band(&spec[..30], 1.0).is_none(), "under a decade");
    }
}
