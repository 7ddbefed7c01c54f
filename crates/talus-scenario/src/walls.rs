//! Walls of a scenario as engine walls: planes, slabs, open boxes, hopper funnels and drums
//! made of convex plates (design §5: kinematic convex bodies with prescribed motion).
//!
//! Plates are built in world coordinates, as convex hulls of their corner points, and
//! start at the identity pose; a motion moves all plates of one wall together.

use std::f64::consts::PI;
use std::sync::Arc;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use talus_geom::glam::{DQuat, DVec3};
use talus_geom::{ConvexPolyhedron, Pose};
use talus_sim::wall::{Motion, Wall, WallGeometry};

use crate::schema::{HopperKind, MotionSpec, Vec3, WallShape, WallSpec};

/// A vector of the schema as a glam vector.
#[must_use]
pub fn v3(v: Vec3) -> DVec3 {
    DVec3::new(v.0, v.1, v.2)
}

/// The engine walls of one scenario wall, named `name` or `name/part`, or the reason they
/// cannot be built (a degenerate plate).
///
/// # Errors
/// A message naming the part that could not be built.
/// `seed` is the source of a rough base's random grains.
pub fn build_walls(spec: &WallSpec, seed: u64) -> Result<Vec<Wall>, String> {
    let motion = motion(&spec.motion);
    let parts = parts(&spec.shape, seed)?;
    parts
        .into_iter()
        .map(|(part, geometry, start)| {
            let name = match part {
                Some(p) => format!("{}/{p}", spec.name),
                None => spec.name.clone(),
            };
            Wall::new(&name, geometry, start, motion, spec.removed_at)
                .map_err(|e| format!("wall '{name}': {e}"))
        })
        .collect()
}

/// The engine motion of a schema motion.
#[must_use]
pub fn motion(spec: &MotionSpec) -> Motion {
    match *spec {
        MotionSpec::Fixed => Motion::Fixed,
        MotionSpec::Oscillate {
            direction,
            amplitude,
            frequency,
            phase,
            second: None,
        } => Motion::Oscillate {
            direction: v3(direction),
            amplitude,
            frequency,
            phase,
        },
        MotionSpec::Oscillate {
            direction,
            amplitude,
            frequency,
            phase,
            second: Some(ref second),
        } => Motion::Elliptic {
            // Validation has refused zero directions; a zero here would give NaN, which the
            // engine refuses with its own message.
            a: v3(direction).normalize() * amplitude,
            b: v3(second.direction).normalize() * second.amplitude,
            frequency,
            phase,
            lag: second.phase,
        },
        MotionSpec::Rotate {
            axis,
            center,
            angular_velocity,
        } => Motion::Rotate {
            axis: v3(axis),
            center: v3(center),
            angular_velocity,
        },
    }
}

type Part = (Option<String>, WallGeometry, Pose);

fn plate(points: &[DVec3]) -> Result<WallGeometry, String> {
    ConvexPolyhedron::from_points(points)
        .map(|p| WallGeometry::Body(Arc::new(p)))
        .map_err(|e| e.to_string())
}

/// The 8 corners of an axis-aligned box.
fn box_corners(min: DVec3, max: DVec3) -> Vec<DVec3> {
    (0..8)
        .map(|i| {
            DVec3::new(
                if i & 1 == 0 { min.x } else { max.x },
                if i & 2 == 0 { min.y } else { max.y },
                if i & 4 == 0 { min.z } else { max.z },
            )
        })
        .collect()
}

