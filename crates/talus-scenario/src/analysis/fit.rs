//! Ordinary least-squares straight-line fit, the building block of the slope-type
//! measurements (angle of repose, hopper discharge rate, spectral exponent).

use serde::{Deserialize, Serialize};

use crate::analysis::finite_positive;

/// A straight line `y = slope · x + intercept` fitted by ordinary least squares.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LineFit {
    /// dy/dx of the fitted line.
    pub slope: f64,
    /// y at x = 0.
    pub intercept: f64,
    /// Coefficient of determination in [0, 1]; 1 when all y are equal (a horizontal
    /// line explains them exactly).
    pub r_squared: f64,
    /// Number of (finite) points that entered the fit.
    pub points: usize,
    /// Standard error of the slope, from the scatter of the points about the line
    /// (s² = Σ residual² / (n − 2), SE = s / √Sxx); NaN for two points, which a line fits
    /// exactly whatever their noise.
    pub slope_error: f64,
    /// Standard error of the intercept, s · √(1/n + x̄² / Sxx); NaN for two points.
    pub intercept_error: f64,
    /// The smallest and largest x of the points fitted: the range the line holds on, and
    /// the one to draw it over.
    pub x_range: (f64, f64),
}

impl LineFit {
    /// The fitted line evaluated at `x`.
    #[must_use]
    pub fn at(&self, x: f64) -> f64 {
        self.slope * x + self.intercept
    }
}

