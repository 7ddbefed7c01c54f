//! Fitting Beverloo's law to measured discharge rates: W = A (D − k d)^n over orifice
//! widths D, with the grain diameter d known, and the prefactor A, the empty-annulus
//! constant k and the exponent n fitted (n may be fixed instead: 3/2 for a slot, 5/2 for a
//! square or circular orifice).
//!
//! For a given k the law is a straight line in logarithms, ln W = ln A + n ln(D − k d), so
//! the fit is a one-dimensional search over k (from 0 to just below the smallest D / d),
//! each trial k solved by ordinary least squares ([`fit_line`]); with n fixed the line has
//! the known slope n and only its intercept is fitted. The residual is measured in ln W:
//! discharge rates over several widths span an order of magnitude, and relative errors are
//! what the seeds' spread gives.
//!
//! The standard errors of the fitted constants come from the covariance of the least-squares
//! fit linearised at its minimum, `s² (JᵀJ)⁻¹`: J the derivatives of the model
//! ln W = ln A + n ln(D − k d) by (ln A, n, k) at each point, s² the residual variance with
//! the degrees of freedom left after the fitted constants.
//!
//! References: W. A. Beverloo, H. A. Leniger, J. van de Velde, Chem. Eng. Sci. 15 (1961)
//! 260–269; R. M. Nedderman, *Statics and Kinematics of Granular Materials* (1992), ch. 10.

use crate::analysis::fit::fit_line;

/// A fitted Beverloo law W = A (D − k d)^n.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BeverlooFit {
    /// The prefactor A (for a slot of length L it holds C ρ_b √g L; for a square orifice
    /// C ρ_b √g), in the units of W over m^n.
    pub prefactor: f64,
    /// The empty-annulus constant k (in grain diameters).
    pub k: f64,
    /// The exponent n (fitted or as given).
    pub n: f64,
    /// Standard error of the prefactor A (same units).
    pub prefactor_error: f64,
    /// Standard error of k.
    pub k_error: f64,
    /// Standard error of n; 0 when n was given rather than fitted.
    pub n_error: f64,
    /// Root-mean-square residual of ln W.
    pub rms_log_residual: f64,
    /// Points fitted.
    pub points: usize,
}

impl BeverlooFit {
    /// The fitted rate at orifice width `orifice` (0 at or below k d).
    #[must_use]
    pub fn rate(&self, orifice: f64, grain_diameter: f64) -> f64 {
        let effective = orifice - self.k * grain_diameter;
        if effective > 0.0 {
            self.prefactor * effective.powf(self.n)
        } else {
            0.0
        }
    }
}

/// Steps of the search over k: a coarse scan, then golden-section refinement around the
/// best coarse value.
const COARSE_STEPS: usize = 400;
const REFINE_STEPS: usize = 100;

/// Fits W = A (D − k d)^n to `points` (D, W), with `exponent` fixed or (None) fitted.
///
/// Points with a non-finite or non-positive coordinate are skipped. Returns `None` with
/// fewer points than free parameters plus one (3 with n fixed and 4 with it free, so that
/// the residual says something), a non-positive grain diameter, or widths all equal.
#[must_use]
pub fn fit_beverloo(
    points: &[(f64, f64)],
    grain_diameter: f64,
    exponent: Option<f64>,
) -> Option<BeverlooFit> {
    let data: Vec<(f64, f64)> = points
        .iter()
        .copied()
        .filter(|&(w, q)| w.is_finite() && q.is_finite() && w > 0.0 && q > 0.0)
        .collect();
    let needed = if exponent.is_some() { 3 } else { 4 };
    if data.len() < needed || !(grain_diameter.is_finite() && grain_diameter > 0.0) {
        return None;
    }
    let smallest = data.iter().map(|p| p.0).fold(f64::INFINITY, f64::min);
    let largest = data.iter().map(|p| p.0).fold(0.0, f64::max);
    if largest - smallest <= 1e-12 * largest {
        return None;
    }
    let k_max = smallest / grain_diameter * (1.0 - 1e-9);
    let trial = |k: f64| -> Option<BeverlooFit> {
        let logs: Vec<(f64, f64)> = data
            .iter()
            .map(|&(w, q)| ((w - k * grain_diameter).ln(), q.ln()))
            .collect();
        let (ln_a, n) = match exponent {
            Some(n) => {
                let ln_a = logs.iter().map(|&(x, y)| y - n * x).sum::<f64>() / logs.len() as f64;
                (ln_a, n)
            }
            None => {
                let line = fit_line(&logs)?;
                (line.intercept, line.slope)
            }
        };
        let sum: f64 = logs.iter().map(|&(x, y)| (y - ln_a - n * x).powi(2)).sum();
        let rms = (sum / logs.len() as f64).sqrt();
        rms.is_finite().then_some(BeverlooFit {
            prefactor: ln_a.exp(),
            k,
            n,
            // Only the chosen fit needs them (see `with_errors`).
            prefactor_error: f64::NAN,
            k_error: f64::NAN,
            n_error: f64::NAN,
            rms_log_residual: rms,
            points: logs.len(),
        })
    };
    let mut best: Option<(usize, BeverlooFit)> = None;
    for i in 0..=COARSE_STEPS {
        let k = k_max * i as f64 / COARSE_STEPS as f64;
        if let Some(fit) = trial(k)
            && best.is_none_or(|(_, b)| fit.rms_log_residual < b.rms_log_residual)
        {
            best = Some((i, fit));
        }
    }
    let (i, coarse) = best?;
    // Golden-section search in the coarse cell either side of the best value.
    let step = k_max / COARSE_STEPS as f64;
    let (mut lo, mut hi) = (
        (i as f64 - 1.0).max(0.0) * step,
        ((i as f64 + 1.0) * step).min(k_max),
    );
    let ratio = (5f64.sqrt() - 1.0) / 2.0;
    let residual = |k: f64| trial(k).map_or(f64::INFINITY, |f| f.rms_log_residual);
    for _ in 0..REFINE_STEPS {
        let a = hi - ratio * (hi - lo);
        let b = lo + ratio * (hi - lo);
        if residual(a) < residual(b) {
            hi = b;
        } else {
            lo = a;
        }
    }
    let refined = trial(0.5 * (lo + hi));
    let best = match refined {
        Some(f) if f.rms_log_residual <= coarse.rms_log_residual => f,
        _ => coarse,
    };
    Some(with_errors(best, &data, grain_diameter, exponent.is_none()))
}

