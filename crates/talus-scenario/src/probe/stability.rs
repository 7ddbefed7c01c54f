//! Maximum angle of stability Θ_m beside the angle of repose Θ_r (§1.2.1, fig. 1.1): the
//! slope of a heap fed by a `Drip` population, measured each time the heap is quiet just
//! before a grain is released, and the avalanches in that sequence.

use serde::{Deserialize, Serialize};
use talus_geom::glam::DVec3;

use super::repose::{fit_each_face, json_number};
use super::{Sample, SummaryItems};
use crate::analysis::repose::SurfaceTops;
use crate::analysis::stability::{StabilityAngles, mean_of_flanks, stability_angles};
use crate::build::Experiment;
use crate::journal::{AppendLog, Journaled};
use crate::output::csv::Column;
use crate::output::plot::{Plot, Series, SeriesStyle};
use crate::schema::{Flanks, MeasurementSpec};
use crate::walls::v3;

/// Default number of bins along the slope.
const DEFAULT_BINS: usize = 24;
/// Default fraction of the heap height between which the slope is fitted.
const DEFAULT_FIT: (f64, f64) = (0.2, 0.8);
/// Default smallest fall of the quiet slope that is an avalanche (degrees): about twice
/// the scatter of a slope fitted to a heap a dozen grains high.
pub const DEFAULT_AVALANCHE_DROP_DEG: f64 = 2.0;

/// The heap at a quiet state, just before a grain is released.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct QuietState {
    /// Grains on the scene.
    pub grains: usize,
    /// Time (s).
    pub time: f64,
    /// Slope of each flank (degrees; NaN where it could not be fitted), indexed by
    /// [`Flank`]: the near flank is only measured on a heap with both.
    pub slopes: [f64; 2],
}

/// A flank of the heap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flank {
    /// Falling against the measurement's direction (only on a heap with both flanks).
    Near = 0,
    /// Falling along the measurement's direction: the one flank of a one-flank heap.
    Far = 1,
}

impl Flank {
    /// The flanks a measurement of `flanks` fits.
    fn of(flanks: Flanks) -> &'static [Flank] {
        match flanks {
            Flanks::One => &[Flank::Far],
            Flanks::Both => &[Flank::Near, Flank::Far],
        }
    }

    /// Its name in the summary's keys and the plot's labels.
    fn name(self) -> &'static str {
        match self {
            Flank::Near => "near",
            Flank::Far => "far",
        }
    }
}

/// What some of the grains give the measurement (one process's, or all): merged over the
/// processes, what all grains give, whatever the split.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HeapTops {
    grains: u64,
    tops: SurfaceTops,
}

impl HeapTops {
    /// Takes in what other grains give.
    pub fn merge(&mut self, other: &HeapTops) {
        self.grains += other.grains;
        self.tops.merge(&other.tops);
    }
}

/// The probe's set-up and what it has seen.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Stability {
    direction: DVec3,
    floor: f64,
    range: (f64, f64),
    bins: usize,
    fit: (f64, f64),
    drop_deg: f64,
    min_grains: usize,
    flanks: Flanks,
    /// The heap at each quiet state, just before a grain is released.
    quiet: AppendLog<QuietState>,
    /// The slope of each flank at the latest output time (degrees, NaN where it could not
    /// be fitted).
    latest: [f64; 2],
}

impl Stability {
    /// The probe of a `MaxStability` measurement.
    #[must_use]
    pub fn new(spec: &MeasurementSpec, _exp: &Experiment) -> Option<Stability> {
        let MeasurementSpec::MaxStability {
            direction,
            floor,
            range,
            bins,
            fit,
            avalanche_drop_deg,
            min_grains,
            flanks,
        } = spec
        else {
            return None;
        };
        Some(Stability {
            direction: v3(*direction).normalize(),
            floor: *floor,
            range: *range,
            bins: bins.unwrap_or(DEFAULT_BINS),
            fit: fit.unwrap_or(DEFAULT_FIT),
            drop_deg: avalanche_drop_deg.unwrap_or(DEFAULT_AVALANCHE_DROP_DEG),
            min_grains: min_grains.unwrap_or(0),
            flanks: *flanks,
            quiet: AppendLog::new(),
            latest: [f64::NAN; 2],
        })
    }

