//! Grain shapes read from files: meshes (OBJ, STL, PLY) and point clouds (XYZ/CSV).
//!
//! A reader turns a file into [`RawShape`]s — the points of each grain and, for a mesh, its
//! triangles. [`read`] then checks every shape (enough points, finite coordinates, a hull
//! that encloses a volume) and measures what the convex hull adds to a non-convex mesh:
//! talus' grains are convex, so a grain is always the hull of its file shape's points.

mod mesh;
mod obj;
mod ply;
mod stl;
mod xyz;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use talus_geom::ConvexPolyhedron;
use talus_geom::glam::DVec3;

use crate::error::ScenarioError;

pub use mesh::closed_mesh_volume;

/// The extensions [`read`] knows, for messages.
pub const KNOWN_EXTENSIONS: &str = ".obj, .stl, .ply, .xyz, .csv or .txt";

/// One grain shape as a reader found it.
#[derive(Debug, Clone, PartialEq)]
pub struct RawShape {
    /// Its name: the object or group name in an OBJ file, else its position in the file.
    pub object: String,
    /// Its points, in the file's coordinates.
    pub points: Vec<DVec3>,
    /// The triangles of a mesh (indices into `points`); none for a point cloud.
    pub triangles: Option<Vec<[u32; 3]>>,
    /// The line where it starts in a text file, for messages.
    pub line: Option<usize>,
}

/// One grain shape of a file, checked: its points and the volumes of the input and of its
/// convex hull, in the file's coordinates (before any scaling).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileShape {
    /// The file as the scenario names it.
    pub file: String,
    /// The shape's name within the file.
    pub object: String,
    /// Its points.
    pub points: Vec<DVec3>,
    /// The volume the input encloses, for a closed, consistently oriented mesh (divergence
    /// theorem); unknown for a point cloud or an open mesh.
    pub mesh_volume: Option<f64>,
    /// The volume of the convex hull of the points.
    pub hull_volume: f64,
    /// The number of vertices of the convex hull.
    pub hull_vertices: usize,
}

impl FileShape {
    /// The volume the convex hull adds to the input (hull − mesh), where the input's is
    /// known.
    #[must_use]
    pub fn added_volume(&self) -> Option<f64> {
        self.mesh_volume.map(|v| self.hull_volume - v)
    }
}

/// Reads every grain shape of the file `path`; `name` is the file as the scenario names
/// it (kept in the result).
///
/// # Errors
/// [`ScenarioError::ShapeFile`] naming the file and, where there is one, the line: a file
/// that cannot be read, an unknown extension, a malformed file, an empty object, a
/// non-finite coordinate, fewer than 4 points, or points that span no volume.
pub fn read(path: &Path, name: &str) -> Result<Vec<FileShape>, ScenarioError> {
    let bytes =
        std::fs::read(path).map_err(|e| fail(path, None, format!("cannot be read: {e}")))?;
    let extension = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .unwrap_or_default();
    // A UTF-8 byte-order mark, as some editors write, is not part of the first line: left
    // on, it would hide an OBJ file's first vertex or turn a point cloud's first point into
    // a header. (A binary STL's 80-byte header is left as it is.)
    const BOM: &[u8] = b"\xef\xbb\xbf";
    let bytes = match extension.as_str() {
        "obj" | "ply" | "xyz" | "csv" | "txt" => bytes.strip_prefix(BOM).unwrap_or(&bytes),
        _ => &bytes[..],
    };
    // The mesh readers are other people's code: a panic in one is reported as a bad file,
    // never let through.
    let parsed = std::panic::catch_unwind(|| match extension.as_str() {
        "obj" => obj::read(path, bytes),
        "stl" => stl::read(path, bytes),
        "ply" => ply::read(path, bytes),
        "xyz" | "csv" | "txt" => xyz::read(path, bytes),
        other => Err(fail(
            path,
            None,
            format!(
                "unknown kind of shape file '.{other}'; allowed: {KNOWN_EXTENSIONS} (by extension)"
            ),
        )),
    })
    .unwrap_or_else(|_| {
        Err(fail(
            path,
            None,
            "cannot be parsed (the reader failed)".into(),
        ))
    })?;
    if parsed.is_empty() {
        return Err(fail(path, None, "holds no grain shape".into()));
    }
    parsed
        .into_iter()
        .map(|raw| checked(path, name, raw))
        .collect()
}

/// A raw shape checked and measured.
fn checked(path: &Path, name: &str, raw: RawShape) -> Result<FileShape, ScenarioError> {
    let what = format!("shape '{}'", raw.object);
    if raw.points.is_empty() {
        return Err(fail(
            path,
            raw.line,
            format!("{what} is empty: it has no points"),
        ));
    }
    if let Some(i) = raw.points.iter().position(|p| !p.is_finite()) {
        return Err(fail(
            path,
            raw.line,
            format!(
                "{what}: point {i} has a non-finite coordinate {:?}",
                raw.points[i]
            ),
        ));
    }
    let hull = ConvexPolyhedron::from_points(&raw.points).map_err(|e| {
        fail(
            path,
            raw.line,
            format!(
                "{what} is no solid grain ({} points): {e}",
                raw.points.len()
            ),
        )
    })?;
    let mesh_volume = raw
        .triangles
        .as_ref()
        .and_then(|t| closed_mesh_volume(&raw.points, t));
    Ok(FileShape {
        file: name.to_string(),
        object: raw.object,
        hull_vertices: hull.vertices().len(),
        hull_volume: hull.volume(),
        mesh_volume,
        points: raw.points,
    })
}

/// A shape file error.
pub(crate) fn fail(path: &Path, line: Option<usize>, problem: String) -> ScenarioError {
    ScenarioError::ShapeFile {
        path: PathBuf::from(path),
        line,
        problem,
    }
}

/// The text of a file that must be text, or the line of its first byte that is not UTF-8.
pub(crate) fn text<'a>(path: &Path, bytes: &'a [u8]) -> Result<&'a str, ScenarioError> {
    std::str::from_utf8(bytes).map_err(|e| {
        let good = &bytes[..e.valid_up_to()];
        let line = good.iter().filter(|&&b| b == b'\n').count() + 1;
        fail(path, Some(line), "is not text (not UTF-8)".into())
    })
}

/// Three coordinates from the start of `fields`, each a finite number.
pub(crate) fn coordinates<'a>(
    path: &Path,
    line: usize,
    mut fields: impl Iterator<Item = &'a str>,
    what: &str,
) -> Result<DVec3, ScenarioError> {
    let mut c = [0.0; 3];
    for (k, slot) in c.iter_mut().enumerate() {
        let field = fields.next().ok_or_else(|| {
            fail(
                path,
                Some(line),
                format!("{what}: {k} coordinates where 3 (x y z) are needed"),
            )
        })?;
        let value: f64 = field.parse().map_err(|_| {
            fail(
                path,
                Some(line),
                format!("{what}: '{field}' is not a number"),
            )
        })?;
        if !value.is_finite() {
            return Err(fail(
                path,
                Some(line),
                format!("{what}: coordinate '{field}' is not finite"),
            ));
        }
        *slot = value;
    }
    Ok(DVec3::from_array(c))
}
