//! Axis-aligned bounding boxes by the min-max and the ellipsoid method (thesis §4.1.3).
//!
//! The min-max method (§4.1.3.1, eq. 4.2) takes the extreme world coordinates of the
//! vertices: the tightest box, at a cost of O(K) for K vertices. The ellipsoid method
//! (§4.1.3.2, eqs. 4.3–4.12) boxes an ellipsoid that encloses the grain: O(1) whatever K,
//! at the price of a larger box. For an ellipsoid with semi-axes s whose axes, turned into
//! the world frame, are the columns of R, the box half-extent along world axis i is
//! `sqrt(Σ_j R_ij² s_j²)`; this closed form is what the thesis' eq. 4.11 reduces to.

use glam::{DMat3, DVec3};

use crate::error::GeomError;
use crate::polyhedron::ConvexPolyhedron;
use crate::pose::Pose;

/// An axis-aligned box `[min, max]`.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Aabb {
    /// Lower corner.
    pub min: DVec3,
    /// Upper corner.
    pub max: DVec3,
}

impl Aabb {
    /// The box around a centre with the given half-extents.
    #[must_use]
    pub fn from_center_half_extents(center: DVec3, half: DVec3) -> Self {
        Aabb {
            min: center - half,
            max: center + half,
        }
    }

    /// The smallest box holding all points, or `None` for no points.
    #[must_use]
    pub fn from_points(points: impl IntoIterator<Item = DVec3>) -> Option<Self> {
        let mut it = points.into_iter();
        let first = it.next()?;
        Some(it.fold(
            Aabb {
                min: first,
                max: first,
            },
            |b, p| Aabb {
                min: b.min.min(p),
                max: b.max.max(p),
            },
        ))
    }

    /// Edge lengths.
    #[must_use]
    pub fn extents(&self) -> DVec3 {
        self.max - self.min
    }

    /// Volume.
    #[must_use]
    pub fn volume(&self) -> f64 {
        let e = self.extents();
        e.x * e.y * e.z
    }

    /// Whether the point is inside or on the boundary.
    #[must_use]
    pub fn contains_point(&self, p: DVec3) -> bool {
        p.cmpge(self.min).all() && p.cmple(self.max).all()
    }

    /// Whether `other` lies entirely inside this box (boundaries may touch).
    #[must_use]
    pub fn contains(&self, other: &Aabb) -> bool {
        other.min.cmpge(self.min).all() && other.max.cmple(self.max).all()
    }

    /// Whether the two boxes share at least a point (touching counts).
    #[must_use]
    pub fn intersects(&self, other: &Aabb) -> bool {
        self.min.cmple(other.max).all() && other.min.cmple(self.max).all()
    }

    /// The common part of two boxes, or `None` if they do not meet.
    #[must_use]
    pub fn intersection(&self, other: &Aabb) -> Option<Aabb> {
        let b = Aabb {
            min: self.min.max(other.min),
            max: self.max.min(other.max),
        };
        b.min.cmple(b.max).all().then_some(b)
    }

    /// The box grown by `margin` on every side.
    #[must_use]
    pub fn inflated(&self, margin: f64) -> Aabb {
        Aabb {
            min: self.min - DVec3::splat(margin),
            max: self.max + DVec3::splat(margin),
        }
    }
}

impl ConvexPolyhedron {
    /// The min-max bounding box (§4.1.3.1, eq. 4.2) of the polyhedron placed at `pose`.
    ///
    /// Rounded outward by a few ulps, so that it contains the world-frame vertices however
    /// the rotation is evaluated (matrix or quaternion).
    #[must_use]
    pub fn aabb(&self, pose: &Pose) -> Aabb {
        let r = pose.rotation_matrix();
        let mut min = DVec3::INFINITY;
        let mut max = DVec3::NEG_INFINITY;
        for &v in self.vertices() {
            let w = r * v;
            min = min.min(w);
            max = max.max(w);
        }
        // Rotation round-off scales with the vertex's length, bounded here by twice its
        // largest rotated coordinate; the translation adds an ulp of the position.
        let radius = 2.0 * min.abs().max(max.abs()).max_element();
        let slack = (DVec3::splat(radius) + pose.position.abs()) * (4.0 * f64::EPSILON);
        Aabb {
            min: min + pose.position - slack,
            max: max + pose.position + slack,
        }
    }
}

