//! The regions balanced by measured cost: each process's grains weigh their modelled work
//! times what a unit of that work has cost on that process since the regions were last cut,
//! relative to the run's mean.
//!
//! The model (a pair whose grains touch costs [`super::TOUCHING_WORK`] pairs whose boxes
//! overlap alone) is right on average, but a unit of it costs more on some processes than on
//! others: grains of more faces in one part of the scene, a slower node, a core shared with
//! another job. Every process times its own narrow phase and adds up the modelled work of
//! the pairs it evaluated; the step's totals carry both to every process (so all know every
//! process's figures), and at the next cut each process scales its grains' weights by its
//! cost per unit over the run's: a process that was slow per unit gets less work. This is
//! the weighting by time of LAMMPS' `fix balance … weight time` (each processor's atoms
//! weighed by the time spent on them), with the time per unit of modelled work instead of
//! per atom, so that the pairs still count within a process.
//!
//! The regions are cut every `rebalance_every` steps, and sooner (but not within a quarter of
//! that) when the slowest process's narrow phase has fallen [`LAG_TO_CUT`] behind the mean
//! since the last cut: all processes see the same figures and decide alike.
//!
//! The factors of successive cuts are averaged (geometrically: [`smoothed`]), so that the
//! cut does not jitter with the noise of one interval's timing.
//!
//! Measured times change from run to run, and with them where the regions are cut; the
//! results do not (see [`super::decompose`]: no bit depends on which process evaluates a
//! pair or sums a grain's loads).

use super::ProcessLoad;

/// Bounds of the factor a process's weights are scaled by: one noisy interval (a process
/// descheduled for a while) must not send most of the scene to the others, and the next
/// cut corrects a factor that was too small.
pub(crate) const FACTOR_RANGE: (f64, f64) = (0.25, 4.0);

/// The factors every process's grains' weights are scaled by at a cut, by rank, from every
/// process's loads at the last cut (`before`, empty before the first) and now (`now`): each
/// process's narrow-phase time per unit of modelled work since then, over the whole run's
/// (all processes' time over all their work), within [`FACTOR_RANGE`]. `None` when there is
/// nothing to compare: a single process, no work or no time measured on some process since
/// the last cut, or figures that are not finite.
pub(crate) fn weight_factors(before: &[ProcessLoad], now: &[ProcessLoad]) -> Option<Vec<f64>> {
    if now.len() < 2 {
        return None;
    }
    let since: Vec<(f64, f64)> = now
        .iter()
        .enumerate()
        .map(|(p, load)| {
            let earlier = before.get(p).copied().unwrap_or_default();
            (
                load.narrow_seconds - earlier.narrow_seconds,
                load.modelled_work - earlier.modelled_work,
            )
        })
        .collect();
    let measured = |&(time, work): &(f64, f64)| {
        time > 0.0 && work > 0.0 && time.is_finite() && work.is_finite()
    };
    if !since.iter().all(measured) {
        return None;
    }
    let (time, work) = since
        .iter()
        .fold((0.0, 0.0), |(t, w), &(time, work)| (t + time, w + work));
    let mean = time / work;
    Some(
        since
            .iter()
            .map(|&(time, work)| ((time / work) / mean).clamp(FACTOR_RANGE.0, FACTOR_RANGE.1))
            .collect(),
    )
}

/// How far behind the mean a process's narrow phase may fall between cuts (its time since
/// the last cut over the mean of all processes', less one) before the regions are cut
/// again ahead of schedule. On two processes of a shared 2-core machine the timing noise
/// over 25 steps reaches 10 % (at 0.1 a balanced hopper was cut a third more often, for
/// nothing); 0.25 leaves a balanced run nearly to its schedule.
pub(crate) const LAG_TO_CUT: f64 = 0.25;

/// How far the slowest process's narrow phase fell behind the mean since the last cut
/// (`before`, by rank, empty before the first; `now`): its time over the mean time, less
/// one. `None` with fewer than two processes or when some process measured no time.
pub(crate) fn lag(before: &[ProcessLoad], now: &[ProcessLoad]) -> Option<f64> {
    if now.len() < 2 {
        return None;
    }
    let times: Vec<f64> = now
        .iter()
        .enumerate()
        .map(|(p, load)| {
            load.narrow_seconds - before.get(p).copied().unwrap_or_default().narrow_seconds
        })
        .collect();
    if !times.iter().all(|&t| t > 0.0 && t.is_finite()) {
        return None;
    }
    let mean = times.iter().sum::<f64>() / times.len() as f64;
    Some(times.iter().copied().fold(0.0, f64::max) / mean - 1.0)
}

