//! Maximum angle of stability Θ_m and angle of repose Θ_r from a heap kept at the edge of
//! avalanching (thesis §1.2.1, fig. 1.1).
//!
//! The thesis: grains can arrange themselves stably up to an angle Θ_m; a heap comes to
//! rest at Θ_r; the angles of a heap's surface always lie between the two. Θ_m is found by
//! dropping grains onto a heap, one each time the fastest grain has slowed below a
//! threshold, so that the heap is always on the point of sliding.
//!
//! Fed that way, the slope of the quiet heap (measured just before each grain is added)
//! is a sawtooth: it climbs as grains stick to the flank, and falls when an avalanche
//! carries them down. [`avalanches`] finds the teeth: a peak followed by a fall of more
//! than a given drop is an avalanche, the lowest slope before the next rise (by more than
//! the same drop) its end. Θ_m is the mean slope at the peaks, Θ_r the mean at the
//! troughs — the slopes just before and just after the avalanches. The drop is a
//! hysteresis that keeps the scatter of a fitted slope from counting as avalanches; it
//! makes every peak at least that much steeper than its trough.

/// One avalanche: the quiet states before and after it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Avalanche {
    /// Index of the quiet state just before it (the peak).
    pub before: usize,
    /// Slope there (degrees).
    pub before_deg: f64,
    /// Index of the quiet state just after it (the trough).
    pub after: usize,
    /// Slope there (degrees).
    pub after_deg: f64,
}

/// Θ_m and Θ_r from the avalanches of a fed heap.
#[derive(Debug, Clone, PartialEq)]
pub struct StabilityAngles {
    /// Θ_m: mean slope just before the avalanches (degrees).
    pub max_stability_deg: f64,
    /// Sample standard deviation of those slopes (0 with one avalanche).
    pub max_stability_spread_deg: f64,
    /// Θ_r: mean slope just after the avalanches (degrees).
    pub repose_deg: f64,
    /// Sample standard deviation of those slopes.
    pub repose_spread_deg: f64,
    /// The avalanches.
    pub avalanches: Vec<Avalanche>,
}

/// The avalanches in a sequence of quiet slopes (degrees, in the order the heap went
/// through them; NaN where no slope could be fitted, which is skipped).
///
/// Scanning with hysteresis `drop_deg` (> 0): the running maximum becomes a peak once a
/// later slope lies more than `drop_deg` below it; from there the running minimum becomes
/// the trough once a later slope lies more than `drop_deg` above it (or the sequence
/// ends), and the search for the next peak starts. Empty for a non-positive or NaN drop.
#[must_use]
pub fn avalanches(slopes: &[f64], drop_deg: f64) -> Vec<Avalanche> {
    let mut out = Vec::new();
    if !drop_deg.is_finite() || drop_deg <= 0.0 {
        return out;
    }
    // (index, slope) of the running extreme; `falling` once a peak is confirmed.
    let mut peak: Option<(usize, f64)> = None;
    let mut trough: Option<(usize, f64)> = None;
    let mut confirmed_peak: Option<(usize, f64)> = None;
    for (i, &s) in slopes.iter().enumerate() {
        if !s.is_finite() {
            continue;
        }
        match confirmed_peak {
            None => {
                let top = *peak.get_or_insert((i, s));
                if s > top.1 {
                    peak = Some((i, s));
                } else if top.1 - s > drop_deg {
                    confirmed_peak = Some(top);
                    trough = Some((i, s));
                }
            }
            Some(top) => {
                let low = *trough.get_or_insert((i, s));
                if s < low.1 {
                    trough = Some((i, s));
                } else if s - low.1 > drop_deg {
                    out.push(Avalanche {
                        before: top.0,
                        before_deg: top.1,
                        after: low.0,
                        after_deg: low.1,
                    });
                    confirmed_peak = None;
                    peak = Some((i, s));
                    trough = None;
                }
            }
        }
    }
    if let (Some(top), Some(low)) = (confirmed_peak, trough) {
        out.push(Avalanche {
            before: top.0,
            before_deg: top.1,
            after: low.0,
            after_deg: low.1,
        });
    }
    out
}

/// Θ_m and Θ_r from the quiet slopes (see [`avalanches`]); `None` without an avalanche.
#[must_use]
pub fn stability_angles(slopes: &[f64], drop_deg: f64) -> Option<StabilityAngles> {
    let found = avalanches(slopes, drop_deg);
    if found.is_empty() {
        return None;
    }
    let before: Vec<f64> = found.iter().map(|a| a.before_deg).collect();
    let after: Vec<f64> = found.iter().map(|a| a.after_deg).collect();
    let (m, sm) = mean_and_spread(&before);
    let (r, sr) = mean_and_spread(&after);
    Some(StabilityAngles {
        max_stability_deg: m,
        max_stability_spread_deg: sm,
        repose_deg: r,
        repose_spread_deg: sr,
        avalanches: found,
    })
}

