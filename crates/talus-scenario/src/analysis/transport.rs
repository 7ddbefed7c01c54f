//! Transport on a vibrating conveyor (thesis §1.2.2, fig. 1.4).
//!
//! The plate under the grains oscillates along a direction tilted from the vertical (or on
//! an ellipse); the grains creep along the horizontal part of that direction. At low
//! frequency they ride the plate; at high frequency they are thrown and land further on,
//! until the flow is almost horizontal.
//!
//! The transport velocity is measured from the grains' mean displacement, not from their
//! instantaneous velocities, which swing with the plate: the mean position's change over
//! a window divided by its length. Splitting the window into equal sub-windows gives
//! independent estimates whose spread is the uncertainty.

use talus_geom::glam::DVec3;

use crate::analysis::stability::mean_and_spread;

/// Peak acceleration of the motion `a sin(ωt) + b sin(ωt + ψ)` divided by `gravity`
/// (a magnitude): Γ = max_t |a sin(ωt) + b sin(ωt + ψ)| ω²/g, which for one component is
/// A(2πf)²/g. Writing the motion as u sin ωt + v cos ωt with u = a + b cos ψ and
/// v = b sin ψ, the largest squared length is (|u|² + |v|²)/2 + √(((|u|² − |v|²)/2)² +
/// (u·v)²), the major semi-axis of the ellipse. Infinite for g = 0.
#[must_use]
pub fn peak_acceleration_ratio(a: DVec3, b: DVec3, lag: f64, frequency: f64, gravity: f64) -> f64 {
    let omega = std::f64::consts::TAU * frequency;
    peak_displacement(a, b, lag) * omega * omega / gravity.abs()
}

/// Largest displacement of `a sin θ + b sin(θ + ψ)` over θ (see
/// [`peak_acceleration_ratio`]).
#[must_use]
pub fn peak_displacement(a: DVec3, b: DVec3, lag: f64) -> f64 {
    let u = a + b * lag.cos();
    let v = b * lag.sin();
    let (uu, vv, uv) = (u.length_squared(), v.length_squared(), u.dot(v));
    let half_diff = 0.5 * (uu - vv);
    (0.5 * (uu + vv) + (half_diff * half_diff + uv * uv).sqrt()).sqrt()
}

/// The transport velocity over a window and its sub-windows.
#[derive(Debug, Clone, PartialEq)]
pub struct TransportFit {
    /// Mean velocity over the whole window (m/s).
    pub velocity: f64,
    /// Velocity in each sub-window (m/s).
    pub sub_velocities: Vec<f64>,
    /// Sample standard deviation of the sub-window velocities (m/s).
    pub spread: f64,
    /// The times of the samples taken as the window's ends.
    pub window: (f64, f64),
}

/// The mean velocity between the samples nearest `t0` and `t1` (inside `[t0, t1]`) of a
/// time series of `(time, mean position)` sorted by time; `None` when fewer than two
/// samples lie in the window.
#[must_use]
pub fn mean_velocity(samples: &[(f64, f64)], t0: f64, t1: f64) -> Option<(f64, (f64, f64))> {
    // Sample times are sums and products of steps: one that should sit on an end may miss
    // it by a rounding, and would leave a part of a period out.
    let slack = 1e-9 * t0.abs().max(t1.abs()).max(1.0);
    let inside = |s: &&(f64, f64)| s.0 >= t0 - slack && s.0 <= t1 + slack;
    let first = samples.iter().find(inside)?;
    let last = samples.iter().rev().find(inside)?;
    let dt = last.0 - first.0;
    if dt.is_nan() || dt <= 0.0 || !first.1.is_finite() || !last.1.is_finite() {
        return None;
    }
    Some(((last.1 - first.1) / dt, (first.0, last.0)))
}

/// The transport velocity over `window` from `(time, mean position)` samples, with
/// `parts` sub-windows of equal length for the spread; `None` when the window or any
/// sub-window holds fewer than two samples, or `parts` < 2.
#[must_use]
pub fn transport_velocity(
    samples: &[(f64, f64)],
    window: (f64, f64),
    parts: usize,
) -> Option<TransportFit> {
    if parts < 2 {
        return None;
    }
    let (velocity, ends) = mean_velocity(samples, window.0, window.1)?;
    let length = (window.1 - window.0) / parts as f64;
    let sub_velocities = (0..parts)
        .map(|k| {
            // Neighbouring sub-windows share their boundary, computed once the same way.
            let end = |j: usize| {
                if j == parts {
                    window.1
                } else {
                    window.0 + j as f64 * length
                }
            };
            mean_velocity(samples, end(k), end(k + 1)).map(|(v, _)| v)
        })
        .collect::<Option<Vec<f64>>>()?;
    let (_, spread) = mean_and_spread(&sub_velocities);
    Some(TransportFit {
        velocity,
        sub_velocities,
        spread,
        window: ends,
    })
}

