//! The thesis' closest-feature test (§4.2.5, table 4.4) measured again, with peers.
//!
//! Two identical grains with K vertices on the ellipsoid with semi-axes (1, 0.8, 0.6); one
//! turns about x and the other about y at 1 rad/s, dt = 1e-3 s, for 10^5 steps, once with
//! b placed above a at 5 % of the grain size from touching, and once pushed 0.5 % of the
//! grain size into a (slight penetration). Each timed query takes the next pose of the trajectory, so the
//! feature cache is warm as in a simulation.
//!
//! Printed first, per K and configuration: the fraction of penetrating queries and the
//! histogram of walk steps per query (as in table 4.4). Then criterion groups:
//! * `separated/…` and `penetrating/…`: `closest_features` (warm), parry3d-f64's `distance`
//!   and `contact` on the same poses, and the exhaustive search for K ≤ 62;
//! * `overlap/…`: `closest_features` + `overlap` on the penetrating trajectory against
//!   parry's `contact` (GJK + EPA), and the same by `overlap_with_hint` (the walk along
//!   the intersection curve, its hint kept from query to query), and `overlap_coherent`
//!   (the contact pipeline's query: the faces that bounded the last overlap reused and
//!   checked, closest features and clipping when the check fails);
//! * `overlap_deep/…`: `closest_features` + `overlap` with b pushed a fifth of the grain
//!   size (0.4) into a, for 20 and 200 vertices (over 10^4 steps of the trajectory): how
//!   the cost of a deep overlap grows with the vertex count. Printed first: the mean size of
//!   A∩B's boundary there (faces of either grain with a part in the other, and the corners
//!   of those parts, by clipping every face by every plane of the other grain): an exact
//!   overlap has to visit all of it, so its cost cannot grow less than that from 20 to 200
//!   vertices.
//!
//! Run with `cargo bench -p talus-geom --bench narrow_phase`; `TALUS_BENCH_K=18,462` limits
//! the vertex counts.

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion};
use parry3d_f64::math::Pose as ParryPose;
use parry3d_f64::query;
use parry3d_f64::shape::ConvexPolyhedron as ParryPolyhedron;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use talus_geom::glam::{DQuat, DVec3};
use talus_geom::{
    ConvexPolyhedron, FeatureCache, OverlapHint, Pose, closest_features,
    closest_features_exhaustive, generate, overlap, overlap_coherent, overlap_with_hint,
};

/// Vertex counts of table 4.4.
const VERTEX_COUNTS: [usize; 10] = [4, 6, 12, 18, 42, 62, 102, 202, 302, 462];
const SEMI_AXES: DVec3 = DVec3::new(1.0, 0.8, 0.6);
const STEPS: usize = 100_000;
const DT: f64 = 1e-3;

struct Case {
    k: usize,
    poly: ConvexPolyhedron,
    parry: ParryPolyhedron,
    /// Poses of a and b along the trajectory.
    poses: Vec<(Pose, Pose)>,
}

fn vertex_counts() -> Vec<usize> {
    match std::env::var("TALUS_BENCH_K") {
        Ok(list) => list
            .split(',')
            .filter_map(|k| k.trim().parse().ok())
            .collect(),
        Err(_) => VERTEX_COUNTS.to_vec(),
    }
}

