//! Typed errors of the geometry crate.

use glam::DVec3;
use thiserror::Error;

/// Why a convex polyhedron (or a generated grain) could not be built.
///
/// Every variant says what was wrong with the input and what is allowed instead, so that a
/// command-line tool can print it as it is.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum GeomError {
    /// Fewer than four points were given; a solid needs at least four.
    #[error("a convex polyhedron needs at least 4 points, {given} given")]
    TooFewPoints {
        /// How many points were given.
        given: usize,
    },

    /// A coordinate is NaN or infinite.
    #[error(
        "point {index} has a non-finite coordinate {point:?}; all coordinates must be finite numbers"
    )]
    NonFinite {
        /// Index of the offending point in the input.
        index: usize,
        /// The point as given.
        point: DVec3,
    },

    /// All points are (copies of) one single point.
    #[error(
        "all {given} points coincide at {point:?}; at least 4 distinct points spanning a volume are needed"
    )]
    Coincident {
        /// How many points were given.
        given: usize,
        /// The common point.
        point: DVec3,
    },

    /// Duplicates leave fewer than four distinct points.
    #[error(
        "only {distinct} distinct points among the {given} given; at least 4 distinct points spanning a volume are needed"
    )]
    TooFewDistinctPoints {
        /// How many points were given.
        given: usize,
        /// How many of them are distinct.
        distinct: usize,
    },

    /// All points lie on one straight line (within `relative_tolerance` of the extent).
    #[error(
        "all points lie on one line (largest distance from it {max_distance:e}, extent {extent:e}); a solid needs points off every line and plane"
    )]
    Collinear {
        /// Largest distance of a point from the best line.
        max_distance: f64,
        /// Diameter of the point set.
        extent: f64,
    },

    /// All points lie in one plane (within `relative_tolerance` of the extent).
    #[error(
        "all points lie in one plane (largest distance from it {max_distance:e}, extent {extent:e}); a solid needs points off every plane"
    )]
    Coplanar {
        /// Largest distance of a point from the best plane.
        max_distance: f64,
        /// Diameter of the point set.
        extent: f64,
    },

    /// The hull encloses (almost) no volume compared to its extent.
    #[error(
        "the hull has a near-zero volume {volume:e} for an extent {extent:e} (volume/extent^3 = {ratio:e}, at least {min_ratio:e} is required)"
    )]
    DegenerateVolume {
        /// The hull volume.
        volume: f64,
        /// Diameter of the point set.
        extent: f64,
        /// `volume / extent^3`.
        ratio: f64,
        /// The smallest accepted ratio.
        min_ratio: f64,
    },

    /// A parameter of a generator is outside its allowed range.
    #[error("invalid {name} = {value}: {allowed}")]
    InvalidParameter {
        /// The parameter's name.
        name: &'static str,
        /// The value given, as text.
        value: String,
        /// What is allowed.
        allowed: &'static str,
    },

    /// The hull could not be made consistent; reports a defect of the hull construction,
    /// not of the input.
    #[error("internal error while building the hull: {0}")]
    HullConstruction(String),
}
