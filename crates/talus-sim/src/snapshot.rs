//! Checkpoints: the dynamic state of a [`World`], to be written out and restored later so
//! that the continued run is bit-identical to an uninterrupted one.
//!
//! A [`WorldSnapshot`] holds what changes as the world steps: time, the grains (pose,
//! inertia, shape, material, integrator state), the broad-phase proxies and their boxes,
//! the contact list with each pair's closest-feature cache and force-model history, the
//! loads applied for the next step and the reported loads and counts of the last step.
//! The static parts — shapes, materials, walls, force model and the other parameters —
//! are not in it: the caller rebuilds them (from its scenario file, in the original order)
//! and calls [`World::restore`] on that world before adding any grain.
//!
//! ```
//! use talus_sim::{SimParams, World};
//! let world = World::new(SimParams::default())?;
//! let snapshot = world.snapshot();
//! let mut rebuilt = World::new(SimParams::default())?;
//! rebuilt.restore(snapshot)?;
//! # Ok::<(), talus_sim::SimError>(())
//! ```

use serde::{Deserialize, Serialize};
use talus_geom::glam::DVec3;
use talus_geom::{Aabb, ConvexPolyhedron, Feature, FeatureCache, OverlapHint, Pose};

use crate::broad::{PairEvents, ProxyPair};
use crate::contact::{Contact, History};
use crate::error::SimError;
use crate::integrate::{GearState, Inertia, IntegratorKind, Load, VerletState};
use crate::kind::GrainKind;
use crate::material::MaterialId;
use crate::motion::Reach;
use crate::numbering::GrainNumbering;
use crate::periodic::{ImageCount, Periodic};
use crate::shape::ShapeId;
use crate::wall::{WallGeometry, WallId};
use crate::world::{Body, BodyRef, BoundingMethod, Fresh, GrainId, Slot, StepStats, World};

/// The version of the snapshot layout; [`World::restore`] refuses other versions (2: each
/// contact says which way round its bodies are met; 4: periodic axes and image counts; 5:
/// a contact's overlap hint keeps up to 16 faces over both grains, in one list).
pub const SNAPSHOT_FORMAT: u32 = 5;

/// The dynamic state of a [`World`]: everything that, with the rebuilt static parts,
/// determines its future steps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorldSnapshot {
    /// Layout version ([`SNAPSHOT_FORMAT`] when written).
    pub format: u32,
    /// Simulated time at the last change of the time step.
    pub time_base: f64,
    /// Steps taken since the last change of the time step.
    pub steps_since_base: u64,
    /// Steps taken in all.
    pub steps: u64,
    /// The current time step (it may differ from the scenario's after `set_dt`).
    pub dt: f64,
    /// The current gravity (it may differ from the scenario's after `set_gravity`).
    pub gravity: DVec3,
    /// The integrator; checked against the world's parameters.
    pub integrator: IntegratorKind,
    /// The bounding-box method; checked against the world's parameters.
    pub bounding: BoundingMethod,
    /// The bounding-box margin; checked (bit for bit) against the world's parameters.
    pub margin: f64,
    /// The periodic axes; checked (bit for bit) against the world's parameters.
    pub periodic: Periodic,
    /// The name of the force model, if one was set; checked against the world's.
    pub force_model: Option<String>,
    /// The grains by id ([`GrainId`]); `None` for a removed grain.
    pub grains: Vec<Option<GrainSnapshot>>,
    /// What each broad-phase proxy stands for, by proxy index: grains and walls
    /// interleaved in their order of addition. Grains appear in slot order, walls in id
    /// order.
    pub proxies: Vec<BodyRef>,
    /// The box of each proxy as the broad phase saw it in the last step (`None` for none);
    /// a removed grain keeps its box until the next step.
    pub boxes: Vec<Option<Aabb>>,
    /// The contact list: the pairs of proxies whose boxes overlap, sorted by pair.
    pub contacts: Vec<ContactSnapshot>,
    /// Force and torque on each wall in the last step, by wall id.
    pub wall_loads: Vec<Load>,
    /// Loads applied for the next step, by grain id.
    pub pending: Vec<Load>,
    /// Every distinct kind of grain added so far (the basis of the critical time step).
    pub extremes: Vec<GrainKind>,
    /// Counts and timings of the last step, as [`World::stats`] reports them.
    pub stats: StepStats,
}