fn parts(shape: &WallShape, seed: u64) -> Result<Vec<Part>, String> {
    let named = |name: &str, g: WallGeometry| (Some(name.to_string()), g, Pose::IDENTITY);
    match shape {
        WallShape::Plane { point, normal } => Ok(vec![(
            None,
            WallGeometry::HalfSpace {
                normal: v3(*normal),
            },
            Pose::from_translation(v3(*point)),
        )]),
        WallShape::Slab {
            center,
            size,
            rotation,
        } => {
            let half = 0.5 * v3(*size);
            let rotation = rotation.as_ref().map_or(DQuat::IDENTITY, |r| {
                DQuat::from_axis_angle(v3(r.axis).normalize(), r.angle_deg.to_radians())
            });
            Ok(vec![(
                None,
                plate(&box_corners(-half, half))?,
                Pose::new(v3(*center), rotation),
            )])
        }
        WallShape::Box {
            min,
            max,
            thickness,
            open,
        } => {
            let (lo, hi, t) = (v3(*min), v3(*max), *thickness);
            let mut out = vec![named(
                "floor",
                plate(&box_corners(
                    DVec3::new(lo.x - t, lo.y - t, lo.z - t),
                    DVec3::new(hi.x + t, hi.y + t, lo.z),
                ))?,
            )];
            let sides = [
                (
                    "x_min",
                    DVec3::new(lo.x - t, lo.y - t, lo.z),
                    DVec3::new(lo.x, hi.y + t, hi.z),
                ),
                (
                    "x_max",
                    DVec3::new(hi.x, lo.y - t, lo.z),
                    DVec3::new(hi.x + t, hi.y + t, hi.z),
                ),
                (
                    "y_min",
                    DVec3::new(lo.x, lo.y - t, lo.z),
                    DVec3::new(hi.x, lo.y, hi.z),
                ),
                (
                    "y_max",
                    DVec3::new(lo.x, hi.y, lo.z),
                    DVec3::new(hi.x, hi.y + t, hi.z),
                ),
            ];
            for (name, a, b) in sides {
                if !open.iter().any(|o| o == name) {
                    out.push(named(name, plate(&box_corners(a, b))?));
                }
            }
            Ok(out)
        }
        WallShape::Hopper {
            center,
            orifice,
            wall_angle_deg,
            height,
            depth,
            thickness,
            kind,
        } => hopper(
            v3(*center),
            *orifice,
            wall_angle_deg.to_radians(),
            *height,
            *depth,
            *thickness,
            *kind,
        ),
        WallShape::RoughBase {
            min,
            max,
            semi_axes,
            vertices,
            spacing,
        } => rough_base(
            v3(*min),
            v3(*max),
            v3(*semi_axes),
            *vertices,
            *spacing,
            seed,
        ),
        WallShape::Drum {
            center,
            axis,
            radius,
            length,
            segments,
            thickness,
        } => drum(
            v3(*center),
            v3(*axis).normalize(),
            *radius,
            *length,
            *segments,
            *thickness,
        ),
    }
}

/// A funnel. Each inclined plate's inner face runs from an orifice edge at height
/// `center.z` up to `height` above it, leaning outwards by `height / tan(angle)`; the plate
/// is extruded by `thickness` away from the inside.
fn hopper(
    center: DVec3,
    orifice: f64,
    angle: f64,
    height: f64,
    depth: f64,
    thickness: f64,
    kind: HopperKind,
) -> Result<Vec<Part>, String> {
    let half = 0.5 * orifice;
    let spread = height / angle.tan();
    let top = half + spread;
    // Unit normal of an inclined plate pointing away from the inside, for the plate on the
    // side `outward` (a horizontal unit vector): the inner face rises along
    // (outward·cos, sin), so its outer normal is (outward·sin, −cos).
    let outer_normal = |outward: DVec3| outward * angle.sin() - DVec3::Z * angle.cos();
    let mut out = Vec::new();
    match kind {
        HopperKind::Wedge => {
            let y = 0.5 * depth;
            for (name, outward) in [("x_min", -DVec3::X), ("x_max", DVec3::X)] {
                let n = outer_normal(outward) * thickness;
                let inner = [
                    center + outward * half + DVec3::new(0.0, -y, 0.0),
                    center + outward * half + DVec3::new(0.0, y, 0.0),
                    center + outward * top + DVec3::new(0.0, -y, height),
                    center + outward * top + DVec3::new(0.0, y, height),
                ];
                let points: Vec<DVec3> = inner.iter().flat_map(|&p| [p, p + n]).collect();
                out.push((Some(name.to_string()), plate(&points)?, Pose::IDENTITY));
            }
            // Vertical plates closing the slot's ends, covering the funnel's cross-section.
            let reach = top + thickness;
            for (name, sign) in [("y_min", -1.0), ("y_max", 1.0)] {
                let inner_y = center.y + sign * y;
                let (y0, y1) = if sign < 0.0 {
                    (inner_y - thickness, inner_y)
                } else {
                    (inner_y, inner_y + thickness)
                };
                let points = box_corners(
                    DVec3::new(center.x - reach, y0, center.z - thickness),
                    DVec3::new(center.x + reach, y1, center.z + height),
                );
                out.push((Some(name.to_string()), plate(&points)?, Pose::IDENTITY));
            }
        }
        HopperKind::Pyramid => {
            for (name, outward, side) in [
                ("x_min", -DVec3::X, DVec3::Y),
                ("x_max", DVec3::X, DVec3::Y),
                ("y_min", -DVec3::Y, DVec3::X),
                ("y_max", DVec3::Y, DVec3::X),
            ] {
                let n = outer_normal(outward) * thickness;
                let inner = [
                    center + outward * half - side * half,
                    center + outward * half + side * half,
                    center + outward * top - side * top + DVec3::Z * height,
                    center + outward * top + side * top + DVec3::Z * height,
                ];
                let points: Vec<DVec3> = inner.iter().flat_map(|&p| [p, p + n]).collect();
                out.push((Some(name.to_string()), plate(&points)?, Pose::IDENTITY));
            }
        }
    }
    Ok(out)
}

