//! Periodic boundaries: axes along which the world repeats itself with a period.
//!
//! A grain that leaves the periodic box through one face enters through the opposite one:
//! at the end of each step its position is brought back into `[lower, upper)` along every
//! periodic axis, and its *image count* (how many periods it was moved by) is kept, so that
//! the unwrapped position — where the grain would be without the wrapping — is known to
//! measures of displacement. Velocities, orientations and the integrator's higher
//! derivatives do not change under a translation by a period, so the wrap touches the
//! position alone.
//!
//! Two bodies meet through the *minimum image*: the copy of `b` shifted by whole periods
//! that lies nearest `a`. The broad phase finds the pairs through images of the boxes that
//! cross a face ([`crate::broad::PeriodicBroad`]); the narrow phase, the overlap and the
//! force see `b` at its shifted pose. The nearest image is the only one that can touch as
//! long as every bounding box (with its margin) is narrower than half the period along each
//! periodic axis: two such boxes that overlap have centres less than half a period apart,
//! which singles out one shift. A body larger than that is refused.
//!
//! Half-space walls must have normals perpendicular to the periodic axes: such a plane is
//! the same after any shift along them, so a grain meets it where the grain is.

use serde::{Deserialize, Serialize};
use talus_geom::Aabb;
use talus_geom::glam::DVec3;

use crate::error::SimError;

/// The names of the axes, for messages.
pub const AXIS_NAMES: [char; 3] = ['x', 'y', 'z'];

/// One periodic axis: the box spans `[lower, upper)` along it and repeats with period
/// `upper - lower`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Period {
    /// The lower face.
    pub lower: f64,
    /// The upper face.
    pub upper: f64,
}

impl Period {
    /// The period: the distance between the faces.
    #[must_use]
    pub fn length(&self) -> f64 {
        self.upper - self.lower
    }
}

/// The periodic axes of a world (none by default).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Periodic {
    /// Along x, y and z: the period, or `None` for a non-periodic axis.
    pub axes: [Option<Period>; 3],
}

/// How many periods a grain has been moved by along each axis to keep it in the box: its
/// unwrapped position is its position plus `image · period` per axis.
pub type ImageCount = [i32; 3];

impl Periodic {
    /// No periodic axis.
    pub const NONE: Periodic = Periodic { axes: [None; 3] };

    /// Whether no axis is periodic.
    #[must_use]
    pub fn is_none(&self) -> bool {
        self.axes.iter().all(Option::is_none)
    }

