//! A scenario as an engine world: shapes of every population, materials, the force model,
//! walls, and the grains placed at the start; pouring populations get their sites.
//!
//! The build is deterministic: the same scenario gives the same world, bit for bit. A
//! resumed run rebuilds the world this way and then restores the dynamic state from its
//! checkpoint.

use std::path::{Path, PathBuf};

use rand::Rng;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use talus_geom::generate::{ellipsoid_grain, rectangular_box};
use talus_geom::glam::{DMat3, DQuat, DVec3};
use talus_geom::{BoundingEllipsoid, ConvexPolyhedron, Pose};
use talus_sim::broad::BroadPhaseKind;
use talus_sim::force::{
    Coefficients, ForceModel, ForceModelError, ForceModelRegistry, Limit, PartChoice, Role,
};
use talus_sim::integrate::IntegratorKind;
use talus_sim::material::{Material, MaterialId};
use talus_sim::shape::ShapeId;
use talus_sim::wall::{WallGeometry, WallId};
use talus_sim::{BoundingMethod, DEFAULT_RENUMBER_EVERY, GrainDesc, GrainId, SimParams, World};

use crate::error::ScenarioError;
use crate::fill::reachable_sites;
use crate::grain_shapes::{self, FileShapes};
use crate::pairs;
use crate::placement::{
    Lattice, MAX_SITES, PlacedGrain, lattice_site_count, lattice_sites, overlaps_wall, penetrates,
};
use crate::population_ids::PopulationsById;
use crate::schema::{
    Bounding, BroadPhase, ForceModelSpec, Integrator, Orientation, Placement, Scenario,
};
use crate::start_grains::{StartGrains, StartSites};
use crate::validate::validate;
use crate::walls::{build_walls, v3};

/// Default extra space between lattice sites, relative to the largest grain diameter.
const DEFAULT_GAP: f64 = 0.05;
/// Default jitter of lattice sites, relative to the free space.
const DEFAULT_JITTER: f64 = 0.5;

/// A population in the built world.
#[derive(Debug, Clone)]
pub struct Population {
    /// Its name.
    pub name: String,
    /// Its shapes; grain `j` has shape `shapes[j % shapes.len()]`.
    pub shapes: Vec<ShapeId>,
    /// Its material.
    pub material: MaterialId,
    /// Its grains placed so far, in order, removed ones dropped: on a single process all of
    /// them; in a decomposed run those this process added (at the start or poured) or
    /// restored, not followed as they move between the processes (the population of any
    /// grain id of the run is the runner's [`crate::population_ids::PopulationsById`]).
    pub grains: Vec<GrainId>,
    /// Grains it has in all.
    pub count: usize,
    /// Initial velocity.
    pub velocity: DVec3,
    /// Largest bounding radius of its shapes.
    pub radius: f64,
    /// The extent along x, y and z of the box that holds any of its grains unturned (as
    /// generated, or as in its file), centred at the grain's centre of mass.
    pub aligned_extent: DVec3,
    /// How it is poured, if it is.
    pub pour: Option<Pour>,
    /// How it is dripped, if it is.
    pub drip: Option<Drip>,
}

/// A population that is poured during the run.
#[derive(Debug, Clone)]
pub struct Pour {
    /// Lattice sites of the pouring region, in the order they are tried.
    pub sites: Vec<DVec3>,
    /// Grains per second.
    pub rate: f64,
    /// Time of the first grain.
    pub start: f64,
    /// Free space around a grain at a site along x, y, z, for jitter.
    pub slack: DVec3,
    /// Lower corner of the region.
    pub lo: DVec3,
    /// Upper corner of the region.
    pub hi: DVec3,
}

/// A population dripped one grain at a time onto a heap kept at the edge of avalanching
/// (§1.2.1; see [`crate::schema::Placement::Drip`]).
#[derive(Debug, Clone)]
pub struct Drip {
    /// Release point.
    pub at: DVec3,
    /// Speed of the fastest grain below which the next grain is released (m/s).
    pub threshold_speed: f64,
    /// Largest horizontal offset of a release from `at` (m).
    pub jitter: f64,
    /// Fewest steps between two releases (at least 1).
    pub interval_steps: u64,
    /// Time of the first release (s).
    pub start: f64,
}

/// A scenario wall in the built world: the engine walls it is made of.
#[derive(Debug, Clone)]
pub struct WallGroup {
    /// The scenario's name.
    pub name: String,
    /// Its parts.
    pub parts: Vec<WallId>,
}

