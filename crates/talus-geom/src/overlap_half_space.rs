//! The overlap of a convex polyhedron with a half-space (a floor or a flat wall).
//!
//! The part of the polyhedron beyond the plane is bounded by its faces clipped to the
//! half-space and by the cap where the plane cuts it. Cones from a reference point in the
//! plane give the volume and centroid (the cap contributes nothing: it lies in the plane),
//! and the clipped faces' vector area is minus the cap's, so it gives the contact normal
//! (from the polyhedron towards the half-space) and the projected contact area (the cap's
//! area) without building the cap.
//!
//! Only the faces with a corner on or below the plane have a part: those are the faces
//! around the vertices there, found from their stars (a grain resting on a wall dips a few
//! vertices into it, and most of its faces are never looked at). They are taken in index
//! order, so that the sums run in one order whichever vertex found a face first.

use glam::DVec3;

use crate::overlap::Overlap;
use crate::polyhedron::{ConvexPolyhedron, polygon_area_and_moment};
use crate::pose::Pose;

/// The overlap of `poly` at `pose` with the half-space `{x : normal · (x − point) ≤ 0}`
/// (`normal` unit, pointing out of the half-space), or `None` when they do not overlap.
/// The overlap's normal points from the polyhedron into the half-space, i.e. `−normal`.
#[must_use]
pub fn overlap_half_space(
    poly: &ConvexPolyhedron,
    pose: &Pose,
    normal: DVec3,
    point: DVec3,
) -> Option<Overlap> {
    WORKSPACE.with(|w| {
        let mut w = w.borrow_mut();
        overlap_with(poly, pose, normal, point, &mut w)
    })
}

/// Buffers of [`overlap_half_space`], kept per thread so that a call allocates nothing once
/// they have grown to the largest grain.
#[derive(Default)]
struct Workspace {
    /// Per vertex: its position and its height above the plane.
    world: Vec<DVec3>,
    height: Vec<f64>,
    /// The part of the face being summed.
    clipped: Vec<DVec3>,
    /// The faces with a corner on or below the plane, and per face whether it is listed.
    faces: Vec<u32>,
    listed: Vec<bool>,
}

thread_local! {
    static WORKSPACE: std::cell::RefCell<Workspace> = std::cell::RefCell::default();
}

fn overlap_with(
    poly: &ConvexPolyhedron,
    pose: &Pose,
    normal: DVec3,
    point: DVec3,
    w: &mut Workspace,
) -> Option<Overlap> {
    let Workspace {
        world,
        height,
        clipped,
        faces,
        listed,
    } = w;
    let rotation = pose.rotation_matrix();
    world.clear();
    world.extend(
        poly.vertices()
            .iter()
            .map(|&v| rotation * v + pose.position),
    );
    height.clear();
    height.extend(world.iter().map(|&x| normal.dot(x - point)));
    if height.iter().all(|&h| h >= 0.0) {
        return None;
    }
    // A reference point in the plane, near the grain.
    let reference = {
        let lowest = world[height
            .iter()
            .enumerate()
            .fold(0, |best, (i, &h)| if h < height[best] { i } else { best })];
        lowest - normal * normal.dot(lowest - point)
    };
    // A face with no corner on or below the plane has no part in the overlap (nothing of it
    // is kept and no edge of it crosses): the others are those around such corners.
    faces.clear();
    listed.clear();
    listed.resize(poly.faces().len(), false);
    for (v, &h) in height.iter().enumerate() {
        if h <= 0.0 {
            for s in poly.vertex_star(v) {
                let seen = &mut listed[s.face as usize];
                if !*seen {
                    *seen = true;
                    faces.push(s.face);
                }
            }
        }
    }
    faces.sort_unstable();
    let mut sums = PartSums::default();
    for &f in faces.iter() {
        let f = f as usize;
        clipped.clear();
        // Each edge (i, j) of the face in turn, the last one closing the loop.
        let mut corners = poly.face_vertices(f);
        let Some(first) = corners.next() else {
            continue;
        };
        let mut i = first as usize;
        let mut clip_edge = |i: usize, j: usize| {
            let (hi, hj) = (height[i], height[j]);
            if hi <= 0.0 {
                clipped.push(world[i]);
            }
            if (hi < 0.0 && hj > 0.0) || (hi > 0.0 && hj < 0.0) {
                clipped.push(world[i] + (world[j] - world[i]) * (hi / (hi - hj)));
            }
        };
        for j in corners {
            clip_edge(i, j as usize);
            i = j as usize;
        }
        clip_edge(i, first as usize);
        if clipped.len() < 3 {
            continue;
        }
        sums.add(clipped, reference);
    }
    sums.overlap(reference, normal)
}

