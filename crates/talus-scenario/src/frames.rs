//! ParaView frames: the grains as polyhedra and the walls present at the frame's time, one
//! `.vtu` file each per frame, listed in a `.pvd` collection by the run.

use std::path::Path;

use talus_geom::generate::rectangular_box;
use talus_geom::glam::{DQuat, DVec3};
use talus_geom::{ConvexPolyhedron, Pose};
use talus_sim::GrainState;
use talus_sim::wall::WallGeometry;

use crate::build::Experiment;
use crate::error::ScenarioError;
use crate::output::vtk::{GrainFrame, WallFrame, write_grains_vtu, write_walls_vtu};
use crate::run::io_error;

/// The two files of frame `index`, relative to the output directory: grains, then walls.
#[must_use]
pub fn frame_files(index: usize) -> Vec<String> {
    vec![
        format!("frames/grains_{index:06}.vtu"),
        format!("frames/walls_{index:06}.vtu"),
    ]
}

/// Writes a frame into `files` (relative to `out`, as [`frame_files`] names them): the
/// grains `states` (all of the run's: gathered from every process in a decomposed run),
/// then the walls. A half-space wall is drawn as a square plate around the grains.
///
/// # Errors
/// [`ScenarioError::Io`] if a file cannot be written.
pub fn write_frame(
    exp: &Experiment,
    states: &[GrainState],
    out: &Path,
    files: &[String],
    grain_population: &[u32],
) -> Result<(), ScenarioError> {
    let world = &exp.world;
    let time = world.time();
    let shapes = world.shapes();
    let grains: Vec<GrainFrame> = states
        .iter()
        .filter_map(|g| {
            let shape = shapes.get(g.shape).ok()?;
            Some(GrainFrame {
                id: g.id.0,
                material: u32::from(g.material.0),
                population: grain_population.get(g.id.0 as usize).copied().unwrap_or(0),
                shape: &shape.body,
                pose: g.pose,
                velocity: g.velocity,
                angular_velocity: g.angular_velocity,
            })
        })
        .collect();

    // The region of the grains sets the size of the plates that stand for half-spaces.
    let (lo, hi) = states.iter().fold(
        (DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY)),
        |(lo, hi), g| (lo.min(g.pose.position), hi.max(g.pose.position)),
    );
    let (center, size) = if lo.cmple(hi).all() {
        (0.5 * (lo + hi), (hi - lo).length().max(1e-3) * 1.5)
    } else {
        (DVec3::ZERO, 1.0)
    };
    let mut plates: Vec<(usize, ConvexPolyhedron, Pose)> = Vec::new();
    for (w, wall) in world.walls().iter().enumerate() {
        if !wall.is_present(time) {
            continue;
        }
        if let WallGeometry::HalfSpace { normal } = &wall.geometry {
            let state = wall.state(time);
            let n = state.pose.rotation * *normal;
            let thickness = 0.01 * size;
            let foot = center - n * n.dot(center - state.pose.position);
            if let Ok(plate) = rectangular_box(DVec3::new(size, size, thickness)) {
                let pose = Pose::new(
                    foot - n * (0.5 * thickness),
                    DQuat::from_rotation_arc(DVec3::Z, n),
                );
                plates.push((w, plate, pose));
            }
        }
    }
    let mut walls: Vec<WallFrame> = Vec::new();
    for (w, wall) in world.walls().iter().enumerate() {
        if !wall.is_present(time) {
            continue;
        }
        let state = wall.state(time);
        match &wall.geometry {
            WallGeometry::Body(poly) => walls.push(WallFrame {
                name: &wall.name,
                index: w as u32,
                shape: poly,
                pose: state.pose,
                velocity: state.velocity,
            }),
            WallGeometry::HalfSpace { .. } => {
                if let Some((_, plate, pose)) = plates.iter().find(|p| p.0 == w) {
                    walls.push(WallFrame {
                        name: &wall.name,
                        index: w as u32,
                        shape: plate,
                        pose: *pose,
                        velocity: state.velocity,
                    });
                }
            }
        }
    }

    let [grain_file, wall_file] = files else {
        return Err(ScenarioError::Engine {
            path: out.to_path_buf(),
            context: "frame".into(),
            message: format!("a frame has two files, not {}", files.len()),
        });
    };
    let path = out.join(grain_file);
    write_grains_vtu(&path, time, &grains).map_err(|source| io_error(&path, source))?;
    let path = out.join(wall_file);
    write_walls_vtu(&path, time, &walls).map_err(|source| io_error(&path, source))
}