/// The lattice of a rough base along one axis: the count and pitch nearest to `spacing`
/// that fit `width` a whole number of times.
#[must_use]
pub fn rough_base_lattice(width: f64, spacing: f64) -> (usize, f64) {
    let count = (width / spacing).round().max(1.0) as usize;
    (count, width / count as f64)
}

/// A rough base: the plane z = `min.z` and a glued grain, randomly turned, at every site of
/// a square lattice over `min`–`max` in x and y, centred on the plane.
fn rough_base(
    min: DVec3,
    max: DVec3,
    semi_axes: DVec3,
    vertices: usize,
    spacing: Option<f64>,
    seed: u64,
) -> Result<Vec<Part>, String> {
    let spacing = spacing.unwrap_or(2.0 * semi_axes.max_element());
    let (nx, px) = rough_base_lattice(max.x - min.x, spacing);
    let (ny, py) = rough_base_lattice(max.y - min.y, spacing);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(ROUGH_BASE_STREAM);
    let mut out = vec![(
        Some("plane".to_string()),
        WallGeometry::HalfSpace { normal: DVec3::Z },
        Pose::from_translation(DVec3::new(0.0, 0.0, min.z)),
    )];
    for j in 0..ny {
        for i in 0..nx {
            let grain = talus_geom::generate::ellipsoid_grain(vertices, semi_axes, &mut rng)
                .map_err(|e| format!("glued grain {}: {e}", j * nx + i))?;
            let center = DVec3::new(
                min.x + (i as f64 + 0.5) * px,
                min.y + (j as f64 + 0.5) * py,
                min.z,
            );
            let turn = crate::placement::random_rotation(&mut rng);
            out.push((
                Some((j * nx + i).to_string()),
                WallGeometry::Body(Arc::new(grain)),
                Pose::new(center, turn),
            ));
        }
    }
    Ok(out)
}

/// The random stream of a rough base's grains, apart from those of the populations.
const ROUGH_BASE_STREAM: u64 = 0x2000_0000;

