//! Hopper discharge (thesis §1.2.3): the steady mass flow rate, the Beverloo law it
//! is compared against, and the detection of a clogged orifice.

use serde::{Deserialize, Serialize};

use crate::analysis::finite_positive;
use crate::analysis::fit::{LineFit, fit_line};

/// Steady mass flow rate from a discharge curve.
///
/// `times[i]` and `discharged[i]` are a time (s) and the mass that has left the
/// hopper by then (kg), non-decreasing; pairs beyond the shorter slice and pairs
/// with a non-finite value are ignored. With m₀ and m₁ the least and greatest
/// discharged mass (normally 0 and the final mass), the fit takes the samples with
/// `m₀ + lower·(m₁ − m₀) ≤ m ≤ m₀ + upper·(m₁ − m₀)` — e.g. 0.2 and 0.8 — which
/// leaves out the start-up after the gate opens and the tail as the hopper empties
/// or clogs. The fit's `slope` is the mass flow rate in kg/s.
///
/// `None` when `lower`/`upper` are not finite with `lower < upper`, when nothing
/// was discharged (m₁ = m₀), or when fewer than three samples fall in the band.
#[must_use]
pub fn steady_rate(times: &[f64], discharged: &[f64], lower: f64, upper: f64) -> Option<LineFit> {
    if !finite_positive(upper - lower) {
        return None;
    }
    let samples: Vec<(f64, f64)> = times
        .iter()
        .zip(discharged)
        .map(|(&t, &m)| (t, m))
        .filter(|(t, m)| t.is_finite() && m.is_finite())
        .collect();
    let (m0, m1) = samples
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &(_, m)| {
            (lo.min(m), hi.max(m))
        });
    let total = m1 - m0;
    if !finite_positive(total) {
        return None;
    }
    let (lo, hi) = (m0 + lower * total, m0 + upper * total);
    let band: Vec<(f64, f64)> = samples
        .into_iter()
        .filter(|&(_, m)| m >= lo && m <= hi)
        .collect();
    if band.len() < 3 {
        return None;
    }
    fit_line(&band)
}

/// Shape of a hopper orifice for [`beverloo_rate`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum Orifice {
    /// A circular hole; the orifice size is its diameter.
    Circular,
    /// A slot (rectangular orifice); the orifice size is its width and `length` its
    /// length along the slot (m), taken as long compared to the grains.
    Slot {
        /// Length of the slot (m).
        length: f64,
    },
}

/// Mass flow rate (kg/s) predicted by the Beverloo law.
///
/// With D = `orifice` (diameter, or the width of a slot), d = `grain_diameter`,
/// ρ_b = `bulk_density` (kg/m³) and g = |`gravity`| (the sign is ignored, so a
/// gravity stored as −9.81 works):
///
/// * circular orifice: W = C ρ_b √g (D − k d)^{5/2},
/// * slot of length L: W = C ρ_b √g L (D − k d)^{3/2}.
///
/// D − k d is the effective orifice once the "empty annulus" of about k/2 grain
/// diameters along the rim is removed. The slot form keeps the full length L; for a
/// short slot pass the corrected length L − k d yourself. Typical fitted constants for
/// a circular orifice are C ≈ 0.55–0.65 and k ≈ 1.5 (Nedderman); a slot has a
/// different C, so fit both constants to the geometry at hand.
///
/// Returns 0 when D ≤ k d (no flow predicted) and NaN when an input is NaN.
///
/// References: W. A. Beverloo, H. A. Leniger, J. van de Velde, "The flow of granular
/// solids through orifices", Chem. Eng. Sci. 15 (1961) 260–269; R. M. Nedderman,
/// *Statics and Kinematics of Granular Materials*, Cambridge 1992, ch. 10.
#[must_use]
pub fn beverloo_rate(
    bulk_density: f64,
    gravity: f64,
    orifice: f64,
    grain_diameter: f64,
    c: f64,
    k: f64,
    shape: Orifice,
) -> f64 {
    let effective = orifice - k * grain_diameter;
    if effective.is_nan() {
        return f64::NAN;
    }
    if effective <= 0.0 {
        return 0.0;
    }
    let prefactor = c * bulk_density * gravity.abs().sqrt();
    match shape {
        Orifice::Circular => prefactor * effective.powf(2.5),
        Orifice::Slot { length } => prefactor * length * effective.powf(1.5),
    }
}