/// Θ_m and Θ_r of a heap with two flanks from each flank's own (found in that flank's
/// sequence of quiet slopes, since an avalanche runs down one flank at a time): the means of
/// the two flanks' angles; each spread is that of the slopes before (after) every
/// avalanche of either flank, taken together, so that a flank seen to avalanche once still
/// adds its value to the scatter; the avalanches of both flanks, in the order the heap went
/// through them (their indices refer to the same quiet states).
#[must_use]
pub fn mean_of_flanks(near: &StabilityAngles, far: &StabilityAngles) -> StabilityAngles {
    let mut avalanches: Vec<Avalanche> = near
        .avalanches
        .iter()
        .chain(&far.avalanches)
        .copied()
        .collect();
    avalanches.sort_by_key(|a| (a.before, a.after));
    let before: Vec<f64> = avalanches.iter().map(|a| a.before_deg).collect();
    let after: Vec<f64> = avalanches.iter().map(|a| a.after_deg).collect();
    StabilityAngles {
        max_stability_deg: 0.5 * (near.max_stability_deg + far.max_stability_deg),
        max_stability_spread_deg: mean_and_spread(&before).1,
        repose_deg: 0.5 * (near.repose_deg + far.repose_deg),
        repose_spread_deg: mean_and_spread(&after).1,
        avalanches,
    }
}

/// Mean and sample standard deviation (0 for one value) of a non-empty list.
#[must_use]
pub fn mean_and_spread(values: &[f64]) -> (f64, f64) {
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    if values.len() < 2 {
        return (mean, 0.0);
    }
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, var.sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sawtooth_gives_its_peaks_and_troughs() {
        // Three teeth climbing from 30° to 36° in steps of 1°, each followed by a fall to 30°
        // (one tooth falls in two steps), with ±0.4° scatter that must not count.
        let mut slopes = Vec::new();
        for tooth in 0..3 {
            for k in 0..7 {
                let wobble = if k % 2 == 0 { 0.4 } else { -0.4 };
                slopes.push(30.0 + f64::from(k) + wobble * f64::from(tooth % 2));
            }
            if tooth == 1 {
                slopes.push(33.0);
            }
            slopes.push(f64::NAN);
        }
        slopes.push(30.0);
        slopes.push(31.0);
        slopes.push(32.5);
        let found = avalanches(&slopes, 2.0);
        assert_eq!(found.len(), 3, "{found:?}");
        for a in &found {
            assert!(a.before_deg >= 36.0 - 0.4 - 1e-12 && a.before_deg <= 36.4 + 1e-12);
            assert!(a.after_deg <= 30.4 + 1e-12, "{a:?}");
            assert!(a.before < a.after);
        }
        let angles = stability_angles(&slopes, 2.0).unwrap();
        assert!(angles.max_stability_deg - angles.repose_deg > 2.0);
        assert!(angles.max_stability_spread_deg < 0.5);
    }

    #[test]
    fn scatter_below_the_drop_and_degenerate_input_give_nothing() {
        let noisy: Vec<f64> = (0..50)
            .map(|i| 33.0 + if i % 2 == 0 { 0.9 } else { -0.9 })
            .collect();
        assert!(avalanches(&noisy, 2.0).is_empty());
        assert!(stability_angles(&noisy, 2.0).is_none());
        // The same scatter with a smaller drop is a train of avalanches.
        assert_eq!(avalanches(&noisy, 1.0).len(), 25);
        assert!(avalanches(&[], 2.0).is_empty());
        assert!(avalanches(&[40.0, 30.0], f64::NAN).is_empty());
        assert!(avalanches(&[40.0, 30.0], 0.0).is_empty());
        // A fall at the very end still counts.
        let end = avalanches(&[30.0, 35.0, 31.0], 2.0);
        assert_eq!(
            end,
            vec![Avalanche {
                before: 1,
                before_deg: 35.0,
                after: 2,
                after_deg: 31.0
            }]
        );
    }

    #[test]
    fn two_flanks_give_the_means_of_their_angles() {
        // Near flank: teeth from 28° to 34° and back to 28°, twice; far flank: one tooth
        // from 24° to 30° and back to 25°, at other quiet states.
        let near = [28.0, 31.0, 34.0, 28.0, 31.0, 34.0, 28.0, 29.0, 30.0];
        let far = [24.0, 24.0, 24.0, 24.0, 27.0, 27.0, 27.0, 30.0, 25.0];
        let n = stability_angles(&near, 2.0).unwrap();
        let f = stability_angles(&far, 2.0).unwrap();
        assert_eq!((n.max_stability_deg, n.repose_deg), (34.0, 28.0));
        assert_eq!((f.max_stability_deg, f.repose_deg), (30.0, 25.0));
        let heap = mean_of_flanks(&n, &f);
        assert_eq!(heap.max_stability_deg, 32.0);
        assert_eq!(heap.repose_deg, 26.5);
        let befores: Vec<usize> = heap.avalanches.iter().map(|a| a.before).collect();
        assert_eq!(befores, vec![2, 5, 7]);
        // The spreads are those of the three avalanches' slopes together: 34°, 34°, 30°
        // before (sd 4/√3), 28°, 28°, 25° after (sd √3).
        assert!((heap.max_stability_spread_deg - 4.0 / 3f64.sqrt()).abs() < 1e-12);
        assert!((heap.repose_spread_deg - 3f64.sqrt()).abs() < 1e-12);
    }

    #[test]
    fn mean_and_spread_match_hand_values() {
        assert_eq!(mean_and_spread(&[2.0]), (2.0, 0.0));
        let (m, s) = mean_and_spread(&[1.0, 2.0, 3.0, 4.0]);
        assert!((m - 2.5).abs() < 1e-15);
        assert!((s - (5.0f64 / 3.0).sqrt()).abs() < 1e-15);
    }
}