/// One grain in a [`WorldSnapshot`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct GrainSnapshot {
    /// Shape.
    pub shape: ShapeId,
    /// Material.
    pub material: MaterialId,
    /// Position of the centre of mass and rotation of the principal frame.
    pub pose: Pose,
    /// Mass and principal moments; checked (bit for bit) against shape and material.
    pub inertia: Inertia,
    /// How the grain moves.
    pub motion: IntegratorState,
    /// Periods it has been moved by to stay in the periodic box.
    pub image: ImageCount,
}

/// The integrator state of a grain.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum IntegratorState {
    /// Scaled derivatives of the Gear predictor–corrector.
    Gear(GearState),
    /// Velocity Verlet state.
    Verlet(VerletState),
    /// A grain added but not stepped yet: its integrator state is set up at its first step.
    Fresh {
        /// Velocity of the centre of mass.
        velocity: DVec3,
        /// Angular velocity, world frame.
        angular_velocity: DVec3,
    },
}

/// One pair of the contact list in a [`WorldSnapshot`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContactSnapshot {
    /// The two proxies.
    pub pair: ProxyPair,
    /// Closest features and last contact normal of the narrow phase.
    pub features: FeatureCache,
    /// What the pair's last overlap learned (the faces that bounded it).
    pub overlap_hint: OverlapHint,
    /// Whether the bodies touched in the last step.
    pub touching: bool,
    /// Whether the pair is met `b` first (its state was made that way round, before the
    /// proxies were renumbered).
    pub flipped: bool,
    /// The force model's per-contact history (for instance the tangential spring).
    pub history: Vec<f64>,
}

/// A pair's state in a [`WorldSnapshot`] named by its bodies rather than by broad-phase
/// proxies, whose numbering is the world's own (renumbered in space, and by each process
/// its own way in a decomposed run) and changes no result.
#[derive(Debug, Clone, PartialEq)]
pub struct PairRecord<'a> {
    /// The body the pair is met from.
    pub first: BodyRef,
    /// The other body.
    pub second: BodyRef,
    /// Closest features (of `first`, then of `second`) and last contact normal.
    pub features: FeatureCache,
    /// What the pair's last overlap learned.
    pub overlap_hint: OverlapHint,
    /// Whether the bodies touched in the last step.
    pub touching: bool,
    /// The force model's per-contact history.
    pub history: &'a [f64],
}

impl WorldSnapshot {
    /// The contact list by bodies, in the order of their identities (grains by id, then
    /// walls by id): equal for two snapshots of the same state however each world numbered
    /// its proxies.
    #[must_use]
    pub fn pairs_by_body(&self) -> Vec<PairRecord<'_>> {
        let key = |b: BodyRef| match b {
            BodyRef::Grain(id) => (0, id.0),
            BodyRef::Wall(w) => (1, w.0),
        };
        let mut pairs: Vec<PairRecord<'_>> = self
            .contacts
            .iter()
            .filter_map(|c| {
                let (first, second) = c.pair.oriented(c.flipped);
                let first = *self.proxies.get(first as usize)?;
                let second = *self.proxies.get(second as usize)?;
                Some(PairRecord {
                    first,
                    second,
                    features: c.features,
                    overlap_hint: c.overlap_hint,
                    touching: c.touching,
                    history: &c.history,
                })
            })
            .collect();
        pairs.sort_by_key(|p| {
            let (x, y) = (key(p.first), key(p.second));
            (x.min(y), x.max(y))
        });
        pairs
    }
}

