//! The file shapes of a scenario's populations: read once when a run starts, kept in the
//! built experiment and in every checkpoint, so that a resumed run uses the shapes the run
//! started with even if a file has changed or gone since.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::ScenarioError;
use crate::schema::{PopulationSpec, Scenario, ShapeScale};
use crate::shape_file::{self, FileShape};

/// Default number of distinct shapes of a population with a size spread.
const DEFAULT_DISTINCT_SHAPES: usize = 32;

/// The file shapes of every population, in scenario order; a population of the ellipsoid
/// generator has none.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FileShapes(pub Vec<Vec<FileShape>>);

/// Reads the shape files of every population of `scenario` (read from `path`: a shape
/// file's path is relative to the scenario file's directory).
///
/// # Errors
/// [`ScenarioError::ShapeFile`] for the first file that cannot be used.
pub fn load(scenario: &Scenario, path: &Path) -> Result<FileShapes, ScenarioError> {
    let dir = path.parent().unwrap_or(Path::new(""));
    let mut all = Vec::with_capacity(scenario.grains.len());
    for p in &scenario.grains {
        let mut shapes = Vec::new();
        if let Some(spec) = &p.shape {
            for name in spec.paths() {
                shapes.extend(shape_file::read(&dir.join(name), name)?);
            }
        }
        all.push(shapes);
    }
    Ok(FileShapes(all))
}

/// The diameter of the sphere of volume `volume`.
#[must_use]
pub fn equivalent_diameter(volume: f64) -> f64 {
    (6.0 * volume / std::f64::consts::PI).cbrt()
}

/// The factor by which `shape`'s coordinates are multiplied for `scale` (before the size
/// spread).
#[must_use]
pub fn scale_factor(shape: &FileShape, scale: ShapeScale) -> f64 {
    match scale {
        ShapeScale::Diameter(d) => d / equivalent_diameter(shape.hull_volume),
        ShapeScale::Factor(f) => f,
        ShapeScale::KeepSize => 1.0,
    }
}

/// The number of distinct shapes a population cycles through, given `file_shapes` shapes
/// from its files (0 for the ellipsoid generator): `distinct_shapes` if given; else, with
/// files, each file shape once without a size spread and at least 32 with one; else 32;
/// never more than `count`.
#[must_use]
pub fn distinct_shapes(spec: &PopulationSpec, file_shapes: usize) -> usize {
    let default = match file_shapes {
        0 => DEFAULT_DISTINCT_SHAPES,
        n if spec.size_spread == 0.0 => n,
        n => n.max(DEFAULT_DISTINCT_SHAPES),
    };
    spec.distinct_shapes.unwrap_or(default.min(spec.count))
}
