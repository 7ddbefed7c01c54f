//! Detecting a simulation that has blown up: a non-finite state, a grain faster than
//! anything in the scenario can make it (an energy jump), or overlaps beyond a sane
//! fraction of the grain size. The message names the grain, the time, the likely cause and
//! the last good checkpoint.

use std::path::Path;

use serde::{Deserialize, Serialize};
use talus_geom::glam::DVec3;
use talus_sim::wall::{Motion, WallGeometry};
use talus_sim::{BodyRef, GrainId, GrainState, StepStats};

use crate::build::Experiment;
use crate::number::short;
use crate::run::{CHECKPOINT_FILE, RunState};
use crate::schema::Placement;
use crate::walls::v3;

/// Largest overlap depth, relative to the smaller grain's diameter, of a sane contact.
const MAX_OVERLAP_RATIO: f64 = 0.25;
/// Steps between scans of every grain's state.
const SCAN_EVERY: u64 = 20;
/// Factor between the fastest plausible speed and the speed that counts as a blow-up.
const SPEED_FACTOR: f64 = 10.0;

/// Limits beyond which a run has blown up.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Limits {
    /// Largest plausible grain speed (m/s).
    pub speed: f64,
    /// Largest sane relative overlap depth.
    pub overlap_ratio: f64,
}

impl Limits {
    /// The limits of an experiment: ten times the speed of a free fall across the whole
    /// scene plus the fastest wall and the fastest initial grain, plus the speed of
    /// crossing the scene in a thousand steps. The scene holds every grain, those added
    /// (on this process) and those placed to be added.
    #[must_use]
    pub fn of(exp: &Experiment) -> Limits {
        let mut lo = DVec3::splat(f64::INFINITY);
        let mut hi = DVec3::splat(f64::NEG_INFINITY);
        let mut include = |p: DVec3| {
            lo = lo.min(p);
            hi = hi.max(p);
        };
        let world = &exp.world;
        for g in world.grain_states() {
            include(g.pose.position);
        }
        // Grains placed but not added yet, where they will be (at their image in the
        // periodic box, as the world puts them).
        for u in exp.all_start_grains() {
            include(world.params().periodic.wrap(u.position).0);
        }
        for p in &exp.scenario.grains {
            match &p.placement {
                Placement::Pour { min, max, .. } | Placement::Lattice { min, max, .. } => {
                    include(v3(*min));
                    include(v3(*max));
                }
                Placement::Drip { at, .. } => include(v3(*at)),
                Placement::Points(_) => {}
            }
        }
        let mut wall_speed: f64 = 0.0;
        for wall in world.walls() {
            let reach = match &wall.geometry {
                WallGeometry::Body(poly) => {
                    let b = wall.aabb(&wall.start);
                    include(b.min);
                    include(b.max);
                    poly.radius_about_origin()
                }
                WallGeometry::HalfSpace { .. } => 0.0,
            };
            wall_speed = wall_speed.max(match wall.motion {
                Motion::Fixed => 0.0,
                Motion::Oscillate {
                    amplitude,
                    frequency,
                    ..
                } => amplitude * std::f64::consts::TAU * frequency,
                Motion::Elliptic {
                    a, b, frequency, ..
                } => (a.length() + b.length()) * std::f64::consts::TAU * frequency,
                Motion::Rotate {
                    angular_velocity,
                    center,
                    ..
                } => angular_velocity.abs() * (reach + center.length()),
            });
        }
        let extent = if lo.cmple(hi).all() {
            (hi - lo).length()
        } else {
            1.0
        };
        let initial = exp
            .populations
            .iter()
            .map(|p| p.velocity.length())
            .fold(0.0, f64::max);
        let g = v3(exp.scenario.gravity).length();
        let fall = (2.0 * g * extent).sqrt();
        Limits {
            speed: SPEED_FACTOR * (fall + wall_speed + initial)
                + extent / (1000.0 * exp.scenario.time.dt),
            overlap_ratio: MAX_OVERLAP_RATIO,
        }
    }
}

/// What went wrong.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Failure {
    /// A grain's position or velocity is not finite.
    NotFinite {
        /// The grain.
        grain: GrainId,
    },
    /// A grain moves faster than anything in the scenario can make it.
    TooFast {
        /// The grain.
        grain: GrainId,
        /// Its speed (m/s).
        speed: f64,
        /// The limit (m/s).
        limit: f64,
    },
    /// Two bodies overlap by more than a sane fraction of the grain size.
    Overlap {
        /// Relative overlap depth.
        ratio: f64,
        /// The grain with the largest contact force, if any.
        grain: Option<GrainId>,
    },
}

/// The per-step check.
#[derive(Debug, Clone, Copy)]
pub struct BlowUpCheck {
    limits: Limits,
}

