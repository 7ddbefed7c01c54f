//! Angle of repose from the free surface of a slumped pile (thesis §1.2.1).
//!
//! The experiment fills a box with grains and removes one side wall; the pile slumps
//! out through the opening and comes to rest. Θ_r is the slope angle of the resulting
//! free surface, measured along the open direction x. The thesis relates it to the
//! static friction coefficient by μ = tan Θ_r.
//!
//! The measurement is two steps: [`surface_profile`] reduces the grains to the height
//! of the free surface over x, and [`angle_of_repose`] fits a line to the middle of
//! the slope, away from the plateau that stays against the back wall and from the
//! scattered grains of the toe.

use serde::{Deserialize, Serialize};

use crate::analysis::finite_positive;
use crate::analysis::fit::{LineFit, fit_line};
use crate::analysis::stability::mean_and_spread;

/// Height of the free surface over x, from the grains' tops.
///
/// `points` are `(x, z_top)`: a grain's position along the open direction and the
/// height of its highest vertex. `[x_min, x_max]` is cut into `bins` equal bins; for
/// each bin that holds a grain the result has `(bin centre, highest z_top in it)`,
/// in increasing x. Empty bins are left out rather than reported as zero, so a gap
/// in the pile is not mistaken for the floor. A bin about one grain diameter wide
/// gives a surface without holes where the pile is dense.
///
/// Points outside `[x_min, x_max]` (a grain exactly at `x_max` belongs to the last
/// bin) and points with a non-finite coordinate are ignored. The result is empty
/// when `bins` is 0 or the range is empty or not finite.
#[must_use]
pub fn surface_profile(
    points: &[(f64, f64)],
    x_min: f64,
    x_max: f64,
    bins: usize,
) -> Vec<(f64, f64)> {
    SurfaceTops::of(points, x_min, x_max, bins).profile(x_min, x_max, bins)
}

/// The highest point in each bin of [`surface_profile`] among some of the points: those of
/// the grains one process of a decomposed run holds. Merged, the tops of two sets of points
/// are those of their union, so that the processes' tops put together give the profile of
/// all the grains, whatever the split.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SurfaceTops {
    /// (bin, highest z_top in it) for the bins holding a point, by bin.
    tops: Vec<(usize, f64)>,
}

impl SurfaceTops {
    /// The tops of `points` in `bins` bins over `[x_min, x_max]` (see [`surface_profile`]
    /// for what is left out).
    #[must_use]
    pub fn of(points: &[(f64, f64)], x_min: f64, x_max: f64, bins: usize) -> SurfaceTops {
        let range = x_max - x_min;
        if bins == 0 || !x_min.is_finite() || !x_max.is_finite() || !finite_positive(range) {
            return SurfaceTops::default();
        }
        let nb = bins as f64;
        // Collected as (bin, z) and sorted rather than held in a Vec of `bins` slots, so
        // memory follows the number of grains, not a possibly huge bin count.
        let hits: Vec<(usize, f64)> = points
            .iter()
            .filter(|(x, z)| x.is_finite() && z.is_finite() && *x >= x_min && *x <= x_max)
            .map(|&(x, z)| {
                // `as` saturates; the clamp puts x == x_max into the last bin.
                let bin = (((x - x_min) / range) * nb).floor() as usize;
                (bin.min(bins - 1), z)
            })
            .collect();
        SurfaceTops {
            tops: highest_per_bin(hits),
        }
    }

    /// Takes in the tops of other points (over the same bins).
    pub fn merge(&mut self, other: &SurfaceTops) {
        let all = self.tops.iter().chain(&other.tops).copied().collect();
        self.tops = highest_per_bin(all);
    }

    /// The profile: (bin centre, highest z_top) per bin holding a point, in increasing x.
    #[must_use]
    pub fn profile(&self, x_min: f64, x_max: f64, bins: usize) -> Vec<(f64, f64)> {
        let width = (x_max - x_min) / bins as f64;
        self.tops
            .iter()
            .map(|&(bin, z)| (x_min + (bin as f64 + 0.5) * width, z))
            .collect()
    }
}