/// Whether two sets of periodic axes are the same to the bit.
fn same_periods(a: &Periodic, b: &Periodic) -> bool {
    a.axes.iter().zip(&b.axes).all(|(x, y)| match (x, y) {
        (Some(x), Some(y)) => {
            x.lower.to_bits() == y.lower.to_bits() && x.upper.to_bits() == y.upper.to_bits()
        }
        (None, None) => true,
        _ => false,
    })
}

/// A [`SimError::SnapshotMismatch`].
pub(crate) fn mismatch(what: impl Into<String>) -> SimError {
    SimError::SnapshotMismatch { what: what.into() }
}

pub(crate) fn check(ok: bool, what: impl FnOnce() -> String) -> Result<(), SimError> {
    if ok { Ok(()) } else { Err(mismatch(what())) }
}

pub(crate) fn load_is_finite(load: &Load) -> bool {
    load.force.is_finite() && load.torque.is_finite()
}

fn state_is_finite(state: &IntegratorState) -> bool {
    match state {
        IntegratorState::Gear(g) => {
            g.position.iter().all(|v| v.is_finite()) && g.rotation.iter().all(|v| v.is_finite())
        }
        IntegratorState::Verlet(v) => {
            v.velocity.is_finite() && v.angular_momentum.is_finite() && load_is_finite(&v.load)
        }
        IntegratorState::Fresh {
            velocity,
            angular_velocity,
        } => velocity.is_finite() && angular_velocity.is_finite(),
    }
}

pub(crate) fn feature_fits(feature: Feature, poly: Option<&ConvexPolyhedron>) -> bool {
    poly.is_none_or(|p| feature.is_valid_for(p))
}

impl World {
    /// The dynamic state of the world, for a checkpoint.
    ///
    /// The contact forces of the last step are not kept: after [`World::restore`],
    /// [`World::contacts`] reports none until the next step (the forces themselves are
    /// recomputed each step and do not influence it).
    ///
    /// In a decomposed run ([`World::decompose`]) this is what this process holds, its
    /// ghosts without their integrator state: [`World::gathered_snapshot`] gives the run's.
    #[must_use]
    pub fn snapshot(&self) -> WorldSnapshot {
        // By id: on a single process, where slots are ids, as the world holds them.
        let ids = self.numbering.id_count() as usize;
        let mut grains = vec![None; ids];
        let mut pending = vec![Load::default(); ids];
        for slot in 0..self.slots.len() {
            if let Some(g) = self.grain_snapshot(slot) {
                let id = self.numbering.id(slot) as usize;
                grains[id] = Some(g);
                pending[id] = self.pending[slot];
            }
        }
        WorldSnapshot {
            grains,
            proxies: self
                .proxies
                .iter()
                .map(|body| match *body {
                    Body::Grain(_, id) => BodyRef::Grain(GrainId(id)),
                    Body::Wall(w) => BodyRef::Wall(WallId(w)),
                })
                .collect(),
            boxes: self.boxes.clone(),
            contacts: self
                .listed_contacts()
                .map(|(c, _)| ContactSnapshot {
                    pair: c.pair,
                    features: c.features,
                    overlap_hint: c.overlap_hint,
                    touching: c.touching,
                    flipped: c.flipped,
                    history: c.history.as_slice().to_vec(),
                })
                .collect(),
            pending,
            ..self.snapshot_head()
        }
    }

    /// The state of [`World::snapshot`] but for its lists per grain, per proxy and per
    /// pair, left empty: nothing that grows with the grains (a decomposed run's frame of a
    /// checkpoint in pieces).
    pub(crate) fn snapshot_head(&self) -> WorldSnapshot {
        WorldSnapshot {
            format: SNAPSHOT_FORMAT,
            time_base: self.time_base,
            steps_since_base: self.steps_since_base,
            steps: self.steps,
            dt: self.params.dt,
            gravity: self.params.gravity,
            integrator: self.params.integrator,
            bounding: self.params.bounding,
            margin: self.params.margin,
            periodic: self.params.periodic,
            force_model: self.laws.default.as_ref().map(|m| m.name().to_string()),
            grains: Vec::new(),
            proxies: Vec::new(),
            boxes: Vec::new(),
            contacts: Vec::new(),
            wall_loads: self.wall_loads.clone(),
            pending: Vec::new(),
            extremes: self.extremes.clone(),
            stats: self.stats,
        }
    }

