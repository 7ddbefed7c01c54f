//! What the contact tests build their worlds from.
// Each test file uses its own share of these.
#![allow(dead_code)]

pub mod gas;

use talus_geom::glam::DVec3;
use talus_geom::{Pose, generate};
use talus_sim::material::{Material, MaterialId};
use talus_sim::shape::ShapeId;
use talus_sim::wall::{Motion, Wall, WallGeometry};
use talus_sim::{SimParams, World};

/// Density of quartz (kg/m³).
pub const DENSITY: f64 = 2650.0;

/// A world of `params` with a cube of `edge` and quartz.
pub fn cube_world(params: SimParams, edge: f64) -> (World, ShapeId, MaterialId) {
    let mut w = World::new(params).unwrap();
    let cube = w
        .add_shape("cube", &generate::cube(edge).unwrap(), None)
        .unwrap();
    let quartz = w
        .add_material(Material::new("quartz", DENSITY).unwrap())
        .unwrap();
    (w, cube, quartz)
}

/// A fixed half-space wall whose plane passes through `point`, `normal` pointing out of it.
pub fn half_space(name: &str, point: DVec3, normal: DVec3) -> Wall {
    Wall::new(
        name,
        WallGeometry::HalfSpace { normal },
        Pose::from_translation(point),
        Motion::Fixed,
        None,
    )
    .unwrap()
}