/// The sums over the clipped faces, cones from a reference point in the plane.
#[derive(Default)]
struct PartSums {
    six_volume: f64,
    moment: DVec3,
    area: DVec3,
    area_moment: DVec3,
}

impl PartSums {
    /// Adds a clipped face (three corners or more).
    fn add(&mut self, clipped: &[DVec3], reference: DVec3) {
        let (part, part_moment) = polygon_area_and_moment(clipped, reference);
        self.area += part;
        self.area_moment += part_moment;
        let p0 = clipped[0] - reference;
        for k in 1..clipped.len() - 1 {
            let (p, q) = (clipped[k] - reference, clipped[k + 1] - reference);
            let det = p0.dot(p.cross(q));
            self.six_volume += det;
            self.moment += det * (p0 + p + q);
        }
    }

    /// The overlap, `None` when it has no volume.
    fn overlap(&self, reference: DVec3, normal: DVec3) -> Option<Overlap> {
        let volume = self.six_volume / 6.0;
        if volume.is_nan() || volume <= 0.0 {
            return None;
        }
        let centroid = reference + self.moment / (4.0 * self.six_volume);
        Some(Overlap {
            volume,
            centroid,
            normal: -normal,
            area: self.area.length(),
            area_moment: self.area_moment - (centroid - reference).cross(self.area),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate;
    use crate::polyhedron::polygon_area_vector;

    #[test]
    fn the_contact_moment_is_the_caps() {
        // The clipped faces and the cap in the plane span the same rim: their moments about
        // the centroid are the same. The cap: where the plane cuts the edges, in order.
        let grain = generate::dodecahedron(1.0).unwrap();
        let normal = DVec3::new(0.2, -0.1, 1.0).normalize();
        let pose = Pose::new(
            DVec3::new(0.4, 0.1, 1.0),
            glam::DQuat::from_euler(glam::EulerRot::XYZ, 0.3, 0.7, -0.4),
        );
        let o = overlap_half_space(&grain, &pose, normal, DVec3::ZERO).unwrap();
        let mut cap: Vec<DVec3> = grain
            .edges()
            .iter()
            .filter_map(|e| {
                let (p, q) = (
                    pose.transform_point(grain.vertices()[e[0] as usize]),
                    pose.transform_point(grain.vertices()[e[1] as usize]),
                );
                let (hp, hq) = (normal.dot(p), normal.dot(q));
                ((hp < 0.0) != (hq < 0.0)).then(|| p + (q - p) * (hp / (hp - hq)))
            })
            .collect();
        let mean = cap.iter().copied().sum::<DVec3>() / cap.len() as f64;
        let u = (cap[0] - mean).normalize();
        let v = normal.cross(u);
        cap.sort_by(|p, q| {
            let angle = |x: &DVec3| (*x - mean).dot(v).atan2((*x - mean).dot(u));
            angle(p).total_cmp(&angle(q))
        });
        let (area, moment) = polygon_area_and_moment(&cap, o.centroid);
        // Oriented as the contact: along the overlap's normal.
        let moment = if area.dot(o.normal) < 0.0 {
            -moment
        } else {
            moment
        };
        assert!((area.length() - o.area).abs() < 1e-12);
        assert!(
            (o.area_moment - moment).length() < 1e-12,
            "{:?} vs {moment:?}",
            o.area_moment
        );
        assert!(moment.length() > 1e-3, "a tilted cut has a moment");
    }

    /// The overlap summed over every face of the grain, in index order, skipping those with
    /// no corner on or below the plane: what the faces found from the submerged vertices'
    /// stars must give, to the bit.
    fn over_every_face(
        poly: &ConvexPolyhedron,
        pose: &Pose,
        normal: DVec3,
        point: DVec3,
    ) -> Option<Overlap> {
        let world: Vec<DVec3> = poly
            .vertices()
            .iter()
            .map(|&v| pose.rotation_matrix() * v + pose.position)
            .collect();
        let height: Vec<f64> = world.iter().map(|&x| normal.dot(x - point)).collect();
        if height.iter().all(|&h| h >= 0.0) {
            return None;
        }
        let lowest =
            (0..world.len()).fold(0, |best, i| if height[i] < height[best] { i } else { best });
        let reference = world[lowest] - normal * normal.dot(world[lowest] - point);
        let mut sums = PartSums::default();
        for f in 0..poly.faces().len() {
            let corners: Vec<usize> = poly.face_vertices(f).map(|v| v as usize).collect();
            if corners.iter().all(|&v| height[v] > 0.0) {
                continue;
            }
            let mut clipped = Vec::new();
            for (k, &i) in corners.iter().enumerate() {
                let j = corners[(k + 1) % corners.len()];
                let (hi, hj) = (height[i], height[j]);
                if hi <= 0.0 {
                    clipped.push(world[i]);
                }
                if (hi < 0.0 && hj > 0.0) || (hi > 0.0 && hj < 0.0) {
                    clipped.push(world[i] + (world[j] - world[i]) * (hi / (hi - hj)));
                }
            }
            if clipped.len() < 3 {
                continue;
            }
            sums.add(&clipped, reference);
        }
        sums.overlap(reference, normal)
    }

    #[test]
    fn the_faces_from_the_submerged_stars_give_every_faces_sums_to_the_bit() {
        use rand::{Rng, SeedableRng};
        let mut r = rand_chacha::ChaCha8Rng::seed_from_u64(29);
        for vertices in [8, 20, 200] {
            let grain =
                generate::ellipsoid_grain(vertices, DVec3::new(1.0, 0.8, 0.6), &mut r).unwrap();
            let mut overlapping = 0;
            for _ in 0..300 {
                let rotation = glam::DQuat::from_euler(
                    glam::EulerRot::XYZ,
                    r.random_range(-3.0..3.0),
                    r.random_range(-3.0..3.0),
                    r.random_range(-3.0..3.0),
                );
                let normal = DVec3::new(
                    r.random_range(-1.0..1.0),
                    r.random_range(-1.0..1.0),
                    r.random_range(-1.0..1.0),
                )
                .normalize();
                // From barely touching to half the grain sunk.
                let depth = r.random_range(-0.05..1.0);
                let pose = Pose::new(normal * (1.0 - depth), rotation);
                let got = overlap_half_space(&grain, &pose, normal, DVec3::ZERO);
                let every = over_every_face(&grain, &pose, normal, DVec3::ZERO);
                assert_eq!(got, every);
                overlapping += usize::from(got.is_some());
            }
            assert!(
                overlapping > 200,
                "{overlapping} overlaps of {vertices} vertices"
            );
        }
    }

    #[test]
    fn a_cube_sunk_into_a_floor() {
        let cube = generate::cube(1.0).unwrap();
        let pose = Pose::from_translation(DVec3::new(3.0, -2.0, 0.4));
        let o = overlap_half_space(&cube, &pose, DVec3::Z, DVec3::ZERO).unwrap();
        assert!((o.volume - 0.1).abs() < 1e-15);
        assert!((o.centroid - DVec3::new(3.0, -2.0, -0.05)).length() < 1e-15);
        assert!((o.area - 1.0).abs() < 1e-15);
        assert_eq!(o.normal, -DVec3::Z);
        assert!(
            overlap_half_space(
                &cube,
                &Pose::from_translation(DVec3::new(0.0, 0.0, 0.5)),
                DVec3::Z,
                DVec3::ZERO
            )
            .is_none()
        );
    }

    #[test]
    fn a_tilted_cube_matches_its_clipped_hull() {
        let cube = generate::cube(1.0).unwrap();
        let pose = Pose::new(
            DVec3::new(0.1, 0.2, 0.3),
            glam::DQuat::from_euler(glam::EulerRot::XYZ, 0.4, 0.7, -0.2),
        );
        let n = DVec3::new(0.2, -0.3, 1.0).normalize();
        let o = overlap_half_space(&cube, &pose, n, DVec3::ZERO).unwrap();
        // Oracle: hull of the vertices below the plane and the edge crossings.
        let w: Vec<DVec3> = cube
            .vertices()
            .iter()
            .map(|&v| pose.transform_point(v))
            .collect();
        let mut pts: Vec<DVec3> = w.iter().copied().filter(|x| n.dot(*x) <= 0.0).collect();
        for [i, j] in cube.edges() {
            let (a, b) = (w[*i as usize], w[*j as usize]);
            let (ha, hb) = (n.dot(a), n.dot(b));
            if ha * hb < 0.0 {
                pts.push(a + (b - a) * (ha / (ha - hb)));
            }
        }
        let hull = ConvexPolyhedron::from_points(&pts).unwrap();
        let m = hull.mass_properties(1.0);
        assert!((o.volume - m.volume).abs() < 1e-14);
        assert!((o.centroid - m.center_of_mass).length() < 1e-14);
        // The cap's area: the hull's face lying in the plane.
        let cap = hull
            .faces()
            .iter()
            .enumerate()
            .find(|(_, f)| f.normal.dot(n) > 1.0 - 1e-12)
            .map(|(fi, _)| {
                let c: Vec<DVec3> = hull
                    .face_vertices(fi)
                    .map(|v| hull.vertices()[v as usize])
                    .collect();
                polygon_area_vector(&c).length()
            })
            .unwrap();
        assert!((o.area - cap).abs() < 1e-14);
    }
}