/// A scenario built into a world.
pub struct Experiment {
    /// The scenario.
    pub scenario: Scenario,
    /// The file it came from (for messages).
    pub path: PathBuf,
    /// The world.
    pub world: World,
    /// Populations, in scenario order.
    pub populations: Vec<Population>,
    /// Walls, in scenario order.
    pub walls: Vec<WallGroup>,
    /// The critical time step over all populations' shapes and materials.
    pub critical_dt: f64,
    /// The shapes read from files, by population (kept in checkpoints).
    pub file_shapes: FileShapes,
    /// Grains placed by the build but not added to the world yet, per population in the
    /// order they are to be added (each grain found from its number,
    /// [`Experiment::start_grains`]).
    pub(crate) start: Vec<StartGrains>,
}

impl Experiment {
    /// Total number of grains the scenario has once every pour is done.
    #[must_use]
    pub fn total_grains(&self) -> usize {
        self.populations.iter().map(|p| p.count).sum()
    }
}

/// What a build does with the grains it places.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum GrainsAtBuild {
    /// Adds them to the world.
    Add,
    /// Keeps their rule in [`Experiment::start`] for [`Experiment::check_unplaced`] and
    /// [`Experiment::add_unplaced`].
    Defer,
    /// Places none (a resumed run restores its grains from its checkpoint).
    Leave,
}

impl GrainsAtBuild {
    fn from_place(place_grains: bool) -> GrainsAtBuild {
        if place_grains {
            GrainsAtBuild::Add
        } else {
            GrainsAtBuild::Leave
        }
    }
}

/// Builds `scenario` (read from `path`) with the force models of `registry`, using
/// `threads` worker threads (0: all cores).
///
/// With `place_grains` false, no grain is added (a resumed run restores them from its
/// checkpoint instead); shapes, materials, walls and pouring sites are built as always.
///
/// Shape files are read here, relative to the directory of `path`.
///
/// # Errors
/// Every validation failure ([`ScenarioError::Invalid`], the first one if several), a shape
/// file that cannot be used ([`ScenarioError::ShapeFile`]), an unknown force model or
/// coefficient, a time step above the critical one, a region too small for its grains, and
/// grains that start inside a wall or another grain.
pub fn build(
    scenario: &Scenario,
    path: &Path,
    registry: &ForceModelRegistry,
    threads: usize,
    place_grains: bool,
) -> Result<Experiment, ScenarioError> {
    let mut exp = build_from_files(scenario, path, registry, threads, GrainsAtBuild::Defer)?;
    // No grain may start inside a wall or another grain, whether it is added or not.
    exp.check_unplaced(None)?;
    if place_grains {
        exp.add_unplaced(&mut PopulationsById::default())?;
    } else {
        exp.start = Vec::new();
    }
    Ok(exp)
}

/// As [`build`], with the grains placed but neither checked nor added: kept for
/// [`Experiment::check_unplaced`] and [`Experiment::add_unplaced`].
pub(crate) fn build_deferred(
    scenario: &Scenario,
    path: &Path,
    registry: &ForceModelRegistry,
    threads: usize,
) -> Result<Experiment, ScenarioError> {
    build_from_files(scenario, path, registry, threads, GrainsAtBuild::Defer)
}

/// The build with the populations' shape files read (after the scenario is validated, so
/// that a scenario error comes before a file error).
pub(crate) fn build_from_files(
    scenario: &Scenario,
    path: &Path,
    registry: &ForceModelRegistry,
    threads: usize,
    grains: GrainsAtBuild,
) -> Result<Experiment, ScenarioError> {
    if let Some(first) = validate(scenario, path).into_iter().next() {
        return Err(first);
    }
    let file_shapes = grain_shapes::load(scenario, path)?;
    build_parts(scenario, path, file_shapes, registry, threads, grains)
}

/// As [`build`], with the populations' file shapes given (those of a checkpoint) instead
/// of read from their files; with `place_grains` false no grain is placed at all, nor
/// checked (a resumed run restores its grains, checked when its run started).
///
/// # Errors
/// As [`build`]; file shapes that do not fit the scenario's populations are an
/// [`ScenarioError::Engine`] error.
pub fn build_with_shapes(
    scenario: &Scenario,
    path: &Path,
    file_shapes: FileShapes,
    registry: &ForceModelRegistry,
    threads: usize,
    place_grains: bool,
) -> Result<Experiment, ScenarioError> {
    build_parts(
        scenario,
        path,
        file_shapes,
        registry,
        threads,
        GrainsAtBuild::from_place(place_grains),
    )
}

