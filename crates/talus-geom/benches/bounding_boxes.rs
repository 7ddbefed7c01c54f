//! Cost and tightness of the two axis-aligned bounding-box methods (Schinner's thesis,
//! §4.1.3, table 4.3).
//!
//! For grains with K = 4 … 462 vertices, all on the axis-aligned ellipsoid with semi-axes
//! (1.0, 0.8, 0.6) (one grain per K from `ellipsoid_grain` with a fixed ChaCha8 seed), this
//! bench compares
//! * the min-max method (§4.1.3.1, eq. 4.2, [`ConvexPolyhedron::aabb`]): rotate every
//!   vertex and take the extreme coordinates, O(K), the tightest box;
//! * the ellipsoid method (§4.1.3.2, [`BoundingEllipsoid::aabb`]): box the generating
//!   ellipsoid, O(1), a larger box.
//!
//! Before the timings it prints, per K, the mean, standard deviation and minimum of the
//! volume ratio `V_ellipsoid_box / V_minmax_box` over 10,000 rotations drawn uniformly on
//! SO(3) (Shoemake's method). The minimum must be at least 1: the ellipsoid encloses the
//! grain, so its box holds the min-max box.
//!
//! The timings (criterion group `bounding_box`, ids `min_max/K` and `ellipsoid/K`) box one
//! grain at a batch of 1024 precomputed random poses per iteration, so criterion's
//! throughput is boxes per second and `time / 1024` is the cost of one box. Both timings
//! include turning the pose's quaternion into a rotation matrix.
//!
//! Run with `cargo bench -p talus-geom --bench bounding_boxes`.

use std::f64::consts::TAU;
use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use talus_geom::glam::{DMat3, DQuat, DVec3};
use talus_geom::{BoundingEllipsoid, ConvexPolyhedron, Pose, generate};

/// Vertex counts of table 4.3.
const VERTEX_COUNTS: [usize; 12] = [4, 6, 12, 18, 22, 42, 52, 62, 72, 202, 302, 462];

/// Semi-axes of the generating ellipsoid of every grain.
const SEMI_AXES: DVec3 = DVec3::new(1.0, 0.8, 0.6);

/// Random rotations per K for the volume-ratio statistics.
const RATIO_SAMPLES: usize = 10_000;

/// Poses boxed per timed iteration.
const BATCH: usize = 1024;

/// A rotation uniform on SO(3), by Shoemake's method (Graphics Gems III, 1992).
fn random_rotation<R: Rng + ?Sized>(rng: &mut R) -> DQuat {
    let u1: f64 = rng.random();
    let u2: f64 = rng.random_range(0.0..TAU);
    let u3: f64 = rng.random_range(0.0..TAU);
    let a = (1.0 - u1).sqrt();
    let b = u1.sqrt();
    DQuat::from_xyzw(a * u2.sin(), a * u2.cos(), b * u3.sin(), b * u3.cos()).normalize()
}

/// A grain with `k` vertices on the ellipsoid [`SEMI_AXES`] and that ellipsoid.
fn grain(k: usize) -> (ConvexPolyhedron, BoundingEllipsoid) {
    let mut rng = ChaCha8Rng::seed_from_u64(0x07a1_u64 + k as u64);
    let poly = generate::ellipsoid_grain(k, SEMI_AXES, &mut rng)
        .unwrap_or_else(|e| panic!("ellipsoid_grain({k}) failed: {e}"));
    let ellipsoid = BoundingEllipsoid::enclosing(&poly, DVec3::ZERO, DMat3::IDENTITY, SEMI_AXES)
        .unwrap_or_else(|e| panic!("BoundingEllipsoid::enclosing for K = {k} failed: {e}"));
    (poly, ellipsoid)
}

/// Prints the table of `V_ellipsoid_box / V_minmax_box` over uniform random rotations.
fn print_ratio_table() {
    println!(
        "Volume ratio V_ellipsoid_box / V_minmax_box over {RATIO_SAMPLES} uniform random \
         rotations, semi-axes ({}, {}, {})",
        SEMI_AXES.x, SEMI_AXES.y, SEMI_AXES.z
    );
    println!(
        "{:>5} {:>10} {:>10} {:>10} {:>10}",
        "K", "mean", "std dev", "min", "max"
    );
    let mut rng = ChaCha8Rng::seed_from_u64(43);
    for &k in &VERTEX_COUNTS {
        let (poly, ellipsoid) = grain(k);
        let mut sum = 0.0;
        let mut sum_sq = 0.0;
        let mut min = f64::INFINITY;
        let mut max = f64::NEG_INFINITY;
        for _ in 0..RATIO_SAMPLES {
            let pose = Pose::new(DVec3::ZERO, random_rotation(&mut rng));
            let ratio = ellipsoid.aabb(&pose).volume() / poly.aabb(&pose).volume();
            sum += ratio;
            sum_sq += ratio * ratio;
            min = min.min(ratio);
            max = max.max(ratio);
        }
        let n = RATIO_SAMPLES as f64;
        let mean = sum / n;
        let std_dev = ((sum_sq - n * mean * mean) / (n - 1.0)).max(0.0).sqrt();
        println!("{k:>5} {mean:>10.4} {std_dev:>10.4} {min:>10.4} {max:>10.4}");
        assert!(
            min >= 1.0,
            "K = {k}: ellipsoid box smaller than min-max box ({min})"
        );
    }
    println!();
}

/// Times both methods for every K.
fn bench_bounding_boxes(c: &mut Criterion) {
    let mut rng = ChaCha8Rng::seed_from_u64(0xb0c5);
    let poses: Vec<Pose> = (0..BATCH)
        .map(|_| {
            let position = DVec3::new(
                rng.random_range(-10.0..10.0),
                rng.random_range(-10.0..10.0),
                rng.random_range(-10.0..10.0),
            );
            Pose::new(position, random_rotation(&mut rng))
        })
        .collect();

    let mut group = c.benchmark_group("bounding_box");
    group
        .measurement_time(Duration::from_secs(2))
        .warm_up_time(Duration::from_millis(500))
        .sample_size(30)
        .throughput(Throughput::Elements(BATCH as u64));
    for &k in &VERTEX_COUNTS {
        let (poly, ellipsoid) = grain(k);
        group.bench_with_input(BenchmarkId::new("min_max", k), &poly, |b, poly| {
            b.iter(|| {
                for pose in black_box(poses.as_slice()) {
                    black_box(poly.aabb(pose));
                }
            });
        });
        group.bench_with_input(BenchmarkId::new("ellipsoid", k), &ellipsoid, |b, ell| {
            b.iter(|| {
                for pose in black_box(poses.as_slice()) {
                    black_box(ell.aabb(pose));
                }
            });
        });
    }
    group.finish();
}

fn main() {
    print_ratio_table();
    let mut criterion = Criterion::default().configure_from_args();
    bench_bounding_boxes(&mut criterion);
    criterion.final_summary();
}