    /// The grain in `slot` as a checkpoint keeps it (none for a removed grain).
    pub(crate) fn grain_snapshot(&self, slot: usize) -> Option<GrainSnapshot> {
        let entity = self.slots[slot]?;
        let image = self.images[slot];
        let mut query = self.ecs.query_one::<(
            &Pose,
            &Inertia,
            &ShapeId,
            &MaterialId,
            Option<&GearState>,
            Option<&VerletState>,
            Option<&Fresh>,
        )>(entity);
        // Every live slot's entity has these components.
        let (pose, inertia, shape, material, gear, verlet, fresh) = query.get().ok()?;
        let motion = match (gear, verlet, fresh) {
            (Some(g), _, _) => IntegratorState::Gear(*g),
            (_, Some(v), _) => IntegratorState::Verlet(*v),
            (_, _, Some(f)) => IntegratorState::Fresh {
                velocity: f.velocity,
                angular_velocity: f.angular_velocity,
            },
            // A ghost of a decomposed run, whose state its owner keeps (a grain is fresh
            // until its first step sets up its state).
            _ => IntegratorState::Fresh {
                velocity: DVec3::ZERO,
                angular_velocity: DVec3::ZERO,
            },
        };
        Some(GrainSnapshot {
            shape: *shape,
            material: *material,
            pose: *pose,
            inertia: *inertia,
            motion,
            image,
        })
    }

    /// Continues from a checkpoint. The world must have been rebuilt as the one the
    /// snapshot was taken from — the same shapes, materials and walls added in the same
    /// order, the same force model and parameters (the time step and gravity are taken from
    /// the snapshot) — and have no grains yet. The thread count may differ.
    ///
    /// Nothing is changed unless the snapshot is accepted.
    ///
    /// # Errors
    /// [`SimError::SnapshotMismatch`] when the world already has grains, or the snapshot
    /// does not fit it (unknown shape or material, other wall count, integrator, bounding
    /// method, margin or force model, a grain whose inertia does not match its shape and
    /// material) or is inconsistent (lengths, order, non-finite values);
    /// [`SimError::TimeStepTooLarge`] if the snapshot's time step exceeds the force
    /// model's critical time step.
    pub fn restore(&mut self, snapshot: WorldSnapshot) -> Result<(), SimError> {
        let proxies = self.check_snapshot(&snapshot)?;
        let WorldSnapshot {
            time_base,
            steps_since_base,
            steps,
            dt,
            gravity,
            grains,
            boxes,
            contacts,
            wall_loads,
            pending,
            extremes,
            stats,
            ..
        } = snapshot;

        // The world has no grains (checked), so its proxies are its walls: all replaced.
        let n = grains.len();
        self.numbering = GrainNumbering::identity(n as u32, |id| grains[id as usize].is_some());
        self.ecs.clear();
        self.slots = Vec::with_capacity(n);
        self.images = vec![[0; 3]; n];
        for (slot, grain) in grains.into_iter().enumerate() {
            let Some(g) = grain else {
                self.slots.push(None);
                continue;
            };
            self.images[slot] = g.image;
            let entity = spawn_grain(&mut self.ecs, slot as u32, &g);
            self.slots.push(Some(entity));
        }
        self.grain_proxy = vec![0; n];
        self.wall_proxy = vec![0; self.walls.len()];
        for (p, body) in proxies.iter().enumerate() {
            match *body {
                Body::Grain(s, _) => self.grain_proxy[s as usize] = p as u32,
                Body::Wall(w) => self.wall_proxy[w as usize] = p as u32,
            }
        }
        self.proxies = proxies;
        self.boxes = boxes;
        self.pending = pending;
        self.kinematics = vec![None; n];
        self.motion = vec![Reach::UNKNOWN; n];
        self.loads = vec![Load::default(); n];
        self.wall_loads = wall_loads;
        self.contacts = contacts
            .into_iter()
            .map(|c| Contact {
                pair: c.pair,
                features: c.features,
                overlap_hint: c.overlap_hint,
                touching: c.touching,
                fresh: false,
                flipped: c.flipped,
                ended: false,
                // Its length was checked against the model's, at most MAX_HISTORY.
                history: History::from_slice(&c.history).unwrap_or(History::zeros(0)),
                // Every process of a distributed run restores the same states.
                owner: crate::distribute::UNASSIGNED,
            })
            .collect();
        self.contact_forces.clear();
        self.joined.clear();
        self.extremes = extremes;
        self.stats = stats;
        self.time_base = time_base;
        self.steps_since_base = steps_since_base;
        self.steps = steps;
        self.params.dt = dt;
        self.params.gravity = gravity;

        // A new broad phase fed the last step's boxes has that step's pair set (every
        // method reports the same pairs for the same boxes), so the next step's events
        // are those of the uninterrupted run.
        self.broad = self.params.broad_phase.build(self.params.periodic);
        let mut events = PairEvents::default();
        self.broad.update(&self.boxes, &mut events);
        self.events.clear();
        self.reset_regions();
        Ok(())
    }