/// The highest height of each bin among `hits` (bin, height), by bin.
fn highest_per_bin(mut hits: Vec<(usize, f64)>) -> Vec<(usize, f64)> {
    hits.sort_unstable_by_key(|hit| hit.0);
    let mut tops: Vec<(usize, f64)> = Vec::with_capacity(hits.len());
    for (bin, z) in hits {
        match tops.last_mut() {
            Some(top) if top.0 == bin => top.1 = higher(top.1, z),
            _ => tops.push((bin, z)),
        }
    }
    tops
}

/// The higher of two heights, a NaN below any number, `+0` above `-0`: the result does not
/// depend on which came first.
#[must_use]
pub fn higher(a: f64, b: f64) -> f64 {
    if a.is_nan() || b > a || (b == a && b.is_sign_positive()) {
        b
    } else {
        a
    }
}

/// The result of [`angle_of_repose`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReposeFit {
    /// Θ_r = atan(|slope|), in degrees; independent of which side the pile opens to.
    pub angle_deg: f64,
    /// The line fitted to [`ReposeFit::used`], z over x.
    pub fit: LineFit,
    /// The profile the fit was taken from: finite points, sorted by x.
    pub profile: Vec<(f64, f64)>,
    /// The profile points that entered the fit.
    pub used: Vec<(f64, f64)>,
}

/// Angle of repose from a surface profile (see [`surface_profile`]).
///
/// Heights are taken above `floor_z`; `h_max` is the profile's greatest height.
/// A profile point qualifies when its height lies in `[lower · h_max, upper · h_max]`
/// (e.g. 0.2 and 0.8): that excludes the plateau left against the back wall and the
/// grains lying near the floor. The qualifying points are split into runs of
/// neighbours in x; a run also breaks where two neighbours lie more than twice the
/// median profile spacing apart (more than one empty bin), so a lone grain or small
/// heap out on the toe that happens to reach `lower · h_max` stays separate. The run
/// that descends furthest — the largest height span, ties to the run with more points
/// — is the slope face, and a line is fitted to it.
///
/// The pile is assumed to have one slope face: for a heap with two faces, pass the
/// profile of each side separately. A grain thrown high above the pile raises `h_max`
/// and shifts the band, so pass a profile of the pile at rest.
///
/// Returns `None` when `lower` and `upper` are not finite with `lower < upper`, when
/// no point lies above the floor, or when fewer than three points qualify in the run.
#[must_use]
pub fn angle_of_repose(
    profile: &[(f64, f64)],
    floor_z: f64,
    lower: f64,
    upper: f64,
) -> Option<ReposeFit> {
    if !finite_positive(upper - lower) || !floor_z.is_finite() {
        return None;
    }
    let mut sorted: Vec<(f64, f64)> = profile
        .iter()
        .copied()
        .filter(|(x, z)| x.is_finite() && z.is_finite())
        .collect();
    sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
    let h_max = sorted
        .iter()
        .map(|&(_, z)| z - floor_z)
        .fold(f64::NEG_INFINITY, f64::max);
    if !finite_positive(h_max) {
        return None;
    }
    let (lo, hi) = (lower * h_max, upper * h_max);
    let qualifies = |z: f64| {
        let h = z - floor_z;
        h >= lo && h <= hi
    };
    let max_step = 2.0 * median_spacing(&sorted)?;

    // Runs as index ranges into `sorted`; the best one by (height span, length).
    let mut best: Option<(std::ops::Range<usize>, f64)> = None;
    let mut start = 0;
    while start < sorted.len() {
        if !qualifies(sorted[start].1) {
            start += 1;
            continue;
        }
        let mut end = start + 1;
        while end < sorted.len()
            && qualifies(sorted[end].1)
            && sorted[end].0 - sorted[end - 1].0 <= max_step
        {
            end += 1;
        }
        let (z_lo, z_hi) = sorted[start..end]
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &(_, z)| {
                (lo.min(z), hi.max(z))
            });
        let span = z_hi - z_lo;
        let better = match &best {
            None => true,
            Some((range, best_span)) => {
                span > *best_span || (span == *best_span && end - start > range.len())
            }
        };
        if better {
            best = Some((start..end, span));
        }
        start = end;
    }
    let (range, _) = best?;
    if range.len() < 3 {
        return None;
    }
    let used = sorted[range].to_vec();
    let fit = fit_line(&used)?;
    Some(ReposeFit {
        angle_deg: fit.slope.abs().atan().to_degrees(),
        fit,
        profile: sorted,
        used,
    })
}

