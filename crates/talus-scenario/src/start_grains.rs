//! The grains placed at the start of a run, found one by one from their number.
//!
//! A population placed on a lattice or at listed points has its grain `j` where site `j`
//! (or point `j`), its own random stream ([`grain_rng`]) and its population say: nothing of
//! the other grains. So the build keeps the rule, not the grains ([`StartGrains`]), and
//! whoever needs them computes those it needs: one process checks and adds them all; a
//! process of a decomposed run computes a share of their positions for the first cut
//! (each process another), then, going through all of them, keeps those of its own region
//! and those near it for the check, and adds its own. No process holds a record of every
//! grain of the run.

use std::ops::Range;

use talus_geom::Pose;
use talus_geom::glam::{DQuat, DVec3};
use talus_sim::shape::ShapeLibrary;
use talus_sim::{GrainDesc, World};

use crate::build::{Experiment, Population, grain_desc};
use crate::error::ScenarioError;
use crate::placement::{
    Lattice, PlacedGrain, first_overlapping_pair, grain_rng, image_shifts, jittered,
    random_rotation, wall_cutting, with_periodic_images,
};
use crate::population_ids::PopulationsById;

/// Where the grains of a population placed at the start are.
#[derive(Debug, Clone)]
pub(crate) enum StartSites {
    /// Grain `j` at site `j` of the lattice (or at site `taken[j]`, when the region is
    /// filled from a point), moved at random by up to `jitter` of the free space `slack` per axis;
    /// turned at random unless `aligned`.
    Lattice {
        lattice: Lattice,
        slack: DVec3,
        jitter: f64,
        aligned: bool,
        taken: Option<Vec<usize>>,
    },
    /// Grain `j` at point `j`, turned at random.
    Points(Vec<DVec3>),
}

/// The grains of one population placed at the start: `count` of them, from `sites`, with
/// the random streams of the run's `seed`.
#[derive(Debug, Clone)]
pub(crate) struct StartGrains {
    pub population: u32,
    pub count: usize,
    pub sites: StartSites,
    pub seed: u64,
}

impl StartGrains {
    /// Grain `j` (below `count`).
    fn grain(&self, j: usize) -> Unplaced {
        let site = match &self.sites {
            StartSites::Lattice {
                taken: Some(taken), ..
            } => taken[j],
            _ => j,
        };
        self.grain_at(j, site)
    }

    /// Grain `j` at lattice site `site` (on listed points, at its own point).
    fn grain_at(&self, j: usize, site: usize) -> Unplaced {
        let mut rng = grain_rng(self.seed, self.population as usize, j);
        let (position, orientation) = match &self.sites {
            StartSites::Lattice {
                lattice,
                slack,
                jitter,
                aligned,
                ..
            } => {
                // The turn is drawn first, aligned or not, so that the jitter is the same.
                let turned = random_rotation(&mut rng);
                let position = jittered(lattice.site(site), *slack, *jitter, &mut rng);
                (position, if *aligned { DQuat::IDENTITY } else { turned })
            }
            StartSites::Points(points) => (points[j], random_rotation(&mut rng)),
        };
        Unplaced {
            population: self.population,
            index: j as u32,
            position,
            orientation,
        }
    }

    /// Puts the grains on the lattice sites `open` (in increasing order) only, none inside
    /// a wall present at the start: grain `j` (as jittered and turned by its own random
    /// stream) takes the first of them above grain `j − 1`'s site at which it is clear of
    /// every wall, its periodic images included. The sites follow from the walls and the
    /// population alone, so every process of a decomposed run finds the same ones. Does
    /// nothing on listed points.
    ///
    /// # Errors
    /// The number of grains that found a site, when `open` runs out first.
    pub(crate) fn take_sites(
        &mut self,
        open: &[usize],
        world: &World,
        pop: &Population,
    ) -> Result<(), usize> {
        if !matches!(self.sites, StartSites::Lattice { .. }) {
            return Ok(());
        }
        let periodic = &world.params().periodic;
        let mut taken = Vec::with_capacity(self.count);
        let mut sites = open.iter();
        for j in 0..self.count {
            loop {
                let Some(&site) = sites.next() else {
                    return Err(j);
                };
                let u = self.grain_at(j, site);
                let desc = grain_desc(pop, j, u.position, u.orientation);
                let grain = placed_grain(world.shapes(), &desc);
                if wall_cutting(&grain, world.walls(), periodic).is_none() {
                    taken.push(site);
                    break;
                }
            }
        }
        if let StartSites::Lattice { taken: t, .. } = &mut self.sites {
            *t = Some(taken);
        }
        Ok(())
    }
}