/// The trajectory: a turns about x, b about y, b above a along z. At every step b is put
/// where the grains touch (found by bisection on the closest-feature verdict) and then
/// moved by `depth` along z: down (slight penetration) for `depth` > 0, up (a gap) for
/// `depth` < 0. The grains keep turning, so the contact wanders over their surfaces.
fn trajectory(poly: &ConvexPolyhedron, depth: f64, steps: usize) -> Vec<(Pose, Pose)> {
    let mut cache = FeatureCache::default();
    (0..steps)
        .map(|i| {
            let t = i as f64 * DT;
            let (ra, rb) = (DQuat::from_rotation_x(t), DQuat::from_rotation_y(t));
            let a = Pose::new(DVec3::ZERO, ra);
            let at = |z: f64| Pose::new(DVec3::new(0.0, 0.0, z), rb);
            let (mut lo, mut hi) = (0.0, 2.0 * (SEMI_AXES.x + 0.1));
            while hi - lo > 1e-12 {
                let mid = 0.5 * (lo + hi);
                if closest_features(poly, &a, poly, &at(mid), &mut cache).is_penetrating() {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            (a, at(hi - depth))
        })
        .collect()
}

fn case(k: usize, depth: f64, steps: usize) -> Case {
    let mut rng = ChaCha8Rng::seed_from_u64(4711 + k as u64);
    let poly = generate::ellipsoid_grain(k, SEMI_AXES, &mut rng).expect("grain");
    let parry = ParryPolyhedron::from_convex_hull(poly.vertices()).expect("parry hull");
    let poses = trajectory(&poly, depth, steps);
    Case {
        k,
        poly,
        parry,
        poses,
    }
}

fn parry_pose(p: &Pose) -> ParryPose {
    ParryPose::from_parts(p.position, p.rotation)
}

/// Penetrating fraction and step histogram (0, 1, 2, 3, 4–7, 8–15, ≥16) of a warm run.
fn statistics(c: &Case) -> (f64, [usize; 7]) {
    let mut cache = FeatureCache::default();
    let mut histogram = [0usize; 7];
    let mut penetrating = 0;
    for (a, b) in &c.poses {
        if closest_features(&c.poly, a, &c.poly, b, &mut cache).is_penetrating() {
            penetrating += 1;
        }
        let bin = match cache.last_steps {
            s @ 0..=3 => s as usize,
            4..=7 => 4,
            8..=15 => 5,
            _ => 6,
        };
        histogram[bin] += 1;
    }
    (penetrating as f64 / c.poses.len() as f64, histogram)
}

/// The part of `polygon` where `normal · x ≤ offset` (Sutherland–Hodgman).
fn clip_polygon(polygon: &[DVec3], normal: DVec3, offset: f64) -> Vec<DVec3> {
    let mut kept = Vec::with_capacity(polygon.len() + 1);
    for (i, &p) in polygon.iter().enumerate() {
        let q = polygon[(i + 1) % polygon.len()];
        let (dp, dq) = (normal.dot(p) - offset, normal.dot(q) - offset);
        if dp <= 0.0 {
            kept.push(p);
        }
        if (dp < 0.0 && dq > 0.0) || (dp > 0.0 && dq < 0.0) {
            kept.push(p + (q - p) * (dp / (dp - dq)));
        }
    }
    kept
}

/// The faces of `a` (at `pose_a`) with a part inside `b` (at `pose_b`), and the corners of
/// those parts: every face clipped by every plane of `b`.
fn parts_inside(
    a: &ConvexPolyhedron,
    pose_a: &Pose,
    b: &ConvexPolyhedron,
    pose_b: &Pose,
) -> (usize, usize) {
    let (mut faces, mut corners) = (0, 0);
    for f in 0..a.faces().len() {
        let mut part: Vec<DVec3> = a
            .face_vertices(f)
            .map(|v| pose_a.transform_point(a.vertices()[v as usize]))
            .collect();
        for g in b.faces() {
            let normal = pose_b.rotation * g.normal;
            part = clip_polygon(&part, normal, g.offset + normal.dot(pose_b.position));
            if part.len() < 3 {
                break;
            }
        }
        if part.len() >= 3 {
            faces += 1;
            corners += part.len();
        }
    }
    (faces, corners)
}

/// Mean faces and corners of A∩B's boundary over every 50th pose of the trajectory.
fn boundary_size(c: &Case) -> (f64, f64) {
    let (mut faces, mut corners, mut count) = (0, 0, 0);
    for (a, b) in c.poses.iter().step_by(50) {
        let (fa, ca) = parts_inside(&c.poly, a, &c.poly, b);
        let (fb, cb) = parts_inside(&c.poly, b, &c.poly, a);
        faces += fa + fb;
        corners += ca + cb;
        count += 1;
    }
    (
        faces as f64 / f64::from(count),
        corners as f64 / f64::from(count),
    )
}

/// Cycles through the trajectory, one query per call.
struct Cursor {
    next: usize,
}

impl Cursor {
    fn step<'a>(&mut self, c: &'a Case) -> &'a (Pose, Pose) {
        let p = &c.poses[self.next];
        self.next = (self.next + 1) % c.poses.len();
        p
    }
}

fn bench_configuration(criterion: &mut Criterion, name: &str, cases: &[Case]) {
    let mut group = criterion.benchmark_group(name);
    group
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
        .sample_size(20);
    for c in cases {
        group.bench_with_input(BenchmarkId::new("closest_features", c.k), c, |bench, c| {
            let mut cache = FeatureCache::default();
            let mut cursor = Cursor { next: 0 };
            bench.iter(|| {
                let (a, b) = cursor.step(c);
                black_box(closest_features(&c.poly, a, &c.poly, b, &mut cache))
            });
        });
        group.bench_with_input(BenchmarkId::new("parry_distance", c.k), c, |bench, c| {
            let mut cursor = Cursor { next: 0 };
            bench.iter(|| {
                let (a, b) = cursor.step(c);
                black_box(
                    query::distance(&parry_pose(a), &c.parry, &parry_pose(b), &c.parry)
                        .map(|d| d.distance),
                )
            });
        });
        group.bench_with_input(BenchmarkId::new("parry_contact", c.k), c, |bench, c| {
            let mut cursor = Cursor { next: 0 };
            bench.iter(|| {
                let (a, b) = cursor.step(c);
                black_box(
                    query::contact(&parry_pose(a), &c.parry, &parry_pose(b), &c.parry, 0.0)
                        .map(|x| x.map(|y| y.dist)),
                )
            });
        });
        if c.k <= 62 {
            group.bench_with_input(BenchmarkId::new("exhaustive", c.k), c, |bench, c| {
                let mut cursor = Cursor { next: 0 };
                bench.iter(|| {
                    let (a, b) = cursor.step(c);
                    black_box(closest_features_exhaustive(&c.poly, a, &c.poly, b).0)
                });
            });
        }
    }
    group.finish();
}