/// `fit` with the standard errors of its constants: s² (JᵀJ)⁻¹ with J the derivatives of
/// ln A + n ln(D − k d) by ln A, n (when `free_n`) and k at the points `data`, and
/// s² = Σ residual² / (points − constants). The error of A is A times that of ln A. NaN
/// where the matrix is singular.
fn with_errors(fit: BeverlooFit, data: &[(f64, f64)], d: f64, free_n: bool) -> BeverlooFit {
    let rows: Vec<Vec<f64>> = data
        .iter()
        .map(|&(w, _)| {
            let x = w - fit.k * d;
            let mut row = vec![1.0];
            if free_n {
                row.push(x.ln());
            }
            row.push(-fit.n * d / x);
            row
        })
        .collect();
    let p = rows[0].len();
    let dof = data.len().saturating_sub(p);
    let residuals = fit.rms_log_residual.powi(2) * data.len() as f64;
    let variance = residuals / dof as f64;
    let mut normal = vec![vec![0.0; p]; p];
    for row in &rows {
        for i in 0..p {
            for j in 0..p {
                normal[i][j] += row[i] * row[j];
            }
        }
    }
    let error = |i: usize, inverse: &Option<Vec<Vec<f64>>>| {
        inverse
            .as_ref()
            .map_or(f64::NAN, |m| (variance * m[i][i]).max(0.0).sqrt())
    };
    let inverse = invert(normal);
    BeverlooFit {
        prefactor_error: fit.prefactor * error(0, &inverse),
        n_error: if free_n { error(1, &inverse) } else { 0.0 },
        k_error: error(p - 1, &inverse),
        ..fit
    }
}