/// The factors to cut by: the geometric mean of those `measured` since the last cut and
/// those the last cut used (`previous`, by rank; when there were some for as many
/// processes), so that one interval's noise moves the cut half as far while a lasting
/// difference in cost is followed within a few cuts.
pub(crate) fn smoothed(previous: &[f64], measured: Vec<f64>) -> Vec<f64> {
    if previous.len() != measured.len() {
        return measured;
    }
    measured
        .iter()
        .zip(previous)
        .map(|(m, p)| (m * p).sqrt())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(narrow_seconds: f64, modelled_work: f64) -> ProcessLoad {
        ProcessLoad {
            narrow_seconds,
            modelled_work,
            ..ProcessLoad::default()
        }
    }

    #[test]
    fn processes_that_cost_alike_keep_their_weights() {
        let before = [load(1.0, 100.0), load(2.0, 300.0)];
        // Both spent 0.01 s per 10 units since.
        let now = [load(1.5, 600.0), load(3.0, 1300.0)];
        let factors = weight_factors(&before, &now).unwrap();
        assert!(
            factors.iter().all(|f| (f - 1.0).abs() < 1e-12),
            "{factors:?}"
        );
    }

    #[test]
    fn a_process_slow_per_unit_weighs_its_grains_more() {
        // Process 1 took twice as long per unit as process 0 for the same work: the mean
        // cost is 1.5 units of process 0's, so 0 weighs 1/1.5 and 1 weighs 2/1.5.
        let before = [load(0.0, 0.0), load(0.0, 0.0)];
        let now = [load(1.0, 100.0), load(2.0, 100.0)];
        let f = weight_factors(&before, &now).unwrap();
        assert!((f[0] - 2.0 / 3.0).abs() < 1e-12 && (f[1] - 4.0 / 3.0).abs() < 1e-12);
        // Work-weighted: process 0 did nine tenths of the work at half process 1's cost.
        let now = [load(0.9, 90.0), load(0.2, 10.0)];
        let mean = 1.1 / 100.0;
        let f = weight_factors(&before, &now).unwrap();
        assert!((f[0] - 0.01 / mean).abs() < 1e-12 && (f[1] - 0.02 / mean).abs() < 1e-12);
    }

    #[test]
    fn a_cut_follows_the_measurements_halfway_on_a_log_scale() {
        assert_eq!(smoothed(&[], vec![2.0, 0.5]), vec![2.0, 0.5]);
        assert_eq!(smoothed(&[1.0, 1.0, 1.0], vec![2.0, 0.5]), vec![2.0, 0.5]);
        let f = smoothed(&[1.0, 1.0], vec![4.0, 0.25]);
        assert!((f[0] - 2.0).abs() < 1e-12 && (f[1] - 0.5).abs() < 1e-12);
        // A lasting cost: within 2 % of it after six cuts.
        let mut f = vec![1.0, 1.0];
        for _ in 0..6 {
            f = smoothed(&f, vec![3.0, 0.5]);
        }
        assert!((f[0] / 3.0 - 1.0).abs() < 0.02 && (f[1] / 0.5 - 1.0).abs() < 0.02);
    }

    #[test]
    fn the_lag_is_the_slowest_process_over_the_mean() {
        let before = [load(1.0, 0.0), load(1.0, 0.0), load(1.0, 0.0)];
        let now = [load(2.0, 0.0), load(2.0, 0.0), load(2.5, 0.0)];
        // 1, 1 and 1.5 s since: the mean is 7/6 s.
        assert!((lag(&before, &now).unwrap() - (1.5 / (3.5 / 3.0) - 1.0)).abs() < 1e-12);
        let even = [load(2.0, 0.0), load(2.0, 0.0), load(2.0, 0.0)];
        assert!(lag(&before, &even).unwrap().abs() < 1e-12);
        // Nothing measured on one process, or a single process.
        assert_eq!(lag(&before, &[load(2.0, 0.0), load(1.0, 0.0)]), None);
        assert_eq!(lag(&[], &[load(2.0, 0.0)]), None);
    }

    #[test]
    fn the_factor_stays_within_its_range() {
        let before = [load(0.0, 0.0); 3];
        // Process 0 took 10⁷ times the others' time per unit, on a hundredth of their work.
        let now = [load(100.0, 1.0), load(0.001, 100.0), load(0.001, 100.0)];
        let f = weight_factors(&before, &now).unwrap();
        assert_eq!(f, vec![FACTOR_RANGE.1, FACTOR_RANGE.0, FACTOR_RANGE.0]);
    }

    #[test]
    fn without_figures_to_compare_nothing_changes() {
        let before = [load(1.0, 10.0), load(1.0, 10.0)];
        // One process did no work since the last cut.
        assert_eq!(
            weight_factors(&before, &[load(2.0, 20.0), load(1.5, 10.0)]),
            None
        );
        // No time measured on one.
        assert_eq!(
            weight_factors(&before, &[load(2.0, 20.0), load(1.0, 20.0)]),
            None
        );
        // Not finite.
        assert_eq!(
            weight_factors(&before, &[load(f64::NAN, 20.0), load(2.0, 20.0)]),
            None
        );
        // One process, or none known.
        assert_eq!(weight_factors(&[], &[load(1.0, 1.0)]), None);
        assert_eq!(weight_factors(&[], &[]), None);
        // Figures from before the first cut are taken as zero.
        let now = [load(1.0, 100.0), load(2.0, 100.0)];
        let f = weight_factors(&[], &now).unwrap();
        assert!((f[1] - 4.0 / 3.0).abs() < 1e-12);
    }
}