    /// Checks grain `slot`'s state `g` against the world (its shape, material and inertia,
    /// a finite pose and integrator state of `integrator`).
    pub(crate) fn check_grain(
        &self,
        slot: usize,
        g: &GrainSnapshot,
        integrator: IntegratorKind,
    ) -> Result<(), SimError> {
        let shape = self.shapes.get(g.shape).map_err(|_| {
            mismatch(format!(
                "grain {slot} has shape {}; the world has {} shapes",
                g.shape.0,
                self.shapes.shapes().len()
            ))
        })?;
        let material = self.materials.get(g.material.0 as usize).ok_or_else(|| {
            mismatch(format!(
                "grain {slot} has material {}; the world has {} materials",
                g.material.0,
                self.materials.len()
            ))
        })?;
        let rotation = g.pose.rotation;
        check(
            g.pose.position.is_finite()
                && rotation.is_finite()
                && (rotation.length() - 1.0).abs() < 1e-6,
            || format!("grain {slot}: pose {:?}", g.pose),
        )?;
        let expected = Inertia {
            mass: material.density * shape.volume,
            principal: shape.unit_inertia * material.density,
        };
        let bits = |i: &Inertia| (i.mass.to_bits(), i.principal.to_array().map(f64::to_bits));
        check(bits(&g.inertia) == bits(&expected), || {
            format!(
                "grain {slot}: inertia {:?} differs from {:?} of shape {} with material {} \
                 (were the shapes or materials rebuilt differently?)",
                g.inertia, expected, g.shape.0, g.material.0
            )
        })?;
        let kind_fits = match g.motion {
            IntegratorState::Gear(_) => integrator == IntegratorKind::Gear,
            IntegratorState::Verlet(_) => integrator == IntegratorKind::Verlet,
            IntegratorState::Fresh { .. } => true,
        };
        check(kind_fits, || {
            format!(
                "grain {slot} has a state of another integrator than {:?}",
                integrator
            )
        })?;
        check(state_is_finite(&g.motion), || {
            format!("grain {slot}: integrator state is not finite")
        })?;
        Ok(())
    }

