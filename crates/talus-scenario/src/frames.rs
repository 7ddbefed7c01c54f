//! ParaView frames: the grains as polyhedra and the walls present at the frame's time, one
//! `.vtu` file each per frame, listed in a `.pvd` collection by the run. In a run whose
//! grains are split between processes, each process writes its own grains as a piece
//! (`grains_NNNNNN_pK.vtu`) and the first the parallel file over the pieces
//! (`grains_NNNNNN.pvtu`), so that no process gathers the grains of the others.

use std::path::Path;

use talus_geom::generate::rectangular_box;
use talus_geom::glam::{DQuat, DVec3};
use talus_geom::{Aabb, ConvexPolyhedron, Pose};
use talus_sim::GrainState;
use talus_sim::wall::WallGeometry;

use crate::build::Experiment;
use crate::error::ScenarioError;
use crate::output::RunDir;
use crate::output::vtk::{
    GrainFrame, WallFrame, write_grains_pvtu, write_grains_vtu, write_walls_vtu,
};
use crate::population_ids::PopulationsById;
use crate::run::io_error;

/// The two files of frame `index`, relative to the output directory: grains (the parallel
/// file over the pieces when `in_pieces`), then walls.
#[must_use]
pub fn frame_files(index: usize, in_pieces: bool) -> Vec<String> {
    let grains = if in_pieces { "pvtu" } else { "vtu" };
    vec![
        format!("frames/grains_{index:06}.{grains}"),
        format!("frames/walls_{index:06}.vtu"),
    ]
}

/// The piece of frame `index` that process `rank` writes, relative to the output directory.
#[must_use]
pub fn frame_piece(index: usize, rank: usize) -> String {
    format!("frames/grains_{index:06}_p{rank}.vtu")
}

/// Removes from `dir` what an earlier writing of frame `index` left in the other layout (a
/// run resumed on another number of processes writes the frames after its checkpoint
/// again): the grains' file of the other form, and every piece from number `pieces` on
/// (all of them when the frame is now one file, `pieces` = 0). `files` are the frame's
/// files now. Only files the run's manifest lists are touched.
///
/// # Errors
/// [`ScenarioError::Io`] if a file cannot be removed.
pub fn remove_other_layout(
    dir: &RunDir,
    index: usize,
    files: &[String],
    pieces: usize,
) -> Result<(), ScenarioError> {
    let other_form = frame_files(index, pieces == 0).swap_remove(0);
    // Pieces are numbered from 0 without gaps: the first one not listed ends them.
    let stale_pieces = (pieces..)
        .map(|k| frame_piece(index, k))
        .take_while(|piece| dir.lists(piece));
    for file in std::iter::once(other_form).chain(stale_pieces) {
        if !files.contains(&file) {
            dir.remove_own(&file)?;
        }
    }
    Ok(())
}

/// The box around the grains' centres; `None` without grains. The box around several such
/// boxes is that of their corners, to the bit (minimum and maximum are exact).
#[must_use]
pub fn grain_region(states: &[GrainState]) -> Option<Aabb> {
    Aabb::from_points(states.iter().map(|g| g.pose.position))
}

/// Writes a frame into `files` (relative to `out`, as [`frame_files`] names them): the
/// grains `states` (all of the run's), then the walls. A half-space wall is drawn as a
/// square plate around the grains.
///
/// # Errors
/// [`ScenarioError::Io`] if a file cannot be written.
pub fn write_frame(
    exp: &Experiment,
    states: &[GrainState],
    out: &Path,
    files: &[String],
    grain_population: &PopulationsById,
) -> Result<(), ScenarioError> {
    let [grain_file, wall_file] = files else {
        return Err(ScenarioError::Engine {
            path: out.to_path_buf(),
            context: "frame".into(),
            message: format!("a frame has two files, not {}", files.len()),
        });
    };
    write_grains(exp, states, &out.join(grain_file), grain_population)?;
    write_walls(exp, grain_region(states), &out.join(wall_file))
}