/// Whether the hopper has clogged: no outflow during the last `window` seconds
/// before `end_time`.
///
/// Over the samples (`times[i]`, `discharged[i]`) — pairs beyond the shorter slice
/// and pairs with a non-finite value dropped, times increasing — an *increase* at
/// sample i means `discharged[i] > discharged[i − 1]` (the previous kept sample),
/// dated `times[i]`. Let t_last be the time of the last increase with
/// `gate_open ≤ times[i] ≤ end_time`, or `gate_open` if there is none (flow never
/// started). The result is `end_time − t_last ≥ window`: a stretch of at least
/// `window` seconds without outflow that reaches to `end_time`. A pause that ends
/// before `end_time` is not a clog.
///
/// With sampled data, a clog is only seen to the resolution of the sampling: the
/// stretch begins at the first sample that shows no increase after the last one
/// that did. Whether grains remain in the hopper (an empty hopper also stops
/// discharging) is for the caller to check.
///
/// `false` when `window` is not a finite positive number (a clog needs a stretch of
/// some length), when `gate_open` or `end_time` is not finite, or when
/// `end_time < gate_open`.
#[must_use]
pub fn clogged(
    times: &[f64],
    discharged: &[f64],
    gate_open: f64,
    window: f64,
    end_time: f64,
) -> bool {
    if !finite_positive(window)
        || !gate_open.is_finite()
        || !end_time.is_finite()
        || end_time < gate_open
    {
        return false;
    }
    let mut last_increase = gate_open;
    let mut previous: Option<f64> = None;
    for (&t, &m) in times.iter().zip(discharged) {
        if !t.is_finite() || !m.is_finite() {
            continue;
        }
        if previous.is_some_and(|p| m > p) && t >= gate_open && t <= end_time {
            last_increase = last_increase.max(t);
        }
        previous = Some(m);
    }
    end_time - last_increase >= window
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Gate at t = 1; quadratic start-up to t = 2; steady 3 kg/s until 27 kg; an
    /// exponential tail towards 30 kg. Value and slope are continuous at the joins.
    fn discharge(t: f64) -> f64 {
        const W: f64 = 3.0;
        if t < 1.0 {
            0.0
        } else if t < 2.0 {
            0.5 * W * (t - 1.0).powi(2)
        } else if t < 10.5 {
            0.5 * W + W * (t - 2.0)
        } else {
            30.0 - 3.0 * (-(t - 10.5)).exp()
        }
    }

    #[test]
    fn steady_part_of_a_discharge_curve_gives_the_exact_rate() {
        let times: Vec<f64> = (0..=2000).map(|i| f64::from(i) * 0.01).collect();
        let mass: Vec<f64> = times.iter().map(|&t| discharge(t)).collect();
        // Band 6..24 kg (of ≈ 30 kg) lies inside the steady part 1.5..27 kg.
        let fit = steady_rate(&times, &mass, 0.2, 0.8).unwrap();
        assert!((fit.slope - 3.0).abs() < 1e-9, "{fit:?}");
        assert!((fit.intercept + 4.5).abs() < 1e-8);
        assert!(fit.r_squared > 1.0 - 1e-12);
        // The whole curve is not a line: start-up and tail bend it.
        let whole = steady_rate(&times, &mass, 0.0, 1.0).unwrap();
        assert!(whole.r_squared < 0.999);
    }

    #[test]
    fn steady_rate_degenerate_inputs() {
        assert!(steady_rate(&[], &[], 0.2, 0.8).is_none());
        assert!(steady_rate(&[0.0, 1.0, 2.0], &[0.0, 0.0, 0.0], 0.2, 0.8).is_none());
        assert!(steady_rate(&[0.0, 1.0, 2.0], &[0.0, 1.0, 2.0], 0.8, 0.2).is_none());
        assert!(steady_rate(&[0.0, 1.0, 2.0], &[0.0, 1.0, 2.0], f64::NAN, 0.8).is_none());
        // Two samples in the band are too few to call steady.
        assert!(steady_rate(&[0.0, 1.0, 2.0, 3.0], &[0.0, 1.0, 2.0, 3.0], 0.2, 0.8).is_none());
        // Non-finite samples are skipped and surplus entries of the longer slice ignored.
        let fit = steady_rate(
            &[0.0, 1.0, 2.0, 3.0, 4.0, 9.0],
            &[0.0, 2.0, f64::NAN, 6.0, 8.0],
            0.0,
            1.0,
        )
        .unwrap();
        assert_eq!(fit.points, 4);
        assert!((fit.slope - 2.0).abs() < 1e-12);
    }

    #[test]
    fn beverloo_matches_hand_computation() {
        // ρ_b = 1500, g = 9.81, D = 0.05, d = 0.005, C = 0.58, k = 1.5:
        // D − kd = 0.0425; √9.81 = 3.132092; 0.0425^2.5 = 3.723680e-4;
        // W = 0.58 · 1500 · 3.132092 · 3.723680e-4 = 1.014673 kg/s.
        let w = beverloo_rate(1500.0, 9.81, 0.05, 0.005, 0.58, 1.5, Orifice::Circular);
        assert!((w - 1.014673).abs() < 1e-5, "{w}");
        let down = beverloo_rate(1500.0, -9.81, 0.05, 0.005, 0.58, 1.5, Orifice::Circular);
        assert_eq!(w, down);
        // Slot, L = 0.2: 0.0425^1.5 = 8.761599e-3; W = 0.58·1500·3.132092·0.2·8.761599e-3 = 4.774932.
        let slot = beverloo_rate(
            1500.0,
            9.81,
            0.05,
            0.005,
            0.58,
            1.5,
            Orifice::Slot { length: 0.2 },
        );
        assert!((slot - 4.774932).abs() < 1e-5, "{slot}");
        assert_eq!(
            beverloo_rate(1500.0, 9.81, 0.0075, 0.005, 0.58, 1.5, Orifice::Circular),
            0.0
        );
        assert_eq!(
            beverloo_rate(1500.0, 9.81, 0.002, 0.005, 0.58, 1.5, Orifice::Circular),
            0.0
        );
        assert!(
            beverloo_rate(1500.0, 9.81, f64::NAN, 0.005, 0.58, 1.5, Orifice::Circular).is_nan()
        );
    }

    #[test]
    fn clog_detection() {
        let times: Vec<f64> = (0..=100).map(|i| f64::from(i) * 0.1).collect();
        // Flows from the gate at t = 1 until t = 5, then nothing more leaves.
        let stops: Vec<f64> = times
            .iter()
            .map(|&t| (t.clamp(1.0, 5.0) - 1.0) * 2.0)
            .collect();
        let last = times
            .iter()
            .copied()
            .filter(|&t| t <= 5.0)
            .fold(0.0, f64::max);
        assert!(clogged(&times, &stops, 1.0, 3.0, 10.0));
        assert!(!clogged(&times, &stops, 1.0, 6.0, 10.0));
        // Exactly at the boundary counts as clogged.
        assert!(clogged(&times, &stops, 1.0, 10.0 - last, 10.0));
        // Judged at t = 6 the pause is only about 1 s long.
        assert!(!clogged(&times, &stops, 1.0, 3.0, 6.0));

        // Steady flow to the end never clogs.
        let steady: Vec<f64> = times.iter().map(|&t| (t - 1.0).max(0.0)).collect();
        assert!(!clogged(&times, &steady, 1.0, 0.5, 10.0));

        // Never flowed: the pause is counted from the gate.
        let none = vec![0.0; times.len()];
        assert!(clogged(&times, &none, 1.0, 9.0, 10.0));
        assert!(!clogged(&times, &none, 1.0, 9.5, 10.0));

        // A pause in the middle followed by renewed flow is no clog.
        let pause: Vec<f64> = times
            .iter()
            .map(|&t| if (3.0..7.0).contains(&t) { 3.0 } else { t })
            .collect();
        assert!(!clogged(&times, &pause, 0.0, 2.0, 10.0));

        // Outflow before the gate opened (e.g. settling grains counted) is ignored.
        assert!(clogged(
            &[0.0, 0.5, 1.0, 5.0],
            &[0.0, 1.0, 1.0, 1.0],
            1.0,
            4.0,
            5.0
        ));

        assert!(!clogged(&times, &none, 1.0, 0.0, 10.0));
        assert!(!clogged(&times, &none, 1.0, f64::NAN, 10.0));
        assert!(!clogged(&times, &none, 5.0, 1.0, 4.0));
        assert!(clogged(&[], &[], 0.0, 1.0, 2.0));
    }
}
