//! Volume, centre of mass and inertia tensor by pyramid decomposition (thesis §3.2–3.5).
//!
//! The polyhedron is cut into pyramids with their apex at an interior point O and a surface
//! triangle as base (§3.2). The foot L of the perpendicular from O onto the base's plane
//! cuts each of them into three pyramids, which a rotation brings into the standard
//! position of eq. 3.2: P1 = (0,0,0), P2 = (a,0,0), P3 = (a,d,0), P4 = (a,b,c). For that
//! tetrahedron the thesis gives closed forms for the volume (3.8), the centroid (3.10) and
//! the inertia tensor about P1 (3.15). Rotated back (3.16) and summed (3.7, 3.11, 3.17), they
//! give the polyhedron's; Steiner's theorem then moves the tensor to the centre of mass.
//!
//! Signed volumes make the decomposition exact also when L falls outside the base triangle:
//! the three sub-pyramids then overlap and the outer ones count negatively.

use glam::{DMat3, DVec3};

use crate::eigen::symmetric_eigen;
use crate::polyhedron::ConvexPolyhedron;

/// Mass properties of a homogeneous convex polyhedron.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MassProperties {
    /// Mass, `density × volume`.
    pub mass: f64,
    /// Volume.
    pub volume: f64,
    /// Centre of mass, in the frame of the polyhedron's coordinates.
    pub center_of_mass: DVec3,
    /// Inertia tensor about the centre of mass, axes of the polyhedron's frame.
    pub inertia: DMat3,
    /// Principal moments of inertia, ascending.
    pub principal_moments: DVec3,
    /// Principal axes: column `i` belongs to `principal_moments[i]`; a proper rotation
    /// (determinant +1) from the principal frame to the polyhedron's frame.
    pub principal_axes: DMat3,
}

/// Volume, first moment and inertia tensor (about the apex, in the pyramid's own frame) of
/// the standard pyramid of eq. 3.2, from eqs. 3.8, 3.10 and 3.15.
fn standard_pyramid(a: f64, b: f64, c: f64, d: f64) -> (f64, DVec3, DMat3) {
    let volume = a * c * d / 6.0; // (3.8)
    let centroid = DVec3::new(3.0 * a, b + d, c) / 4.0; // (3.10)
    let k = a * c * d / 60.0; // (3.15)
    let bd = b * b + b * d + d * d;
    let ixy = -2.0 * a * (b + d);
    let ixz = -2.0 * c * a;
    let iyz = -0.5 * c * (2.0 * b + d);
    let inertia = DMat3::from_cols(
        DVec3::new(bd + c * c, ixy, ixz),
        DVec3::new(ixy, c * c + 6.0 * a * a, iyz),
        DVec3::new(ixz, iyz, bd + 6.0 * a * a),
    ) * k;
    (volume, volume * centroid, inertia)
}

/// Volume, first moment and inertia about `apex` of the polyhedron, as sums over the
/// pyramids of §3.2, in coordinates relative to `apex`.
fn pyramid_sums(poly: &ConvexPolyhedron, apex: DVec3) -> (f64, DVec3, DMat3) {
    let vertices = poly.vertices();
    let mut volume = 0.0;
    let mut moment = DVec3::ZERO;
    let mut inertia = DMat3::ZERO;
    for (f, face) in poly.faces().iter().enumerate() {
        let n = face.normal;
        let corners: Vec<DVec3> = poly
            .face_vertices(f)
            .map(|v| vertices[v as usize] - apex)
            .collect();
        // Distance of the apex from the face plane, and the foot of the perpendicular L.
        let a = n.dot(corners.iter().sum::<DVec3>() / corners.len() as f64);
        let foot = a * n;
        // Every fan triangle of the face shares L and a; summing over all of them is summing
        // over the face's boundary edges once each.
        for (k, &e1) in corners.iter().enumerate() {
            let e2 = corners[(k + 1) % corners.len()];
            let Some(y) = (e1 - foot).try_normalize() else {
                continue;
            };
            let z = n.cross(y);
            let d = (e1 - foot).length();
            let b = (e2 - foot).dot(y);
            let c = (e2 - foot).dot(z);
            let (v, m, i) = standard_pyramid(a, b, c, d);
            let rotation = DMat3::from_cols(n, y, z); // (3.4, 3.5)
            volume += v;
            moment += rotation * m;
            inertia += rotation * i * rotation.transpose(); // (3.16)
        }
    }
    (volume, moment, inertia)
}

impl ConvexPolyhedron {
    /// Volume by pyramid decomposition (eqs. 3.7, 3.8).
    #[must_use]
    pub fn volume(&self) -> f64 {
        let apex = self.vertex_centroid();
        self.faces()
            .iter()
            .enumerate()
            .map(|(f, face)| {
                let corners: Vec<DVec3> = self
                    .face_vertices(f)
                    .map(|v| self.vertices()[v as usize])
                    .collect();
                let height = face.normal.dot(corners[0] - apex);
                height * crate::polyhedron::polygon_area_vector(&corners).dot(face.normal) / 3.0
            })
            .sum()
    }

    /// Mass, volume, centre of mass, inertia tensor and principal axes for a homogeneous
    /// body of the given density, by the pyramid decomposition of §3.2–3.5.
    ///
    /// ```
    /// use talus_geom::generate;
    /// let cube = generate::cube(2.0).unwrap();
    /// let props = cube.mass_properties(1.5);
    /// assert!((props.volume - 8.0).abs() < 1e-12);
    /// // I = m a² / 6 for a cube of edge a.
    /// assert!((props.principal_moments.x - 12.0 * 4.0 / 6.0).abs() < 1e-12);
    /// ```
    #[must_use]
    pub fn mass_properties(&self, density: f64) -> MassProperties {
        let apex = self.vertex_centroid();
        let (volume, moment, inertia_apex) = pyramid_sums(self, apex);
        let offset = moment / volume; // (3.11), relative to the apex
        // Steiner: I_apex = I_com + V (|c|² 1 − c cᵀ).
        let shift = DMat3::from_diagonal(DVec3::splat(offset.length_squared()))
            - DMat3::from_cols(offset * offset.x, offset * offset.y, offset * offset.z);
        let inertia = (inertia_apex - shift * volume) * density;
        // Summed rotated tensors are symmetric only up to round-off; make it exact.
        let inertia = (inertia + inertia.transpose()) * 0.5;
        let (principal_moments, principal_axes) = symmetric_eigen(inertia);
        MassProperties {
            mass: density * volume,
            volume,
            center_of_mass: apex + offset,
            inertia,
            principal_moments,
            principal_axes,
        }
    }
}
