//! Angle of repose (§1.2.1): the highest points of the grains, binned along the direction
//! in which the free surface falls, and a line fitted over the middle of the slope.

use serde::{Deserialize, Serialize};
use talus_geom::glam::DVec3;

use super::{Sample, SummaryItems};
use crate::analysis::repose::{
    SurfaceTops, WINDOW_BLOCKS, WindowAngle, angle_of_repose, window_angle,
};
use crate::build::Experiment;
use crate::journal::{AppendLog, Journaled};
use crate::output::csv::Column;
use crate::output::plot::{Plot, Series, SeriesStyle};
use crate::schema::{Flanks, MeasurementSpec};
use crate::walls::v3;

/// Default number of bins along the slope.
const DEFAULT_BINS: usize = 24;
/// Default fraction of the pile height between which the slope is fitted.
const DEFAULT_FIT: (f64, f64) = (0.2, 0.8);

/// Fewer surface points than this make a fitted slope too uncertain to report as clean.
const MIN_FIT_POINTS: usize = 4;

/// One fitted face of the pile.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct FaceFit {
    /// Angle of the face to the horizontal (degrees).
    pub angle_deg: f64,
    /// Its standard error (degrees), from the scatter of the surface about the fitted line:
    /// σ_θ = σ_slope / (1 + slope²).
    pub angle_error_deg: f64,
    /// The fitted line over the profile points it was fitted to: its two ends.
    pub ends: ((f64, f64), (f64, f64)),
    /// Profile points fitted.
    pub points: usize,
}

/// The probe's set-up and its latest result.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Repose {
    direction: DVec3,
    floor: f64,
    range: (f64, f64),
    bins: usize,
    fit: (f64, f64),
    flanks: Flanks,
    /// Latest profile: (distance along the direction, height of the surface).
    profile: Vec<(f64, f64)>,
    /// Latest fit of each face (one, or the faces before and after the apex); empty when
    /// a face could not be fitted.
    faces: Vec<FaceFit>,
    /// The window the angle is averaged over, if any.
    window: Option<(f64, f64)>,
    /// The angles at the output times in the window: (time, angle; NaN where the surface
    /// could not be fitted).
    window_angles: AppendLog<(f64, f64)>,
}

/// The fit of the face in `profile` falling towards larger x, or, with `mirrored`, towards
/// smaller x (the near face of a heap), as a [`FaceFit`] in the profile's coordinates.
fn fit_face(
    profile: &[(f64, f64)],
    floor: f64,
    fit: (f64, f64),
    mirrored: bool,
) -> Option<FaceFit> {
    let sign = if mirrored { -1.0 } else { 1.0 };
    let turned: Vec<(f64, f64)> = profile.iter().map(|&(x, z)| (sign * x, z)).collect();
    let result = angle_of_repose(&turned, floor, fit.0, fit.1)?;
    let (x0, x1) = result
        .used
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| {
            (a.min(p.0), b.max(p.0))
        });
    let line = |x: f64| result.fit.slope * x + result.fit.intercept;
    let slope = result.fit.slope;
    Some(FaceFit {
        angle_deg: result.angle_deg,
        angle_error_deg: (result.fit.slope_error / (1.0 + slope * slope)).to_degrees(),
        ends: ((sign * x0, line(x0)), (sign * x1, line(x1))),
        points: result.used.len(),
    })
}

/// Each face of the pile whose surface is `profile`, fitted on its own: `[near, far]`. The
/// far face falls along the profile's x: with `Flanks::One` it is the pile's one face and
/// there is no near face; with `Flanks::Both` the two faces of a heap are each fitted from
/// the apex (the highest bin, shared) down their own side. `None` for a face that cannot be
/// fitted.
pub(crate) fn fit_each_face(
    profile: &[(f64, f64)],
    floor: f64,
    fit: (f64, f64),
    flanks: Flanks,
) -> [Option<FaceFit>; 2] {
    match flanks {
        Flanks::One => [None, fit_face(profile, floor, fit, false)],
        Flanks::Both => {
            let apex = profile
                .iter()
                .enumerate()
                .filter(|(_, p)| p.1.is_finite())
                .max_by(|a, b| a.1.1.total_cmp(&b.1.1))
                .map(|(i, _)| i);
            apex.map_or([None, None], |i| {
                [
                    fit_face(&profile[..=i], floor, fit, true),
                    fit_face(&profile[i..], floor, fit, false),
                ]
            })
        }
    }
}