/// An ellipsoid fixed in a body's frame that encloses the body, for the O(1) ellipsoid
/// bounding-box method (§4.1.3.2).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BoundingEllipsoid {
    /// Centre, in the body frame.
    pub center: DVec3,
    /// Directions of the semi-axes in the body frame (columns; a rotation).
    pub axes: DMat3,
    /// Semi-axis lengths along the columns of `axes`.
    pub semi_axes: DVec3,
}

impl BoundingEllipsoid {
    /// The ellipsoid with the given centre, axes and semi-axis proportions, scaled
    /// uniformly so that it just encloses every vertex of `poly`.
    ///
    /// For a grain from [`crate::generate::ellipsoid_grain`], passing the generating
    /// ellipsoid (`DVec3::ZERO`, `DMat3::IDENTITY`, its semi-axes) gives that ellipsoid back
    /// (scale 1 up to round-off): the vertices lie on it.
    ///
    /// # Errors
    /// [`GeomError::InvalidParameter`] if a semi-axis is not positive and finite or `axes`
    /// is not a rotation.
    pub fn enclosing(
        poly: &ConvexPolyhedron,
        center: DVec3,
        axes: DMat3,
        semi_axes: DVec3,
    ) -> Result<Self, GeomError> {
        if !(semi_axes.is_finite() && semi_axes.min_element() > 0.0) {
            return Err(GeomError::InvalidParameter {
                name: "semi_axes",
                value: format!("{semi_axes:?}"),
                allowed: "three positive finite lengths",
            });
        }
        let gram = axes.transpose() * axes - DMat3::IDENTITY;
        if !axes.is_finite()
            || gram.to_cols_array().iter().any(|e| e.abs() > 1e-9)
            || axes.determinant() < 0.0
        {
            return Err(GeomError::InvalidParameter {
                name: "axes",
                value: format!("{axes:?}"),
                allowed: "a rotation matrix (orthonormal columns, determinant +1)",
            });
        }
        Ok(Self::fit(poly, center, axes, semi_axes))
    }

    /// Scales the semi-axes uniformly so that the ellipsoid just encloses every vertex.
    fn fit(poly: &ConvexPolyhedron, center: DVec3, axes: DMat3, semi_axes: DVec3) -> Self {
        let to_axes = axes.transpose();
        let scale_sq = poly
            .vertices()
            .iter()
            .map(|&v| ((to_axes * (v - center)) / semi_axes).length_squared())
            .fold(0.0, f64::max);
        // A few ulps more than the farthest vertex needs, so that round-off in either box
        // method cannot put a vertex outside the ellipsoid's box.
        let scale = scale_sq.sqrt() * (1.0 + 8.0 * f64::EPSILON);
        BoundingEllipsoid {
            center,
            axes,
            semi_axes: semi_axes * scale,
        }
    }

    /// An enclosing ellipsoid for any convex polyhedron: centred at the centre of mass,
    /// along the principal axes, with the proportions of the solid ellipsoid of equal
    /// inertia (`s_i² = 5 (I_j + I_k − I_i) / 2m`), scaled to enclose every vertex.
    #[must_use]
    pub fn around(poly: &ConvexPolyhedron) -> Self {
        let props = poly.mass_properties(1.0);
        let i = props.principal_moments;
        let sum = i.x + i.y + i.z;
        let shape = (DVec3::splat(sum) - 2.0 * i) * (2.5 / props.mass);
        // A flat or needle-like grain can have a vanishing inertia ellipsoid axis; keep every
        // axis at least a small fraction of the largest so the scaling stays finite.
        let floor = (1e-6 * shape.max_element()).max(f64::MIN_POSITIVE);
        let shape = shape.max(DVec3::splat(floor)).sqrt();
        Self::fit(poly, props.center_of_mass, props.principal_axes, shape)
    }

    /// The bounding box of the ellipsoid with its body placed at `pose`: O(1).
    #[must_use]
    pub fn aabb(&self, pose: &Pose) -> Aabb {
        let r = pose.rotation_matrix() * self.axes;
        let s2 = self.semi_axes * self.semi_axes;
        let row = |i: usize| DVec3::new(r.x_axis[i], r.y_axis[i], r.z_axis[i]);
        let half = DVec3::new(
            (row(0) * row(0)).dot(s2).sqrt(),
            (row(1) * row(1)).dot(s2).sqrt(),
            (row(2) * row(2)).dot(s2).sqrt(),
        );
        let center = pose.transform_point(self.center);
        // Rounded outward by a few ulps of the coordinates, so the box is never smaller
        // than the exact one.
        let slack = (center.abs() + half) * (4.0 * f64::EPSILON);
        Aabb::from_center_half_extents(center, half + slack)
    }
}
