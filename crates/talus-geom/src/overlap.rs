//! The overlap of two penetrating convex polyhedra: volume, centroid, contact normal and
//! area of the intersection polyhedron A∩B (design §3; seed 002).
//!
//! The boundary of A∩B is made of the parts of A's faces inside B and the parts of B's
//! faces inside A. A part of a face of A is that face clipped by the planes of B — and only
//! the planes of B's faces that meet A are needed: were a point of A outside B beyond some
//! other plane, the segment from it to a point of A∩B would leave B through a face meeting
//! A. Those faces lie in the box shared by A's and B's bounding boxes, so each grain's face
//! tree, queried with that box, yields a sufficient set of candidate faces and planes. (The
//! argument needs a point of A∩B, which the closest-feature walk certifies first.) The work
//! grows with the number of faces near the overlap, not with the vertex count.
//!
//! From the boundary parts: the volume and centroid by the divergence theorem (cones from a
//! reference point), and the vector area `S = ∫_{∂A∩B} n_A dA` of A's parts, whose direction
//! is the contact normal (from a towards b) and whose length is the projected contact area.

use glam::DVec3;

use crate::bounds::Aabb;
use crate::closest::closest_features;
use crate::feature::FeatureCache;
use crate::iso::Iso;
use crate::polyhedron::{ConvexPolyhedron, polygon_area_vector};
use crate::pose::Pose;

/// The overlap of two penetrating grains.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Overlap {
    /// Volume of A∩B.
    pub volume: f64,
    /// Centroid of A∩B, world frame: the point where a contact force acts.
    pub centroid: DVec3,
    /// Unit contact normal, from a towards b: the direction of the vector area of the part
    /// of A's surface inside B.
    pub normal: DVec3,
    /// Projected contact area: the length of that vector area.
    pub area: f64,
}

/// A plane `normal · x = offset` in B's frame.
#[derive(Clone, Copy)]
struct Plane {
    normal: DVec3,
    offset: f64,
}

/// The overlap of `a` and `b`, or `None` when they do not penetrate (or only touch).
///
/// The closest-feature walk decides first whether the grains penetrate (warm from `cache`
/// when given, which makes a separated pair cost O(1)); only then is the intersection
/// clipped. Knowing that A∩B is not empty is also what makes the restriction to candidate
/// planes exact (see the module documentation).
#[must_use]
pub fn overlap(
    a: &ConvexPolyhedron,
    pose_a: &Pose,
    b: &ConvexPolyhedron,
    pose_b: &Pose,
    cache: Option<&FeatureCache>,
) -> Option<Overlap> {
    let mut walk = cache.copied().unwrap_or_default();
    if !closest_features(a, pose_a, b, pose_b, &mut walk).is_penetrating() {
        return None;
    }
    // Everything is computed in B's body frame.
    let a_to_b = Iso::between(pose_a, pose_b);
    let b_to_a = a_to_b.inverse();
    let region_b = rotated_box(&a.local_aabb(), &a_to_b).intersection(&b.local_aabb())?;
    let region_a = rotated_box(&b.local_aabb(), &b_to_a).intersection(&a.local_aabb())?;

    let mut faces_a = Vec::new();
    let mut faces_b = Vec::new();
    a.faces_near(&region_a, &mut faces_a);
    b.faces_near(&region_b, &mut faces_b);
    if faces_a.is_empty() || faces_b.is_empty() {
        return None;
    }
    let planes_b: Vec<Plane> = faces_b
        .iter()
        .map(|&g| {
            let face = b.faces()[g as usize];
            Plane {
                normal: face.normal,
                offset: face.offset,
            }
        })
        .collect();
    let planes_a: Vec<Plane> = faces_a
        .iter()
        .map(|&f| {
            let face = a.faces()[f as usize];
            let normal = a_to_b.vector(face.normal);
            let on_plane = a_to_b.point(face.normal * face.offset);
            Plane {
                normal,
                offset: normal.dot(on_plane),
            }
        })
        .collect();

    let scale = a.local_aabb().extents().length() + b.local_aabb().extents().length();
    let coplanar_tolerance = 1e-12 * scale;
    let reference = 0.5 * (region_b.min + region_b.max);
    let mut sums = BoundarySums::new(reference);
    let mut polygon = Vec::new();
    let mut scratch = Vec::new();

    for &f in &faces_a {
        polygon.clear();
        polygon.extend(
            a.face_vertices(f as usize)
                .map(|v| a_to_b.point(a.vertices()[v as usize])),
        );
        if clip_by_planes(&mut polygon, &mut scratch, &planes_b) {
            let area = polygon_area_vector(&polygon);
            sums.add(&polygon);
            sums.contact_area += area;
        }
    }
    for &g in &faces_b {
        let face = b.faces()[g as usize];
        polygon.clear();
        polygon.extend(
            b.face_vertices(g as usize)
                .map(|v| b.vertices()[v as usize]),
        );
        // A face of B lying in a face of A with the same orientation is on A's surface and
        // already counted as A's part; counting it twice would double that boundary.
        let shared = planes_a.iter().any(|p| {
            p.normal.dot(face.normal) > 1.0 - 1e-12
                && polygon
                    .iter()
                    .all(|x| (p.normal.dot(*x) - p.offset).abs() <= coplanar_tolerance)
        });
        if !shared && clip_by_planes(&mut polygon, &mut scratch, &planes_a) {
            sums.add(&polygon);
        }
    }

    let volume = sums.six_volume / 6.0;
    let area = sums.contact_area.length();
    if !(volume > 0.0 && area > 0.0) {
        return None;
    }
    let centroid_b = reference + sums.moment / (4.0 * sums.six_volume);
    let rotation_b = pose_b.rotation_matrix();
    Some(Overlap {
        volume,
        centroid: rotation_b * centroid_b + pose_b.position,
        normal: (rotation_b * sums.contact_area / area).normalize(),
        area,
    })
}