/// The faces of the pile whose surface is `profile`: its one face, or a heap's two faces
/// (see [`fit_each_face`]); empty when a face cannot be fitted, since the mean of a heap's
/// faces needs both.
fn fit_faces(profile: &[(f64, f64)], floor: f64, fit: (f64, f64), flanks: Flanks) -> Vec<FaceFit> {
    match (flanks, fit_each_face(profile, floor, fit, flanks)) {
        (Flanks::One, [_, Some(face)]) => vec![face],
        (Flanks::Both, [Some(near), Some(far)]) => vec![near, far],
        _ => Vec::new(),
    }
}

impl Repose {
    /// The probe of an `AngleOfRepose` measurement.
    #[must_use]
    pub fn new(spec: &MeasurementSpec, _exp: &Experiment) -> Option<Repose> {
        let MeasurementSpec::AngleOfRepose {
            direction,
            floor,
            range,
            bins,
            fit,
            flanks,
            window,
        } = spec
        else {
            return None;
        };
        Some(Repose {
            direction: v3(*direction).normalize(),
            floor: *floor,
            range: *range,
            bins: bins.unwrap_or(DEFAULT_BINS),
            fit: fit.unwrap_or(DEFAULT_FIT),
            flanks: *flanks,
            profile: Vec::new(),
            faces: Vec::new(),
            window: *window,
            window_angles: AppendLog::new(),
        })
    }

    /// The lists that grow with the run.
    #[must_use]
    pub fn logs(&self) -> Vec<&dyn Journaled> {
        vec![&self.window_angles]
    }

    /// See [`Repose::logs`].
    pub fn logs_mut(&mut self) -> Vec<&mut dyn Journaled> {
        vec![&mut self.window_angles]
    }

    /// The angle over the window, when there is one and it holds enough fitted angles.
    fn over_window(&self) -> Option<WindowAngle> {
        self.window?;
        let angles: Vec<f64> = self.window_angles.iter().map(|s| s.1).collect();
        window_angle(&angles)
    }

    /// Columns: the angle.
    #[must_use]
    pub fn columns(&self) -> Vec<Column> {
        vec![Column::new("angle_of_repose", "deg")]
    }

    /// The angle of the surface at time `time` from the tops of all grains: of its face, or
    /// the mean of a heap's two faces (NaN while a face cannot be fitted).
    pub fn take(&mut self, time: f64, tops: &SurfaceTops) -> Vec<f64> {
        self.profile = tops.profile(self.range.0, self.range.1, self.bins);
        self.faces = fit_faces(&self.profile, self.floor, self.fit, self.flanks);
        let angle = self.angle_deg().unwrap_or(f64::NAN);
        if let Some((from, to)) = self.window
            && time >= from
            && time <= to
        {
            self.window_angles.push((time, angle));
        }
        vec![angle]
    }

    /// The tops of the surface the grains of `sample` (one process's, or all) make.
    #[must_use]
    pub fn partial(&self, sample: &Sample) -> SurfaceTops {
        SurfaceTops::of(
            &sample.tops_along(self.direction),
            self.range.0,
            self.range.1,
            self.bins,
        )
    }

    /// The angle: of the one face, or the mean of both.
    fn angle_deg(&self) -> Option<f64> {
        (!self.faces.is_empty())
            .then(|| self.faces.iter().map(|f| f.angle_deg).sum::<f64>() / self.faces.len() as f64)
    }