/// Median of the positive x steps of a sorted profile: the bin width when the profile
/// comes from [`surface_profile`], robust to the gaps left by empty bins.
fn median_spacing(sorted: &[(f64, f64)]) -> Option<f64> {
    let mut steps: Vec<f64> = sorted
        .windows(2)
        .map(|w| w[1].0 - w[0].0)
        .filter(|d| *d > 0.0)
        .collect();
    if steps.is_empty() {
        return None;
    }
    steps.sort_by(f64::total_cmp);
    Some(steps[steps.len() / 2])
}

/// Blocks a window's angles are cut into for the error of their mean.
pub const WINDOW_BLOCKS: usize = 5;

/// The angle of a surface that keeps moving (a rotating drum), over a window of time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WindowAngle {
    /// Mean of the angles (degrees).
    pub mean_deg: f64,
    /// Standard error of the mean (degrees), from the means of [`WINDOW_BLOCKS`]
    /// consecutive blocks of the angles: σ_blocks / √blocks. Successive angles of an
    /// avalanching surface are not independent (the slope climbs and falls over many
    /// outputs), so the scatter of single angles over √n would understate it.
    pub error_deg: f64,
    /// Sample standard deviation of the angles: how far the surface swings.
    pub spread_deg: f64,
    /// Least angle (degrees).
    pub least_deg: f64,
    /// Largest angle (degrees).
    pub largest_deg: f64,
    /// Angles averaged.
    pub samples: usize,
}

