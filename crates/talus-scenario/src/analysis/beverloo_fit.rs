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
    Some(match refined {
        Some(f) if f.rms_log_residual <= coarse.rms_log_residual => f,
        _ => coarse,
    })
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
