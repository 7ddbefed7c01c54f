//! The overlap polyhedron against independent computations: exact box intersections, the
//! convex hull of the intersection's corner points, and clipping every face by every plane.

mod common;

use rand::Rng;
use talus_geom::glam::{DQuat, DVec3};
use talus_geom::{
    ConvexPolyhedron, FeatureCache, Pose, closest_features, generate, overlap,
    polygon_area_and_moment, polygon_area_vector,
};

use common::{random_rotation, rng};

/// World-frame vertices, outward planes (normal, offset) and face polygons of a placed
/// polyhedron.
type Placed = (Vec<DVec3>, Vec<(DVec3, f64)>, Vec<Vec<DVec3>>);

fn placed(poly: &ConvexPolyhedron, pose: &Pose) -> Placed {
    let vertices: Vec<DVec3> = poly
        .vertices()
        .iter()
        .map(|&v| pose.transform_point(v))
        .collect();
    let faces: Vec<Vec<DVec3>> = (0..poly.faces().len())
        .map(|f| {
            poly.face_vertices(f)
                .map(|v| vertices[v as usize])
                .collect()
        })
        .collect();
    let planes = poly
        .faces()
        .iter()
        .zip(&faces)
        .map(|(face, corners)| {
            let n = pose.rotation * face.normal;
            (n, n.dot(corners[0]))
        })
        .collect();
    (vertices, planes, faces)
}

fn inside(planes: &[(DVec3, f64)], x: DVec3, tol: f64) -> bool {
    planes.iter().all(|&(n, d)| n.dot(x) - d <= tol)
}

/// A∩B as the hull of its corners: vertices of each inside the other, and the points where
/// an edge of one crosses a face plane of the other inside the other.
fn hull_oracle(
    a: &ConvexPolyhedron,
    pa: &Pose,
    b: &ConvexPolyhedron,
    pb: &Pose,
) -> Option<(f64, DVec3)> {
    let (va, qa, _) = placed(a, pa);
    let (vb, qb, _) = placed(b, pb);
    let tol = 1e-12;
    let mut corners: Vec<DVec3> = va
        .iter()
        .copied()
        .filter(|&x| inside(&qb, x, tol))
        .collect();
    corners.extend(vb.iter().copied().filter(|&x| inside(&qa, x, tol)));
    for (p, planes_q, verts_p) in [(a, &qb, &va), (b, &qa, &vb)] {
        for [i, j] in p.edges() {
            let (s, t) = (verts_p[*i as usize], verts_p[*j as usize]);
            for &(n, d) in planes_q.iter() {
                let (ds, dt) = (n.dot(s) - d, n.dot(t) - d);
                if ds * dt < 0.0 {
                    let x = s + (t - s) * (ds / (ds - dt));
                    if inside(planes_q, x, tol)
                        && inside(if std::ptr::eq(p, a) { &qa } else { &qb }, x, tol)
                    {
                        corners.push(x);
                    }
                }
            }
        }
    }
    let hull = ConvexPolyhedron::from_points(&corners).ok()?;
    let m = hull.mass_properties(1.0);
    Some((m.volume, m.center_of_mass))
}

/// Clip a polygon by half-spaces, the plain way.
fn clip(mut poly: Vec<DVec3>, planes: &[(DVec3, f64)]) -> Vec<DVec3> {
    for &(n, d) in planes {
        let mut out = Vec::new();
        for k in 0..poly.len() {
            let (p, q) = (poly[k], poly[(k + 1) % poly.len()]);
            let (dp, dq) = (n.dot(p) - d, n.dot(q) - d);
            if dp <= 0.0 {
                out.push(p);
            }
            if dp * dq < 0.0 {
                out.push(p + (q - p) * (dp / (dp - dq)));
            }
        }
        poly = out;
        if poly.len() < 3 {
            return Vec::new();
        }
    }
    poly
}

/// Vector area of the part of ∂A inside B, and its moment `∫ (x − about) × dS`: every face
/// of A clipped by every plane of B.
fn contact_surface_oracle(
    a: &ConvexPolyhedron,
    pa: &Pose,
    b: &ConvexPolyhedron,
    pb: &Pose,
    about: DVec3,
) -> (DVec3, DVec3) {
    let (_, _, faces_a) = placed(a, pa);
    let (_, planes_b, _) = placed(b, pb);
    faces_a
        .into_iter()
        .map(|f| clip(f, &planes_b))
        .filter(|p| p.len() >= 3)
        .map(|p| {
            (
                polygon_area_vector(&p),
                polygon_area_and_moment(&p, about).1,
            )
        })
        .fold((DVec3::ZERO, DVec3::ZERO), |(s, m), (ds, dm)| {
            (s + ds, m + dm)
        })
}