    /// The periodic axes with their periods.
    pub fn periods(&self) -> impl Iterator<Item = (usize, Period)> + '_ {
        self.axes
            .iter()
            .enumerate()
            .filter_map(|(i, p)| p.map(|p| (i, p)))
    }

    /// Checks that every period has finite faces, the upper above the lower.
    ///
    /// # Errors
    /// [`SimError::InvalidParameter`] otherwise.
    pub fn validate(&self) -> Result<(), SimError> {
        for (i, p) in self.periods() {
            let length = p.length();
            if !(p.lower.is_finite() && p.upper.is_finite() && length > 0.0 && length.is_finite()) {
                return Err(SimError::InvalidParameter {
                    name: "periodic axis",
                    value: format!("{}: [{}, {}]", AXIS_NAMES[i], p.lower, p.upper),
                    allowed: "finite faces with the upper above the lower",
                });
            }
        }
        Ok(())
    }

    /// `position` brought into the box along every periodic axis, and the periods it was
    /// moved by (added to a grain's image count).
    #[must_use]
    pub fn wrap(&self, mut position: DVec3) -> (DVec3, ImageCount) {
        let mut moved = [0; 3];
        for (i, p) in self.periods() {
            let x = position[i];
            if x >= p.lower && x < p.upper {
                continue;
            }
            let periods = ((x - p.lower) / p.length()).floor();
            position[i] = x - periods * p.length();
            // Round-off may leave the result an ulp outside; it is wrapped again next time,
            // and the count stays consistent with the position either way.
            moved[i] = periods as i32;
        }
        (position, moved)
    }

    /// The unwrapped position of a grain at `position` that has been moved by `image`.
    #[must_use]
    pub fn unwrap(&self, position: DVec3, image: ImageCount) -> DVec3 {
        let mut x = position;
        for (i, p) in self.periods() {
            x[i] += f64::from(image[i]) * p.length();
        }
        x
    }

    /// The shift by whole periods that brings a point at `b` nearest to one at `a` (the
    /// minimum image): `b + shift` is within half a period of `a` along every periodic axis.
    #[must_use]
    pub fn nearest_image(&self, a: DVec3, b: DVec3) -> DVec3 {
        let mut shift = DVec3::ZERO;
        for (i, p) in self.periods() {
            let length = p.length();
            shift[i] = -((b[i] - a[i]) / length).round() * length;
        }
        shift
    }

    /// Checks that a body whose bounding box is at most `width` across along every axis
    /// (its margin included) has a single image that can touch another: `width` must be
    /// below half of every period.
    ///
    /// # Errors
    /// [`SimError::TooLargeForPeriod`] otherwise.
    pub fn check_fits(&self, body: &str, width: f64) -> Result<(), SimError> {
        for (i, p) in self.periods() {
            // A hair's breadth of room for the boxes' outward rounding.
            if width.is_nan() || width * (1.0 + 1e-9) >= 0.5 * p.length() {
                return Err(SimError::TooLargeForPeriod {
                    body: body.to_string(),
                    width,
                    axis: AXIS_NAMES[i],
                    period: p.length(),
                });
            }
        }
        Ok(())
    }

    /// Checks that a half-space with outward `normal` is the same after any shift along the
    /// periodic axes: its normal has no component along them.
    ///
    /// # Errors
    /// [`SimError::InvalidParameter`] otherwise.
    pub fn check_plane(&self, normal: DVec3) -> Result<(), SimError> {
        let n = normal.normalize_or_zero();
        for (i, _) in self.periods() {
            if n[i].abs() > 1e-12 {
                return Err(SimError::InvalidParameter {
                    name: "half-space wall normal",
                    value: format!("{normal:?} along periodic axis {}", AXIS_NAMES[i]),
                    allowed: "a plane whose normal is perpendicular to every periodic axis \
                              (a floor or side wall parallel to the periodic directions)",
                });
            }
        }
        Ok(())
    }

    /// Number of boxes each body may have in the broad phase: itself and one image for each
    /// non-empty combination of periodic axes whose faces it crosses.
    #[must_use]
    pub(crate) fn image_slots(&self) -> usize {
        1 << self.periods().count()
    }

    /// Every shift by a whole period or none along each periodic axis (`3^k` of them for
    /// `k` periodic axes, the zero shift first): two boxes narrower than half a period meet
    /// across the periodic faces when one of them, shifted by one of these, meets the other.
    pub(crate) fn neighbour_shifts(&self) -> Vec<DVec3> {
        let mut shifts = vec![DVec3::ZERO];
        for (i, p) in self.periods() {
            let length = p.length();
            let mut next = Vec::with_capacity(3 * shifts.len());
            for s in &shifts {
                for k in [0.0, -1.0, 1.0] {
                    let mut t = *s;
                    t[i] += k * length;
                    next.push(t);
                }
            }
            shifts = next;
        }
        shifts
    }

    /// Image `code` of `aabb` (bit `k` set: shifted along the `k`-th periodic axis, by a
    /// period inwards from the face it crosses), or `None` if it does not cross the faces of
    /// every axis of the code. Code 0 is the box itself.
    pub(crate) fn image_of(&self, aabb: Aabb, code: usize) -> Option<Aabb> {
        let mut shift = DVec3::ZERO;
        for (k, (i, p)) in self.periods().enumerate() {
            if code & (1 << k) == 0 {
                continue;
            }
            shift[i] = if aabb.min[i] <= p.lower {
                p.length()
            } else if aabb.max[i] >= p.upper {
                -p.length()
            } else {
                return None;
            };
        }
        Some(Aabb {
            min: aabb.min + shift,
            max: aabb.max + shift,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn xz() -> Periodic {
        Periodic {
            axes: [
                Some(Period {
                    lower: -1.0,
                    upper: 3.0,
                }),
                None,
                Some(Period {
                    lower: 0.0,
                    upper: 0.5,
                }),
            ],
        }
    }

    #[test]
    fn wrapping_keeps_the_unwrapped_position() {
        let p = xz();
        for x in [
            DVec3::new(-9.7, 5.0, 1.3),
            DVec3::new(3.0, -2.0, -0.01),
            DVec3::new(0.5, 0.0, 0.25),
        ] {
            let (w, image) = p.wrap(x);
            assert!(
                (-1.0..3.0).contains(&w.x) && (0.0..0.5).contains(&w.z),
                "{w}"
            );
            assert_eq!(w.y, x.y, "a non-periodic axis is left alone");
            assert!((p.unwrap(w, image) - x).length() < 1e-12);
        }
    }

    #[test]
    fn the_nearest_image_is_within_half_a_period() {
        let p = xz();
        let a = DVec3::new(-0.9, 0.0, 0.05);
        let b = DVec3::new(2.8, 7.0, 0.45);
        let s = p.nearest_image(a, b);
        assert_eq!(s, DVec3::new(-4.0, 0.0, -0.5));
        let d = b + s - a;
        assert!(d.x.abs() <= 2.0 && d.z.abs() <= 0.25 && d.y == 7.0);
    }

    #[test]
    fn images_exist_only_across_the_faces_a_box_crosses() {
        let p = xz();
        let corner = Aabb {
            min: DVec3::new(2.9, 0.0, -0.05),
            max: DVec3::new(3.1, 1.0, 0.05),
        };
        assert_eq!(p.image_slots(), 4);
        let x = p.image_of(corner, 1).unwrap();
        assert_eq!((x.min.x, x.min.z), (2.9 - 4.0, -0.05));
        let z = p.image_of(corner, 2).unwrap();
        assert_eq!((z.min.x, z.min.z), (2.9, -0.05 + 0.5));
        assert!(p.image_of(corner, 3).is_some());
        let inside = Aabb {
            min: DVec3::new(0.0, 0.0, 0.1),
            max: DVec3::new(1.0, 1.0, 0.2),
        };
        assert!((1..4).all(|code| p.image_of(inside, code).is_none()));
        assert_eq!(p.image_of(inside, 0), Some(inside));
    }

    #[test]
    fn bodies_wider_than_half_a_period_and_tilted_planes_are_refused() {
        let p = xz();
        assert!(p.check_fits("grain", 0.2).is_ok());
        let e = p.check_fits("grain", 0.3).unwrap_err();
        assert!(e.to_string().contains("axis z"), "{e}");
        assert!(p.check_plane(DVec3::Y).is_ok());
        assert!(p.check_plane(DVec3::new(0.0, 1.0, 0.1)).is_err());
        let bad = Periodic {
            axes: [
                Some(Period {
                    lower: 1.0,
                    upper: 1.0,
                }),
                None,
                None,
            ],
        };
        assert!(bad.validate().is_err());
    }
}