    /// The lists that grow during the run (see [`crate::journal`]).
    pub fn logs(&self) -> Vec<&dyn Journaled> {
        vec![&self.quiet]
    }

    /// See [`Stability::logs`].
    pub fn logs_mut(&mut self) -> Vec<&mut dyn Journaled> {
        vec![&mut self.quiet]
    }

    /// Columns: the heap's slope now (of its one flank, or the mean of both), and with both
    /// flanks each flank's.
    #[must_use]
    pub fn columns(&self) -> Vec<Column> {
        let mut columns = vec![Column::new("heap_slope", "deg")];
        if self.flanks == Flanks::Both {
            for flank in Flank::of(self.flanks) {
                columns.push(Column::new(
                    format!("heap_slope_{}_face", flank.name()),
                    "deg",
                ));
            }
        }
        columns
    }

    /// The slope of each flank of the heap whose grains' tops are `tops`, in degrees, NaN
    /// where it cannot be fitted.
    fn slopes(&self, tops: &SurfaceTops) -> [f64; 2] {
        let profile = tops.profile(self.range.0, self.range.1, self.bins);
        fit_each_face(&profile, self.floor, self.fit, self.flanks)
            .map(|face| face.map_or(f64::NAN, |f| f.angle_deg))
    }

    /// What the grains of `sample` (one process's, or all) give: their count and the tops
    /// of the surface they make.
    #[must_use]
    pub fn partial(&self, sample: &Sample) -> HeapTops {
        HeapTops {
            grains: sample.grains.len() as u64,
            tops: SurfaceTops::of(
                &sample.tops_along(self.direction),
                self.range.0,
                self.range.1,
                self.bins,
            ),
        }
    }

    /// The heap's slope from each flank's: the one flank's, or the mean of both (NaN unless
    /// every measured flank has one).
    fn heap_slope(&self, slopes: [f64; 2]) -> f64 {
        let flanks = Flank::of(self.flanks);
        flanks.iter().map(|f| slopes[*f as usize]).sum::<f64>() / flanks.len() as f64
    }

    /// The slope now from the heap of all grains (NaN while it cannot be fitted), then each
    /// flank's with both.
    pub fn take(&mut self, heap: &HeapTops) -> Vec<f64> {
        self.latest = self.slopes(&heap.tops);
        let mut values = vec![self.heap_slope(self.latest)];
        if self.flanks == Flanks::Both {
            values.extend(
                Flank::of(self.flanks)
                    .iter()
                    .map(|f| self.latest[*f as usize]),
            );
        }
        values
    }

    /// The heap of all grains is quiet at time `time` and a grain is about to be released:
    /// its slopes are recorded.
    pub fn before_release(&mut self, time: f64, heap: &HeapTops) {
        let slopes = self.slopes(&heap.tops);
        self.quiet.push(QuietState {
            grains: heap.grains as usize,
            time,
            slopes,
        });
    }

    /// The quiet states that count: those of heaps with at least `min_grains` grains.
    fn counted(&self) -> Vec<QuietState> {
        self.quiet
            .iter()
            .filter(|q| q.grains >= self.min_grains)
            .copied()
            .collect()
    }

    /// Θ_m and Θ_r of `flank`, from its own quiet slopes; `None` without an avalanche.
    fn flank_angles(&self, flank: Flank) -> Option<StabilityAngles> {
        let slopes: Vec<f64> = self
            .counted()
            .iter()
            .map(|q| q.slopes[flank as usize])
            .collect();
        stability_angles(&slopes, self.drop_deg)
    }

    /// Θ_m and Θ_r of the heap: of its one flank, or the means of both flanks' (`None`
    /// unless every measured flank had an avalanche).
    fn angles(&self) -> Option<StabilityAngles> {
        match self.flanks {
            Flanks::One => self.flank_angles(Flank::Far),
            Flanks::Both => Some(mean_of_flanks(
                &self.flank_angles(Flank::Near)?,
                &self.flank_angles(Flank::Far)?,
            )),
        }
    }

