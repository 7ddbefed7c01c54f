//! Wavefront OBJ meshes, read by `tobj`: each object (`o`) or group (`g`) is a grain.
//!
//! Before tobj reads the file, its vertex and face lines are checked here, so that a
//! malformed number, a non-finite coordinate, a face that refers to a missing vertex or an
//! object without faces is reported at its line (tobj's errors name no line).

use std::path::Path;

use talus_geom::glam::DVec3;

use super::{RawShape, coordinates, fail, text};
use crate::error::ScenarioError;

/// The grains of an OBJ file.
pub(super) fn read(path: &Path, bytes: &[u8]) -> Result<Vec<RawShape>, ScenarioError> {
    let text = text(path, bytes)?;
    let starts = check_lines(path, text)?;
    let options = tobj::LoadOptions {
        triangulate: true,
        ignore_points: true,
        ignore_lines: true,
        ..Default::default()
    };
    // Materials do not matter to a grain's shape: none is loaded.
    let (models, _) = tobj::load_obj_buf(&mut text.as_bytes(), &options, |_| {
        Err(tobj::LoadError::OpenFileFailed)
    })
    .map_err(|e| fail(path, None, format!("is not a valid OBJ file: {e}")))?;
    // tobj starts a new model at each change of material too: those are parts of one
    // object, merged again by name.
    let mut shapes: Vec<RawShape> = Vec::new();
    for model in models {
        let mesh = &model.mesh;
        let points: Vec<DVec3> = mesh
            .positions
            .chunks_exact(3)
            .map(|c| DVec3::new(c[0].into(), c[1].into(), c[2].into()))
            .collect();
        let triangles: Vec<[u32; 3]> = mesh
            .indices
            .chunks_exact(3)
            .map(|c| [c[0], c[1], c[2]])
            .collect();
        let k = match shapes.iter().position(|s| s.object == model.name) {
            Some(k) => k,
            None => {
                let line = starts
                    .iter()
                    .find(|(name, _)| *name == model.name)
                    .map(|(_, line)| *line);
                shapes.push(RawShape {
                    object: model.name.clone(),
                    points: Vec::new(),
                    triangles: Some(Vec::new()),
                    line,
                });
                shapes.len() - 1
            }
        };
        let shape = &mut shapes[k];
        let offset = shape.points.len() as u32;
        shape.points.extend(points);
        if let Some(t) = shape.triangles.as_mut() {
            t.extend(triangles.iter().map(|t| t.map(|i| i + offset)));
        }
    }
    Ok(shapes)
}

/// Checks the vertex and face lines; returns the line of each object or group name.
fn check_lines<'a>(path: &Path, text: &'a str) -> Result<Vec<(&'a str, usize)>, ScenarioError> {
    let mut vertices: i64 = 0;
    let mut faces = 0usize;
    let mut starts = Vec::new();
    // The object being read: its name, line and faces so far.
    let mut object: Option<(&str, usize, usize)> = None;
    let empty = |name: &str, line: usize| {
        fail(
            path,
            Some(line),
            format!("object '{name}' is empty: it has no faces"),
        )
    };
    for (i, line) in text.lines().enumerate() {
        let number = i + 1;
        let mut fields = line.split_whitespace();
        match fields.next() {
            Some("v") => {
                coordinates(path, number, fields, "vertex")?;
                vertices += 1;
            }
            Some("f") => {
                let mut corners = 0;
                for field in fields {
                    let index = field.split('/').next().unwrap_or("");
                    let k: i64 = index.parse().map_err(|_| {
                        fail(
                            path,
                            Some(number),
                            format!("face corner '{field}' is not a vertex number"),
                        )
                    })?;
                    // Negative numbers count back from the last vertex read.
                    let absolute = if k < 0 { vertices + 1 + k } else { k };
                    if !(1..=vertices).contains(&absolute) {
                        return Err(fail(
                            path,
                            Some(number),
                            format!("face corner {k} refers to no vertex ({vertices} read so far)"),
                        ));
                    }
                    corners += 1;
                }
                if corners < 3 {
                    return Err(fail(
                        path,
                        Some(number),
                        format!("a face of {corners} corners; at least 3 are needed"),
                    ));
                }
                faces += 1;
                if let Some(o) = object.as_mut() {
                    o.2 += 1;
                }
            }
            Some("o") => {
                if let Some((name, at, 0)) = object {
                    return Err(empty(name, at));
                }
                let name = line.trim_start()[1..].trim();
                let name = if name.is_empty() {
                    "unnamed_object"
                } else {
                    name
                };
                starts.push((name, number));
                object = Some((name, number, 0));
            }
            Some("g") => {
                let name = line.trim_start()[1..].trim();
                starts.push((name, number));
            }
            _ => {}
        }
    }
    if let Some((name, at, 0)) = object {
        return Err(empty(name, at));
    }
    if faces == 0 {
        return Err(fail(
            path,
            None,
            "has no faces: a mesh of triangles or polygons is needed (a point cloud goes in \
             an .xyz file)"
                .into(),
        ));
    }
    Ok(starts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objects_are_grains() {
        let text = "o a\nv 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 2 3\nf 1 2 4\n\
                    o b\nv 5 0 0\nv 6 0 0\nv 5 1 0\nv 5 0 1\nf -4 -3 -2\nf 5 6 8\n";
        let shapes = read(Path::new("t.obj"), text.as_bytes()).unwrap();
        assert_eq!(shapes.len(), 2);
        assert_eq!(shapes[0].object, "a");
        assert_eq!(shapes[1].object, "b");
        assert_eq!(shapes[1].line, Some(8));
        assert_eq!(shapes[1].triangles.as_ref().unwrap().len(), 2);
    }

    #[test]
    fn a_bad_line_is_named() {
        for (text, line) in [
            ("v 0 0 0\nv 1 0 x\n", 2),
            ("v 0 0 0\nv 1 0 inf\n", 2),
            ("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 9\n", 4),
            ("o a\nv 0 0 0\no b\nf 1 1 1\n", 1),
            ("v 0 0 0\nf 1 1\n", 2),
        ] {
            let e = read(Path::new("t.obj"), text.as_bytes()).unwrap_err();
            assert!(e.to_string().starts_with(&format!("t.obj:{line}: ")), "{e}");
        }
    }
}