    /// Checks `s` against the world; returns its proxies.
    fn check_snapshot(&self, s: &WorldSnapshot) -> Result<Vec<Body>, SimError> {
        check(s.format == SNAPSHOT_FORMAT, || {
            format!(
                "snapshot format {} (this version reads {SNAPSHOT_FORMAT})",
                s.format
            )
        })?;
        check(self.slots.is_empty(), || {
            format!(
                "the world already has {} grain slots; restore into a world without grains",
                self.slots.len()
            )
        })?;
        let p = &self.params;
        check(s.integrator == p.integrator, || {
            format!(
                "integrator {:?} in the snapshot, {:?} in the world",
                s.integrator, p.integrator
            )
        })?;
        check(s.bounding == p.bounding, || {
            format!(
                "bounding method {:?} in the snapshot, {:?} in the world",
                s.bounding, p.bounding
            )
        })?;
        check(s.margin.to_bits() == p.margin.to_bits(), || {
            format!(
                "margin {} in the snapshot, {} in the world",
                s.margin, p.margin
            )
        })?;
        check(same_periods(&s.periodic, &p.periodic), || {
            format!(
                "periodic axes {:?} in the snapshot, {:?} in the world",
                s.periodic.axes, p.periodic.axes
            )
        })?;
        let model = self.laws.default.as_deref();
        check(s.force_model.as_deref() == model.map(|m| m.name()), || {
            format!(
                "force model {:?} in the snapshot, {:?} in the world",
                s.force_model,
                model.map(|m| m.name())
            )
        })?;
        check(s.dt.is_finite() && s.dt > 0.0, || {
            format!("time step {}", s.dt)
        })?;
        check(s.gravity.is_finite(), || format!("gravity {:?}", s.gravity))?;
        check(s.time_base.is_finite(), || {
            format!("time base {}", s.time_base)
        })?;
        check(s.steps_since_base <= s.steps, || {
            format!(
                "{} steps since the last time-step change, {} in all",
                s.steps_since_base, s.steps
            )
        })?;

        // Proxies: every grain slot and every wall exactly once, in any order (the grains
        // are renumbered in space from time to time).
        check(s.grains.len() < u32::MAX as usize, || {
            format!("{} grain slots", s.grains.len())
        })?;
        let mut grain_seen = vec![false; s.grains.len()];
        let mut wall_seen = vec![false; self.walls.len()];
        let mut proxies = Vec::with_capacity(s.proxies.len());
        for (i, body) in s.proxies.iter().enumerate() {
            let (seen, index, kind) = match *body {
                BodyRef::Grain(GrainId(g)) => {
                    proxies.push(Body::Grain(g, g));
                    (&mut grain_seen, g, "grain")
                }
                BodyRef::Wall(WallId(w)) => {
                    proxies.push(Body::Wall(w));
                    (&mut wall_seen, w, "wall")
                }
            };
            let count = seen.len();
            match seen.get_mut(index as usize) {
                Some(seen) if !*seen => *seen = true,
                Some(_) => return Err(mismatch(format!("proxy {i}: {kind} {index} twice"))),
                None => {
                    return Err(mismatch(format!(
                        "proxy {i}: {kind} {index}, but the world has {count} {kind}s"
                    )));
                }
            }
        }
        check(wall_seen.iter().all(|s| *s), || {
            format!(
                "{} walls in the snapshot, {} in the world",
                wall_seen.iter().filter(|s| **s).count(),
                self.walls.len()
            )
        })?;
        check(grain_seen.iter().all(|s| *s), || {
            format!(
                "{} grain proxies for {} grain slots",
                grain_seen.iter().filter(|s| **s).count(),
                s.grains.len()
            )
        })?;
        check(s.boxes.len() == proxies.len(), || {
            format!("{} boxes for {} proxies", s.boxes.len(), proxies.len())
        })?;
        for (i, b) in s.boxes.iter().enumerate() {
            check(
                b.is_none_or(|b| b.min.is_finite() && b.max.is_finite()),
                || format!("box of proxy {i} is not finite"),
            )?;
        }
        check(s.pending.len() == s.grains.len(), || {
            format!(
                "{} pending loads for {} grain slots",
                s.pending.len(),
                s.grains.len()
            )
        })?;
        check(s.pending.iter().all(load_is_finite), || {
            "a pending load is not finite".to_string()
        })?;
        check(s.wall_loads.len() == self.walls.len(), || {
            format!(
                "{} wall loads for {} walls",
                s.wall_loads.len(),
                self.walls.len()
            )
        })?;
        check(s.wall_loads.iter().all(load_is_finite), || {
            "a wall load is not finite".to_string()
        })?;

        // Grains.
        for (slot, grain) in s.grains.iter().enumerate() {
            if let Some(g) = grain {
                self.check_grain(slot, g, s.integrator)?;
            }
        }
        check(s.grains.is_empty() == s.extremes.is_empty(), || {
            "grain kinds present without grains or missing with grains".to_string()
        })?;
        for kind in &s.extremes {
            check(kind.is_valid(), || format!("grain kind {kind:?}"))?;
        }
        self.check_time_step(s.dt, self.laws.all(), &s.extremes)?;

        // Contacts: sorted, valid proxies, history as long as the model keeps, features
        // on the polyhedra they refer to.
        let history_len = model.map(|m| m.history_len());
        let solid = |proxy: u32| -> Option<&ConvexPolyhedron> {
            match proxies[proxy as usize] {
                Body::Grain(g, _) => s.grains[g as usize]
                    .as_ref()
                    .and_then(|g| self.shapes.get(g.shape).ok())
                    .map(|shape| &shape.body),
                Body::Wall(w) => match &self.walls[w as usize].geometry {
                    WallGeometry::Body(poly) => Some(poly.as_ref()),
                    WallGeometry::HalfSpace { .. } => None,
                },
            }
        };
        let mut previous: Option<ProxyPair> = None;
        for (i, c) in s.contacts.iter().enumerate() {
            check(
                c.pair.a < c.pair.b && (c.pair.b as usize) < proxies.len(),
                || {
                    format!(
                        "contact {i}: pair {:?} of {} proxies",
                        c.pair,
                        proxies.len()
                    )
                },
            )?;
            check(previous.is_none_or(|p| p < c.pair), || {
                format!("contact {i}: the contact list is not sorted")
            })?;
            previous = Some(c.pair);
            check(history_len == Some(c.history.len()), || {
                format!(
                    "contact {i}: {} history values; the force model keeps {:?}",
                    c.history.len(),
                    history_len
                )
            })?;
            check(
                c.history.iter().all(|h| h.is_finite()) && c.features.normal_hint.is_finite(),
                || format!("contact {i}: history or normal hint is not finite"),
            )?;
            let (first, second) = c.pair.oriented(c.flipped);
            check(
                feature_fits(c.features.feature_a, solid(first))
                    && feature_fits(c.features.feature_b, solid(second)),
                || format!("contact {i}: cached features do not exist on its bodies"),
            )?;
        }
        Ok(proxies)
    }
}

/// A grain's components with its integrator state.
fn add<T>(
    base: (Slot, Pose, Inertia, ShapeId, MaterialId),
    state: T,
) -> (Slot, Pose, Inertia, ShapeId, MaterialId, T) {
    (base.0, base.1, base.2, base.3, base.4, state)
}

/// Spawns the grain `g` of a snapshot (or a migration) in `slot`.
pub(crate) fn spawn_grain(ecs: &mut hecs::World, slot: u32, g: &GrainSnapshot) -> hecs::Entity {
    let base = (Slot(slot), g.pose, g.inertia, g.shape, g.material);
    match g.motion {
        IntegratorState::Gear(state) => ecs.spawn(add(base, state)),
        IntegratorState::Verlet(state) => ecs.spawn(add(base, state)),
        IntegratorState::Fresh {
            velocity,
            angular_velocity,
        } => ecs.spawn(add(
            base,
            Fresh {
                velocity,
                angular_velocity,
            },
        )),
    }
}
