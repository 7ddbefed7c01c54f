//! Building a convex polyhedron from a point cloud.
//!
//! quickhull (f32) proposes the hull's topology; everything else is f64 on the input
//! coordinates: a beneath–beyond pass inserts any point the f32 hull missed, coplanar
//! triangles are merged into planar polygons, points lying on an edge or inside a face are
//! dropped, and the result is checked (closed, Euler's formula, every point inside).

use std::collections::HashSet;
use std::panic::{AssertUnwindSafe, catch_unwind};

use glam::DVec3;

use crate::error::GeomError;
use crate::face_merge::merge_coplanar;
use crate::polyhedron::ConvexPolyhedron;
use crate::triangle_hull::{TriangleHull, tetrahedron};

/// Points closer than this fraction of the point set's extent to the line (plane) through
/// the extreme points count as collinear (coplanar).
pub const FLATNESS_TOLERANCE: f64 = 1e-9;

/// Smallest accepted `volume / extent³` of a hull.
pub const MIN_VOLUME_RATIO: f64 = 1e-12;

/// Distance (as a fraction of the extent) beyond a face from which a point counts as
/// outside the hull; also the planarity tolerance for merging coplanar triangles.
pub const HULL_TOLERANCE: f64 = 1e-11;

/// Largest accepted absolute coordinate, and smallest accepted extent: within these bounds
/// volumes and inertia tensors (fifth powers of lengths) stay well inside f64's range.
pub const COORDINATE_LIMIT: f64 = 1e50;

impl ConvexPolyhedron {
    /// The convex hull of `points`.
    ///
    /// Points inside the hull, in the interior of a face or of an edge are not vertices of
    /// the result; the vertices keep their input coordinates and relative order.
    ///
    /// # Errors
    /// [`GeomError`] for fewer than 4 points, non-finite or out-of-range coordinates,
    /// coincident or too few distinct points, collinear or coplanar points, and hulls of
    /// near-zero volume.
    ///
    /// ```
    /// use talus_geom::{ConvexPolyhedron, glam::DVec3};
    /// let corners: Vec<DVec3> = (0..8)
    ///     .map(|i| DVec3::new((i & 1) as f64, ((i >> 1) & 1) as f64, ((i >> 2) & 1) as f64))
    ///     .collect();
    /// let cube = ConvexPolyhedron::from_points(&corners).unwrap();
    /// assert_eq!(cube.counts(), (8, 12, 6));
    /// ```
    pub fn from_points(points: &[DVec3]) -> Result<Self, GeomError> {
        let frame = validate(points)?;
        // Work on coordinates relative to the centre of the box, so that round-off scales
        // with the extent, not with the distance from the origin.
        let local: Vec<DVec3> = points.iter().map(|p| *p - frame.centre).collect();
        let tolerance = HULL_TOLERANCE * frame.extent;

        let triangles = hull_triangles(&local, &frame, tolerance)?;
        let loops = drop_non_extreme_vertices(merge_coplanar(&local, &triangles, tolerance))?;
        let poly = ConvexPolyhedron::from_face_loops(points, &loops)?;

        let volume = poly.volume();
        let ratio = volume / frame.extent.powi(3);
        if ratio.is_nan() || ratio < MIN_VOLUME_RATIO {
            return Err(GeomError::DegenerateVolume {
                volume,
                extent: frame.extent,
                ratio,
                min_ratio: MIN_VOLUME_RATIO,
            });
        }
        let worst = points
            .iter()
            .map(|&p| poly.max_face_distance(p))
            .fold(f64::NEG_INFINITY, f64::max);
        if worst > 10.0 * tolerance + 1e-15 * frame.max_abs {
            return Err(GeomError::HullConstruction(format!(
                "an input point lies {worst:e} outside the hull"
            )));
        }
        Ok(poly)
    }
}

/// Extent and extreme points of a validated point set.
struct Frame {
    centre: DVec3,
    extent: f64,
    max_abs: f64,
    /// Four points spanning the largest tetrahedron found greedily.
    extremes: [u32; 4],
}

