//! Grain generators (thesis §3.1): random grains with their vertices on an ellipsoid, the
//! five platonic solids and rectangular boxes.
//!
//! All solids are centred at the origin; the platonic solids are sized by their edge length.

use std::f64::consts::{PI, TAU};
use std::fmt;
use std::str::FromStr;

use glam::DVec3;
use rand::Rng;

use crate::error::GeomError;
use crate::polyhedron::ConvexPolyhedron;

/// Largest vertex count [`ellipsoid_grain`] accepts.
pub const MAX_GRAIN_VERTICES: usize = 10_000;

/// Largest ratio of the longest to the shortest semi-axis [`ellipsoid_grain`] accepts.
pub const MAX_ASPECT_RATIO: f64 = 1e3;

/// A grain whose `n_vertices` vertices all lie on the surface of the axis-aligned ellipsoid
/// `x²/a² + y²/b² + z²/c² = 1` with `semi_axes = (a, b, c)` (thesis §3.1, fig. 3.1).
///
/// The points are drawn uniformly on the unit sphere and stretched onto the ellipsoid. Two
/// safeguards make grains that look like grains and are the same for the same random state:
/// a point closer to an earlier one than half the mean spacing `sqrt(4π/K)` (as an angle on
/// the sphere) is drawn again, so no edge is vanishingly short; and a hull with less than
/// 3 % of the ellipsoid's volume is drawn again, which matters for K = 4, where four random
/// points are often nearly coplanar (a regular tetrahedron fills 12 % of its sphere).
///
/// # Errors
/// [`GeomError::InvalidParameter`] for fewer than 4 or more than [`MAX_GRAIN_VERTICES`]
/// vertices, semi-axes that are not positive and finite, or an aspect ratio above
/// [`MAX_ASPECT_RATIO`].
pub fn ellipsoid_grain<R: Rng + ?Sized>(
    n_vertices: usize,
    semi_axes: DVec3,
    rng: &mut R,
) -> Result<ConvexPolyhedron, GeomError> {
    if !(4..=MAX_GRAIN_VERTICES).contains(&n_vertices) {
        return Err(GeomError::InvalidParameter {
            name: "vertex count",
            value: n_vertices.to_string(),
            allowed: "from 4 to 10000 vertices",
        });
    }
    check_lengths("semi_axes", semi_axes)?;
    if semi_axes.max_element() > MAX_ASPECT_RATIO * semi_axes.min_element() {
        return Err(GeomError::InvalidParameter {
            name: "semi_axes",
            value: format!("{semi_axes:?}"),
            allowed: "longest semi-axis at most 1000 times the shortest",
        });
    }
    let min_angle = 0.5 * (4.0 * PI / n_vertices as f64).sqrt();
    let min_chord_sq = (2.0 * (0.5 * min_angle).sin()).powi(2);
    let ellipsoid_volume = 4.0 / 3.0 * PI * semi_axes.x * semi_axes.y * semi_axes.z;

    let mut last_error = None;
    for _attempt in 0..100 {
        let directions = spread_unit_vectors(n_vertices, min_chord_sq, rng);
        let points: Vec<DVec3> = directions.iter().map(|&u| u * semi_axes).collect();
        match ConvexPolyhedron::from_points(&points) {
            Ok(poly)
                if poly.vertices().len() == n_vertices
                    && poly.volume() >= 0.03 * ellipsoid_volume =>
            {
                return Ok(poly);
            }
            Ok(_) => {}
            Err(e) => last_error = Some(e),
        }
    }
    Err(last_error.unwrap_or(GeomError::InvalidParameter {
        name: "vertex count",
        value: n_vertices.to_string(),
        allowed: "a count for which 100 draws give a grain with every point a vertex",
    }))
}

/// `n` unit vectors, uniform on the sphere, no two closer than `sqrt(min_chord_sq)`.
fn spread_unit_vectors<R: Rng + ?Sized>(n: usize, min_chord_sq: f64, rng: &mut R) -> Vec<DVec3> {
    let mut out: Vec<DVec3> = Vec::with_capacity(n);
    // Random sequential adsorption at this spacing covers about 20 % of the sphere, far
    // below its jamming limit, so a free spot is found within a few draws.
    while out.len() < n {
        let z: f64 = rng.random_range(-1.0..=1.0);
        let phi: f64 = rng.random_range(0.0..TAU);
        let r = (1.0 - z * z).max(0.0).sqrt();
        let u = DVec3::new(r * phi.cos(), r * phi.sin(), z);
        if out.iter().all(|q| q.distance_squared(u) >= min_chord_sq) {
            out.push(u);
        }
    }
    out
}

/// The five platonic solids.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PlatonicSolid {
    /// 4 vertices, 4 triangles.
    Tetrahedron,
    /// 8 vertices, 6 squares.
    Cube,
    /// 6 vertices, 8 triangles.
    Octahedron,
    /// 20 vertices, 12 pentagons.
    Dodecahedron,
    /// 12 vertices, 20 triangles.
    Icosahedron,
}

impl PlatonicSolid {
    /// All five, in order of vertex count.
    pub const ALL: [PlatonicSolid; 5] = [
        PlatonicSolid::Tetrahedron,
        PlatonicSolid::Octahedron,
        PlatonicSolid::Cube,
        PlatonicSolid::Icosahedron,
        PlatonicSolid::Dodecahedron,
    ];

