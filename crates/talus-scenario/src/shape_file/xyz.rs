//! Point clouds as text (`.xyz`, `.csv`, `.txt`): one point a line, three coordinates
//! separated by spaces, tabs or commas. `#` starts a comment. A first line that is not
//! numbers is a header and is skipped. A blank line ends a grain: a file of several grains
//! separates them by blank lines.

use std::path::Path;

use talus_geom::glam::DVec3;

use super::{RawShape, coordinates, fail, text};
use crate::error::ScenarioError;

/// The grains of a point-cloud file.
pub(super) fn read(path: &Path, bytes: &[u8]) -> Result<Vec<RawShape>, ScenarioError> {
    let text = text(path, bytes)?;
    let mut shapes = Vec::new();
    let mut current: Vec<DVec3> = Vec::new();
    let mut start = None;
    let mut seen_data = false;
    let mut finish = |points: &mut Vec<DVec3>, start: &mut Option<usize>| {
        if !points.is_empty() {
            shapes.push(RawShape {
                object: format!("grain {}", shapes.len() + 1),
                points: std::mem::take(points),
                triangles: None,
                line: start.take(),
            });
        }
    };
    for (i, line) in text.lines().enumerate() {
        let number = i + 1;
        let content = line.split('#').next().unwrap_or("");
        if content.trim().is_empty() {
            // A comment line continues the grain; only a blank line ends it.
            if line.trim().is_empty() {
                finish(&mut current, &mut start);
            }
            continue;
        }
        let fields: Vec<&str> = content
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|f| !f.is_empty())
            .collect();
        if !seen_data && fields.first().is_some_and(|f| f.parse::<f64>().is_err()) {
            // A header line, such as `x,y,z`.
            seen_data = true;
            continue;
        }
        seen_data = true;
        if fields.len() != 3 {
            return Err(fail(
                path,
                Some(number),
                format!(
                    "{} fields where a point is three numbers x y z",
                    fields.len()
                ),
            ));
        }
        let point = coordinates(path, number, fields.into_iter(), "point")?;
        start.get_or_insert(number);
        current.push(point);
    }
    finish(&mut current, &mut start);
    if shapes.is_empty() {
        return Err(fail(path, None, "holds no point".into()));
    }
    Ok(shapes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grains_are_separated_by_blank_lines_and_a_header_is_skipped() {
        let text = "x,y,z\n0,0,0\n1, 0, 0 # a comment\n# only a comment\n0 1 0\n\n\n2\t2\t2\n";
        let shapes = read(Path::new("a.csv"), text.as_bytes()).unwrap();
        assert_eq!(shapes.len(), 2);
        assert_eq!(shapes[0].points.len(), 3);
        assert_eq!(shapes[0].line, Some(2));
        assert_eq!(shapes[1].points, vec![DVec3::splat(2.0)]);
        assert_eq!(shapes[1].line, Some(8));
    }

    #[test]
    fn a_bad_line_is_named() {
        for (text, line) in [
            ("0 0 0\n1 0\n", 2),
            ("0 0 0\n0 0 0\n1 nan 0\n", 3),
            ("0 0 0\n1 0 zero\n", 2),
            ("0 0 0 4\n", 1),
        ] {
            let e = read(Path::new("a.xyz"), text.as_bytes()).unwrap_err();
            assert!(e.to_string().starts_with(&format!("a.xyz:{line}: ")), "{e}");
        }
    }
}