impl BlowUpCheck {
    /// A check with these limits.
    #[must_use]
    pub fn new(limits: &Limits) -> BlowUpCheck {
        BlowUpCheck { limits: *limits }
    }

    /// Checks the world after step `step`: the overlap every step, every grain every few
    /// steps. In a decomposed run each process looks at its own grains and contacts and the
    /// processes agree on what they found (a collective operation: every process calls it
    /// after every step), so that all stop at the same step with the same failure.
    #[must_use]
    pub fn after_step(
        &self,
        exp: &mut Experiment,
        stats: &StepStats,
        step: u64,
    ) -> Option<Failure> {
        let world = &mut exp.world;
        if !stats.max_overlap_ratio.is_finite()
            || stats.max_overlap_ratio > self.limits.overlap_ratio
        {
            // The grain that feels the largest contact force is the likely culprit: each
            // process's, then the largest of those.
            let local = world
                .contacts()
                .flat_map(|c| {
                    let f = c.force_on_b.length();
                    [c.a, c.b].into_iter().filter_map(move |body| match body {
                        BodyRef::Grain(id) => Some((id, f)),
                        BodyRef::Wall(_) => None,
                    })
                })
                .reduce(stronger);
            let worst = world
                .gather_owned(local.into_iter().collect())
                .into_iter()
                .reduce(stronger);
            return Some(Failure::Overlap {
                ratio: stats.max_overlap_ratio,
                grain: worst.map(|w| w.0),
            });
        }
        if step % SCAN_EVERY != 0 {
            return None;
        }
        let local = world.grain_states().find_map(|g| self.scan(&g));
        // The first failing grain in slot order, as one process scanning all would find.
        world
            .gather_owned(local.into_iter().collect())
            .into_iter()
            .min_by_key(Failure::grain)
    }

    /// What is wrong with a grain, if anything.
    fn scan(&self, g: &GrainState) -> Option<Failure> {
        let id = g.id;
        if !(g.pose.position.is_finite()
            && g.velocity.is_finite()
            && g.angular_velocity.is_finite())
        {
            return Some(Failure::NotFinite { grain: id });
        }
        let speed = g.velocity.length();
        (speed > self.limits.speed).then_some(Failure::TooFast {
            grain: id,
            speed,
            limit: self.limits.speed,
        })
    }
}

/// Of two grains and the contact forces they feel, the one with the stronger force (a
/// force that is not finite is strongest; the first of equals).
fn stronger(w: (GrainId, f64), candidate: (GrainId, f64)) -> (GrainId, f64) {
    if candidate.1 > w.1 || !candidate.1.is_finite() {
        candidate
    } else {
        w
    }
}

/// Gravity stronger than this many Earth gravities drives impacts beyond what a time step
/// chosen for settling resolves.
const VIOLENT_GRAVITY: f64 = 100.0;
/// A wall accelerating at more than this many Earth gravities (or of the scene's gravity,
/// if stronger) drives violent impacts.
const VIOLENT_WALL_ACCELERATION: f64 = 20.0;
/// Standard gravity (m/s²).
const EARTH_GRAVITY: f64 = 9.81;

/// What in the scene drives impacts violently, if anything: extreme gravity or a wall that
/// moves with a violent acceleration. The harder of the two is named.
fn violent_drive(exp: &Experiment) -> Option<String> {
    let g = v3(exp.scenario.gravity).length();
    let mut worst: Option<(f64, String)> = None;
    if g > VIOLENT_GRAVITY * EARTH_GRAVITY {
        worst = Some((
            g,
            format!(
                "gravity is {} m/s², {} times the Earth's",
                short(g),
                short(g / EARTH_GRAVITY)
            ),
        ));
    }
    let threshold = VIOLENT_WALL_ACCELERATION * EARTH_GRAVITY.max(g);
    for wall in exp.world.walls() {
        let (acceleration, speed, how) = match wall.motion {
            Motion::Fixed => continue,
            Motion::Oscillate {
                amplitude,
                frequency,
                ..
            } => {
                let w = std::f64::consts::TAU * frequency;
                (
                    amplitude * w * w,
                    amplitude * w,
                    format!(
                        "oscillates at {} Hz with an amplitude of {} m",
                        short(frequency),
                        short(amplitude)
                    ),
                )
            }
            Motion::Elliptic {
                a, b, frequency, ..
            } => {
                let w = std::f64::consts::TAU * frequency;
                let amplitude = a.length() + b.length();
                (
                    amplitude * w * w,
                    amplitude * w,
                    format!(
                        "oscillates at {} Hz on an ellipse of semi-axes up to {} m",
                        short(frequency),
                        short(amplitude)
                    ),
                )
            }
            Motion::Rotate {
                angular_velocity, ..
            } => {
                let reach = match &wall.geometry {
                    WallGeometry::Body(poly) => poly.radius_about_origin(),
                    WallGeometry::HalfSpace { .. } => 0.0,
                };
                let w = angular_velocity.abs();
                (
                    w * w * reach,
                    w * reach,
                    format!("turns at {} rad/s", short(angular_velocity)),
                )
            }
        };
        if acceleration > threshold && worst.as_ref().is_none_or(|(a, _)| acceleration > *a) {
            let base = wall.name.split('/').next().unwrap_or(&wall.name);
            worst = Some((
                acceleration,
                format!(
                    "wall '{base}' {how}: its plates move at up to {} m/s and accelerate at {} \
                     m/s² ({} g)",
                    short(speed),
                    short(acceleration),
                    short(acceleration / EARTH_GRAVITY)
                ),
            ));
        }
    }
    worst.map(|(_, text)| text)
}