/// Running sums over boundary polygons of the intersection: six times the volume and the
/// first moment (times 24) of the cones from `reference`, and A's vector area.
struct BoundarySums {
    reference: DVec3,
    six_volume: f64,
    moment: DVec3,
    contact_area: DVec3,
}

impl BoundarySums {
    fn new(reference: DVec3) -> Self {
        BoundarySums {
            reference,
            six_volume: 0.0,
            moment: DVec3::ZERO,
            contact_area: DVec3::ZERO,
        }
    }

    /// Adds the cone from the reference point over an outward polygon: tetrahedra
    /// (r, p0, pk, pk+1) with signed volume det/6 and centroid (r + p0 + pk + pk+1)/4.
    fn add(&mut self, polygon: &[DVec3]) {
        let p0 = polygon[0] - self.reference;
        for k in 1..polygon.len() - 1 {
            let (p, q) = (polygon[k] - self.reference, polygon[k + 1] - self.reference);
            let det = p0.dot(p.cross(q));
            self.six_volume += det;
            self.moment += det * (p0 + p + q);
        }
    }
}

/// Clips a convex polygon by half-spaces `normal · x ≤ offset` (Sutherland–Hodgman);
/// returns whether a polygon with area is left.
fn clip_by_planes(polygon: &mut Vec<DVec3>, scratch: &mut Vec<DVec3>, planes: &[Plane]) -> bool {
    for plane in planes {
        let distance = |x: DVec3| plane.normal.dot(x) - plane.offset;
        if polygon.iter().all(|&x| distance(x) <= 0.0) {
            continue;
        }
        scratch.clear();
        for k in 0..polygon.len() {
            let (p, q) = (polygon[k], polygon[(k + 1) % polygon.len()]);
            let (dp, dq) = (distance(p), distance(q));
            if dp <= 0.0 {
                scratch.push(p);
            }
            if (dp < 0.0 && dq > 0.0) || (dp > 0.0 && dq < 0.0) {
                scratch.push(p + (q - p) * (dp / (dp - dq)));
            }
        }
        std::mem::swap(polygon, scratch);
        if polygon.len() < 3 {
            return false;
        }
    }
    true
}

/// The axis-aligned box, in the target frame, around a box given in the source frame.
fn rotated_box(aabb: &Aabb, iso: &Iso) -> Aabb {
    let centre = iso.point(0.5 * (aabb.min + aabb.max));
    let half = 0.5 * aabb.extents();
    let r = iso.rotation;
    let abs = |v: DVec3| v.abs();
    let extent = abs(r.x_axis) * half.x + abs(r.y_axis) * half.y + abs(r.z_axis) * half.z;
    Aabb::from_center_half_extents(centre, extent * (1.0 + 4.0 * f64::EPSILON))
}
