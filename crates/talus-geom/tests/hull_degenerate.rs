//! Every kind of degenerate input gets its own typed error, never a panic.

use talus_geom::glam::DVec3;
use talus_geom::{ConvexPolyhedron, GeomError, generate};

fn err(points: &[DVec3]) -> GeomError {
    ConvexPolyhedron::from_points(points).expect_err("degenerate input must be rejected")
}

#[test]
fn too_few_points() {
    assert_eq!(err(&[]), GeomError::TooFewPoints { given: 0 });
    assert_eq!(
        err(&[DVec3::X, DVec3::Y, DVec3::Z]),
        GeomError::TooFewPoints { given: 3 }
    );
}

#[test]
fn non_finite_coordinates() {
    let mut points = vec![DVec3::ZERO, DVec3::X, DVec3::Y, DVec3::Z];
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        points[2] = DVec3::new(0.0, bad, 0.0);
        assert!(matches!(
            err(&points),
            GeomError::NonFinite { index: 2, .. }
        ));
    }
}

#[test]
fn duplicate_only_input() {
    let p = DVec3::new(1.0, 2.0, 3.0);
    assert!(matches!(
        err(&[p; 7]),
        GeomError::Coincident { given: 7, .. }
    ));
    let few = [
        DVec3::ZERO,
        DVec3::X,
        DVec3::Y,
        DVec3::X,
        DVec3::ZERO,
        DVec3::Y,
    ];
    assert_eq!(
        err(&few),
        GeomError::TooFewDistinctPoints {
            given: 6,
            distinct: 3
        }
    );
    // -0.0 and 0.0 are the same point.
    let signed_zero = [DVec3::ZERO, DVec3::new(-0.0, 0.0, -0.0), DVec3::X, DVec3::Y];
    assert!(matches!(
        err(&signed_zero),
        GeomError::TooFewDistinctPoints { distinct: 3, .. }
    ));
}

#[test]
fn collinear_points() {
    let line: Vec<DVec3> = (0..10)
        .map(|i| DVec3::new(1.0, 2.0, 3.0) * i as f64 + DVec3::splat(0.5))
        .collect();
    assert!(matches!(err(&line), GeomError::Collinear { .. }));
    // Off the line by far less than the tolerance.
    let mut nearly = line.clone();
    nearly[4] += DVec3::new(0.0, 1e-14, 0.0);
    assert!(matches!(err(&nearly), GeomError::Collinear { .. }));
}

#[test]
fn coplanar_points() {
    let plane: Vec<DVec3> = (0..30)
        .map(|i| {
            let (u, v) = ((i % 6) as f64, (i / 6) as f64);
            DVec3::new(u, v, 0.3 * u - 0.7 * v + 2.0)
        })
        .collect();
    assert!(matches!(err(&plane), GeomError::Coplanar { .. }));
    let square = [DVec3::ZERO, DVec3::X, DVec3::Y, DVec3::new(1.0, 1.0, 1e-13)];
    assert!(matches!(err(&square), GeomError::Coplanar { .. }));
}

#[test]
fn near_zero_volume() {
    // A needle: off every line and plane by more than the flatness tolerance, but with a
    // volume of ~1e-16 of its extent cubed.
    let points = [
        DVec3::ZERO,
        DVec3::new(1.0, 0.0, 0.0),
        DVec3::new(0.5, 1e-8, 0.0),
        DVec3::new(0.5, 0.0, 1e-8),
    ];
    assert!(matches!(err(&points), GeomError::DegenerateVolume { .. }));
}

#[test]
fn out_of_range_coordinates() {
    let huge = [DVec3::ZERO, DVec3::X, DVec3::Y, DVec3::Z].map(|p| p * 1e200);
    assert!(matches!(
        err(&huge),
        GeomError::InvalidParameter {
            name: "coordinates",
            ..
        }
    ));
    let tiny = [DVec3::ZERO, DVec3::X, DVec3::Y, DVec3::Z].map(|p| p * 1e-200);
    assert!(matches!(
        err(&tiny),
        GeomError::InvalidParameter {
            name: "coordinates",
            ..
        }
    ));
}

#[test]
fn bad_generator_parameters() {
    let mut rng = <rand_chacha::ChaCha8Rng as rand::SeedableRng>::seed_from_u64(1);
    for k in [0, 3, 10_001] {
        assert!(generate::ellipsoid_grain(k, DVec3::ONE, &mut rng).is_err());
    }
    for axes in [
        DVec3::new(1.0, 0.0, 1.0),
        DVec3::new(1.0, -1.0, 1.0),
        DVec3::new(f64::NAN, 1.0, 1.0),
        DVec3::new(1e4, 1.0, 1.0),
    ] {
        assert!(matches!(
            generate::ellipsoid_grain(8, axes, &mut rng),
            Err(GeomError::InvalidParameter { .. })
        ));
    }
    for edge in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        assert!(generate::cube(edge).is_err());
        assert!(generate::icosahedron(edge).is_err());
    }
    assert!(generate::rectangular_box(DVec3::new(1.0, 0.0, 1.0)).is_err());
    assert!("sphere".parse::<generate::PlatonicSolid>().is_err());
    assert_eq!(
        "Cube".parse::<generate::PlatonicSolid>(),
        Ok(generate::PlatonicSolid::Cube)
    );
}

#[test]
fn messages_say_what_is_allowed() {
    let text = err(&[DVec3::ZERO; 2]).to_string();
    assert!(text.contains("at least 4"), "{text}");
    let text = generate::cube(-1.0).unwrap_err().to_string();
    assert!(text.contains("positive"), "{text}");
}
