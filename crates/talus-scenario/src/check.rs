//! `talus check`: validate a scenario without running it and report what the run would be —
//! grain count, critical time step, memory — with warnings about choices that are legal but
//! probably not meant.

use std::path::Path;

use serde::Serialize;
use talus_sim::force::ForceModelRegistry;

use crate::build::build;
use crate::error::ScenarioError;
use crate::grain_shapes::FileShapes;
use crate::number::short;
use crate::pairs::{self, PairReport};
use crate::resources::{DISK_LIMIT, bytes, estimate, memory_shortfall};
use crate::schema::{Placement, Scenario, WallShape};
use crate::seeds::{seed_count, seeds_of};
use crate::validate::validate;

/// Checkpoints closer than this many steps cost more than the steps between them (each one
/// encodes the whole state and syncs it to disk).
const CHEAP_CHECKPOINT_STEPS: f64 = 100.0;
/// Orifice widths below this many grain diameters tend to clog (Beverloo's law holds for
/// wider ones).
const CLOGGING_ORIFICE: f64 = 5.0;

/// What `talus check` reports.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckReport {
    /// Scenario name.
    pub scenario: String,
    /// Grains in all, once every pour is done.
    pub grains: usize,
    /// Of those, grains placed at the start.
    pub placed: usize,
    /// Engine walls (a box or hopper counts its plates).
    pub walls: usize,
    /// Time step (s).
    pub dt: f64,
    /// Critical time step of the force model for the lightest grain (s).
    pub critical_dt: f64,
    /// Steps to the end time.
    pub steps: u64,
    /// Grain-steps in all, over every seed the scenario is run with (a measure of the run's
    /// cost).
    pub grain_steps: f64,
    /// The seeds the scenario is run with (its own, then its companion runs').
    pub seeds: Vec<u64>,
    /// Estimated memory of the run at its peak (bytes).
    pub memory_bytes: u64,
    /// Estimated disk the run writes (bytes).
    pub disk_bytes: u64,
    /// Frames the run writes.
    pub frames: u64,
    /// The contact coefficients of every pair of materials that can meet.
    pub pairs: Vec<PairReport>,
    /// Legal choices that are probably not meant.
    pub warnings: Vec<String>,
    /// Every shape read from a file, and what its convex hull adds to it.
    pub file_shapes: Vec<FileShapeReport>,
}

/// A shape read from a file: a grain is the convex hull of its points, which adds volume
/// to a non-convex input. Volumes are in the file's units cubed, before any scaling.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FileShapeReport {
    /// The population.
    pub population: String,
    /// The file, as the scenario names it.
    pub file: String,
    /// The shape's name within the file.
    pub object: String,
    /// Points read.
    pub points: usize,
    /// Vertices of the convex hull.
    pub hull_vertices: usize,
    /// Volume of the convex hull.
    pub hull_volume: f64,
    /// Volume the input encloses: known for a closed mesh, unknown (`None`) for a point
    /// cloud or an open mesh.
    pub input_volume: Option<f64>,
    /// Volume the hull adds to the input (hull − input), where the input's is known.
    pub added_volume: Option<f64>,
    /// The added volume as a fraction of the input's.
    pub added_fraction: Option<f64>,
}