#[test]
fn axis_aligned_boxes_are_exact() {
    let mut r = rng(61);
    for _ in 0..2000 {
        let la = DVec3::new(
            r.random_range(0.2..2.0),
            r.random_range(0.2..2.0),
            r.random_range(0.2..2.0),
        );
        let lb = DVec3::new(
            r.random_range(0.2..2.0),
            r.random_range(0.2..2.0),
            r.random_range(0.2..2.0),
        );
        let ca = DVec3::new(
            r.random_range(-1.0..1.0),
            r.random_range(-1.0..1.0),
            r.random_range(-1.0..1.0),
        );
        let cb = ca
            + DVec3::new(
                r.random_range(-1.5..1.5),
                r.random_range(-1.5..1.5),
                r.random_range(-1.5..1.5),
            );
        let a = generate::rectangular_box(la).unwrap();
        let b = generate::rectangular_box(lb).unwrap();
        let (pa, pb) = (Pose::from_translation(ca), Pose::from_translation(cb));
        let (amin, amax, bmin, bmax) = (ca - la / 2.0, ca + la / 2.0, cb - lb / 2.0, cb + lb / 2.0);
        let lo = amin.max(bmin);
        let hi = amax.min(bmax);
        let widths = hi - lo;
        let result = overlap(&a, &pa, &b, &pb, None);
        if widths.min_element() <= 1e-9 {
            assert!(result.is_none() || result.unwrap().volume < 1e-8);
            continue;
        }
        let o = result.expect("boxes overlap");
        let volume = widths.x * widths.y * widths.z;
        assert!(
            (o.volume - volume).abs() < 1e-12 * (1.0 + volume),
            "{} vs {volume}",
            o.volume
        );
        assert!((o.centroid - 0.5 * (lo + hi)).length() < 1e-12);
        // Vector area of A's faces inside B, axis by axis.
        let mut s = DVec3::ZERO;
        for i in 0..3 {
            let (j, k) = ((i + 1) % 3, (i + 2) % 3);
            let face = widths[j] * widths[k];
            if amax[i] > bmin[i] && amax[i] <= bmax[i] {
                s[i] += face;
            }
            if amin[i] >= bmin[i] && amin[i] < bmax[i] {
                s[i] -= face;
            }
        }
        assert!(
            (o.area - s.length()).abs() < 1e-12,
            "area {} vs {}",
            o.area,
            s.length()
        );
        if s.length() > 1e-9 {
            assert!((o.normal - s.normalize()).length() < 1e-12);
        }
    }
}

#[test]
fn cube_against_a_rotated_copy_matches_the_hull_of_its_corners() {
    let cube = generate::cube(1.0).unwrap();
    let mut r = rng(62);
    for _ in 0..500 {
        let pa = Pose::new(DVec3::ZERO, random_rotation(&mut r));
        let offset = random_rotation(&mut r) * DVec3::X * r.random_range(0.0..1.4);
        let pb = Pose::new(offset, random_rotation(&mut r));
        let Some(o) = overlap(&cube, &pa, &cube, &pb, None) else {
            let mut cache = FeatureCache::default();
            let p = closest_features(&cube, &pa, &cube, &pb, &mut cache);
            assert!(p.distance().unwrap_or(0.0) >= 0.0);
            assert!(hull_oracle(&cube, &pa, &cube, &pb).is_none_or(|(v, _)| v < 1e-9));
            continue;
        };
        let (volume, centroid) = hull_oracle(&cube, &pa, &cube, &pb).expect("oracle hull");
        assert!(
            (o.volume - volume).abs() < 1e-10,
            "{} vs {volume}",
            o.volume
        );
        assert!((o.centroid - centroid).length() < 1e-9 * (1.0 + 1e-3 / volume));
        let (s, m) = contact_surface_oracle(&cube, &pa, &cube, &pb, o.centroid);
        assert!((o.area - s.length()).abs() < 1e-10);
        assert!((o.area_moment - m).length() < 1e-10);
        assert!((o.normal - s.normalize()).length() < 1e-9 * (1.0 + 1e-3 / s.length()));
    }
}

