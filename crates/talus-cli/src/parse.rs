//! Value parsers for command-line arguments.
//!
//! Each parser checks one value completely, so that clap reports a bad value as
//! `error: invalid value '…' for '--flag <VALUE>': <reason>` and exits with code 2 before any
//! work is done. The reasons say what was wrong and what is allowed.

use std::fmt;

use talus_geom::generate::{MAX_GRAIN_VERTICES, PlatonicSolid, UnknownSolid};
use talus_geom::glam::DVec3;

/// The semi-axes `a, b, c` of an ellipsoid, all positive and finite.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SemiAxes(pub DVec3);

impl fmt::Display for SemiAxes {
    /// Writes `a,b,c`, the form in which the semi-axes are given on the command line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{},{},{}",
            Shortest(self.0.x),
            Shortest(self.0.y),
            Shortest(self.0.z)
        )
    }
}

/// A number written as the shortest text that reads back as the same `f64`: plain notation
/// from 1e-4 to 1e15, scientific outside (`1e40`, not forty digits).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Shortest(pub f64);

impl fmt::Display for Shortest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let x = self.0;
        if x == 0.0 || !x.is_finite() || (1e-4..1e15).contains(&x.abs()) {
            write!(f, "{x}")
        } else {
            write!(f, "{x:e}")
        }
    }
}

/// Parses `A,B,C`: three comma-separated positive finite numbers.
pub fn semi_axes(text: &str) -> Result<SemiAxes, String> {
    let parts: Vec<&str> = text.split(',').map(str::trim).collect();
    if parts.len() != 3 {
        return Err(format!(
            "expected three comma-separated semi-axes A,B,C (e.g. 1,0.8,0.6), got {} value{}",
            parts.len(),
            if parts.len() == 1 { "" } else { "s" }
        ));
    }
    let mut axes = [0.0; 3];
    for ((axis, part), name) in axes.iter_mut().zip(&parts).zip(["A", "B", "C"]) {
        *axis =
            positive_finite_number(part).map_err(|reason| format!("semi-axis {name} {reason}"))?;
    }
    Ok(SemiAxes(DVec3::from_array(axes)))
}

/// Parses a positive finite number (a length or a density).
pub fn positive_finite(text: &str) -> Result<f64, String> {
    positive_finite_number(text.trim())
}

/// Parses the vertex count of an ellipsoid grain: an integer from 4 to
/// [`MAX_GRAIN_VERTICES`].
pub fn vertex_count(text: &str) -> Result<usize, String> {
    let allowed = format!("a whole number from 4 to {MAX_GRAIN_VERTICES}");
    let text = text.trim();
    let digits = text.strip_prefix('+').unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("'{text}' is not {allowed}"));
    }
    match digits.parse::<usize>() {
        Ok(k) if (4..=MAX_GRAIN_VERTICES).contains(&k) => Ok(k),
        Ok(k) if k < 4 => Err(format!(
            "{k} vertices are too few for a solid; expected {allowed}"
        )),
        _ => Err(format!("{text} vertices are too many; expected {allowed}")),
    }
}

/// Parses a seed: a whole number from 0 to 2^64 - 1.
pub fn seed(text: &str) -> Result<u64, String> {
    let text = text.trim();
    text.strip_prefix('+')
        .unwrap_or(text)
        .parse()
        .map_err(|_| format!("'{text}' is not a whole number from 0 to {}", u64::MAX))
}

/// Parses the name of a platonic solid (case-insensitive).
pub fn solid(text: &str) -> Result<PlatonicSolid, UnknownSolid> {
    text.parse()
}

/// A number that is positive and finite; the error says why not (to follow a subject,
/// e.g. "semi-axis B").
fn positive_finite_number(text: &str) -> Result<f64, String> {
    let value: f64 = text
        .parse()
        .map_err(|_| format!("'{text}' is not a number; expected a positive finite number"))?;
    if !value.is_finite() {
        Err(format!(
            "'{text}' is not finite; expected a positive finite number"
        ))
    } else if value <= 0.0 {
        Err(format!(
            "'{text}' is not positive; expected a positive finite number"
        ))
    } else {
        Ok(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn semi_axes_accepts_three_positive_numbers() {
        assert_eq!(
            semi_axes("1, 0.8,6e-1"),
            Ok(SemiAxes(DVec3::new(1.0, 0.8, 0.6)))
        );
        assert_eq!(semi_axes("1,0.8,0.6").unwrap().to_string(), "1,0.8,0.6");
    }

    #[test]
    fn semi_axes_rejects_bad_input() {
        for bad in [
            "",
            "1",
            "1,2",
            "1,2,3,4",
            "a,b,c",
            "1,-2,3",
            "0,1,1",
            "nan,1,1",
            "inf,1,1",
            "1,1,1e400",
            "1,,1",
        ] {
            assert!(semi_axes(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn vertex_count_range() {
        assert_eq!(vertex_count("4"), Ok(4));
        assert_eq!(vertex_count("+18"), Ok(18));
        assert_eq!(
            vertex_count(&MAX_GRAIN_VERTICES.to_string()),
            Ok(MAX_GRAIN_VERTICES)
        );
        for bad in [
            "3",
            "0",
            "-5",
            "abc",
            "",
            "4.5",
            "10001",
            "99999999999999999999999999",
        ] {
            assert!(vertex_count(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn positive_finite_rejects_zero_negative_and_non_finite() {
        assert_eq!(positive_finite("2.5"), Ok(2.5));
        for bad in [
            "0", "-0", "-1", "nan", "NaN", "inf", "-inf", "1e999", "x", "",
        ] {
            assert!(positive_finite(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn seeds() {
        assert_eq!(seed("0"), Ok(0));
        assert_eq!(seed(&u64::MAX.to_string()), Ok(u64::MAX));
        for bad in ["-1", "1.5", "x", "", "18446744073709551616"] {
            assert!(seed(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn shortest_numbers() {
        assert_eq!(Shortest(0.8).to_string(), "0.8");
        assert_eq!(Shortest(2.0).to_string(), "2");
        assert_eq!(Shortest(1e40).to_string(), "1e40");
        assert_eq!(Shortest(1.5e-30).to_string(), "1.5e-30");
    }

    #[test]
    fn solid_names() {
        assert_eq!(solid("Cube"), Ok(PlatonicSolid::Cube));
        let err = solid("sphere").unwrap_err().to_string();
        assert!(
            err.contains("sphere") && err.contains("icosahedron"),
            "{err}"
        );
    }
}