/// The grain of description `desc` where it starts, for the overlap checks.
fn placed_grain<'a>(shapes: &'a ShapeLibrary, desc: &GrainDesc) -> PlacedGrain<'a> {
    let shape = &shapes.shapes()[desc.shape.0 as usize];
    PlacedGrain {
        shape: &shape.body,
        pose: Pose::new(
            desc.position,
            (desc.orientation * shape.body_to_input).normalize(),
        ),
        radius: shape.radius,
    }
}

/// A grain placed but not added yet: its population, its index there, and where and how
/// turned it starts (the rest of its description follows from its population,
/// [`grain_desc`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Unplaced {
    pub population: u32,
    pub index: u32,
    pub position: DVec3,
    pub orientation: DQuat,
}

impl Experiment {
    /// Number of grains placed at the start and not added yet.
    pub(crate) fn start_count(&self) -> usize {
        self.start.iter().map(|g| g.count).sum()
    }

    /// Grains `range` of those placed at the start and not added yet, numbered in the order
    /// they are to be added, each computed from its number alone.
    pub(crate) fn start_grains(&self, range: Range<usize>) -> impl Iterator<Item = Unplaced> + '_ {
        Experiment::grains_of(&self.start, range)
    }

    /// Grains `range` of the populations' `start` (see [`Experiment::start_grains`]).
    pub(crate) fn grains_of(
        start: &[StartGrains],
        range: Range<usize>,
    ) -> impl Iterator<Item = Unplaced> + '_ {
        let mut first = 0;
        start.iter().flat_map(move |g| {
            let offset = first;
            first += g.count;
            let lo = range.start.max(offset);
            let hi = range.end.min(offset + g.count).max(lo);
            (lo..hi).map(move |k| g.grain(k - offset))
        })
    }

    /// All grains placed at the start and not added yet, in the order they are to be added.
    pub(crate) fn all_start_grains(&self) -> impl Iterator<Item = Unplaced> + '_ {
        self.start_grains(0..self.start_count())
    }

    /// The description of the placed grain `u`.
    fn unplaced_desc(&self, u: &Unplaced) -> GrainDesc {
        let pop = &self.populations[u.population as usize];
        grain_desc(pop, u.index as usize, u.position, u.orientation)
    }

    /// Checks that no grain placed but not added yet starts inside a wall or another grain:
    /// every grain when `own` is none; else (a process of a decomposed run, its regions cut
    /// before the grains are added) the grains `own` accepts, against the walls and against
    /// every placed grain whose bounding sphere reaches the box around theirs, so that the
    /// check holds no more than a process's share of the grains and their neighbours. With
    /// periodic axes, the images of the grains across the faces they reach count as well
    /// (one box around the images of its own grains per shift by whole periods).
    ///
    /// # Errors
    /// [`ScenarioError::Invalid`] naming the grain in a wall, or one of two grains that
    /// overlap.
    pub(crate) fn check_unplaced(
        &self,
        own: Option<&dyn Fn(DVec3) -> bool>,
    ) -> Result<(), ScenarioError> {
        let shapes = self.world.shapes();
        let periodic = &self.world.params().periodic;
        let shape_of = |u: &Unplaced| &shapes.shapes()[self.unplaced_desc(u).shape.0 as usize];
        let view = |u: &Unplaced| placed_grain(shapes, &self.unplaced_desc(u));
        // The grains checked against each other, and (when not all of them) those checked
        // against the walls.
        let (near, mine): (Vec<Unplaced>, Option<Vec<Unplaced>>) = match own {
            None => (self.all_start_grains().collect(), None),
            Some(own) => {
                let mine: Vec<Unplaced> = self
                    .all_start_grains()
                    .filter(|u| own(u.position))
                    .collect();
                // The boxes its images reach, one per shift by whole periods (at most 8).
                let reaches = |u: &Unplaced| {
                    let r = shape_of(u).radius;
                    let at = periodic.wrap(u.position).0;
                    image_shifts(at, r, periodic)
                        .map(move |shift| (shift, at + shift - r, at + shift + r))
                };
                let mut boxes: Vec<(DVec3, DVec3, DVec3)> = Vec::new();
                for (shift, lo, hi) in mine.iter().flat_map(reaches) {
                    match boxes.iter_mut().find(|b| b.0 == shift) {
                        Some(b) => (b.1, b.2) = (b.1.min(lo), b.2.max(hi)),
                        None => boxes.push((shift, lo, hi)),
                    }
                }
                let near = self
                    .all_start_grains()
                    .filter(|u| {
                        reaches(u).any(|(_, a, b)| {
                            boxes
                                .iter()
                                .any(|&(_, lo, hi)| a.cmple(hi).all() && b.cmpge(lo).all())
                        })
                    })
                    .collect();
                (near, Some(mine))
            }
        };
        let invalid = |u: &Unplaced, problem: String, allowed: &str| ScenarioError::Invalid {
            path: self.path.clone(),
            field: format!("grains[{}].placement", u.population),
            problem,
            allowed: allowed.to_string(),
        };
        for u in mine.as_ref().unwrap_or(&near) {
            if let Some(wall) = wall_cutting(&view(u), self.world.walls(), periodic) {
                return Err(invalid(
                    u,
                    format!(
                        "grain {} at ({:.4}, {:.4}, {:.4}) starts inside wall '{}'",
                        u.index, u.position.x, u.position.y, u.position.z, wall.name
                    ),
                    "grains placed clear of every wall",
                ));
            }
        }
        let views: Vec<PlacedGrain> = near.iter().map(view).collect();
        // With periodic axes, a grain near a face meets what lies across it.
        let images = with_periodic_images(&views, periodic);
        let image_views: Vec<PlacedGrain> = images.iter().map(|(_, v)| *v).collect();
        let pair = first_overlapping_pair(&image_views)
            .map(|(a, b)| (images[a].0, images[b].0))
            .filter(|(a, b)| a != b);
        if let Some((a, b)) = pair {
            let (ua, ub) = (&near[a], &near[b]);
            return Err(invalid(
                ua,
                format!(
                    "grain {} at ({:.4}, {:.4}, {:.4}) overlaps grain {} of grains[{}]",
                    ua.index, ua.position.x, ua.position.y, ua.position.z, ub.index, ub.population
                ),
                "grains that do not overlap at the start",
            ));
        }
        Ok(())
    }

    /// Adds the grains placed but not added yet (in a world cut before its grains are
    /// added, those of this process's region, which its populations list; the others take
    /// their ids alone), each id's population set in `populations`.
    ///
    /// # Errors
    /// [`ScenarioError::Engine`] for a grain the world refuses.
    pub(crate) fn add_unplaced(
        &mut self,
        populations: &mut PopulationsById,
    ) -> Result<(), ScenarioError> {
        let start = std::mem::take(&mut self.start);
        for g in &start {
            for j in 0..g.count {
                let u = g.grain(j);
                let p = u.population as usize;
                let desc = self.unplaced_desc(&u);
                let id = self
                    .world
                    .add_grain(desc)
                    .map_err(|e| ScenarioError::Engine {
                        path: self.path.clone(),
                        context: format!("grains[{p}] grain {j}"),
                        message: e.to_string(),
                    })?;
                populations.set(id, u.population);
                if self.world.grain(id).is_ok() {
                    self.populations[p].grains.push(id);
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use talus_sim::force::ForceModelRegistry;

    use crate::build::{GrainsAtBuild, build_from_files};
    use crate::load::{apply_overrides, read};
    use crate::population_ids::PopulationsById;

    /// The vibrating box (a lattice of beads) with its intruder given as a point, and a
    /// second population of points.
    fn experiment(grains: GrainsAtBuild) -> crate::build::Experiment {
        let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs/vibrating_box.ron");
        let scenario = apply_overrides(
            &read(&file).unwrap(),
            &["seeds=1".to_string(), "grains[1].count=137".to_string()],
        )
        .unwrap();
        build_from_files(&scenario, &file, &ForceModelRegistry::default(), 1, grains).unwrap()
    }

    #[test]
    fn the_grains_of_any_split_into_shares_are_the_grains_one_build_adds() {
        let mut exp = experiment(GrainsAtBuild::Defer);
        let count = exp.start_count();
        assert_eq!(count, 138);
        let all: Vec<_> = exp.all_start_grains().collect();
        for shares in [1, 2, 3, 7, 138, 200] {
            let mut joined = Vec::new();
            for k in 0..shares {
                joined.extend(exp.start_grains(count * k / shares..count * (k + 1) / shares));
            }
            assert_eq!(joined.len(), count, "{shares} shares");
            for (a, b) in joined.iter().zip(&all) {
                assert_eq!(
                    (a.population, a.index, a.position, a.orientation),
                    (b.population, b.index, b.position, b.orientation)
                );
            }
        }
        assert_eq!(exp.start_grains(130..1000).count(), 8);
        assert_eq!(exp.start_grains(5..5).count(), 0);
        // Added, they are the world's grains in that order, each where its rule put it, and
        // their populations are two stretches of ids.
        let mut populations = PopulationsById::default();
        exp.add_unplaced(&mut populations).unwrap();
        assert_eq!((populations.len(), populations.stretches()), (count, 2));
        assert_eq!(exp.start_count(), 0);
        let states: Vec<_> = exp.world.grain_states().collect();
        assert_eq!(states.len(), count);
        for (state, u) in states.iter().zip(&all) {
            let id = exp.populations[u.population as usize].grains[u.index as usize];
            assert_eq!(state.id, id);
            assert_eq!(state.pose.position, u.position);
            assert_eq!(populations.get(id), Some(u.population));
        }
        // A resumed run places none.
        assert_eq!(experiment(GrainsAtBuild::Leave).start_count(), 0);
    }

    /// The pyramid hopper with `overrides`, built with its grains placed but not added.
    fn pyramid(overrides: &[&str]) -> Result<crate::build::Experiment, crate::ScenarioError> {
        let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs/hopper_pyramid.ron");
        let overrides: Vec<String> = overrides.iter().map(|o| o.to_string()).collect();
        let scenario = apply_overrides(&read(&file).unwrap(), &overrides).unwrap();
        build_from_files(
            &scenario,
            &file,
            &ForceModelRegistry::default(),
            1,
            GrainsAtBuild::Defer,
        )
    }

    #[test]
    fn a_lattice_filled_from_inside_the_funnel_puts_every_grain_inside_it_from_the_bottom_up() {
        let exp = pyramid(&[]).unwrap();
        exp.check_unplaced(None).unwrap();
        let grains: Vec<_> = exp.all_start_grains().collect();
        assert_eq!(grains.len(), 5000);
        // The funnel: a square orifice 4.5 cm wide at z = 0.05, plates at 60° rising
        // 11.5 cm, in a bin 16 cm across. A grain's centre lies at least the half of its
        // smallest extent (3.15 mm unaligned, 0.9 × 3.5 mm) inside.
        let half_width = |z: f64| (0.0225 + (z - 0.05) / 60f64.to_radians().tan()).min(0.08);
        for u in &grains {
            let p = u.position;
            assert!(
                p.z > 0.05 + 0.003,
                "grain {} at {p} is below the orifice",
                u.index
            );
            let w = half_width(p.z);
            assert!(
                p.x.abs() < w && p.y.abs() < w,
                "grain {} at {p} is outside",
                u.index
            );
        }
        // Filled from the bottom up: the lowest grains sit in the orifice's first layer, and
        // the heights never fall by more than the jitter from one grain to the next.
        let lowest = grains
            .iter()
            .map(|u| u.position.z)
            .fold(f64::INFINITY, f64::min);
        assert!(lowest < 0.05 + 0.0081, "{lowest}");
        assert!(
            grains
                .windows(2)
                .all(|w| w[1].position.z > w[0].position.z - 0.0081)
        );
        // Without the fill, the same region puts grains inside the plates.
        let err = pyramid(&["grains[0].placement.fill_from=None"])
            .and_then(|e| e.check_unplaced(None))
            .unwrap_err()
            .to_string();
        assert!(err.contains("starts inside wall"), "{err}");
        // More grains than the open sites reachable from the point hold.
        let err = pyramid(&["grains[0].count=9000"])
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("reachable from fill_from"), "{err}");
        assert!(err.contains("not 9000"), "{err}");
        // A point in a plate, or outside the region.
        for from in ["Some((0.057, 0.0, 0.1))", "Some((0.0, 0.0, 0.02))"] {
            let set = format!("grains[0].placement.fill_from={from}");
            let err = pyramid(&[&set]).err().unwrap().to_string();
            assert!(err.contains("fill_from"), "{err}");
        }
    }
}