/// The [`WindowAngle`] of `angles` (in time order; non-finite ones, where no surface could
/// be fitted, left out); `None` with fewer than two angles per block.
#[must_use]
pub fn window_angle(angles: &[f64]) -> Option<WindowAngle> {
    let fitted: Vec<f64> = angles.iter().copied().filter(|a| a.is_finite()).collect();
    let n = fitted.len();
    if n < 2 * WINDOW_BLOCKS {
        return None;
    }
    let (mean_deg, spread_deg) = mean_and_spread(&fitted);
    // Blocks as equal as the count allows: block k holds fitted[k n / B .. (k + 1) n / B].
    let block_means: Vec<f64> = (0..WINDOW_BLOCKS)
        .map(|k| {
            let block = &fitted[k * n / WINDOW_BLOCKS..(k + 1) * n / WINDOW_BLOCKS];
            block.iter().sum::<f64>() / block.len() as f64
        })
        .collect();
    let error_deg = mean_and_spread(&block_means).1 / (WINDOW_BLOCKS as f64).sqrt();
    Some(WindowAngle {
        mean_deg,
        error_deg,
        spread_deg,
        least_deg: fitted.iter().copied().fold(f64::INFINITY, f64::min),
        largest_deg: fitted.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        samples: n,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    const GRAIN: f64 = 0.004;
    const HEIGHT: f64 = 0.1;
    const PLATEAU: f64 = 0.05;
    const FLOOR: f64 = 0.02;

    struct Pile {
        grains: Vec<(f64, f64)>,
        foot: f64,
        x_end: f64,
        stray_x: f64,
    }

    /// A slumped pile opening towards +x: plateau of height HEIGHT from the back wall
    /// at x = 0 to PLATEAU, a face at `angle` down to the floor, then a sparse toe of
    /// single grains and one small heap tall enough to reach into the fit band.
    fn pile(angle_deg: f64, seed: u64) -> Pile {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let tan = angle_deg.to_radians().tan();
        let foot = PLATEAU + HEIGHT / tan;
        let surface = |x: f64| (HEIGHT.min((foot - x) * tan)).max(0.0);
        let mut grains = Vec::new();
        for _ in 0..20_000 {
            let x = rng.random_range(0.0..foot);
            // Surface grains with a bump of ±0.15 grain, and buried grains below them.
            let bump = 0.3 * GRAIN * (rng.random::<f64>() - 0.5);
            grains.push((x, FLOOR + surface(x) + bump));
            grains.push((x, FLOOR + surface(x) * rng.random::<f64>()));
        }
        let x_end = foot + 0.12;
        for _ in 0..15 {
            grains.push((
                rng.random_range(foot..x_end),
                FLOOR + GRAIN * rng.random::<f64>(),
            ));
        }
        let stray_x = foot + 0.08;
        grains.push((stray_x, FLOOR + 0.3 * HEIGHT));
        Pile {
            grains,
            foot,
            x_end,
            stray_x,
        }
    }

    #[test]
    fn exact_wedge_gives_exact_angle() {
        let tan = 35f64.to_radians().tan();
        let profile: Vec<_> = (0..100)
            .map(|i| {
                let x = f64::from(i) * 0.02;
                (x, 1.0 + (1.0 - x * tan).clamp(0.0, 0.5))
            })
            .collect();
        let fit = angle_of_repose(&profile, 1.0, 0.2, 0.8).unwrap();
        assert!((fit.angle_deg - 35.0).abs() < 1e-9, "{}", fit.angle_deg);
    }

    #[test]
    fn noisy_piles_recover_their_angle() {
        for (k, angle) in [20.0, 35.0, 50.0].into_iter().enumerate() {
            let p = pile(angle, 7 + k as u64);
            let bins = (p.x_end / GRAIN).round() as usize;
            let profile = surface_profile(&p.grains, 0.0, p.x_end, bins);
            let fit = angle_of_repose(&profile, FLOOR, 0.2, 0.8).unwrap();
            assert!(
                (fit.angle_deg - angle).abs() < 1.0,
                "{angle}: {}",
                fit.angle_deg
            );
            assert!(fit.fit.slope < 0.0);
            // Neither the plateau nor the toe (with its stray heap) entered the fit.
            assert!(fit.used.iter().all(|&(x, _)| x > PLATEAU && x < p.foot));
            assert!(fit.used.iter().all(|&(x, _)| (x - p.stray_x).abs() > GRAIN));
            assert!(fit.used.len() >= 3);
        }
    }

    #[test]
    fn mirrored_pile_gives_the_same_angle() {
        for angle in [20.0, 35.0, 50.0] {
            let p = pile(angle, 99);
            let bins = (p.x_end / GRAIN).round() as usize;
            let mirrored: Vec<_> = p.grains.iter().map(|&(x, z)| (-x, z)).collect();
            let a = angle_of_repose(
                &surface_profile(&p.grains, 0.0, p.x_end, bins),
                FLOOR,
                0.2,
                0.8,
            )
            .unwrap();
            let b = angle_of_repose(
                &surface_profile(&mirrored, -p.x_end, 0.0, bins),
                FLOOR,
                0.2,
                0.8,
            )
            .unwrap();
            assert!(b.fit.slope > 0.0);
            assert!(
                (b.angle_deg - angle).abs() < 1.0,
                "{angle}: {}",
                b.angle_deg
            );
            assert!((a.angle_deg - b.angle_deg).abs() < 0.5);
        }
    }

    #[test]
    fn profile_takes_the_highest_grain_per_bin() {
        let pts = [
            (0.1, 1.0),
            (0.2, 3.0),
            (0.9, 2.0),
            (1.0, 5.0),
            (1.5, 9.0),
            (f64::NAN, 9.0),
        ];
        assert_eq!(
            surface_profile(&pts, 0.0, 1.0, 2),
            vec![(0.25, 3.0), (0.75, 5.0)]
        );
        // Empty middle bins are omitted, not reported as zero height.
        assert_eq!(
            surface_profile(&pts, 0.0, 1.0, 4),
            vec![(0.125, 3.0), (0.875, 5.0)]
        );
    }

    #[test]
    fn degenerate_inputs() {
        assert!(surface_profile(&[], 0.0, 1.0, 10).is_empty());
        assert!(surface_profile(&[(0.5, 1.0)], 0.0, 1.0, 0).is_empty());
        assert!(surface_profile(&[(0.5, 1.0)], 1.0, 1.0, 3).is_empty());
        assert!(surface_profile(&[(0.5, 1.0)], f64::NAN, 1.0, 3).is_empty());
        assert_eq!(
            surface_profile(&[(0.5, 1.0)], 0.0, 1.0, usize::MAX).len(),
            1
        );

        let line = [(0.0, 1.0), (1.0, 0.5), (2.0, 0.0)];
        assert!(angle_of_repose(&[], 0.0, 0.2, 0.8).is_none());
        assert!(angle_of_repose(&[(0.0, 1.0)], 0.0, 0.2, 0.8).is_none());
        // Everything at or below the floor.
        assert!(angle_of_repose(&line, 1.0, 0.2, 0.8).is_none());
        // Only two points qualify.
        assert!(angle_of_repose(&line, 0.0, 0.4, 1.0).is_none());
        assert!(angle_of_repose(&line, 0.0, 0.0, 1.0).is_some());
        assert!(angle_of_repose(&line, 0.0, 0.8, 0.2).is_none());
        assert!(angle_of_repose(&line, 0.0, f64::NAN, 0.8).is_none());
        assert!(angle_of_repose(&line, f64::NAN, 0.2, 0.8).is_none());
        // All at one x: no slope.
        assert!(angle_of_repose(&[(1.0, 1.0), (1.0, 2.0), (1.0, 3.0)], 0.0, 0.0, 1.0).is_none());
        // Non-finite points are dropped, not fatal.
        let with_nan = [
            (0.0, 1.0),
            (f64::NAN, 0.7),
            (1.0, 0.5),
            (2.0, 0.0),
            (3.0, f64::INFINITY),
        ];
        let fit = angle_of_repose(&with_nan, 0.0, 0.0, 1.0).unwrap();
        assert!((fit.angle_deg - 0.5f64.atan().to_degrees()).abs() < 1e-12);
    }

    #[test]
    fn a_swinging_angle_averages_to_its_middle_with_an_error_from_its_blocks() {
        // A sawtooth from 30° to 44° over 25 outputs, eight teeth, one angle unfitted.
        let mut angles: Vec<f64> = (0..200)
            .map(|i| 30.0 + 14.0 * (i % 25) as f64 / 24.0)
            .collect();
        angles[7] = f64::NAN;
        let w = window_angle(&angles).unwrap();
        assert_eq!(w.samples, 199);
        assert!((w.mean_deg - 37.0).abs() < 0.1, "{}", w.mean_deg);
        assert_eq!((w.least_deg, w.largest_deg), (30.0, 44.0));
        // 25 evenly spaced values over 14°: σ = (14/24) √((25² − 1)/12) ≈ 4.21°.
        assert!((w.spread_deg - 4.2).abs() < 0.2, "{}", w.spread_deg);
        // Each block of 40 holds 1.6 teeth: their means differ by a few tenths of a degree,
        // far less than the spread over √199.
        assert!(w.error_deg < 0.5 && w.error_deg > 0.0, "{}", w.error_deg);
        // The blocks' error against the brute force of its definition.
        let fitted: Vec<f64> = angles.iter().copied().filter(|a| a.is_finite()).collect();
        let means: Vec<f64> = (0..5)
            .map(|k| {
                let b = &fitted[k * 199 / 5..(k + 1) * 199 / 5];
                b.iter().sum::<f64>() / b.len() as f64
            })
            .collect();
        let m = means.iter().sum::<f64>() / 5.0;
        let sd = (means.iter().map(|x| (x - m).powi(2)).sum::<f64>() / 4.0).sqrt();
        assert!((w.error_deg - sd / 5f64.sqrt()).abs() < 1e-12);
        // Too few angles for five blocks of two.
        assert!(window_angle(&angles[..9]).is_none());
    }
}