/// A polygonal drum: `segments` plates whose inner faces are the sides of a regular polygon
/// with inradius `radius`, and two end plates.
fn drum(
    center: DVec3,
    axis: DVec3,
    radius: f64,
    length: f64,
    segments: usize,
    thickness: f64,
) -> Result<Vec<Part>, String> {
    let frame = DQuat::from_rotation_arc(DVec3::Z, axis);
    let half_side = radius * (PI / segments as f64).tan();
    let half_len = 0.5 * length + thickness;
    let mut out = Vec::new();
    for k in 0..segments {
        let theta = 2.0 * PI * k as f64 / segments as f64;
        let radial = DVec3::new(theta.cos(), theta.sin(), 0.0);
        let tangent = DVec3::new(-theta.sin(), theta.cos(), 0.0);
        let points: Vec<DVec3> = [radius, radius + thickness]
            .iter()
            .flat_map(|&r| {
                // The outer face is wider so that neighbouring plates close the corners.
                let w = half_side * r / radius;
                [-1.0, 1.0].into_iter().flat_map(move |s| {
                    [-half_len, half_len]
                        .into_iter()
                        .map(move |z| radial * r + tangent * (s * w) + DVec3::Z * z)
                })
            })
            .map(|p| center + frame * p)
            .collect();
        out.push((Some(format!("side{k}")), plate(&points)?, Pose::IDENTITY));
    }
    let outer = (radius + thickness) / (PI / segments as f64).cos();
    for (name, z0, z1) in [
        ("end0", -0.5 * length - thickness, -0.5 * length),
        ("end1", 0.5 * length, 0.5 * length + thickness),
    ] {
        let points: Vec<DVec3> = (0..segments)
            .flat_map(|k| {
                let theta = 2.0 * PI * (k as f64 + 0.5) / segments as f64;
                let p = DVec3::new(theta.cos() * outer, theta.sin() * outer, 0.0);
                [p + DVec3::Z * z0, p + DVec3::Z * z1]
            })
            .map(|p| center + frame * p)
            .collect();
        out.push((Some(name.to_string()), plate(&points)?, Pose::IDENTITY));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::RotationSpec;

    fn spec(shape: WallShape) -> WallSpec {
        WallSpec {
            name: "w".into(),
            shape,
            motion: MotionSpec::Fixed,
            removed_at: None,
            material: None,
        }
    }

    fn body(w: &Wall) -> &ConvexPolyhedron {
        match &w.geometry {
            WallGeometry::Body(p) => p,
            WallGeometry::HalfSpace { .. } => panic!("expected a body"),
        }
    }

    #[test]
    fn box_plates_enclose_the_inside_exactly() {
        let walls = build_walls(
            &spec(WallShape::Box {
                min: (0.0, 0.0, 0.0),
                max: (1.0, 2.0, 3.0),
                thickness: 0.1,
                open: vec!["x_max".into()],
            }),
            0,
        )
        .unwrap();
        let names: Vec<&str> = walls.iter().map(|w| w.name.as_str()).collect();
        assert_eq!(names, ["w/floor", "w/x_min", "w/y_min", "w/y_max"]);
        let floor = body(&walls[0]).mass_properties(1.0);
        assert!((floor.volume - 1.2 * 2.2 * 0.1).abs() < 1e-12);
        assert!((floor.center_of_mass.z + 0.05).abs() < 1e-12);
    }

    #[test]
    fn hopper_plates_meet_the_orifice_and_lean_at_the_angle() {
        let (d, angle, h) = (0.2, 60f64, 0.5);
        for kind in [HopperKind::Wedge, HopperKind::Pyramid] {
            let walls = build_walls(
                &spec(WallShape::Hopper {
                    center: (1.0, 0.0, 2.0),
                    orifice: d,
                    wall_angle_deg: angle,
                    height: h,
                    depth: 0.4,
                    thickness: 0.05,
                    kind,
                }),
                0,
            )
            .unwrap();
            let plate = body(&walls[1]); // x_max
            // The inner face's lowest points are at the orifice edge x = 1.1, z = 2.
            let lowest = plate
                .vertices()
                .iter()
                .filter(|v| (v.z - 2.0).abs() < 1e-12)
                .map(|v| v.x)
                .fold(f64::INFINITY, f64::min);
            assert!((lowest - (1.0 + d / 2.0)).abs() < 1e-12, "{kind:?}");
            // Its innermost vertex at the top is height / tan(angle) further out.
            let top_x = plate
                .vertices()
                .iter()
                .filter(|v| (v.z - 2.5).abs() < 1e-12)
                .map(|v| v.x)
                .fold(f64::INFINITY, f64::min);
            let expected = 1.0 + d / 2.0 + h / angle.to_radians().tan();
            assert!((top_x - expected).abs() < 1e-12, "{kind:?}");
            // Volume of a plate of the wedge: inner face area times thickness.
            if kind == HopperKind::Wedge {
                let slant = h / angle.to_radians().sin();
                let v = plate.mass_properties(1.0).volume;
                assert!((v - slant * 0.4 * 0.05).abs() < 1e-12);
            }
        }
    }

    #[test]
    fn drum_plates_lie_outside_the_inscribed_cylinder() {
        let walls = build_walls(
            &spec(WallShape::Drum {
                center: (0.0, 1.0, 0.0),
                axis: (0.0, 1.0, 0.0),
                radius: 0.5,
                length: 0.2,
                segments: 12,
                thickness: 0.05,
            }),
            0,
        )
        .unwrap();
        assert_eq!(walls.len(), 14);
        for w in &walls[..12] {
            for v in body(w).vertices() {
                let r = ((v.x).powi(2) + (v.z).powi(2)).sqrt();
                assert!(r >= 0.5 - 1e-12, "vertex inside the drum: {v}");
                assert!((v.y - 1.0).abs() <= 0.15 + 1e-12);
            }
        }
        for w in &walls[12..] {
            for v in body(w).vertices() {
                assert!((v.y - 1.0).abs() >= 0.1 - 1e-12);
            }
        }
    }

    #[test]
    fn slab_rotation_is_about_its_centre() {
        let walls = build_walls(
            &spec(WallShape::Slab {
                center: (0.0, 0.0, 1.0),
                size: (2.0, 1.0, 0.1),
                rotation: Some(RotationSpec {
                    axis: (0.0, 1.0, 0.0),
                    angle_deg: 90.0,
                }),
            }),
            0,
        )
        .unwrap();
        let w = &walls[0];
        let extent: Vec<DVec3> = body(w)
            .vertices()
            .iter()
            .map(|v| w.start.transform_point(*v))
            .collect();
        let zmax = extent.iter().map(|v| v.z).fold(f64::MIN, f64::max);
        assert!((zmax - 2.0).abs() < 1e-12);
    }
}
