//! STL meshes, ASCII or binary, read by `stl_io`: one grain per file.
//!
//! An ASCII file's vertex lines are checked here first, so that a bad number is reported at
//! its line; a binary file's length is checked against its triangle count, so that a file
//! cut short is reported as such.

use std::io::Cursor;
use std::path::Path;

use talus_geom::glam::DVec3;

use super::{RawShape, coordinates, fail};
use crate::error::ScenarioError;

/// Bytes of a binary STL before its triangles: an 80-byte header and a `u32` count.
const BINARY_HEADER: usize = 84;
/// Bytes of one triangle of a binary STL.
const BINARY_TRIANGLE: usize = 50;

/// The grain of an STL file.
pub(super) fn read(path: &Path, bytes: &[u8]) -> Result<Vec<RawShape>, ScenarioError> {
    let mut bytes = bytes.to_vec();
    let text = std::str::from_utf8(&bytes).ok();
    // stl_io takes any file starting with "solid " as ASCII, but some binary exporters
    // begin their header with it too: a file that is not text, or whose length is exactly
    // that of the triangles its header announces, is binary.
    let announced = bytes
        .get(80..BINARY_HEADER)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]) as u64);
    let binary_length = announced.is_some_and(|n| {
        n > 0 && bytes.len() as u64 == BINARY_HEADER as u64 + BINARY_TRIANGLE as u64 * n
    });
    let ascii =
        !binary_length && text.is_some_and(|t| t.starts_with("solid ") || t.starts_with("solid\n"));
    if let Some(text) = text.filter(|_| ascii) {
        let mut vertices = 0;
        for (i, line) in text.lines().enumerate() {
            let mut fields = line.split_whitespace();
            if fields.next() == Some("vertex") {
                coordinates(path, i + 1, fields, "vertex")?;
                vertices += 1;
            }
        }
        if vertices == 0 {
            return Err(fail(path, None, "is empty: it has no triangles".into()));
        }
        if text.starts_with("solid\n") {
            // stl_io wants a name after "solid".
            bytes.splice(5..5, *b" grain");
        }
    } else {
        let count = match bytes.get(80..BINARY_HEADER) {
            Some(c) => u32::from_le_bytes([c[0], c[1], c[2], c[3]]) as usize,
            None => {
                return Err(fail(
                    path,
                    None,
                    format!(
                        "is cut short: {} bytes, where a binary STL has an {BINARY_HEADER}-byte \
                         header",
                        bytes.len()
                    ),
                ));
            }
        };
        let needed = BINARY_HEADER as u64 + BINARY_TRIANGLE as u64 * count as u64;
        if (bytes.len() as u64) < needed {
            return Err(fail(
                path,
                None,
                format!(
                    "is cut short: its header announces {count} triangles ({needed} bytes), the \
                     file has {} bytes",
                    bytes.len()
                ),
            ));
        }
        if count == 0 {
            return Err(fail(path, None, "is empty: it has no triangles".into()));
        }
        if bytes.starts_with(b"solid") {
            // Keep stl_io from reading the header as ASCII.
            bytes[..5].copy_from_slice(b"     ");
        }
    }
    let mesh = stl_io::read_stl(&mut Cursor::new(&bytes))
        .map_err(|e| fail(path, None, format!("is not a valid STL file: {e}")))?;
    let points: Vec<DVec3> = mesh
        .vertices
        .iter()
        .map(|v| DVec3::new(v[0].into(), v[1].into(), v[2].into()))
        .collect();
    let triangles = mesh
        .faces
        .iter()
        .map(|f| f.vertices.map(|i| i as u32))
        .collect();
    Ok(vec![RawShape {
        object: "solid".into(),
        points,
        triangles: Some(triangles),
        line: None,
    }])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A binary STL of one triangle whose header starts like an ASCII file.
    fn binary_named_solid() -> Vec<u8> {
        let mut b = b"solid exported".to_vec();
        b.resize(80, b' ');
        b.extend_from_slice(&1u32.to_le_bytes());
        let corners = [[0.0f32; 3], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]];
        b.extend(std::iter::repeat_n(0u8, 12));
        for c in corners.iter().flatten() {
            b.extend_from_slice(&c.to_le_bytes());
        }
        b.extend_from_slice(&[0, 0]);
        b
    }

    #[test]
    fn a_binary_file_whose_header_starts_with_solid_is_read_as_binary() {
        let shapes = read(Path::new("t.stl"), &binary_named_solid()).unwrap();
        assert_eq!(shapes[0].points.len(), 3);
        assert_eq!(shapes[0].triangles.as_ref().unwrap().len(), 1);
    }
}