    /// The standard error of [`Repose::angle_deg`]: of the one face, or of the mean of two
    /// independent faces, ½ √(σ₁² + σ₂²).
    fn angle_error_deg(&self) -> Option<f64> {
        (!self.faces.is_empty()).then(|| {
            self.faces
                .iter()
                .map(|f| f.angle_error_deg.powi(2))
                .sum::<f64>()
                .sqrt()
                / self.faces.len() as f64
        })
    }

    /// The height of the pile: its surface's highest point above the floor at the latest
    /// sample (`None` before any grain lies in the range).
    fn height(&self) -> Option<f64> {
        self.profile
            .iter()
            .map(|p| p.1)
            .filter(|z| z.is_finite())
            .reduce(f64::max)
            .map(|top| top - self.floor)
    }

    /// `angle_of_repose_deg` (null if the surface could not be fitted) and the fit; with
    /// both flanks, each face's angle too; every angle with its standard error (`_err`);
    /// `pile_height_m`, the surface's highest point above the floor at the end, by which the
    /// fitted band of heights (`fit`) and a pile's size in grains can be judged.
    /// With a window, `angle_of_repose_deg` is the mean over it (with the error of the
    /// mean, the angles' spread, least, largest and count), the angle at the end
    /// `angle_of_repose_final_deg`, and each face's angle that at the end.
    #[must_use]
    pub fn summary(&self) -> SummaryItems {
        let mut items = Vec::new();
        if self.window.is_some() {
            let w = self.over_window();
            let of = |f: fn(&WindowAngle) -> f64| json_number(w.as_ref().map(f));
            items.extend([
                ("angle_of_repose_deg".into(), of(|w| w.mean_deg)),
                ("angle_of_repose_deg_err".into(), of(|w| w.error_deg)),
                ("angle_of_repose_spread_deg".into(), of(|w| w.spread_deg)),
                ("angle_of_repose_min_deg".into(), of(|w| w.least_deg)),
                ("angle_of_repose_max_deg".into(), of(|w| w.largest_deg)),
                (
                    "angle_of_repose_window_samples".into(),
                    serde_json::Value::from(w.map_or(0, |w| w.samples)),
                ),
                (
                    "angle_of_repose_final_deg".into(),
                    json_number(self.angle_deg()),
                ),
                (
                    "angle_of_repose_final_deg_err".into(),
                    json_number(self.angle_error_deg()),
                ),
            ]);
        } else {
            items.extend([
                ("angle_of_repose_deg".into(), json_number(self.angle_deg())),
                (
                    "angle_of_repose_deg_err".into(),
                    json_number(self.angle_error_deg()),
                ),
            ]);
        }
        items.extend([
            (
                "repose_fit_points".into(),
                serde_json::Value::from(self.faces.iter().map(|f| f.points).min().unwrap_or(0)),
            ),
            ("pile_height_m".into(), json_number(self.height())),
        ]);
        if self.flanks == Flanks::Both {
            let face = |i: usize| json_number(self.faces.get(i).map(|f| f.angle_deg));
            let error = |i: usize| json_number(self.faces.get(i).map(|f| f.angle_error_deg));
            items.push(("angle_of_repose_near_face_deg".into(), face(0)));
            items.push(("angle_of_repose_near_face_deg_err".into(), error(0)));
            items.push(("angle_of_repose_far_face_deg".into(), face(1)));
            items.push(("angle_of_repose_far_face_deg_err".into(), error(1)));
        }
        items
    }