/// Velocity averaged over each stretch of `span` samples (about one period of the drive),
/// at the stretch's middle time: the transport with the plate's swing averaged out.
#[must_use]
pub fn running_velocity(samples: &[(f64, f64)], span: usize) -> Vec<(f64, f64)> {
    // A span past the samples (a drive whose period is longer than the run, even one of
    // usize::MAX samples) has no stretch.
    let span = span.max(1);
    if span >= samples.len() {
        return Vec::new();
    }
    samples
        .windows(span + 1)
        .filter_map(|w| {
            let (a, b) = (w[0], w[span]);
            let dt = b.0 - a.0;
            (dt > 0.0).then(|| (0.5 * (a.0 + b.0), (b.1 - a.1) / dt))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gamma_of_a_line_and_of_a_circle() {
        let g = 9.81;
        let one = peak_acceleration_ratio(DVec3::new(0.0, 0.0, 0.001), DVec3::ZERO, 0.0, 25.0, g);
        let expected = 0.001 * (std::f64::consts::TAU * 25.0).powi(2) / g;
        assert!((one - expected).abs() < 1e-12 * expected);
        // Two equal perpendicular components a quarter period apart: a circle of that radius.
        let r = peak_displacement(
            DVec3::new(0.002, 0.0, 0.0),
            DVec3::new(0.0, 0.0, 0.002),
            std::f64::consts::FRAC_PI_2,
        );
        assert!((r - 0.002).abs() < 1e-15);
        // In phase, the components add as vectors.
        let line = peak_displacement(
            DVec3::new(0.003, 0.0, 0.0),
            DVec3::new(0.0, 0.0, 0.004),
            0.0,
        );
        assert!((line - 0.005).abs() < 1e-15);
        // Brute force over the cycle for a general ellipse.
        let (a, b, lag) = (
            DVec3::new(0.001, 0.0, 0.002),
            DVec3::new(0.0015, 0.0, -0.0005),
            1.1,
        );
        let brute = (0..100_000)
            .map(|k| {
                let t = std::f64::consts::TAU * f64::from(k) / 100_000.0;
                (a * t.sin() + b * (t + lag).sin()).length()
            })
            .fold(0.0, f64::max);
        assert!((peak_displacement(a, b, lag) - brute).abs() < 1e-9);
    }

    #[test]
    fn steady_drift_under_a_swing_gives_the_drift() {
        // x = 0.05 t + 0.001 sin(2π 20 t), sampled at 1 kHz: every window of whole periods
        // gives 0.05 m/s exactly; the running velocity over one period too.
        let samples: Vec<(f64, f64)> = (0..=2000)
            .map(|k| {
                let t = f64::from(k) * 1e-3;
                (
                    t,
                    0.05 * t + 0.001 * (std::f64::consts::TAU * 20.0 * t).sin(),
                )
            })
            .collect();
        let fit = transport_velocity(&samples, (0.4, 1.6), 4).unwrap();
        assert!((fit.velocity - 0.05).abs() < 1e-9, "{fit:?}");
        assert_eq!(fit.sub_velocities.len(), 4);
        assert!(fit.spread < 1e-9, "{fit:?}");
        for (_, v) in running_velocity(&samples, 50) {
            assert!((v - 0.05).abs() < 1e-9);
        }
        // A drive slower than the run: no stretch of a period, whatever its length.
        assert_eq!(running_velocity(&samples, samples.len() - 1).len(), 1);
        assert!(running_velocity(&samples, samples.len()).is_empty());
        assert!(running_velocity(&samples, usize::MAX).is_empty());
        assert!(transport_velocity(&samples, (0.4, 1.6), 1).is_none());
        assert!(transport_velocity(&samples, (3.0, 4.0), 4).is_none());
        assert!(transport_velocity(&[], (0.0, 1.0), 4).is_none());
        assert!(mean_velocity(&samples, 1.0, 1.0).is_none());
    }
}