fn validate(points: &[DVec3]) -> Result<Frame, GeomError> {
    if points.len() < 4 {
        return Err(GeomError::TooFewPoints {
            given: points.len(),
        });
    }
    if points.len() > u32::MAX as usize / 8 {
        return Err(GeomError::InvalidParameter {
            name: "number of points",
            value: points.len().to_string(),
            allowed: "at most 500 million points",
        });
    }
    for (index, &point) in points.iter().enumerate() {
        if !point.is_finite() {
            return Err(GeomError::NonFinite { index, point });
        }
    }
    let (min, max) = points.iter().fold((points[0], points[0]), |(lo, hi), &p| {
        (lo.min(p), hi.max(p))
    });
    let max_abs = min.abs().max(max.abs()).max_element();
    // Scaled before squaring, so that tiny or huge extents neither underflow nor overflow.
    let span = max - min;
    let widest = span.max_element();
    let extent = if widest > 0.0 {
        widest * (span / widest).length()
    } else {
        0.0
    };
    if extent == 0.0 {
        return Err(GeomError::Coincident {
            given: points.len(),
            point: points[0],
        });
    }
    if max_abs > COORDINATE_LIMIT || extent < 1.0 / COORDINATE_LIMIT {
        return Err(GeomError::InvalidParameter {
            name: "coordinates",
            value: format!("extent {extent:e}, largest magnitude {max_abs:e}"),
            allowed: "magnitudes up to 1e50 and an extent of at least 1e-50",
        });
    }
    let distinct: HashSet<[u64; 3]> = points
        .iter()
        .map(|p| (*p + DVec3::ZERO).to_array().map(f64::to_bits))
        .collect();
    if distinct.len() < 4 {
        return Err(GeomError::TooFewDistinctPoints {
            given: points.len(),
            distinct: distinct.len(),
        });
    }

    let centre = 0.5 * (min + max);
    let at = |i: usize| points[i] - centre;
    let argmax = |f: &dyn Fn(DVec3) -> f64| {
        (0..points.len())
            .map(|i| (i, f(at(i))))
            .fold(
                (0, f64::NEG_INFINITY),
                |best, c| if c.1 > best.1 { c } else { best },
            )
    };
    // The two points farthest apart along the widest box axis, then the point farthest
    // from their line, then the point farthest from their plane.
    let axis = (max - min).max_position();
    let (i0, _) = argmax(&|p| -p[axis]);
    let (i1, _) = argmax(&|p| p.distance_squared(at(i0)));
    let dir = (at(i1) - at(i0)).normalize();
    let (i2, line_d2) = argmax(&|p| (p - at(i0)).reject_from_normalized(dir).length_squared());
    let line_distance = line_d2.sqrt();
    if line_distance <= FLATNESS_TOLERANCE * extent {
        return Err(GeomError::Collinear {
            max_distance: line_distance,
            extent,
        });
    }
    let normal = dir.cross(at(i2) - at(i0)).normalize();
    let (i3, _) = argmax(&|p| normal.dot(p - at(i0)).abs());
    let plane_distance = normal.dot(at(i3) - at(i0)).abs();
    if plane_distance <= FLATNESS_TOLERANCE * extent {
        return Err(GeomError::Coplanar {
            max_distance: plane_distance,
            extent,
        });
    }
    Ok(Frame {
        centre,
        extent,
        max_abs,
        extremes: [i0, i1, i2, i3].map(|i| i as u32),
    })
}

/// Closed outward triangle mesh containing every point: quickhull's topology completed in
/// f64, or, if quickhull fails, an f64 beneath–beyond hull grown from the extreme points.
fn hull_triangles(
    local: &[DVec3],
    frame: &Frame,
    tolerance: f64,
) -> Result<Vec<[u32; 3]>, GeomError> {
    let all_points = || 0..local.len() as u32;
    if let Some(seed) = quickhull_triangles(local, frame.extent) {
        if let Ok(mut hull) = TriangleHull::new(local, &seed, tolerance)
            && hull.insert_outside_points(all_points()).is_ok()
        {
            return Ok(hull.into_triangles());
        }
    }
    let seed = tetrahedron(local, frame.extremes);
    let mut hull =
        TriangleHull::new(local, &seed, tolerance).map_err(GeomError::HullConstruction)?;
    hull.insert_outside_points(all_points())
        .map_err(GeomError::HullConstruction)?;
    Ok(hull.into_triangles())
}

/// quickhull's triangles (as indices into `local`, outward oriented in f64), or `None` if it
/// fails, panics or returns something that is not a solid.
fn quickhull_triangles(local: &[DVec3], extent: f64) -> Option<Vec<[u32; 3]>> {
    // Scaled to unit size so that f32 keeps its relative precision whatever the units.
    let scaled: Vec<glam032::Vec3A> = local
        .iter()
        .map(|p| {
            let q = *p / extent;
            glam032::Vec3A::new(q.x as f32, q.y as f32, q.z as f32)
        })
        .collect();
    let mesh = catch_unwind(AssertUnwindSafe(|| {
        quickhull::ConvexTriangleMesh::try_from_points(&scaled, Some(64 * local.len() + 1024))
    }))
    .ok()?
    .ok()?;
    // quickhull renumbers its vertices; map them back to input indices through their bits.
    let index_of: std::collections::HashMap<[u32; 3], u32> = scaled
        .iter()
        .enumerate()
        .rev()
        .map(|(i, p)| (p.to_array().map(f32::to_bits), i as u32))
        .collect();
    let vertex_index: Vec<u32> = mesh
        .vertices()
        .iter()
        .map(|p| index_of.get(&p.to_array().map(f32::to_bits)).copied())
        .collect::<Option<_>>()?;
    if mesh.indices().len() < 4 {
        return None;
    }
    let interior = {
        let used: Vec<DVec3> = vertex_index.iter().map(|&i| local[i as usize]).collect();
        used.iter().sum::<DVec3>() / used.len() as f64
    };
    mesh.indices()
        .iter()
        .map(|t| {
            let [a, b, c] = t.map(|k| vertex_index.get(k as usize).copied());
            let (a, b, c) = (a?, b?, c?);
            let [pa, pb, pc] = [a, b, c].map(|i| local[i as usize]);
            // Orientation is decided in f64 against an interior point.
            let outward = (pb - pa).cross(pc - pa).dot(pa - interior) >= 0.0;
            Some(if outward { [a, b, c] } else { [a, c, b] })
        })
        .collect()
}

/// Removes from the face loops every vertex at which only two faces meet: such a point lies
/// on the edge between them, not at a corner.
fn drop_non_extreme_vertices(mut loops: Vec<Vec<u32>>) -> Result<Vec<Vec<u32>>, GeomError> {
    let mut faces_at: std::collections::HashMap<u32, u32> = std::collections::HashMap::new();
    for face_loop in &loops {
        for &v in face_loop {
            *faces_at.entry(v).or_default() += 1;
        }
    }
    for face_loop in &mut loops {
        face_loop.retain(|v| faces_at[v] >= 3);
        if face_loop.len() < 3 {
            return Err(GeomError::HullConstruction(
                "a face lost its corners when edge points were removed".into(),
            ));
        }
    }
    Ok(loops)
}