fn bench_overlap(criterion: &mut Criterion, name: &str, cases: &[Case]) {
    let mut group = criterion.benchmark_group(name);
    group
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1))
        .sample_size(20);
    for c in cases {
        group.bench_with_input(
            BenchmarkId::new("closest_features+overlap", c.k),
            c,
            |bench, c| {
                let mut cache = FeatureCache::default();
                let mut cursor = Cursor { next: 0 };
                bench.iter(|| {
                    let (a, b) = cursor.step(c);
                    let p = closest_features(&c.poly, a, &c.poly, b, &mut cache);
                    let o = overlap(&c.poly, a, &c.poly, b, Some(&cache));
                    // As the contact pipeline does: the next overlap starts from this normal.
                    if let Some(o) = &o {
                        cache.remember_normal(o, b);
                    }
                    black_box((p, o))
                });
            },
        );
        group.bench_with_input(
            BenchmarkId::new("closest_features+overlap_with_hint", c.k),
            c,
            |bench, c| {
                let mut cache = FeatureCache::default();
                let mut hint = OverlapHint::default();
                let mut cursor = Cursor { next: 0 };
                bench.iter(|| {
                    let (a, b) = cursor.step(c);
                    let p = closest_features(&c.poly, a, &c.poly, b, &mut cache);
                    let o = overlap_with_hint(&c.poly, a, &c.poly, b, Some(&cache), &mut hint);
                    if let Some(o) = &o {
                        cache.remember_normal(o, b);
                    }
                    black_box((p, o))
                });
            },
        );
        group.bench_with_input(BenchmarkId::new("overlap_coherent", c.k), c, |bench, c| {
            let mut cache = FeatureCache::default();
            let mut hint = OverlapHint::default();
            let mut cursor = Cursor { next: 0 };
            bench.iter(|| {
                let (a, b) = cursor.step(c);
                let o = overlap_coherent(&c.poly, a, &c.poly, b, &mut cache, &mut hint);
                if let Some(o) = &o {
                    cache.remember_normal(o, b);
                }
                black_box(o)
            });
        });
    }
    group.finish();
}

fn main() {
    let ks = vertex_counts();
    // Separated: b lifted 0.1 (5 % of the grain size) above touching.
    let separated: Vec<Case> = ks.iter().map(|&k| case(k, -0.1, STEPS)).collect();
    // Slightly penetrating: b pushed 0.01 (0.5 % of the grain size) into a.
    let penetrating: Vec<Case> = ks.iter().map(|&k| case(k, 0.01, STEPS)).collect();
    // Deep: b pushed 0.4 (a fifth of the grain size) into a.
    let deep: Vec<Case> = [20, 200].iter().map(|&k| case(k, 0.4, 10_000)).collect();
    println!("walk steps per warm query over {STEPS} steps of the trajectory");
    println!(
        "{:>5} {:>12} {:>9} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8}",
        "K", "config", "pen.frac", "0", "1", "2", "3", "4-7", "8-15", ">=16"
    );
    for (name, cases) in [("separated", &separated), ("penetrating", &penetrating)] {
        for c in cases.iter() {
            let (fraction, h) = statistics(c);
            println!(
                "{:>5} {:>12} {:>9.3} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8}",
                c.k, name, fraction, h[0], h[1], h[2], h[3], h[4], h[5], h[6]
            );
        }
    }
    println!("size of A∩B's boundary in the deep overlap (mean over the trajectory)");
    println!("{:>5} {:>8} {:>8}", "K", "faces", "corners");
    for c in &deep {
        let (faces, corners) = boundary_size(c);
        println!("{:>5} {faces:>8.1} {corners:>8.1}", c.k);
    }
    let mut criterion = Criterion::default().configure_from_args();
    bench_configuration(&mut criterion, "separated", &separated);
    bench_configuration(&mut criterion, "penetrating", &penetrating);
    bench_overlap(&mut criterion, "overlap", &penetrating);
    bench_overlap(&mut criterion, "overlap_deep", &deep);
    criterion.final_summary();
}