    /// Why the angle cannot be trusted, if it cannot: no fit, a fit on too few points, or
    /// a surface that does not fall along the measured direction.
    #[must_use]
    pub fn warnings(&self) -> Vec<String> {
        if let Some((from, to)) = self.window {
            return self.window_warnings(from, to);
        }
        if self.faces.is_empty() {
            return vec![match self.flanks {
                Flanks::One => "angle of repose: the pile's surface could not be fitted at the \
                end (no run of bins with grains across the fitted heights): the \
                grains may have left the measured range, or range and bins do \
                not match the pile"
                    .into(),
                Flanks::Both => "angle of repose: the heap's two faces could not both be \
                fitted at the end (each needs a run of bins with grains across \
                the fitted heights on its side of the highest bin): the apex \
                may lie at an end of the range, or range and bins do not match \
                the heap"
                    .into(),
            }];
        }
        let mut out = Vec::new();
        for f in &self.faces {
            let a = f.angle_deg;
            if !(a > 0.0 && a < 90.0) {
                out.push(format!(
                    "angle of repose: the fitted surface does not fall away from the pile's top \
                    ({a:.1}°); the direction points from the pile's back (or its apex) to its toe"
                ));
            } else if f.points < MIN_FIT_POINTS {
                out.push(format!(
                    "angle of repose: fitted on only {} points of the surface (at least \
                    {MIN_FIT_POINTS} make a slope worth reporting): use more bins or a larger \
                    pile",
                    f.points
                ));
            }
        }
        out
    }

    /// Why the angle over the window cannot be trusted: too few fitted angles in it, or a
    /// mean that does not fall away from the top; and how many angles in it could not be
    /// fitted.
    fn window_warnings(&self, from: f64, to: f64) -> Vec<String> {
        let total = self.window_angles.iter().count();
        let Some(w) = self.over_window() else {
            return vec![format!(
                "angle of repose: the window ({from}, {to}) s holds {total} angles at the \
                 output times, fitted or not, where at least {} fitted ones are needed \
                 ({WINDOW_BLOCKS} blocks of two): the run ended before it, output_interval \
                 is too long, or the surface could not be fitted",
                2 * WINDOW_BLOCKS
            )];
        };
        let mut out = Vec::new();
        if !(w.mean_deg > 0.0 && w.mean_deg < 90.0) {
            out.push(format!(
                "angle of repose: the mean surface over the window does not fall away from \
                 the pile's top ({:.1}°); the direction points from the pile's back (or its \
                 apex) to its toe",
                w.mean_deg
            ));
        }
        // A surface that cannot be fitted now and then (a grain thrown above it, a bin left
        // empty) leaves a mean of the others; more often, the mean is not the surface's.
        if 10 * (total - w.samples) > total {
            out.push(format!(
                "angle of repose: {} of the {total} angles in the window could not be fitted \
                 (more than a tenth) and are left out of the mean",
                total - w.samples
            ));
        }
        out
    }

    /// The pile profile with the fitted lines.
    #[must_use]
    pub fn plots(&self) -> Vec<(String, Plot)> {
        let mut series = vec![Series {
            label: "surface (highest grain point per bin)".into(),
            points: self.profile.clone(),
            style: SeriesStyle::Points,
        }];
        for (i, f) in self.faces.iter().enumerate() {
            let face = match (self.faces.len(), i) {
                (1, _) => "fit",
                (_, 0) => "near face",
                _ => "far face",
            };
            series.push(Series {
                label: format!("{face}: {:.1}°", f.angle_deg),
                points: vec![f.ends.0, f.ends.1],
                style: SeriesStyle::Line,
            });
        }
        series.push(Series {
            label: "floor".into(),
            points: vec![(self.range.0, self.floor), (self.range.1, self.floor)],
            style: SeriesStyle::Dashed,
        });
        let mut plots = vec![(
            "pile_profile".into(),
            Plot {
                title: "Pile profile and angle of repose".into(),
                x_label: "distance along the slope direction [m]".into(),
                y_label: "height [m]".into(),
                log_y: false,
                log_x: false,
                series,
            },
        )];
        if let (Some((from, to)), Some(w)) = (self.window, self.over_window()) {
            let angles = self
                .window_angles
                .iter()
                .filter(|s| s.1.is_finite())
                .copied()
                .collect();
            plots.push((
                "angle_over_window".into(),
                Plot {
                    title: "Angle of the surface over the window".into(),
                    x_label: "time [s]".into(),
                    y_label: "angle [deg]".into(),
                    log_y: false,
                    log_x: false,
                    series: vec![
                        Series {
                            label: "angle at each output".into(),
                            points: angles,
                            style: SeriesStyle::Line,
                        },
                        Series {
                            label: format!("mean {:.1} ± {:.1}°", w.mean_deg, w.error_deg),
                            points: vec![(from, w.mean_deg), (to, w.mean_deg)],
                            style: SeriesStyle::Dashed,
                        },
                    ],
                },
            ));
        }
        plots
    }
}