#[test]
fn random_grains_match_oracles_and_swap_symmetry() {
    let mut r = rng(63);
    let grains: Vec<ConvexPolyhedron> = (0..20)
        .map(|i| {
            let k = [4, 6, 12, 20, 42, 80, 150, 200][i % 8];
            generate::ellipsoid_grain(
                k,
                DVec3::new(1.0, r.random_range(0.5..1.0), r.random_range(0.3..0.8)),
                &mut r,
            )
            .unwrap()
        })
        .collect();
    let mut checked = 0;
    for _ in 0..1500 {
        let (a, b) = (
            &grains[r.random_range(0..20)],
            &grains[r.random_range(0..20)],
        );
        let pa = Pose::new(DVec3::ZERO, random_rotation(&mut r));
        let pb = Pose::new(
            random_rotation(&mut r) * DVec3::X * r.random_range(0.3..2.0),
            random_rotation(&mut r),
        );
        let ab = overlap(a, &pa, b, &pb, None);
        let ba = overlap(b, &pb, a, &pa, None);
        match (ab, ba) {
            (Some(x), Some(y)) => {
                let (volume, centroid) = hull_oracle(a, &pa, b, &pb).expect("oracle");
                assert!(
                    (x.volume - volume).abs() < 1e-9 * (1.0 + volume),
                    "{} vs {volume}",
                    x.volume
                );
                assert!((x.centroid - centroid).length() < 1e-8);
                assert!((x.volume - y.volume).abs() < 1e-12 * (1.0 + x.volume));
                assert!(
                    (x.centroid - y.centroid).length() < 1e-10,
                    "{x:?} {y:?} oracle {volume} {centroid:?}"
                );
                assert!((x.area - y.area).abs() < 1e-10 * (1.0 + x.area));
                assert!(
                    (x.normal + y.normal).length() < 1e-8,
                    "{:?} vs {:?}",
                    x.normal,
                    y.normal
                );
                let (s, m) = contact_surface_oracle(a, &pa, b, &pb, x.centroid);
                assert!((x.area - s.length()).abs() < 1e-10 * (1.0 + x.area));
                // The contact surface's moment: against clipping every face, and the same
                // from B's side (the two parts close the overlap's surface, whose moment
                // vanishes).
                assert!(
                    (x.area_moment - m).length() < 1e-9 * (1.0 + m.length()),
                    "{:?} vs {m:?}",
                    x.area_moment
                );
                assert!((x.area_moment + y.area_moment).length() < 1e-9 * (1.0 + m.length()));
                checked += 1;
            }
            (None, None) => {
                assert!(hull_oracle(a, &pa, b, &pb).is_none_or(|(v, _)| v < 1e-9));
            }
            (x, y) => panic!("asymmetric verdict {x:?} {y:?}"),
        }
    }
    assert!(checked > 500, "{checked}");
}

#[test]
fn volume_is_continuous_and_vanishes_as_contact_opens() {
    let mut r = rng(64);
    let a = generate::ellipsoid_grain(40, DVec3::new(1.0, 0.8, 0.6), &mut r).unwrap();
    let b = generate::ellipsoid_grain(60, DVec3::new(0.9, 0.7, 0.5), &mut r).unwrap();
    let pa = Pose::new(DVec3::ZERO, DQuat::from_rotation_z(0.3));
    let rot_b = DQuat::from_rotation_x(1.1);
    // Find the touching offset along x by bisection on the closest-feature verdict.
    let pose_at = |x: f64| Pose::new(DVec3::new(x, 0.1, -0.05), rot_b);
    let (mut lo, mut hi) = (0.0, 3.0);
    for _ in 0..60 {
        let mid = 0.5 * (lo + hi);
        let p = closest_features(&a, &pa, &b, &pose_at(mid), &mut FeatureCache::default());
        if p.is_penetrating() {
            lo = mid
        } else {
            hi = mid
        }
    }
    let touch = 0.5 * (lo + hi);
    let mut previous = 0.0;
    for i in (1..=40).rev() {
        let depth = 1e-3 * i as f64 / 40.0;
        let o = overlap(&a, &pa, &b, &pose_at(touch - depth), None);
        if i < 40 {
            let v = o.map_or(0.0, |o| o.volume);
            assert!(v <= previous, "volume grows as the grains separate");
            previous = v;
        } else {
            previous = o.expect("penetrating").volume;
        }
    }
    let tiny = overlap(&a, &pa, &b, &pose_at(touch - 1e-9), None).map_or(0.0, |o| o.volume);
    assert!(tiny < 1e-12, "volume {tiny} at depth 1e-9");
    assert!(overlap(&a, &pa, &b, &pose_at(touch + 1e-9), None).is_none());
}