/// The build, doing `grains` with the grains it places.
fn build_parts(
    scenario: &Scenario,
    path: &Path,
    file_shapes: FileShapes,
    registry: &ForceModelRegistry,
    threads: usize,
    grains: GrainsAtBuild,
) -> Result<Experiment, ScenarioError> {
    if let Some(first) = validate(scenario, path).into_iter().next() {
        return Err(first);
    }
    let invalid = |field: &str, problem: String, allowed: &str| ScenarioError::Invalid {
        path: path.to_path_buf(),
        field: field.to_string(),
        problem,
        allowed: allowed.to_string(),
    };
    let engine = |context: &str, message: String| ScenarioError::Engine {
        path: path.to_path_buf(),
        context: context.to_string(),
        message,
    };
    let s = scenario;
    let params = SimParams {
        dt: s.time.dt,
        gravity: s.gravity_vector(),
        integrator: match s.integrator {
            Integrator::Gear => IntegratorKind::Gear,
            Integrator::Verlet => IntegratorKind::Verlet,
        },
        bounding: match s.bounding {
            Bounding::MinMax => BoundingMethod::MinMax,
            Bounding::Ellipsoid => BoundingMethod::Ellipsoid,
        },
        margin: s.margin,
        broad_phase: match s.broad_phase {
            BroadPhase::SweepAndPrune => BroadPhaseKind::SweepAndPrune,
            BroadPhase::Grid => BroadPhaseKind::UniformGrid { cell_size: None },
            BroadPhase::BruteForce => BroadPhaseKind::BruteForce,
        },
        threads,
        renumber_every: s.renumber_every.unwrap_or(DEFAULT_RENUMBER_EVERY),
        periodic: s.periodic.periodic(),
    };
    let mut world =
        World::new(params).map_err(|e| engine("simulation parameters", e.to_string()))?;

    let model = build_force_model(registry, &s.force_model)
        .map_err(|e| engine("force_model", e.to_string()))?;
    // Set before any grain: the engine computes each kind of grain's critical time step.
    world
        .set_force_model(model)
        .map_err(|e| engine("force_model", e.to_string()))?;

    for (i, m) in s.materials.iter().enumerate() {
        let material = Material::new(&m.name, m.density)
            .map_err(|e| engine(&format!("materials[{i}]"), e.to_string()))?;
        world
            .add_material(material)
            .map_err(|e| engine(&format!("materials[{i}]"), e.to_string()))?;
    }
    // The laws of the pairs of materials that can meet, when materials or pairs give
    // coefficients of their own; otherwise the one law holds for every pair.
    if pairs::has_pairs(s) {
        pairs::check(registry, s).map_err(|e| invalid(&e.field, e.problem, &e.allowed))?;
        for (a, b, _) in pairs::pairs_in_play(s) {
            let context = format!(
                "force model of materials '{}' and '{}'",
                s.materials[a].name, s.materials[b].name
            );
            let (law, _) = pairs::pair_law(registry, s, a, b);
            let model =
                build_force_model(registry, &law).map_err(|e| engine(&context, e.to_string()))?;
            world
                .set_pair_force_model(MaterialId(a as u16), MaterialId(b as u16), model)
                .map_err(|e| engine(&context, e.to_string()))?;
        }
    }

    // Shapes of every population, and the smallest critical time step of their kinds.
    let mut populations = Vec::with_capacity(s.grains.len());
    let mut critical_dt = f64::INFINITY;
    let mut critical_limit = None;
    for (p, spec) in s.grains.iter().enumerate() {
        let field = format!("grains[{p}]");
        let files = file_shapes.0.get(p).map(Vec::as_slice).unwrap_or(&[]);
        let ellipsoid = spec.ellipsoid();
        if ellipsoid.is_none() == files.is_empty() {
            return Err(engine(
                &field,
                "the file shapes given do not fit the population".into(),
            ));
        }
        let distinct = grain_shapes::distinct_shapes(spec, files.len());
        let material_index = s
            .materials
            .iter()
            .position(|m| m.name == spec.material)
            .unwrap_or(0);
        let mut rng = ChaCha8Rng::seed_from_u64(s.seed);
        rng.set_stream(p as u64);
        let mut shapes = Vec::with_capacity(distinct);
        let mut radius: f64 = 0.0;
        let mut aligned_half = DVec3::ZERO;
        for k in 0..distinct {
            let scale = 1.0 + spec.size_spread * (2.0 * rng.random::<f64>() - 1.0);
            let (poly, bound) = match ellipsoid {
                Some((vertices, semi)) => {
                    let semi = v3(semi);
                    let poly = ellipsoid_grain(vertices, semi * scale, &mut rng)
                        .map_err(|e| engine(&field, e.to_string()))?;
                    let bound = BoundingEllipsoid::enclosing(
                        &poly,
                        DVec3::ZERO,
                        DMat3::IDENTITY,
                        semi * scale,
                    )
                    .map_err(|e| engine(&field, e.to_string()))?;
                    (poly, Some(bound))
                }
                None => (
                    file_grain(spec, &files[k % files.len()], scale, &field, path)?,
                    None,
                ),
            };
            let id = world
                .add_shape(&format!("{}/{k}", spec.name), &poly, bound)
                .map_err(|e| engine(&field, e.to_string()))?;
            let shape = world
                .shapes()
                .get(id)
                .map_err(|e| engine(&field, e.to_string()))?;
            radius = radius.max(shape.radius);
            for v in shape.body.vertices() {
                aligned_half = aligned_half.max((shape.body_to_input * *v).abs());
            }
            let (critical, limit) = world
                .critical_limit_of(id, MaterialId(material_index as u16))
                .map_err(|e| engine(&field, e.to_string()))?;
            if critical < critical_dt {
                critical_dt = critical;
                critical_limit = limit;
            }
            shapes.push(id);
        }
        populations.push(Population {
            name: spec.name.clone(),
            shapes,
            material: MaterialId(material_index as u16),
            grains: Vec::new(),
            count: spec.count,
            velocity: spec.velocity.map_or(DVec3::ZERO, v3),
            radius,
            // Every vertex of a generated grain lies on its generating ellipsoid: the
            // largest one's box holds them all.
            aligned_extent: match ellipsoid {
                Some((_, semi)) => 2.0 * v3(semi) * (1.0 + spec.size_spread),
                None => 2.0 * aligned_half,
            },
            pour: None,
            drip: None,
        });
    }
    if s.time.dt > critical_dt {
        return Err(invalid(
            "time.dt",
            format!(
                "{} s is above the critical time step {} s of force model '{}' for these grains, set by {}",
                crate::number::short(s.time.dt),
                crate::number::short(critical_dt),
                s.force_model.name,
                critical_limit.map_or("its stiffness", Limit::describe)
            ),
            &format!("dt ≤ {critical_dt:.3e} s (or softer springs)"),
        ));
    }
    let mut walls = Vec::with_capacity(s.walls.len());
    for (i, spec) in s.walls.iter().enumerate() {
        let parts = build_walls(
            spec,
            s.seed ^ (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15),
        )
        .map_err(|m| engine(&format!("walls[{i}]"), m))?;
        let material = spec.material.as_ref().and_then(|name| {
            let index = s.materials.iter().position(|m| &m.name == name)?;
            Some(MaterialId(index as u16))
        });
        let ids = parts
            .into_iter()
            .map(|w| match material {
                Some(m) => world.add_wall(w.with_material(m)),
                None => world.add_wall(w),
            })
            .collect::<Result<Vec<WallId>, _>>()
            .map_err(|e| engine(&format!("walls[{i}]"), e.to_string()))?;
        walls.push(WallGroup {
            name: spec.name.clone(),
            parts: ids,
        });
    }

    // Placement: lattice and explicit points now, pouring sites for later.
    let mut start: Vec<StartGrains> = Vec::new();
    let starting = |p: usize, count: usize, sites: StartSites| StartGrains {
        population: p as u32,
        count: if grains == GrainsAtBuild::Leave {
            0
        } else {
            count
        },
        sites,
        seed: s.seed,
    };
    for (p, spec) in s.grains.iter().enumerate() {
        let pop = &mut populations[p];
        let field = format!("grains[{p}].placement");
        match &spec.placement {
            Placement::Lattice {
                min,
                max,
                gap,
                jitter,
                orientation,
                fill_from,
            } => {
                let grow = 1.0 + gap.unwrap_or(DEFAULT_GAP);
                // Turned at random, a grain needs its bounding sphere; aligned, the box that
                // holds it unturned.
                let (extent, aligned) = match orientation {
                    Orientation::Random => (DVec3::splat(2.0 * pop.radius), false),
                    Orientation::Aligned => (pop.aligned_extent, true),
                };
                let spacing = extent * grow;
                let available = lattice_site_count(v3(*min), v3(*max), spacing);
                if available < spec.count as u64 {
                    return Err(invalid(
                        &field,
                        format!(
                            "the region holds {} grains at a spacing of ({:.4}, {:.4}, {:.4}) m, not {}",
                            available, spacing.x, spacing.y, spacing.z, spec.count
                        ),
                        "a region large enough for count grains (or a smaller count or gap)",
                    ));
                }
                let lattice = Lattice::new(v3(*min), v3(*max), spacing);
                let sites = StartSites::Lattice {
                    lattice,
                    slack: 0.5 * (spacing - extent),
                    jitter: jitter.unwrap_or(DEFAULT_JITTER),
                    aligned,
                    taken: None,
                };
                let mut grains = starting(p, spec.count, sites);
                if let Some(from) = fill_from {
                    let periodic = &world.params().periodic;
                    let open = reachable_sites(&lattice, v3(*from), world.walls(), periodic)
                        .map_err(|e| {
                            invalid(
                                &format!("{field}.fill_from"),
                                format!("{}: {e}", crate::number::point(*from)),
                                "a point inside the region, in a lattice cell no wall cuts, and a region of at most 10^6 sites",
                            )
                        })?;
                    if let Err(found) = grains.take_sites(&open, &world, pop) {
                        return Err(invalid(
                            &field,
                            format!(
                                "the region holds {found} grains clear of the walls and reachable from fill_from at a spacing of ({:.4}, {:.4}, {:.4}) m, not {}",
                                spacing.x, spacing.y, spacing.z, spec.count
                            ),
                            "a region with room for count grains inside the walls (or a smaller count or gap)",
                        ));
                    }
                }
                start.push(grains);
            }
            Placement::Points(points) => {
                let sites = StartSites::Points(points.iter().map(|q| v3(*q)).collect());
                start.push(starting(p, points.len(), sites));
            }
            Placement::Pour {
                min,
                max,
                rate,
                start,
            } => {
                let spacing = 2.0 * pop.radius * (1.0 + DEFAULT_GAP);
                let available = lattice_site_count(v3(*min), v3(*max), DVec3::splat(spacing));
                if available > MAX_SITES {
                    return Err(invalid(
                        &field,
                        format!("the pouring region has {available} grain sites"),
                        &format!(
                            "a pouring region of at most {MAX_SITES} sites (grain diameters cubed)"
                        ),
                    ));
                }
                let sites = lattice_sites(
                    v3(*min),
                    v3(*max),
                    DVec3::splat(spacing),
                    MAX_SITES as usize,
                );
                if sites.is_empty() {
                    return Err(invalid(
                        &field,
                        format!("the region holds no grain at a spacing of {spacing:.4} m"),
                        "a region at least one grain diameter wide in x, y and z",
                    ));
                }
                // The region must be clear of walls, or poured grains would start inside
                // them.
                if let Some(problem) = region_meets_wall(&world, &walls, v3(*min), v3(*max), *start)
                    .map_err(|e| engine(&field, e))?
                {
                    return Err(invalid(
                        &field,
                        format!("the pouring region meets {problem}"),
                        "a pouring region clear of every wall",
                    ));
                }
                pop.pour = Some(Pour {
                    sites,
                    rate: *rate,
                    start: *start,
                    slack: DVec3::splat(0.5 * (spacing - 2.0 * pop.radius)),
                    lo: v3(*min),
                    hi: v3(*max),
                });
            }
            Placement::Drip {
                at,
                threshold_speed,
                jitter,
                min_interval,
                start,
            } => {
                // Every release stays within the grain's sphere moved by up to the jitter.
                let r = pop.radius;
                let reach = DVec3::new(r + jitter, r + jitter, r);
                let (lo, hi) = (v3(*at) - reach, v3(*at) + reach);
                if let Some(problem) = region_meets_wall(&world, &walls, lo, hi, *start)
                    .map_err(|e| engine(&field, e))?
                {
                    return Err(invalid(
                        &format!("{field}.at"),
                        format!(
                            "a grain released at ({:.4}, {:.4}, {:.4}) with a jitter of {} m meets {problem}",
                            at.0,
                            at.1,
                            at.2,
                            crate::number::short(*jitter)
                        ),
                        "a release point at least a grain radius (plus the jitter) clear of every wall",
                    ));
                }
                let g = v3(s.gravity).length();
                let interval = min_interval.unwrap_or(if g > 0.0 {
                    (2.0 * 2.0 * r / g).sqrt()
                } else {
                    0.0
                });
                pop.drip = Some(Drip {
                    at: v3(*at),
                    threshold_speed: *threshold_speed,
                    jitter: *jitter,
                    interval_steps: (interval / s.time.dt).ceil().max(1.0) as u64,
                    start: *start,
                });
            }
        }
    }

    let mut exp = Experiment {
        scenario: scenario.clone(),
        path: path.to_path_buf(),
        world,
        populations,
        walls,
        critical_dt,
        file_shapes,
        start,
    };
    match grains {
        // No grain may start inside a wall or another grain.
        GrainsAtBuild::Add => {
            exp.check_unplaced(None)?;
            exp.add_unplaced(&mut PopulationsById::default())?;
        }
        // Checked by the caller, once it knows which of them this process keeps.
        GrainsAtBuild::Defer | GrainsAtBuild::Leave => {}
    }
    Ok(exp)
}

