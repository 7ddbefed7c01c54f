//! The report of `talus shape`: counts and mass properties of one grain, as a readable
//! summary with aligned labels or as one JSON object.

use std::fmt::Write as _;

use serde::Serialize;
use talus_geom::glam::DMat3;
use talus_geom::{ConvexPolyhedron, MassProperties};

use crate::parse::Shortest;

/// Width of the label column of the readable summary.
const LABEL_WIDTH: usize = 19;

/// Significant digits of the numbers in the readable summary (JSON keeps full precision).
const SIGNIFICANT_DIGITS: usize = 10;

/// In the readable summary, a vector or matrix entry smaller than this fraction of the
/// quantity's scale (the grain's diameter for the centre of mass, the largest principal
/// moment for the inertia tensor, 1 for the unit axes) is round-off and printed as 0.
const ROUND_OFF: f64 = 1e-12;

/// Principal moments closer than this fraction of the largest are reported as equal.
const EQUAL_MOMENTS: f64 = 1e-9;

/// The JSON form of a [`ShapeReport`]; fields serialize in declaration order.
#[derive(Serialize)]
struct JsonReport<'a> {
    shape: &'a str,
    density: f64,
    vertices: usize,
    edges: usize,
    faces: usize,
    volume: f64,
    mass: f64,
    center_of_mass: [f64; 3],
    inertia: [[f64; 3]; 3],
    principal_moments: [f64; 3],
    principal_axes: [[f64; 3]; 3],
}

/// Everything `talus shape` reports about one grain.
#[derive(Debug, Clone, PartialEq)]
pub struct ShapeReport {
    /// What the grain is, e.g. `cube edge 1`.
    pub description: String,
    /// The density the mass properties are computed with.
    pub density: f64,
    /// Number of vertices.
    pub vertices: usize,
    /// Number of edges.
    pub edges: usize,
    /// Number of faces.
    pub faces: usize,
    /// The grain's diameter (largest distance between two vertices), the length scale.
    pub diameter: f64,
    /// Mass, volume, centre of mass, inertia and principal axes.
    pub mass: MassProperties,
}

impl ShapeReport {
    /// The report of `poly` with the given density.
    ///
    /// # Errors
    /// A message when the volume, the mass or a principal moment is not a positive normal
    /// floating-point number, or another property is not finite: the density and the size
    /// together overflow or underflow the range of floating-point numbers.
    pub fn new(description: String, density: f64, poly: &ConvexPolyhedron) -> Result<Self, String> {
        let (vertices, edges, faces) = poly.counts();
        let mass = poly.mass_properties(density);
        // A solid has a positive volume, mass and moments; zero, subnormal or infinite
        // values mean the density and the size together left the floating-point range.
        let representable = [mass.volume, mass.mass]
            .into_iter()
            .chain(mass.principal_moments.to_array())
            .all(|x| x.is_normal() && x > 0.0)
            && mass.center_of_mass.is_finite()
            && mass.inertia.is_finite()
            && mass.principal_axes.is_finite();
        if !representable {
            return Err(format!(
                "the mass properties of the {description} with density {} are outside the \
                 floating-point range (volume {}, mass {}, principal moments {}, {}, {}); \
                 choose a density and size whose mass and moments m·L² lie between about \
                 1e-300 and 1e300",
                Shortest(density),
                Shortest(mass.volume),
                Shortest(mass.mass),
                Shortest(mass.principal_moments.x),
                Shortest(mass.principal_moments.y),
                Shortest(mass.principal_moments.z),
            ));
        }
        Ok(ShapeReport {
            description,
            density,
            vertices,
            edges,
            faces,
            diameter: poly.diameter(),
            mass,
        })
    }

    /// One JSON object on one line, with a final newline; the keys in a fixed order
    /// (shape, density, vertices, edges, faces, volume, mass, center_of_mass, inertia,
    /// principal_moments, principal_axes). Matrices are arrays of rows.
    pub fn to_json(&self) -> String {
        let m = &self.mass;
        let json = JsonReport {
            shape: &self.description,
            density: self.density,
            vertices: self.vertices,
            edges: self.edges,
            faces: self.faces,
            volume: m.volume,
            mass: m.mass,
            center_of_mass: m.center_of_mass.to_array(),
            inertia: rows(m.inertia),
            principal_moments: m.principal_moments.to_array(),
            principal_axes: rows(m.principal_axes),
        };
        // Serializing plain numbers, strings and arrays cannot fail.
        let mut text = serde_json::to_string(&json).unwrap_or_default();
        text.push('\n');
        text
    }