/// Writes the grains `states` (in that order) as one `.vtu` file (a frame, or a piece of
/// one) at `path`.
///
/// # Errors
/// [`ScenarioError::Io`] if the file cannot be written.
pub fn write_grains(
    exp: &Experiment,
    states: &[GrainState],
    path: &Path,
    grain_population: &PopulationsById,
) -> Result<(), ScenarioError> {
    let shapes = exp.world.shapes();
    let grains: Vec<GrainFrame> = states
        .iter()
        .filter_map(|g| {
            let shape = shapes.get(g.shape).ok()?;
            Some(GrainFrame {
                id: g.id.0,
                material: u32::from(g.material.0),
                population: grain_population.get(g.id).unwrap_or(0),
                shape: &shape.body,
                pose: g.pose,
                velocity: g.velocity,
                angular_velocity: g.angular_velocity,
            })
        })
        .collect();
    write_grains_vtu(path, exp.world.time(), &grains).map_err(|source| io_error(path, source))
}

/// Writes the parallel file of a frame whose grains are in `pieces` (named relative to the
/// output directory, as [`frame_piece`] names them) at `path`.
///
/// # Errors
/// [`ScenarioError::Io`] if the file cannot be written.
pub fn write_grain_pieces(path: &Path, pieces: &[String]) -> Result<(), ScenarioError> {
    // The parallel file names its pieces relative to its own folder, `frames/`.
    let names: Vec<String> = pieces
        .iter()
        .map(|p| p.rsplit('/').next().unwrap_or(p).to_string())
        .collect();
    write_grains_pvtu(path, &names).map_err(|source| io_error(path, source))
}

/// Writes the walls present at the frame's time at `path`; a half-space is drawn as a
/// square plate around `region`, the box of the grains' centres (see [`grain_region`]).
///
/// # Errors
/// [`ScenarioError::Io`] if the file cannot be written.
pub fn write_walls(
    exp: &Experiment,
    region: Option<Aabb>,
    path: &Path,
) -> Result<(), ScenarioError> {
    let world = &exp.world;
    let time = world.time();
    // The region of the grains sets the size of the plates that stand for half-spaces.
    let (center, size) = match region {
        Some(Aabb { min, max }) => (0.5 * (min + max), (max - min).length().max(1e-3) * 1.5),
        None => (DVec3::ZERO, 1.0),
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

    write_walls_vtu(path, time, &walls).map_err(|source| io_error(path, source))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A frame written again in the other layout leaves none of the earlier one's files
    /// behind, and nothing else is touched.
    #[test]
    fn a_frame_written_again_removes_the_files_of_its_other_layout() {
        let root = std::env::temp_dir().join(format!("talus-frames-layout-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let mut dir = RunDir::create(&root, false).unwrap();
        let earlier = [
            "frames/grains_000001.vtu",
            "frames/grains_000001.pvtu",
            "frames/grains_000001_p0.vtu",
            "frames/grains_000001_p1.vtu",
            "frames/grains_000001_p2.vtu",
            "frames/walls_000001.vtu",
            "frames/grains_000002_p0.vtu",
        ];
        let write_all = |dir: &mut RunDir| {
            for file in earlier {
                let path = dir.claim(file).unwrap();
                std::fs::write(path, file).unwrap();
            }
        };
        let present = |dir: &RunDir| -> Vec<&str> {
            earlier
                .iter()
                .copied()
                .filter(|f| dir.join(f).exists())
                .collect()
        };
        write_all(&mut dir);
        // A user's file beside them, under a name talus does not write.
        std::fs::write(root.join("frames/grains_000001_p3.vtu.bak"), "mine").unwrap();

        // Now in two pieces: the single file and the third piece go.
        remove_other_layout(&dir, 1, &frame_files(1, true), 2).unwrap();
        assert_eq!(
            present(&dir),
            [
                "frames/grains_000001.pvtu",
                "frames/grains_000001_p0.vtu",
                "frames/grains_000001_p1.vtu",
                "frames/walls_000001.vtu",
                "frames/grains_000002_p0.vtu",
            ]
        );

        // Now one file: the parallel file and every piece go.
        write_all(&mut dir);
        remove_other_layout(&dir, 1, &frame_files(1, false), 0).unwrap();
        assert_eq!(
            present(&dir),
            [
                "frames/grains_000001.vtu",
                "frames/walls_000001.vtu",
                "frames/grains_000002_p0.vtu",
            ]
        );
        assert_eq!(
            std::fs::read_to_string(root.join("frames/grains_000001_p3.vtu.bak")).unwrap(),
            "mine"
        );
        drop(dir);
        std::fs::remove_dir_all(&root).unwrap();
    }
}