/// A JSON number, or null for none or a non-finite value.
#[must_use]
pub fn json_number(x: Option<f64>) -> serde_json::Value {
    x.and_then(serde_json::Number::from_f64)
        .map_or(serde_json::Value::Null, serde_json::Value::Number)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A heap with its apex at x = 0.01, 5 cm high, faces at `near` and `far` degrees, on a
    /// floor at 0, sampled every 5 mm from −0.1 to 0.1.
    fn heap(near: f64, far: f64) -> Vec<(f64, f64)> {
        (-20..=20)
            .map(|i| {
                let x = f64::from(i) * 0.005;
                let drop = if x < 0.01 {
                    near.to_radians().tan() * (0.01 - x)
                } else {
                    far.to_radians().tan() * (x - 0.01)
                };
                (x, (0.05 - drop).max(0.0))
            })
            .collect()
    }

    #[test]
    fn both_faces_of_a_heap_are_fitted_on_their_own_sides() {
        let faces = fit_faces(&heap(35.0, 25.0), 0.0, DEFAULT_FIT, Flanks::Both);
        assert_eq!(faces.len(), 2);
        assert!((faces[0].angle_deg - 35.0).abs() < 1e-9, "{faces:?}");
        assert!((faces[1].angle_deg - 25.0).abs() < 1e-9, "{faces:?}");
        // The near face's line lies left of the apex, the far face's right of it.
        assert!(faces[0].ends.0.0 < 0.01 && faces[0].ends.1.0 < 0.01);
        assert!(faces[1].ends.0.0 > 0.01 && faces[1].ends.1.0 > 0.01);
        // The summary's height is the apex's above the floor, the floor wherever it lies.
        for floor in [0.0, -0.02] {
            let probe = Repose {
                direction: DVec3::X,
                floor,
                range: (-0.1, 0.1),
                bins: 41,
                fit: DEFAULT_FIT,
                flanks: Flanks::Both,
                profile: heap(35.0, 25.0),
                faces: faces.clone(),
                window: None,
                window_angles: AppendLog::new(),
            };
            let summary: std::collections::BTreeMap<String, serde_json::Value> =
                probe.summary().into_iter().collect();
            let height = summary["pile_height_m"].as_f64().unwrap();
            assert!((height - (0.05 - floor)).abs() < 1e-15, "{height}");
        }
        // One face: the far side alone.
        let far: Vec<(f64, f64)> = heap(35.0, 25.0)
            .into_iter()
            .filter(|p| p.0 >= 0.01)
            .collect();
        let one = fit_faces(&far, 0.0, DEFAULT_FIT, Flanks::One);
        assert_eq!(one.len(), 1);
        assert!((one[0].angle_deg - 25.0).abs() < 1e-9, "{one:?}");
        // An apex at the end of the range leaves one face without points.
        let cut: Vec<(f64, f64)> = heap(35.0, 25.0)
            .into_iter()
            .filter(|p| p.0 <= 0.01)
            .collect();
        assert!(fit_faces(&cut, 0.0, DEFAULT_FIT, Flanks::Both).is_empty());
    }

    #[test]
    fn each_face_is_reported_with_an_error_that_matches_the_spread_over_noisy_heaps() {
        // Heaps of faces 35° and 25° whose surface heights carry a normal noise of 0.6 mm,
        // drawn again and again: the error the summary gives each face is the spread of
        // that face's angle over the draws.
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let mut gaussian = || {
            let (u, v): (f64, f64) = (1.0 - rng.random::<f64>(), rng.random());
            (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
        };
        let mut probe = Repose {
            direction: DVec3::X,
            floor: 0.0,
            range: (-0.1, 0.1),
            bins: 41,
            fit: DEFAULT_FIT,
            flanks: Flanks::Both,
            profile: Vec::new(),
            faces: Vec::new(),
            window: None,
            window_angles: AppendLog::new(),
        };
        let mut angles = [Vec::new(), Vec::new()];
        let mut errors = [Vec::new(), Vec::new()];
        for _ in 0..400 {
            probe.profile = heap(35.0, 25.0)
                .into_iter()
                .map(|(x, z)| (x, z + 0.0006 * gaussian()))
                .collect();
            probe.faces = fit_faces(&probe.profile, 0.0, DEFAULT_FIT, Flanks::Both);
            let summary: std::collections::BTreeMap<String, serde_json::Value> =
                probe.summary().into_iter().collect();
            for (i, face) in ["near", "far"].iter().enumerate() {
                let key = format!("angle_of_repose_{face}_face_deg");
                angles[i].push(summary[&key].as_f64().unwrap());
                errors[i].push(summary[&format!("{key}_err")].as_f64().unwrap());
            }
        }
        for (i, truth) in [35.0, 25.0].into_iter().enumerate() {
            let n = angles[i].len() as f64;
            let mean = angles[i].iter().sum::<f64>() / n;
            let spread =
                (angles[i].iter().map(|a| (a - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
            let reported = (errors[i].iter().map(|e| e * e).sum::<f64>() / n).sqrt();
            assert!(
                (mean - truth).abs() < 0.5 * spread + 0.2,
                "{mean}° vs {truth}°"
            );
            let ratio = reported / spread;
            assert!(
                (0.5..2.0).contains(&ratio),
                "face {i}: reported ± {reported}°, spread {spread}°"
            );
        }
    }

    #[test]
    fn warnings_read_as_single_spaced_sentences() {
        let probe = |flanks: Flanks, faces: Vec<FaceFit>| Repose {
            direction: DVec3::X,
            floor: 0.0,
            range: (-0.1, 0.1),
            bins: DEFAULT_BINS,
            fit: DEFAULT_FIT,
            flanks,
            profile: Vec::new(),
            faces,
            window: None,
            window_angles: AppendLog::new(),
        };
        let face = |angle_deg: f64, points: usize| FaceFit {
            angle_deg,
            angle_error_deg: 0.5,
            ends: ((0.0, 0.0), (1.0, 1.0)),
            points,
        };
        let mut all = Vec::new();
        for flanks in [Flanks::One, Flanks::Both] {
            all.extend(probe(flanks, Vec::new()).warnings());
        }
        all.extend(probe(Flanks::One, vec![face(-5.0, 10)]).warnings());
        all.extend(probe(Flanks::One, vec![face(30.0, 2)]).warnings());
        // Over a window: too few angles; then a mean that rises, with a third unfitted.
        let mut windowed = probe(Flanks::One, Vec::new());
        windowed.window = Some((0.0, 1.0));
        all.extend(windowed.warnings());
        for i in 0..30 {
            let angle = if i % 3 == 0 { f64::NAN } else { -10.0 };
            windowed.window_angles.push((f64::from(i) / 30.0, angle));
        }
        all.extend(windowed.warnings());
        assert_eq!(all.len(), 7, "{all:?}");
        for w in &all {
            // A string continued on the next source line without its backslash keeps the
            // indentation as a run of spaces inside the message.
            assert!(!w.contains("  "), "a run of spaces in {w:?}");
        }
    }
}