#[test]
fn symmetric_set_ups_give_exact_normals() {
    let cube = generate::cube(1.0).unwrap();
    // Face to face, offset along x only: the strips of A's side faces inside B cancel in
    // pairs, the normal is +x and the area that of a whole face.
    let pa = Pose::IDENTITY;
    let pb = Pose::from_translation(DVec3::new(0.9, 0.0, 0.0));
    let o = overlap(&cube, &pa, &cube, &pb, None).unwrap();
    assert!((o.normal - DVec3::X).length() < 1e-14, "{:?}", o.normal);
    assert!((o.area - 1.0).abs() < 1e-14);
    assert!((o.volume - 0.1).abs() < 1e-14);
    assert!((o.centroid - DVec3::new(0.45, 0.0, 0.0)).length() < 1e-14);
    // Offset sideways too: A's +y and −z faces reach into B and tilt the normal.
    let pb = Pose::from_translation(DVec3::new(0.9, 0.25, -0.1));
    let o = overlap(&cube, &pa, &cube, &pb, None).unwrap();
    let s = DVec3::new(0.75 * 0.9, 0.1 * 0.9, -0.1 * 0.75);
    assert!(
        (o.normal - s.normalize()).length() < 1e-14,
        "{:?}",
        o.normal
    );
    assert!((o.area - s.length()).abs() < 1e-14);
    // One inside the other: the whole grain, and no preferred area.
    let small = generate::cube(0.2).unwrap();
    let o = overlap(
        &small,
        &Pose::from_translation(DVec3::splat(0.1)),
        &cube,
        &pa,
        None,
    )
    .unwrap();
    assert!((o.volume - 0.008).abs() < 1e-15 && o.area < 1e-12);
    assert!((o.centroid - DVec3::splat(0.1)).length() < 1e-14);
    // Two octahedra tip to tip along z, one turned 45° about z: the normal is +z by symmetry.
    let octa = generate::octahedron(1.0).unwrap();
    let tip = 1.0 / 2f64.sqrt();
    let pb = Pose::new(
        DVec3::new(0.0, 0.0, 2.0 * tip - 0.1),
        DQuat::from_rotation_z(std::f64::consts::FRAC_PI_4),
    );
    let o = overlap(&octa, &Pose::IDENTITY, &octa, &pb, None).unwrap();
    assert!((o.normal - DVec3::Z).length() < 1e-12, "{:?}", o.normal);
    assert!((o.centroid.truncate()).length() < 1e-12);
    // Identical grains in identical poses: the overlap is the grain.
    let mut r = rng(65);
    let g = generate::ellipsoid_grain(30, DVec3::new(1.0, 0.7, 0.5), &mut r).unwrap();
    let p = Pose::new(DVec3::new(0.3, 0.0, 1.0), random_rotation(&mut r));
    let o = overlap(&g, &p, &g, &p, None).unwrap();
    let m = g.mass_properties(1.0);
    assert!((o.volume - m.volume).abs() < 1e-12);
    assert!((o.centroid - p.transform_point(m.center_of_mass)).length() < 1e-12);
}

#[test]
fn any_normal_hint_gives_the_same_overlap() {
    // The hint only chooses which faces are candidates; the answer must not depend on it.
    let mut r = rng(66);
    let a = generate::ellipsoid_grain(40, DVec3::new(1.0, 0.8, 0.6), &mut r).unwrap();
    let b = generate::ellipsoid_grain(60, DVec3::new(0.9, 0.7, 0.5), &mut r).unwrap();
    let mut checked = 0;
    for _ in 0..300 {
        let pa = Pose::new(DVec3::ZERO, random_rotation(&mut r));
        let pb = Pose::new(
            random_rotation(&mut r) * DVec3::X * r.random_range(0.5..1.8),
            random_rotation(&mut r),
        );
        let mut cache = FeatureCache::default();
        closest_features(&a, &pa, &b, &pb, &mut cache);
        let plain = overlap(&a, &pa, &b, &pb, Some(&cache));
        for hint in [random_rotation(&mut r) * DVec3::X, DVec3::Z, -DVec3::X] {
            let hinted = overlap(
                &a,
                &pa,
                &b,
                &pb,
                Some(&FeatureCache {
                    normal_hint: hint,
                    ..cache
                }),
            );
            match (plain, hinted) {
                (Some(x), Some(y)) => {
                    assert!((x.volume - y.volume).abs() < 1e-12 * (1.0 + x.volume));
                    assert!((x.centroid - y.centroid).length() < 1e-9);
                    assert!((x.normal - y.normal).length() < 1e-9);
                    checked += 1;
                }
                (None, None) => {}
                (x, y) => panic!("{x:?} vs {y:?}"),
            }
        }
    }
    assert!(checked > 100, "{checked}");
}