/// The inverse of the square matrix `m` by Gauss–Jordan elimination with partial pivoting;
/// `None` when a pivot vanishes against the matrix's scale (singular to rounding).
fn invert(mut m: Vec<Vec<f64>>) -> Option<Vec<Vec<f64>>> {
    let n = m.len();
    let scale = m.iter().flatten().fold(0.0_f64, |a, v| a.max(v.abs()));
    let mut inverse: Vec<Vec<f64>> = (0..n)
        .map(|i| (0..n).map(|j| f64::from(u8::from(i == j))).collect())
        .collect();
    for col in 0..n {
        let pivot = (col..n).max_by(|&a, &b| m[a][col].abs().total_cmp(&m[b][col].abs()))?;
        // Written to refuse a NaN pivot too.
        if m[pivot][col].abs().partial_cmp(&(1e-14 * scale)) != Some(std::cmp::Ordering::Greater) {
            return None;
        }
        m.swap(col, pivot);
        inverse.swap(col, pivot);
        let p = m[col][col];
        for j in 0..n {
            m[col][j] /= p;
            inverse[col][j] /= p;
        }
        for row in 0..n {
            if row != col {
                let factor = m[row][col];
                for j in 0..n {
                    m[row][j] -= factor * m[col][j];
                    inverse[row][j] -= factor * inverse[col][j];
                }
            }
        }
    }
    Some(inverse)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn law(a: f64, k: f64, n: f64, d: f64, widths: &[f64]) -> Vec<(f64, f64)> {
        widths
            .iter()
            .map(|&w| (w, a * (w - k * d).powf(n)))
            .collect()
    }

    #[test]
    fn exact_data_gives_back_its_constants() {
        let d = 0.008;
        let widths = [0.03, 0.04, 0.05, 0.065, 0.08];
        for (k, n) in [(1.4, 1.5), (2.5, 2.5), (0.0, 2.0)] {
            let fit = fit_beverloo(&law(3.0, k, n, d, &widths), d, None).unwrap();
            assert!((fit.k - k).abs() < 1e-4, "k {} vs {k}", fit.k);
            assert!((fit.n - n).abs() < 1e-4, "n {} vs {n}", fit.n);
            assert!((fit.prefactor / 3.0 - 1.0).abs() < 1e-3);
            assert!(fit.rms_log_residual < 1e-6);
            let fixed = fit_beverloo(&law(3.0, k, n, d, &widths), d, Some(n)).unwrap();
            assert!((fixed.k - k).abs() < 1e-6, "fixed n: k {} vs {k}", fixed.k);
            assert!((fit.rate(0.05, d) / (3.0 * (0.05 - k * d).powf(n)) - 1.0).abs() < 1e-3);
        }
    }

    /// A standard normal draw (Box–Muller).
    fn gaussian(rng: &mut rand_chacha::ChaCha8Rng) -> f64 {
        use rand::Rng;
        let (u, v): (f64, f64) = (1.0 - rng.random::<f64>(), rng.random());
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }

    /// Mean and sample standard deviation.
    fn mean_sd(values: &[f64]) -> (f64, f64) {
        let n = values.len() as f64;
        let mean = values.iter().sum::<f64>() / n;
        let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
        (mean, var.sqrt())
    }

    #[test]
    fn reported_errors_match_the_spread_of_fits_over_noise_draws() {
        // Rates W = A (D − k d)^n over nine widths, each with a relative noise of 3 % (a
        // normal error of ln W), fitted again and again: the standard error one fit reports
        // is the spread the constants show over the draws.
        use rand::SeedableRng;
        let (a, k, n, d, sigma) = (3.0, 1.5, 1.5, 0.008, 0.03);
        let widths: Vec<f64> = (0..9).map(|i| 0.03 + 0.01 * f64::from(i)).collect();
        let exact = law(a, k, n, d, &widths);
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(17);
        for exponent in [None, Some(n)] {
            let mut fits = Vec::new();
            for _ in 0..400 {
                let noisy: Vec<(f64, f64)> = exact
                    .iter()
                    .map(|&(w, q)| (w, q * (sigma * gaussian(&mut rng)).exp()))
                    .collect();
                fits.push(fit_beverloo(&noisy, d, exponent).unwrap());
            }
            let spread_and_reported = |value: fn(&BeverlooFit) -> f64,
                                       error: fn(&BeverlooFit) -> f64,
                                       truth: f64| {
                let values: Vec<f64> = fits.iter().map(value).collect();
                let (mean, spread) = mean_sd(&values);
                // The root-mean-square of the reported errors: the typical one.
                let reported =
                    (fits.iter().map(|f| error(f).powi(2)).sum::<f64>() / fits.len() as f64).sqrt();
                // Unbiased to within a fraction of the spread.
                assert!(
                    (mean - truth).abs() < 0.5 * spread,
                    "{exponent:?}: mean {mean} vs {truth}, spread {spread}"
                );
                (spread, reported)
            };
            let mut checks = vec![
                (
                    "A",
                    spread_and_reported(|f| f.prefactor, |f| f.prefactor_error, a),
                ),
                ("k", spread_and_reported(|f| f.k, |f| f.k_error, k)),
            ];
            if exponent.is_none() {
                checks.push(("n", spread_and_reported(|f| f.n, |f| f.n_error, n)));
            } else {
                assert!(fits.iter().all(|f| f.n == n && f.n_error == 0.0));
            }
            for (name, (spread, reported)) in checks {
                assert!(spread > 0.0 && reported.is_finite());
                let ratio = reported / spread;
                assert!(
                    (0.5..2.0).contains(&ratio),
                    "{exponent:?}: {name} reported ± {reported}, spread {spread}"
                );
            }
        }
    }

    #[test]
    fn too_little_or_degenerate_data_gives_none() {
        let d = 0.008;
        let three = law(3.0, 1.5, 1.5, d, &[0.03, 0.04, 0.05]);
        assert!(fit_beverloo(&three, d, None).is_none());
        assert!(fit_beverloo(&three, d, Some(1.5)).is_some());
        assert!(fit_beverloo(&three, 0.0, Some(1.5)).is_none());
        assert!(fit_beverloo(&[(0.04, 1.0); 5], d, None).is_none());
        let with_bad = [(0.03, f64::NAN), (0.04, -1.0), (0.05, 1.0)];
        assert!(fit_beverloo(&with_bad, d, Some(1.5)).is_none());
    }
}