    /// Θ_m, Θ_r, their spreads and difference, the number of avalanches, the quiet states
    /// measured and the slope at the end; with both flanks, each flank's Θ_m, Θ_r and
    /// avalanches too (the heap's are then their means, see [`mean_of_flanks`]).
    #[must_use]
    pub fn summary(&self) -> SummaryItems {
        let angles = self.angles();
        let counted = self.counted();
        let fitted = counted
            .iter()
            .filter(|q| self.heap_slope(q.slopes).is_finite())
            .count();
        let mut items = vec![
            (
                "max_stability_angle_deg".into(),
                json_number(angles.as_ref().map(|a| a.max_stability_deg)),
            ),
            (
                "max_stability_angle_spread_deg".into(),
                json_number(angles.as_ref().map(|a| a.max_stability_spread_deg)),
            ),
            (
                "repose_angle_deg".into(),
                json_number(angles.as_ref().map(|a| a.repose_deg)),
            ),
            (
                "repose_angle_spread_deg".into(),
                json_number(angles.as_ref().map(|a| a.repose_spread_deg)),
            ),
            (
                "stability_minus_repose_deg".into(),
                json_number(angles.as_ref().map(|a| a.max_stability_deg - a.repose_deg)),
            ),
            (
                "avalanches".into(),
                serde_json::Value::from(self.avalanche_count()),
            ),
            ("quiet_states".into(), serde_json::Value::from(fitted)),
            (
                "final_slope_deg".into(),
                json_number(Some(self.heap_slope(self.latest))),
            ),
        ];
        if self.flanks == Flanks::Both {
            for flank in Flank::of(self.flanks) {
                let a = self.flank_angles(*flank);
                let name = flank.name();
                items.push((
                    format!("max_stability_angle_{name}_face_deg"),
                    json_number(a.as_ref().map(|a| a.max_stability_deg)),
                ));
                items.push((
                    format!("repose_angle_{name}_face_deg"),
                    json_number(a.as_ref().map(|a| a.repose_deg)),
                ));
                items.push((
                    format!("avalanches_{name}_face"),
                    serde_json::Value::from(a.map_or(0, |a| a.avalanches.len())),
                ));
            }
        }
        items
    }

    /// The avalanches seen on every measured flank.
    fn avalanche_count(&self) -> usize {
        Flank::of(self.flanks)
            .iter()
            .filter_map(|f| self.flank_angles(*f))
            .map(|a| a.avalanches.len())
            .sum()
    }