/// Checks `scenario` (read from `path`): every validation failure, the memory the run
/// needs against what the machine has (before anything is built, so that a run far too
/// large for the machine is reported, not attempted), then the build (force model, critical
/// time step, placement; the grains are placed and checked but not added to a world).
///
/// # Errors
/// Every problem found; the build is only tried when validation passes and the memory
/// suffices.
pub fn check(
    scenario: &Scenario,
    path: &Path,
    registry: &ForceModelRegistry,
) -> Result<CheckReport, Vec<ScenarioError>> {
    let errors = validate(scenario, path);
    if !errors.is_empty() {
        return Err(errors);
    }
    let needs = estimate(scenario);
    if let Some(problem) = memory_shortfall(&needs) {
        return Err(vec![ScenarioError::Resources {
            path: path.to_path_buf(),
            problem,
        }]);
    }
    let exp = build(scenario, path, registry, 1, false).map_err(|e| vec![e])?;
    let s = scenario;
    let world = &exp.world;
    let grains = exp.total_grains();
    let placed: usize = s
        .grains
        .iter()
        .filter(|p| !matches!(p.placement, Placement::Pour { .. } | Placement::Drip { .. }))
        .map(|p| p.count)
        .sum();
    let steps = (s.time.end / s.time.dt).round() as u64;

    let mut warnings = Vec::new();
    let ratio = s.time.dt / exp.critical_dt;
    if ratio < 0.02 {
        warnings.push(format!(
            "time.dt is only {} of the critical time step {} s: the run could take {}× fewer steps",
            short(ratio),
            short(exp.critical_dt),
            short((0.2 / ratio).round())
        ));
    }
    for (name, interval) in [
        ("time.output_interval", Some(s.time.output_interval)),
        ("time.checkpoint_interval", s.time.checkpoint_interval),
        ("outputs.frame_interval", s.outputs.frame_interval),
    ] {
        if let Some(t) = interval {
            let steps = t / s.time.dt;
            if (steps - steps.round()).abs() > 1e-6 * steps {
                warnings.push(format!(
                    "{name} = {} s is not a whole number of steps; it is rounded to {} steps",
                    short(t),
                    short(steps.round())
                ));
            }
            if t > s.time.end {
                warnings.push(format!(
                    "{name} = {} s is longer than the run ({} s)",
                    short(t),
                    short(s.time.end)
                ));
            }
        }
    }
    // Beverloo's law and the clogging threshold speak of a typical grain: the diameter of
    // the sphere of the generating ellipsoid's volume (of the largest grain's, for file
    // shapes), for the coarsest population.
    let d = s
        .grains
        .iter()
        .zip(&exp.populations)
        .map(|(p, pop)| match p.ellipsoid() {
            Some((_, a)) => 2.0 * (a.0 * a.1 * a.2).cbrt(),
            None => pop
                .shapes
                .iter()
                .filter_map(|id| world.shapes().get(*id).ok())
                .map(|shape| 2.0 * shape.equivalent_radius)
                .fold(0.0, f64::max),
        })
        .fold(0.0, f64::max);
    for w in &s.walls {
        if let WallShape::Hopper { orifice, .. } = &w.shape
            && *orifice < CLOGGING_ORIFICE * d
        {
            warnings.push(format!(
                "wall '{}': the orifice is {:.1} typical grain diameters wide; below about {CLOGGING_ORIFICE} the flow tends to clog",
                w.name,
                orifice / d
            ));
        }
    }
    if s.time.checkpoint_interval.is_none() && steps as f64 * grains as f64 > 1e8 {
        warnings.push(
            "a long run without time.checkpoint_interval: if it is stopped, it starts over".into(),
        );
    }
    let most_vertices = exp
        .populations
        .iter()
        .flat_map(|pop| &pop.shapes)
        .filter_map(|id| world.shapes().get(*id).ok())
        .map(|shape| shape.body.vertices().len())
        .max()
        .unwrap_or(0);
    if most_vertices > 200 {
        warnings.push(
            "grains with more than 200 vertices: the narrow phase is fast at any count, but bounding boxes by min-max grow with it (bounding: Ellipsoid is O(1))".into(),
        );
    }
    if s.outputs
        .frame_interval
        .is_some_and(|f| f < s.time.end / 2000.0)
    {
        warnings.push("more than 2000 frames will be written".into());
    }
    if let Some(c) = s.time.checkpoint_interval
        && c < CHEAP_CHECKPOINT_STEPS * s.time.dt
    {
        warnings.push(format!(
            "time.checkpoint_interval = {} s is {} steps: each checkpoint writes and syncs the \
             whole state (about {}), so the run will spend more time writing checkpoints than \
             stepping",
            short(c),
            short((c / s.time.dt).round()),
            bytes(needs.checkpoint_bytes)
        ));
    }
    if needs.disk_bytes > DISK_LIMIT {
        warnings.push(format!(
            "the run would write about {} ({} frames {}); `talus run` refuses more than {} \
             without --allow-large",
            bytes(needs.disk_bytes),
            needs.frames,
            bytes(needs.frame_bytes),
            bytes(DISK_LIMIT)
        ));
    }
    for (p, pop) in s.grains.iter().enumerate() {
        if let Placement::Pour { rate, start, .. } = pop.placement {
            let last = start + (pop.count as f64 - 1.0) / rate;
            if last > s.time.end {
                warnings.push(format!(
                    "grains[{p}]: the last of the {} poured grains is due at t = {} s, after the \
                     end of the run ({} s); the run will be reported as suspect",
                    pop.count,
                    short(last),
                    short(s.time.end)
                ));
            }
        }
    }
    for w in &s.walls {
        if let Some(t) = w.removed_at
            && t >= s.time.end
            && s.measurements.iter().any(|m| {
                matches!(m, crate::schema::MeasurementSpec::Discharge { gate, .. } if *gate == w.name)
            })
        {
            warnings.push(format!(
                "the gate '{}' opens at t = {} s, not before the end of the run ({} s): nothing \
                 is discharged",
                w.name,
                short(t),
                short(s.time.end)
            ));
        }
    }
    Ok(CheckReport {
        scenario: s.name.clone(),
        grains,
        placed,
        walls: world.walls().len(),
        dt: s.time.dt,
        critical_dt: exp.critical_dt,
        steps,
        grain_steps: steps as f64 * grains as f64 * seed_count(s) as f64,
        seeds: seeds_of(s),
        memory_bytes: needs.memory_bytes,
        disk_bytes: needs.disk_bytes,
        frames: needs.frames,
        pairs: pairs::report(registry, s),
        warnings,
        file_shapes: file_shape_reports(s, &exp.file_shapes),
    })
}

/// The hull report of every file shape, population by population.
fn file_shape_reports(s: &Scenario, shapes: &FileShapes) -> Vec<FileShapeReport> {
    s.grains
        .iter()
        .zip(&shapes.0)
        .flat_map(|(p, shapes)| {
            shapes.iter().map(|shape| FileShapeReport {
                population: p.name.clone(),
                file: shape.file.clone(),
                object: shape.object.clone(),
                points: shape.points.len(),
                hull_vertices: shape.hull_vertices,
                hull_volume: shape.hull_volume,
                input_volume: shape.mesh_volume,
                added_volume: shape.added_volume(),
                added_fraction: shape.mesh_volume.map(|v| (shape.hull_volume - v) / v),
            })
        })
        .collect()
}