    /// Lower-case name, as accepted by [`FromStr`].
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            PlatonicSolid::Tetrahedron => "tetrahedron",
            PlatonicSolid::Cube => "cube",
            PlatonicSolid::Octahedron => "octahedron",
            PlatonicSolid::Dodecahedron => "dodecahedron",
            PlatonicSolid::Icosahedron => "icosahedron",
        }
    }

    /// Vertices of the solid with unit-free coordinates and the edge length they have.
    fn canonical(self) -> (Vec<DVec3>, f64) {
        let phi = 0.5 * (1.0 + 5f64.sqrt());
        let signs = [-1.0, 1.0];
        let mut v = Vec::new();
        match self {
            PlatonicSolid::Tetrahedron => {
                v = vec![
                    DVec3::new(1.0, 1.0, 1.0),
                    DVec3::new(1.0, -1.0, -1.0),
                    DVec3::new(-1.0, 1.0, -1.0),
                    DVec3::new(-1.0, -1.0, 1.0),
                ];
                (v, 2.0 * 2f64.sqrt())
            }
            PlatonicSolid::Cube => {
                for x in signs {
                    for y in signs {
                        for z in signs {
                            v.push(DVec3::new(x, y, z));
                        }
                    }
                }
                (v, 2.0)
            }
            PlatonicSolid::Octahedron => {
                for s in signs {
                    v.extend([DVec3::X * s, DVec3::Y * s, DVec3::Z * s]);
                }
                (v, 2f64.sqrt())
            }
            PlatonicSolid::Dodecahedron => {
                for x in signs {
                    for y in signs {
                        for z in signs {
                            v.push(DVec3::new(x, y, z));
                        }
                    }
                }
                for a in signs {
                    for b in signs {
                        v.push(DVec3::new(0.0, a / phi, b * phi));
                        v.push(DVec3::new(a / phi, b * phi, 0.0));
                        v.push(DVec3::new(a * phi, 0.0, b / phi));
                    }
                }
                (v, 2.0 / phi)
            }
            PlatonicSolid::Icosahedron => {
                for a in signs {
                    for b in signs {
                        v.push(DVec3::new(0.0, a, b * phi));
                        v.push(DVec3::new(a, b * phi, 0.0));
                        v.push(DVec3::new(a * phi, 0.0, b));
                    }
                }
                (v, 2.0)
            }
        }
    }
}

impl fmt::Display for PlatonicSolid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The error of parsing an unknown solid name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown solid '{0}'; allowed: tetrahedron, cube, octahedron, dodecahedron, icosahedron")]
pub struct UnknownSolid(pub String);

impl FromStr for PlatonicSolid {
    type Err = UnknownSolid;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        PlatonicSolid::ALL
            .into_iter()
            .find(|p| p.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| UnknownSolid(s.to_string()))
    }
}

/// A platonic solid with the given edge length, centred at the origin.
///
/// # Errors
/// [`GeomError::InvalidParameter`] unless `edge` is positive and finite.
pub fn platonic(solid: PlatonicSolid, edge: f64) -> Result<ConvexPolyhedron, GeomError> {
    check_lengths("edge length", DVec3::splat(edge))?;
    let (points, canonical_edge) = solid.canonical();
    let scale = edge / canonical_edge;
    let points: Vec<DVec3> = points.into_iter().map(|p| p * scale).collect();
    ConvexPolyhedron::from_points(&points)
}

/// A regular tetrahedron of edge length `edge`.
///
/// # Errors
/// See [`platonic`].
pub fn tetrahedron(edge: f64) -> Result<ConvexPolyhedron, GeomError> {
    platonic(PlatonicSolid::Tetrahedron, edge)
}

/// A cube of edge length `edge`.
///
/// # Errors
/// See [`platonic`].
pub fn cube(edge: f64) -> Result<ConvexPolyhedron, GeomError> {
    platonic(PlatonicSolid::Cube, edge)
}

/// A regular octahedron of edge length `edge`.
///
/// # Errors
/// See [`platonic`].
pub fn octahedron(edge: f64) -> Result<ConvexPolyhedron, GeomError> {
    platonic(PlatonicSolid::Octahedron, edge)
}

/// A regular dodecahedron of edge length `edge`.
///
/// # Errors
/// See [`platonic`].
pub fn dodecahedron(edge: f64) -> Result<ConvexPolyhedron, GeomError> {
    platonic(PlatonicSolid::Dodecahedron, edge)
}

/// A regular icosahedron of edge length `edge`.
///
/// # Errors
/// See [`platonic`].
pub fn icosahedron(edge: f64) -> Result<ConvexPolyhedron, GeomError> {
    platonic(PlatonicSolid::Icosahedron, edge)
}

/// A rectangular box with edge lengths `lengths` along x, y, z, centred at the origin.
///
/// # Errors
/// [`GeomError::InvalidParameter`] unless all three lengths are positive and finite.
pub fn rectangular_box(lengths: DVec3) -> Result<ConvexPolyhedron, GeomError> {
    check_lengths("box lengths", lengths)?;
    let h = 0.5 * lengths;
    let mut points = Vec::with_capacity(8);
    for i in 0..8 {
        let s = DVec3::new(
            if i & 1 == 0 { -1.0 } else { 1.0 },
            if i & 2 == 0 { -1.0 } else { 1.0 },
            if i & 4 == 0 { -1.0 } else { 1.0 },
        );
        points.push(s * h);
    }
    ConvexPolyhedron::from_points(&points)
}

fn check_lengths(name: &'static str, lengths: DVec3) -> Result<(), GeomError> {
    if lengths.is_finite() && lengths.min_element() > 0.0 {
        Ok(())
    } else {
        Err(GeomError::InvalidParameter {
            name,
            value: format!("{lengths:?}"),
            allowed: "positive finite lengths",
        })
    }
}
