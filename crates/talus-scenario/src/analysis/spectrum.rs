//! Power spectrum of a wall-force time series (thesis §1.2.3, fig. 1.5).
//!
//! In hopper flow the force on a wall fluctuates with a 1/f^α spectrum over two
//! decades of frequency, turning into white noise only for very steep hopper walls.
//! [`power_spectrum`] turns a sampled force into a one-sided periodogram and
//! [`spectral_exponent`] fits α on a log–log scale over a frequency band.

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
}