    /// The readable summary: one `label  value` line per property, labels aligned.
    pub fn to_text(&self) -> String {
        let m = &self.mass;
        let euler = self.vertices as i64 - self.edges as i64 + self.faces as i64;
        let moments = m.principal_moments.to_array();
        let moment_scale = m.principal_moments.abs().max_element();
        let mut out = String::new();
        let mut line = |label: &str, value: &str| {
            // Writing to a `String` cannot fail.
            let _ = writeln!(out, "{label:<LABEL_WIDTH$}{}", value.trim_end());
        };
        line("shape", &self.description);
        line("density", &number(self.density));
        line("vertices", &self.vertices.to_string());
        line("edges", &self.edges.to_string());
        line("faces", &self.faces.to_string());
        line("V - E + F", &euler.to_string());
        line("volume", &number(m.volume));
        line("mass", &number(m.mass));
        let com = aligned(&[m.center_of_mass.to_array()], self.diameter);
        line("centre of mass", &com[0]);
        for (i, row) in aligned(&rows(m.inertia), moment_scale).iter().enumerate() {
            line(if i == 0 { "inertia" } else { "" }, row);
        }
        line("principal moments", &aligned(&[moments], 0.0)[0]);
        // One line per axis (a column of the rotation), next to its moment.
        let axes = [
            m.principal_axes.x_axis.to_array(),
            m.principal_axes.y_axis.to_array(),
            m.principal_axes.z_axis.to_array(),
        ];
        for (i, axis) in aligned(&axes, 1.0).iter().enumerate() {
            let label = if i == 0 { "principal axes" } else { "" };
            line(
                label,
                &format!("{axis}   (I{} = {})", i + 1, number(moments[i])),
            );
        }
        let equal =
            |i: usize, j: usize| (moments[i] - moments[j]).abs() <= EQUAL_MOMENTS * moment_scale;
        if equal(0, 1) || equal(1, 2) {
            line("", "(equal principal moments: their axes are not unique)");
        }
        out
    }
}

/// The rows of a matrix: row `i` is `[col0[i], col1[i], col2[i]]`.
fn rows(m: DMat3) -> [[f64; 3]; 3] {
    m.transpose().to_cols_array_2d()
}

/// Each row as text, the numbers right-aligned in columns of a common width; entries below
/// [`ROUND_OFF`] times `scale` are printed as 0.
fn aligned(rows: &[[f64; 3]], scale: f64) -> Vec<String> {
    let texts: Vec<[String; 3]> = rows
        .iter()
        .map(|row| row.map(|x| number(if x.abs() <= ROUND_OFF * scale { 0.0 } else { x })))
        .collect();
    let width = texts.iter().flatten().map(String::len).max().unwrap_or(0);
    texts
        .iter()
        .map(|row| {
            row.iter()
                .map(|t| format!("{t:>width$}"))
                .collect::<Vec<_>>()
                .join("  ")
        })
        .collect()
}

/// A number with [`SIGNIFICANT_DIGITS`] significant digits, trailing zeros dropped; plain
/// notation from 1e-4 to 1e9, scientific outside.
fn number(x: f64) -> String {
    if x == 0.0 {
        return "0".to_string(); // also for -0
    }
    if !x.is_finite() {
        return x.to_string();
    }
    let magnitude = x.abs().log10().floor();
    if (-4.0..9.0).contains(&magnitude) {
        // `magnitude` is a small integer here, so the conversion is exact.
        let decimals = (SIGNIFICANT_DIGITS as i64 - 1 - magnitude as i64).max(0) as usize;
        let text = format!("{x:.decimals$}");
        match trim_fraction(&text) {
            "-0" => "0".to_string(),
            trimmed => trimmed.to_string(),
        }
    } else {
        let text = format!("{x:.prec$e}", prec = SIGNIFICANT_DIGITS - 1);
        match text.split_once('e') {
            Some((mantissa, exponent)) => format!("{}e{exponent}", trim_fraction(mantissa)),
            None => text,
        }
    }
}

/// `1.2500` → `1.25`, `3.000` → `3`; text without a decimal point is returned unchanged.
fn trim_fraction(text: &str) -> &str {
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.')
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use talus_geom::glam::DVec3;

    #[test]
    fn numbers_are_short_and_readable() {
        assert_eq!(number(0.0), "0");
        assert_eq!(number(-0.0), "0");
        assert_eq!(number(16.0), "16");
        assert_eq!(number(-2.5), "-2.5");
        assert_eq!(number(0.1 + 0.2), "0.3");
        assert_eq!(number(7.663_118_960_624_632), "7.663118961");
        assert_eq!(number(1.25e-17), "1.25e-17");
        assert_eq!(number(3.0e12), "3e12");
        assert_eq!(number(123_456_789.0), "123456789");
        assert_eq!(number(-1e-300), "-1e-300");
    }

    #[test]
    fn rows_of_a_column_major_matrix() {
        let m = DMat3::from_cols(
            DVec3::new(1.0, 2.0, 3.0),
            DVec3::new(4.0, 5.0, 6.0),
            DVec3::new(7.0, 8.0, 9.0),
        );
        assert_eq!(rows(m), [[1.0, 4.0, 7.0], [2.0, 5.0, 8.0], [3.0, 6.0, 9.0]]);
    }

    #[test]
    fn aligned_columns_and_round_off() {
        let lines = aligned(&[[1.0, -22.5, 1e-15], [100.0, 2.0, 3.0]], 100.0);
        assert_eq!(lines, ["    1  -22.5      0", "  100      2      3"]);
    }
}