/// Fits `y = slope · x + intercept` to `points` by ordinary least squares.
///
/// Points with a non-finite coordinate are skipped. The sums are taken about the
/// means (two-pass), so data far from the origin — times late in a run, heights
/// of a box standing high above z = 0 — keep their precision.
///
/// Returns `None` when fewer than two finite points remain, when all remaining x are
/// equal (a vertical line has no slope), or when the sums overflow.
#[must_use]
pub fn fit_line(points: &[(f64, f64)]) -> Option<LineFit> {
    let finite = || {
        points
            .iter()
            .filter(|(x, y)| x.is_finite() && y.is_finite())
    };
    let n = finite().count();
    if n < 2 {
        return None;
    }
    // An exact min/max test, because a mean of equal values need not be exactly that
    // value, which would leave tiny non-zero deviations and a meaningless huge slope.
    let (x_lo, x_hi) = finite().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &(x, _)| {
        (lo.min(x), hi.max(x))
    });
    if x_lo == x_hi {
        return None;
    }
    let nf = n as f64;
    let (sum_x, sum_y) = finite().fold((0.0, 0.0), |(sx, sy), &(x, y)| (sx + x, sy + y));
    let (mean_x, mean_y) = (sum_x / nf, sum_y / nf);
    let (sxx, sxy, syy) = finite().fold((0.0, 0.0, 0.0), |(sxx, sxy, syy), &(x, y)| {
        let (dx, dy) = (x - mean_x, y - mean_y);
        (sxx + dx * dx, sxy + dx * dy, syy + dy * dy)
    });
    if !finite_positive(sxx) || !sxy.is_finite() || !syy.is_finite() {
        return None;
    }
    let slope = sxy / sxx;
    let intercept = mean_y - slope * mean_x;
    if !slope.is_finite() || !intercept.is_finite() {
        return None;
    }
    let r_squared = if syy > 0.0 {
        // Clamped because rounding can push sxy² / (sxx·syy) a hair past 1.
        ((sxy / sxx) * (sxy / syy)).clamp(0.0, 1.0)
    } else {
        1.0
    };
    let (slope_error, intercept_error) = if n > 2 {
        let residual = (syy - slope * sxy).max(0.0) / (nf - 2.0);
        (
            (residual / sxx).sqrt(),
            (residual * (1.0 / nf + mean_x * mean_x / sxx)).sqrt(),
        )
    } else {
        (f64::NAN, f64::NAN)
    };
    Some(LineFit {
        slope,
        intercept,
        r_squared,
        points: n,
        slope_error,
        intercept_error,
        x_range: (x_lo, x_hi),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_points_match_hand_computation() {
        // x̄ = 1, ȳ = 2, Sxx = 2, Sxy = 1, Syy = 2 → slope ½, intercept 3/2, r² = 1/4.
        let fit = fit_line(&[(0.0, 1.0), (1.0, 3.0), (2.0, 2.0)]).unwrap();
        assert!((fit.slope - 0.5).abs() < 1e-15);
        assert!((fit.intercept - 1.5).abs() < 1e-15);
        assert!((fit.r_squared - 0.25).abs() < 1e-15);
        assert_eq!(fit.points, 3);
        // Residuals −½, 1, −½: s² = 1.5 / 1, SE(slope) = √(1.5 / 2), SE(intercept) =
        // √(1.5 · (1/3 + 1/2)).
        assert!((fit.slope_error - 0.75f64.sqrt()).abs() < 1e-15);
        assert!((fit.intercept_error - 1.25f64.sqrt()).abs() < 1e-15);
        assert_eq!(fit.x_range, (0.0, 2.0));
    }

    #[test]
    fn slope_error_matches_the_scatter_of_slopes_over_noise_draws() {
        // The standard error a single fit reports is the spread of the slopes that
        // repeated noisy measurements of the same line give.
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(4);
        let xs: Vec<f64> = (0..20).map(f64::from).collect();
        let mut slopes = Vec::new();
        let mut reported = Vec::new();
        for _ in 0..2000 {
            let points: Vec<(f64, f64)> = xs
                .iter()
                .map(|&x| {
                    // Uniform noise of variance 1/3 · 0.5² about y = 2x + 1.
                    (x, 2.0 * x + 1.0 + rng.random_range(-0.5..0.5))
                })
                .collect();
            let fit = fit_line(&points).unwrap();
            slopes.push(fit.slope);
            reported.push(fit.slope_error);
        }
        let mean = slopes.iter().sum::<f64>() / slopes.len() as f64;
        let sd = (slopes.iter().map(|s| (s - mean).powi(2)).sum::<f64>()
            / (slopes.len() - 1) as f64)
            .sqrt();
        let typical = reported.iter().sum::<f64>() / reported.len() as f64;
        assert!((mean - 2.0).abs() < 3.0 * sd / (slopes.len() as f64).sqrt());
        assert!((typical / sd - 1.0).abs() < 0.05, "{typical} vs {sd}");
        // And the exact value for this noise: σ / √Sxx, σ² = 1/12, Sxx = 665.
        assert!((sd / (1.0 / 12.0 / 665.0f64).sqrt() - 1.0).abs() < 0.05);
    }

    #[test]
    fn exact_line_far_from_origin_keeps_precision() {
        // Uncentred sums of x² near 1e16 would lose every digit of the slope.
        let pts: Vec<_> = (0..100)
            .map(|i| {
                let x = 1.0e8 + f64::from(i) * 0.01;
                (x, 3.0 * (x - 1.0e8) - 2.0)
            })
            .collect();
        let fit = fit_line(&pts).unwrap();
        assert!((fit.slope - 3.0).abs() < 1e-6, "{fit:?}");
        assert!((fit.at(1.0e8) + 2.0).abs() < 1e-6);
        assert!(fit.r_squared > 1.0 - 1e-12);
    }

    #[test]
    fn non_finite_points_are_skipped() {
        let pts = [
            (0.0, 0.0),
            (f64::NAN, 5.0),
            (1.0, 2.0),
            (2.0, f64::INFINITY),
            (2.0, 4.0),
        ];
        let fit = fit_line(&pts).unwrap();
        assert_eq!(fit.points, 3);
        assert!((fit.slope - 2.0).abs() < 1e-15);
        assert!(fit.intercept.abs() < 1e-15);
    }

    #[test]
    fn horizontal_data_has_r_squared_one() {
        let fit = fit_line(&[(0.0, 7.0), (1.0, 7.0), (5.0, 7.0)]).unwrap();
        assert_eq!(fit.slope, 0.0);
        assert_eq!(fit.intercept, 7.0);
        assert_eq!(fit.r_squared, 1.0);
    }

    #[test]
    fn degenerate_inputs_give_none() {
        assert!(fit_line(&[]).is_none());
        assert!(fit_line(&[(1.0, 2.0)]).is_none());
        assert!(fit_line(&[(1.0, 2.0), (f64::NAN, 3.0)]).is_none());
        assert!(fit_line(&[(0.1, 2.0), (0.1, 3.0), (0.1, 4.0)]).is_none());
        assert!(fit_line(&[(-1.0e300, 0.0), (1.0e300, 1.0)]).is_none());
    }
}