/// The grain of a file shape at the population's scale times `spread` (its size factor):
/// the convex hull of the scaled points.
fn file_grain(
    spec: &crate::schema::PopulationSpec,
    shape: &crate::shape_file::FileShape,
    spread: f64,
    field: &str,
    path: &Path,
) -> Result<ConvexPolyhedron, ScenarioError> {
    let scale = spec
        .shape
        .as_ref()
        .map_or(1.0, |s| grain_shapes::scale_factor(shape, s.scale()))
        * spread;
    let points: Vec<DVec3> = shape.points.iter().map(|p| *p * scale).collect();
    ConvexPolyhedron::from_points(&points).map_err(|e| ScenarioError::Engine {
        path: path.to_path_buf(),
        context: field.to_string(),
        message: format!(
            "shape '{}' of {} scaled by {scale}: {e}",
            shape.object, shape.file
        ),
    })
}

/// The first wall of `walls` (a body where it is at time `t`, a plane where it starts) that the box `lo`–`hi` meets, named for
/// a message, or none.
fn region_meets_wall(
    world: &World,
    walls: &[WallGroup],
    lo: DVec3,
    hi: DVec3,
    t: f64,
) -> Result<Option<String>, String> {
    let region = rectangular_box(hi - lo).map_err(|e| e.to_string())?;
    let region_pose = Pose::from_translation(0.5 * (lo + hi));
    for (w, group) in walls.iter().enumerate() {
        for id in &group.parts {
            let wall = &world.walls()[id.0 as usize];
            let hit = match &wall.geometry {
                WallGeometry::Body(poly) => {
                    wall.is_present(t)
                        && penetrates(&region, &region_pose, poly, &wall.state(t).pose)
                }
                // A plane is taken where it starts, as for the grains placed at the start.
                WallGeometry::HalfSpace { .. } => overlaps_wall(
                    &PlacedGrain {
                        shape: &region,
                        pose: region_pose,
                        radius: 0.5 * (hi - lo).length(),
                    },
                    wall,
                ),
            };
            if hit {
                return Ok(Some(format!("wall '{}' (walls[{w}])", wall.name)));
            }
        }
    }
    Ok(None)
}

/// The description of grain `j` of a population.
#[must_use]
pub fn grain_desc(pop: &Population, j: usize, position: DVec3, orientation: DQuat) -> GrainDesc {
    GrainDesc {
        shape: pop.shapes[j % pop.shapes.len()],
        material: pop.material,
        position,
        orientation,
        velocity: pop.velocity,
        angular_velocity: DVec3::ZERO,
    }
}

/// The scenario's force model: a registered model by name, or the law of its parts.
fn build_force_model(
    registry: &ForceModelRegistry,
    spec: &ForceModelSpec,
) -> Result<Box<dyn ForceModel>, ForceModelError> {
    let Some(parts) = &spec.parts else {
        return registry.build(&spec.name, &Coefficients(spec.coefficients.clone()));
    };
    let chosen: Vec<(Role, Coefficients, &str)> = parts
        .chosen()
        .into_iter()
        .map(|(role, p)| (role, Coefficients(p.coefficients.clone()), p.name.as_str()))
        .collect();
    let choices: Vec<PartChoice> = chosen
        .iter()
        .map(|(role, coefficients, name)| PartChoice {
            role: *role,
            name,
            coefficients,
        })
        .collect();
    registry.build_law(&spec.name, &choices)
}
