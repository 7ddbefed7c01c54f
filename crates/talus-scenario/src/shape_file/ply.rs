//! PLY meshes, ASCII or binary, read by `ply-rs-bw`: one grain per file, its `vertex`
//! element's `x`, `y`, `z` and its `face` element's `vertex_indices` (or `vertex_index`).
//! A file without faces is taken as a point cloud.

use std::path::Path;

use ply_rs_bw::parser::Parser;
use ply_rs_bw::ply::{DefaultElement, Encoding, Property};
use talus_geom::glam::DVec3;

use super::{RawShape, fail};
use crate::error::ScenarioError;

/// The grain of a PLY file.
pub(super) fn read(path: &Path, bytes: &[u8]) -> Result<Vec<RawShape>, ScenarioError> {
    let ply = Parser::<DefaultElement>::new()
        .read_ply(&mut &bytes[..])
        .map_err(|e| fail(path, None, format!("is not a valid PLY file: {e}")))?;
    let Some(vertices) = ply.payload.get("vertex").filter(|v| !v.is_empty()) else {
        return Err(fail(path, None, "is empty: it has no vertex".into()));
    };
    // In an ASCII file whose first element is the vertices, vertex i is on the line after
    // the header plus i.
    let first_vertex_line = (ply.header.encoding == Encoding::Ascii
        && ply.header.elements.keys().next().map(String::as_str) == Some("vertex"))
    .then(|| {
        bytes
            .split(|&b| b == b'\n')
            .position(|l| l.trim_ascii() == b"end_header")
            .map(|k| k + 2)
    })
    .flatten();
    let mut points = Vec::with_capacity(vertices.len());
    for (i, v) in vertices.iter().enumerate() {
        let line = first_vertex_line.map(|l| l + i);
        let mut c = [0.0; 3];
        for (slot, name) in c.iter_mut().zip(["x", "y", "z"]) {
            let value = v.get(name).and_then(scalar).ok_or_else(|| {
                fail(
                    path,
                    line,
                    format!("vertex {i} has no number '{name}' (a vertex needs x, y and z)"),
                )
            })?;
            if !value.is_finite() {
                return Err(fail(
                    path,
                    line,
                    format!("vertex {i}: coordinate {name} = {value} is not finite"),
                ));
            }
            *slot = value;
        }
        points.push(DVec3::from_array(c));
    }
    let faces = ply.payload.get("face").map(Vec::as_slice).unwrap_or(&[]);
    let mut triangles = Vec::new();
    for (f, face) in faces.iter().enumerate() {
        let corners = face
            .get("vertex_indices")
            .or_else(|| face.get("vertex_index"))
            .and_then(indices)
            .ok_or_else(|| {
                fail(
                    path,
                    None,
                    format!("face {f} has no list of vertex indices ('vertex_indices')"),
                )
            })?;
        if corners.len() < 3 || corners.iter().any(|&k| k >= points.len() as u64) {
            return Err(fail(
                path,
                None,
                format!(
                    "face {f} {corners:?}: a face needs at least 3 corners among the {} vertices",
                    points.len()
                ),
            ));
        }
        // A polygon as a fan of triangles.
        for k in 1..corners.len() - 1 {
            triangles.push([corners[0], corners[k], corners[k + 1]].map(|i| i as u32));
        }
    }
    Ok(vec![RawShape {
        object: "mesh".into(),
        points,
        triangles: (!triangles.is_empty()).then_some(triangles),
        line: None,
    }])
}

/// A scalar property as a number.
fn scalar(p: &Property) -> Option<f64> {
    Some(match *p {
        Property::Char(v) => v.into(),
        Property::UChar(v) => v.into(),
        Property::Short(v) => v.into(),
        Property::UShort(v) => v.into(),
        Property::Int(v) => v.into(),
        Property::UInt(v) => v.into(),
        Property::Float(v) => v.into(),
        Property::Double(v) => v,
        _ => return None,
    })
}

/// A list property as vertex indices (none negative).
fn indices(p: &Property) -> Option<Vec<u64>> {
    let signed = |v: &[i64]| v.iter().map(|&k| u64::try_from(k).ok()).collect();
    match p {
        Property::ListChar(v) => signed(&v.iter().map(|&k| k.into()).collect::<Vec<_>>()),
        Property::ListUChar(v) => Some(v.iter().map(|&k| k.into()).collect()),
        Property::ListShort(v) => signed(&v.iter().map(|&k| k.into()).collect::<Vec<_>>()),
        Property::ListUShort(v) => Some(v.iter().map(|&k| k.into()).collect()),
        Property::ListInt(v) => signed(&v.iter().map(|&k| k.into()).collect::<Vec<_>>()),
        Property::ListUInt(v) => Some(v.iter().map(|&k| k.into()).collect()),
        _ => None,
    }
}