    /// Why Θ_m and Θ_r cannot be trusted: a flank without an avalanche (the heap never
    /// reached Θ_m there, or the drop is too large for its scatter: the heap's angles need
    /// every flank's), or a single avalanche on the whole heap (no spread).
    #[must_use]
    pub fn warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        for flank in Flank::of(self.flanks) {
            if self.flank_angles(*flank).is_none() {
                let on = match self.flanks {
                    Flanks::One => String::new(),
                    Flanks::Both => format!(" on the {} face", flank.name()),
                };
                out.push(format!(
                    "max stability: no avalanche (a fall of the quiet slope by more than {}°){on} \
                     among {} quiet states: drip more grains, or lower avalanche_drop_deg",
                    crate::number::short(self.drop_deg),
                    self.counted().len()
                ));
            }
        }
        if out.is_empty() && self.avalanche_count() < 2 {
            out.push(
                "max stability: a single avalanche; Θ_m and Θ_r rest on one value each".into(),
            );
        }
        out
    }

    /// The quiet slope of each flank against the grains on the scene, with the avalanches'
    /// ends and the heap's two angles.
    #[must_use]
    pub fn plots(&self) -> Vec<(String, Plot)> {
        let counted = self.counted();
        let mut series = Vec::new();
        for flank in Flank::of(self.flanks) {
            let i = *flank as usize;
            let of = match self.flanks {
                Flanks::One => String::new(),
                Flanks::Both => format!(", {} face", flank.name()),
            };
            let at = |k: usize| {
                counted
                    .get(k)
                    .map(|q| (q.grains as f64, q.slopes[i]))
                    .filter(|p| p.1.is_finite())
            };
            series.push(Series {
                label: format!("quiet slope before each release{of}"),
                points: (0..counted.len()).filter_map(at).collect(),
                style: SeriesStyle::Line,
            });
            if let Some(a) = self.flank_angles(*flank) {
                series.push(Series {
                    label: format!("just before an avalanche{of}"),
                    points: a.avalanches.iter().filter_map(|v| at(v.before)).collect(),
                    style: SeriesStyle::Points,
                });
                series.push(Series {
                    label: format!("just after{of}"),
                    points: a.avalanches.iter().filter_map(|v| at(v.after)).collect(),
                    style: SeriesStyle::Points,
                });
            }
        }
        if let Some(a) = self.angles() {
            let (x0, x1) = counted
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |r, q| {
                    (r.0.min(q.grains as f64), r.1.max(q.grains as f64))
                });
            for (label, y) in [
                (
                    format!("Θ_m = {:.1}°", a.max_stability_deg),
                    a.max_stability_deg,
                ),
                (format!("Θ_r = {:.1}°", a.repose_deg), a.repose_deg),
            ] {
                series.push(Series {
                    label,
                    points: vec![(x0, y), (x1, y)],
                    style: SeriesStyle::Dashed,
                });
            }
        }
        vec![(
            "heap_slope".into(),
            Plot {
                title: "Slope of the quiet heap (maximum angle of stability)".into(),
                x_label: "grains on the scene".into(),
                y_label: "slope [deg]".into(),
                log_y: false,
                log_x: false,
                series,
            },
        )]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The measurement of the shipped heap's geometry: a range across both flanks.
    fn probe(flanks: Flanks) -> Stability {
        Stability {
            direction: DVec3::X,
            floor: 0.0,
            range: (-0.04, 0.04),
            bins: 16,
            fit: DEFAULT_FIT,
            drop_deg: 1.0,
            min_grains: 0,
            flanks,
            quiet: AppendLog::new(),
            latest: [f64::NAN; 2],
        }
    }

    /// The highest points of a heap on a floor at 0 with its apex at x = 0, 3 cm high, its
    /// near face (x < 0) at `near` degrees and its far face at `far`, sampled every 0.5 mm
    /// as the tops of grains on its surface. The samples sit a quarter step off the bins'
    /// edges, so that each bin's highest one is at the same place in every bin of a face
    /// and the profile is exactly straight.
    fn heap(near: f64, far: f64) -> Vec<(f64, f64)> {
        (-80..80)
            .map(|i| {
                let x = (f64::from(i) + 0.25) * 0.0005;
                let angle = if x < 0.0 { near } else { far };
                (x, (0.03 - angle.to_radians().tan() * x.abs()).max(0.0))
            })
            .collect()
    }

    /// The quiet heap of `grains` grains at `time` whose grains' highest points are
    /// `points`, recorded by `p`.
    fn record_quiet(p: &mut Stability, grains: usize, time: f64, points: &[(f64, f64)]) {
        let heap = HeapTops {
            grains: grains as u64,
            tops: SurfaceTops::of(points, p.range.0, p.range.1, p.bins),
        };
        p.before_release(time, &heap);
    }

    fn number(items: &SummaryItems, key: &str) -> f64 {
        items
            .iter()
            .find(|(k, _)| k == key)
            .and_then(|(_, v)| v.as_f64())
            .unwrap_or_else(|| panic!("{key} in {items:?}"))
    }

    #[test]
    fn a_symmetric_heap_gives_its_angles_on_both_flanks_and_their_mean() {
        // Both flanks steepen from 30° to 36°, avalanche back to 30°, twice.
        let tooth = [30.0, 32.0, 34.0, 36.0];
        let angles: Vec<f64> = tooth.iter().chain(&tooth).chain(&[30.0]).copied().collect();
        let mut both = probe(Flanks::Both);
        let mut one = probe(Flanks::One);
        for (k, a) in angles.iter().enumerate() {
            record_quiet(&mut both, 20 + k, k as f64, &heap(*a, *a));
            record_quiet(&mut one, 20 + k, k as f64, &heap(*a, *a));
        }
        let items = both.summary();
        for key in [
            "max_stability_angle_near_face_deg",
            "max_stability_angle_far_face_deg",
            "max_stability_angle_deg",
        ] {
            assert!(
                (number(&items, key) - 36.0).abs() < 1e-6,
                "{key}: {items:?}"
            );
        }
        for key in [
            "repose_angle_near_face_deg",
            "repose_angle_far_face_deg",
            "repose_angle_deg",
        ] {
            assert!(
                (number(&items, key) - 30.0).abs() < 1e-6,
                "{key}: {items:?}"
            );
        }
        assert_eq!(number(&items, "avalanches"), 4.0);
        assert_eq!(number(&items, "avalanches_near_face"), 2.0);
        assert!(both.warnings().is_empty(), "{:?}", both.warnings());
        // One flank: the far face alone, the same angles, half the avalanches.
        let items = one.summary();
        assert!((number(&items, "max_stability_angle_deg") - 36.0).abs() < 1e-6);
        assert!((number(&items, "repose_angle_deg") - 30.0).abs() < 1e-6);
        assert_eq!(number(&items, "avalanches"), 2.0);
        assert!(items.iter().all(|(k, _)| !k.contains("near_face")));
    }

    #[test]
    fn each_flank_is_measured_on_its_own_side() {
        // The near face avalanches from 38° to 32° while the far face stays at 26°, then
        // the far face from 30° to 24° while the near face stays at 32°.
        let states = [
            (34.0, 26.0),
            (38.0, 26.0),
            (32.0, 26.0),
            (32.0, 28.0),
            (32.0, 30.0),
            (32.0, 24.0),
        ];
        let mut both = probe(Flanks::Both);
        for (k, (near, far)) in states.iter().enumerate() {
            record_quiet(&mut both, 30 + k, k as f64, &heap(*near, *far));
        }
        let items = both.summary();
        let near_m = number(&items, "max_stability_angle_near_face_deg");
        let far_m = number(&items, "max_stability_angle_far_face_deg");
        let near_r = number(&items, "repose_angle_near_face_deg");
        let far_r = number(&items, "repose_angle_far_face_deg");
        for (got, want) in [(near_m, 38.0), (far_m, 30.0), (near_r, 32.0), (far_r, 24.0)] {
            assert!((got - want).abs() < 1e-6, "{items:?}");
        }
        assert!((number(&items, "max_stability_angle_deg") - 34.0).abs() < 1e-6);
        assert!((number(&items, "repose_angle_deg") - 28.0).abs() < 1e-6);
        assert!((number(&items, "stability_minus_repose_deg") - 6.0).abs() < 1e-6);
        // One avalanche on each face: two for the heap, whose spreads are theirs.
        assert!(both.warnings().is_empty(), "{:?}", both.warnings());
        assert!(
            (number(&items, "max_stability_angle_spread_deg") - 8f64.sqrt() * 2.0).abs() < 1e-6
        );
        // A heap whose near face never avalanches has no mean, and says why.
        let mut lopsided = probe(Flanks::Both);
        for (k, (_, far)) in states.iter().enumerate() {
            record_quiet(&mut lopsided, 30 + k, k as f64, &heap(33.0, *far));
        }
        let items = lopsided.summary();
        assert!(
            items
                .iter()
                .any(|(k, v)| k == "max_stability_angle_deg" && v.is_null())
        );
        assert!((number(&items, "max_stability_angle_far_face_deg") - 30.0).abs() < 1e-6);
        let warnings = lopsided.warnings();
        assert!(
            warnings
                .iter()
                .any(|w| w.contains("no avalanche") && w.contains("near face")),
            "{warnings:?}"
        );
    }
}
