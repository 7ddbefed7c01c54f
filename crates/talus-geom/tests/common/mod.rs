//! Shared oracles and random inputs for the geometry tests.
#![allow(dead_code)]

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use talus_geom::ConvexPolyhedron;
use talus_geom::glam::{DMat3, DQuat, DVec3};

/// A seeded random generator.
pub fn rng(seed: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed)
}

/// A rotation uniform on SO(3) (Shoemake's subgroup algorithm).
pub fn random_rotation(rng: &mut impl Rng) -> DQuat {
    let (u1, u2, u3): (f64, f64, f64) = (rng.random(), rng.random(), rng.random());
    let (a, b) = ((1.0 - u1).sqrt(), u1.sqrt());
    let tau = std::f64::consts::TAU;
    DQuat::from_xyzw(
        a * (tau * u2).sin(),
        a * (tau * u2).cos(),
        b * (tau * u3).sin(),
        b * (tau * u3).cos(),
    )
    .normalize()
}

/// Mass properties by the divergence theorem over the surface triangles (Eberly,
/// "Polyhedral Mass Properties (Revisited)", after Mirtich 1996): volume, centre of mass and
/// inertia about the centre of mass, for unit density. Independent of the pyramid
/// decomposition: it only shares the face topology.
pub fn divergence_mass_properties(triangles: &[[DVec3; 3]]) -> (f64, DVec3, DMat3) {
    fn sub(w0: f64, w1: f64, w2: f64) -> (f64, f64, f64, f64, f64, f64) {
        let t0 = w0 + w1;
        let f1 = t0 + w2;
        let t1 = w0 * w0;
        let t2 = t1 + w1 * t0;
        let f2 = t2 + w2 * f1;
        let f3 = w0 * t1 + w1 * t2 + w2 * f2;
        let g0 = f2 + w0 * (f1 + w0);
        let g1 = f2 + w1 * (f1 + w1);
        let g2 = f2 + w2 * (f1 + w2);
        (f1, f2, f3, g0, g1, g2)
    }
    let mut intg = [0.0f64; 10];
    for [p0, p1, p2] in triangles {
        let d = (*p1 - *p0).cross(*p2 - *p0);
        let (f1x, f2x, f3x, g0x, g1x, g2x) = sub(p0.x, p1.x, p2.x);
        let (_, f2y, f3y, g0y, g1y, g2y) = sub(p0.y, p1.y, p2.y);
        let (_, f2z, f3z, g0z, g1z, g2z) = sub(p0.z, p1.z, p2.z);
        intg[0] += d.x * f1x;
        intg[1] += d.x * f2x;
        intg[2] += d.y * f2y;
        intg[3] += d.z * f2z;
        intg[4] += d.x * f3x;
        intg[5] += d.y * f3y;
        intg[6] += d.z * f3z;
        intg[7] += d.x * (p0.y * g0x + p1.y * g1x + p2.y * g2x);
        intg[8] += d.y * (p0.z * g0y + p1.z * g1y + p2.z * g2y);
        intg[9] += d.z * (p0.x * g0z + p1.x * g1z + p2.x * g2z);
    }
    let mult = [
        1.0 / 6.0,
        1.0 / 24.0,
        1.0 / 24.0,
        1.0 / 24.0,
        1.0 / 60.0,
        1.0 / 60.0,
        1.0 / 60.0,
        1.0 / 120.0,
        1.0 / 120.0,
        1.0 / 120.0,
    ];
    for (v, m) in intg.iter_mut().zip(mult) {
        *v *= m;
    }
    let mass = intg[0];
    let c = DVec3::new(intg[1], intg[2], intg[3]) / mass;
    let ixx = intg[5] + intg[6] - mass * (c.y * c.y + c.z * c.z);
    let iyy = intg[4] + intg[6] - mass * (c.z * c.z + c.x * c.x);
    let izz = intg[4] + intg[5] - mass * (c.x * c.x + c.y * c.y);
    let ixy = -(intg[7] - mass * c.x * c.y);
    let iyz = -(intg[8] - mass * c.y * c.z);
    let ixz = -(intg[9] - mass * c.z * c.x);
    let inertia = DMat3::from_cols(
        DVec3::new(ixx, ixy, ixz),
        DVec3::new(ixy, iyy, iyz),
        DVec3::new(ixz, iyz, izz),
    );
    (mass, c, inertia)
}

/// The faces of a polyhedron as fan triangles.
pub fn surface_triangles(poly: &ConvexPolyhedron) -> Vec<[DVec3; 3]> {
    let mut out = Vec::new();
    for f in 0..poly.faces().len() {
        let loop_: Vec<DVec3> = poly
            .face_vertices(f)
            .map(|v| poly.vertices()[v as usize])
            .collect();
        for k in 1..loop_.len() - 1 {
            out.push([loop_[0], loop_[k], loop_[k + 1]]);
        }
    }
    out
}

/// Largest absolute entry of a matrix.
pub fn max_abs(m: DMat3) -> f64 {
    m.to_cols_array().iter().fold(0.0f64, |a, b| a.max(b.abs()))
}

/// Random point clouds of several kinds, `n` points, scale about 1.
pub fn random_cloud(kind: usize, n: usize, rng: &mut impl Rng) -> Vec<DVec3> {
    let mut unit = || {
        DVec3::new(
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
        )
    };
    match kind % 4 {
        // Uniform in a box: most points are interior.
        0 => (0..n).map(|_| unit()).collect(),
        // On a sphere: every point is a vertex.
        1 => (0..n)
            .map(|_| {
                loop {
                    let p = unit();
                    if let Some(u) = p.try_normalize()
                        && p.length() <= 1.0
                    {
                        break u;
                    }
                }
            })
            .collect(),
        // Elongated and offset far from the origin.
        2 => (0..n)
            .map(|_| unit() * DVec3::new(5.0, 1.0, 0.2) + DVec3::new(1e3, -2e3, 5e2))
            .collect(),
        // Integer lattice points: many coplanar faces and points on edges.
        _ => (0..n)
            .map(|_| unit().round() + DVec3::new(0.0, 0.0, 0.0))
            .map(|p| p * 2.0)
            .chain([
                DVec3::new(-2.0, -2.0, -2.0),
                DVec3::new(2.0, 2.0, 2.0),
                DVec3::new(2.0, -2.0, 0.0),
                DVec3::new(-2.0, 2.0, 2.0),
            ])
            .collect(),
    }
}