impl Failure {
    /// The grain it names, if any.
    #[must_use]
    pub fn grain(&self) -> Option<GrainId> {
        match self {
            Failure::NotFinite { grain } | Failure::TooFast { grain, .. } => Some(*grain),
            Failure::Overlap { grain, .. } => *grain,
        }
    }

    /// The message for the user; `at` is where the grain it names is (gathered from its
    /// process in a decomposed run).
    #[must_use]
    pub fn message(
        &self,
        exp: &Experiment,
        state: &RunState,
        out: &Path,
        at: Option<DVec3>,
    ) -> String {
        let world = &exp.world;
        let name = |id: GrainId| {
            let p = state.grain_population.get(id).unwrap_or(0) as usize;
            let pop = exp.populations.get(p).map_or("?", |p| p.name.as_str());
            let at = at
                .map(|x| format!(" at ({:.4}, {:.4}, {:.4})", x.x, x.y, x.z))
                .unwrap_or_default();
            format!("grain {} of population '{pop}'{at}", id.0)
        };
        let what = match self {
            Failure::NotFinite { grain } => {
                format!(
                    "{} has a position or velocity that is not a number",
                    name(*grain)
                )
            }
            Failure::TooFast {
                grain,
                speed,
                limit,
            } => format!(
                "{} moves at {speed:.3e} m/s, beyond the {limit:.3e} m/s anything in the scene can give it (an energy jump)",
                name(*grain)
            ),
            Failure::Overlap { ratio, grain } => format!(
                "two bodies overlap by {:.1} % of the grain size (sane contacts stay below {:.0} %){}",
                100.0 * ratio,
                100.0 * MAX_OVERLAP_RATIO,
                grain.map_or(String::new(), |g| format!(
                    "; the largest contact force acts on {}",
                    name(g)
                ))
            ),
        };
        let dt = exp.scenario.time.dt;
        let ratio = dt / exp.critical_dt;
        // Well below the critical step, the time step is not the cause: deep overlaps of
        // soft contacts are, and they also fling grains out when they release.
        let soft = ratio < 0.5;
        let cause = if let Some(drive) = violent_drive(exp) {
            // The scene itself drives impacts far harder than settling under Earth's
            // gravity: dt and stiffness may be right for ordinary speeds.
            format!(
                "Likely cause: {drive}. Impacts that violent need stiffer contacts and a \
                 smaller time step (dt = {dt:.3e} s is {ratio:.2} of the critical {:.3e} s \
                 computed for settling grains), or a gentler drive (weaker gravity, a slower wall).",
                exp.critical_dt
            )
        } else if soft {
            format!(
                "Likely cause: the contacts are too soft for the speeds of the impacts: with force \
                 model '{}' a vertex pressed into a face resists little until it is deep (the time \
                 step dt = {dt:.3e} s is only {ratio:.2} of the critical {:.3e} s, so it is not \
                 the time step). Raise the stiffness (and lower dt with it) or start the grains \
                 closer to where they land.",
                exp.scenario.force_model.name, exp.critical_dt
            )
        } else {
            format!(
                "Likely cause: the time step dt = {dt:.3e} s is too large for the contact stiffness \
                 (the critical time step is {:.3e} s, dt is {ratio:.2} of it; collisions faster than \
                 the scene's own speeds shorten it further), or the stiffness of force model '{}' is \
                 too high. Halve time.dt or lower the stiffness.",
                exp.critical_dt, exp.scenario.force_model.name
            )
        };
        let checkpoint = match state.last_checkpoint {
            Some(t) => format!(
                "The last good checkpoint is {} at t = {t:.6} s.",
                out.join(CHECKPOINT_FILE).display()
            ),
            None => "No checkpoint was written before this.".to_string(),
        };
        format!(
            "the simulation blew up at t = {:.6} s (step {}): {what}. {cause} {checkpoint}",
            world.time(),
            world.steps()
        )
    }
}
