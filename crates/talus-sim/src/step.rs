//! The step (design §2): a fixed list of named stages, each timed, each a loop over the
//! grains or the pairs.
//!
//! 0. *renumber*, every [`crate::SimParams::renumber_every`] steps: the grains' proxies put
//!    in the order of a space-filling curve ([`World::renumber`]);
//! 1. [`World::start_fresh_grains`] and *predict*: the integrator moves every grain to where
//!    forces are evaluated;
//! 2. *bounds*: a bounding box per grain, by the min-max or the ellipsoid method (thesis
//!    §4.1.3), and each wall's state at the end of the step;
//! 3. *broad*: the broad phase updates the overlapping pairs;
//! 4. *narrow*: for every pair of overlapping boxes, the closest features and, when the
//!    bodies penetrate, their overlap and the force model's force — in parallel over pairs,
//!    and beside the broad phase for the pairs already listed (the pairs it starts are met
//!    after it; see [`World::broad_beside_narrow`]). In a distributed run
//!    ([`crate::distribute`]) each pair is evaluated by one process: before the narrow phase
//!    the pairs are *assigned* to the processes (their states moved to new owners), after it
//!    the processes *share* the forces they found;
//! 5. *accumulate*: the contact forces summed per body in the order of the ids of the
//!    bodies they come from ([`crate::load_sums`]: so the sums depend neither on the threads
//!    nor on the numbering of the pairs), then gravity, the loads applied for this step and
//!    an optional force field;
//! 6. *correct*: the integrator completes the step with those loads;
//! 7. *wrap*, with periodic axes ([`crate::periodic`]): every grain that left the periodic
//!    box brought back in through the opposite face, its image count kept.
//!
//! The step is generic over the [`Integrator`]: the scheme is chosen once per step.

use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use hecs::Entity;
use talus_geom::glam::DVec3;
use talus_geom::{Aabb, FeatureCache, Pose};

use crate::broad::ProxyPair;
use crate::contact::{BodyView, Contact, ContactForce, Solid, apply_events, evaluate};
use crate::distribute::PairOwners;
use crate::distribute::decompose::{Ghost, Held};
use crate::integrate::{
    GearState, Inertia, Integrator, IntegratorKind, Kinematics, Load, VerletState,
};
use crate::joined_pairs::JoinedPairs;
use crate::laws::{ContactLaws, NO_MATERIAL};
use crate::load_sums::{LoadSums, identity_key};
use crate::motion::Reach;
use crate::periodic::Periodic;
use crate::shape::{Shape, ShapeId, ShapeLibrary};
use crate::wall::{Wall, WallGeometry};
use crate::wall_sums::WallSums;
use crate::workers::Workers;
use crate::world::{Body, BoundingMethod, FieldInput, Fresh, Slot, StepStats, World};

/// Below this many pairs the narrow phase runs on the calling thread.
const PARALLEL_PAIRS: usize = 256;

/// Below this many grains the stages over the grains (bounds, the bodies' states) run on
/// the calling thread alone. They take 50 to 100 ns per grain, and a shared stage costs
/// a few microseconds to start (the helper already awake): at 2 000 grains on two threads
/// the bounds went from 3.0 to 1.7–2.2 % of the `contact_step` bench's step with this bound
/// instead of 4 096 (which was measured when a parallel loop had to wake the pool's
/// threads, some 60 µs on a virtual machine whose idle cores sleep).
const PARALLEL_GRAINS: usize = 1024;

/// Fewest grains one thread takes at a time in a stage over the grains.
const PARALLEL_CHUNK: usize = 256;

/// One body as the contact stage sees it this step, by value (kept in a buffer reused
/// from step to step); [`BodyViews::view`] adds its solid.
///
/// Laid out in the order the narrow phase reads it, from the start of a cache line: what
/// decides whether a pair is met at all (its law, how far it moved, its size) first, in the
/// line a pair that is still apart reads alone.
#[derive(Debug, Clone, Copy)]
#[repr(C, align(64))]
pub(crate) struct BodyState {
    material: u16,
    /// How far any point of it moved since the last step's evaluation (infinite for
    /// half-spaces and absent bodies, whose pairs are always met): see [`crate::motion`].
    moved: f64,
    radius: f64,
    mass: f64,
    pub(crate) pose: Pose,
    velocity: DVec3,
    angular_velocity: DVec3,
    solid: SolidKey,
    /// The centre of its bounding box: which image of it another body meets.
    box_center: DVec3,
}

impl BodyState {
    const ABSENT: BodyState = BodyState {
        solid: SolidKey::Absent,
        pose: Pose::IDENTITY,
        velocity: DVec3::ZERO,
        angular_velocity: DVec3::ZERO,
        mass: f64::INFINITY,
        radius: f64::INFINITY,
        material: NO_MATERIAL,
        box_center: DVec3::ZERO,
        moved: f64::INFINITY,
    };

    /// The shift by whole periods that brings body `b` to its image nearest body `a`: zero
    /// without periodic axes and for a half-space, which is the same after any shift along
    /// them.
    fn image_shift(periodic: &Periodic, a: &BodyState, b: &BodyState) -> DVec3 {
        if periodic.is_none() {
            return DVec3::ZERO;
        }
        match (a.solid, b.solid) {
            (SolidKey::HalfSpace(_) | SolidKey::Absent, _)
            | (_, SolidKey::HalfSpace(_) | SolidKey::Absent) => DVec3::ZERO,
            _ => periodic.nearest_image(a.box_center, b.box_center),
        }
    }
}

/// Where a body's solid is found.
#[derive(Debug, Clone, Copy)]
enum SolidKey {
    /// A grain of this shape.
    Grain(ShapeId),
    /// A wall with a polyhedral body.
    Wall(u32),
    /// A half-space with this outward normal (world frame).
    HalfSpace(DVec3),
    /// Nothing (a removed body).
    Absent,
}

/// The bodies of the contact stage with what their solids are looked up in.
struct BodyViews<'a> {
    bodies: &'a [BodyState],
    shapes: &'a ShapeLibrary,
    walls: &'a [Wall],
    periodic: Periodic,
}

impl BodyViews<'_> {
    /// Body `proxy` with its solid. Inlined, as is [`BodyViews::pair_views`], so that the
    /// views are built where the narrow phase keeps them: returned through a call, the two
    /// views (152 bytes each) were copied again for every pair (the settled bed's step took
    /// 2 % longer).
    #[inline(always)]
    fn view(&self, proxy: usize) -> BodyView<'_> {
        let b = self.bodies[proxy];
        let solid = match b.solid {
            SolidKey::Grain(shape) => self
                .shapes
                .get(shape)
                .map_or(Solid::Absent, |s| Solid::Polyhedron(&s.body)),
            SolidKey::Wall(w) => match &self.walls[w as usize].geometry {
                WallGeometry::Body(poly) => Solid::Polyhedron(poly),
                WallGeometry::HalfSpace { .. } => Solid::Absent,
            },
            SolidKey::HalfSpace(normal) => Solid::HalfSpace(normal),
            SolidKey::Absent => Solid::Absent,
        };
        BodyView {
            solid,
            pose: b.pose,
            velocity: b.velocity,
            angular_velocity: b.angular_velocity,
            mass: b.mass,
            radius: b.radius,
        }
    }

    /// The two bodies of `pair` in the order it is met in, the second at its image nearest
    /// the first, so that the overlap's points are where the first is. Which body is moved
    /// follows the order the pair is met in (by the bodies' ids), not the proxies' numbers,
    /// which renumbering and the processes of a decomposed run change: a shift by a period
    /// rounds differently on either body.
    #[inline(always)]
    fn pair_views(&self, pair: ProxyPair, flipped: bool) -> (BodyView<'_>, BodyView<'_>) {
        let (first, second) = pair.oriented(flipped);
        let (first, second) = (first as usize, second as usize);
        let mut image = self.view(second);
        image.pose.position +=
            BodyState::image_shift(&self.periodic, &self.bodies[first], &self.bodies[second]);
        (self.view(first), image)
    }
}

/// Where the fresh pairs of a step are: all in the contact list, or all joined
/// ([`crate::joined_pairs`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FreshPairs {
    Listed,
    Joined,
}

/// Stage 4 over `lists` (pairs and their forces; only the fresh pairs when `fresh_only`;
/// only those `owners` gives this process in a distributed run): closest features, overlap
/// and force of each pair, on `threads` threads; each pair's result in its forces, in the
/// list's order; an ended pair has none. `beside` runs first on the calling thread.
/// Returns whether the pairs were shared among threads.
#[allow(clippy::too_many_arguments)]
fn narrow(
    lists: [(&mut [Contact], &mut [Option<ContactForce>]); 2],
    views: &BodyViews,
    laws: &ContactLaws,
    owners: PairOwners,
    dt: f64,
    threads: usize,
    fresh_only: bool,
    workers: &Workers,
    beside: &mut dyn FnMut(),
) -> bool {
    let one = |(contact, out): (&mut Contact, &mut Option<ContactForce>)| {
        if contact.ended || (fresh_only && !contact.fresh) {
            return;
        }
        contact.fresh = false;
        if !owners.claims(contact) {
            // Another process of a distributed run evaluates it and sends its force.
            *out = None;
            return;
        }
        let flipped = contact.flipped;
        let (first, second) = contact.oriented();
        let (body_a, body_b) = (
            &views.bodies[first as usize],
            &views.bodies[second as usize],
        );
        let law = laws.law(body_a.material, body_b.material);
        // A pair whose bodies cannot have come within the law's reach (zero for a law of
        // touching bodies; a liquid bridge's rupture gap) since its last query has no force,
        // as the query would find (its history was forgotten when it was last beyond).
        let reach = law.map_or(0.0, |m| m.range().max(0.0));
        if still_apart(&mut contact.features, body_a, body_b, reach) {
            contact.touching = false;
            *out = None;
            return;
        }
        let (a, b) = views.pair_views(contact.pair, flipped);
        *out = match law {
            Some(model) if a.mass.is_finite() || b.mass.is_finite() => {
                // The list's force is on the pair's `b`.
                evaluate(contact, &a, &b, model, dt).map(|f| if flipped { f.reversed() } else { f })
            }
            _ => None,
        };
    };
    // Each pair's result depends on that pair alone, so the split between threads changes
    // nothing; few pairs are not worth waking the workers for.
    let [(listed, listed_forces), (joined, joined_forces)] = lists;
    if threads == 1 || listed.len() + joined.len() < PARALLEL_PAIRS {
        beside();
        let pairs = listed.iter_mut().zip(listed_forces.iter_mut());
        pairs
            .chain(joined.iter_mut().zip(joined_forces.iter_mut()))
            .for_each(one);
        return false;
    }
    fn chunks<'l>(
        contacts: &'l mut [Contact],
        forces: &'l mut [Option<ContactForce>],
        size: usize,
    ) -> impl DoubleEndedIterator<Item = (&'l mut [Contact], &'l mut [Option<ContactForce>])> {
        contacts.chunks_mut(size).zip(forces.chunks_mut(size))
    }
    let size = ((listed.len() + joined.len()) / (threads * NARROW_CHUNKS_PER_THREAD))
        .clamp(NARROW_CHUNK_MIN, NARROW_CHUNK);
    workers.share(
        chunks(listed, listed_forces, size).chain(chunks(joined, joined_forces, size)),
        |(contacts, forces)| contacts.iter_mut().zip(forces.iter_mut()).for_each(one),
        beside,
    );
    true
}

/// Pairs a thread of the narrow phase takes at a time, at most.
const NARROW_CHUNK: usize = 64;

/// Pairs a thread of the narrow phase takes at a time, at least.
const NARROW_CHUNK_MIN: usize = 16;

/// Chunks per thread the narrow phase's pairs are cut into, as long as they hold between
/// [`NARROW_CHUNK_MIN`] and [`NARROW_CHUNK`] pairs: the threads end a stage at most a chunk
/// apart, so a small world's pairs are cut finer.
const NARROW_CHUNKS_PER_THREAD: usize = 32;

/// Whether a pair's bodies are still farther apart than `reach`: the gap its last query
/// found ([`FeatureCache::clearance`]) less how far both bodies have moved since stays above
/// `reach` by a margin for round-off (a billionth of the smaller's size: a wall's is
/// infinite); what is left is kept for the next step.
fn still_apart(features: &mut FeatureCache, a: &BodyState, b: &BodyState, reach: f64) -> bool {
    let left = features.clearance - (a.moved + b.moved);
    if left > reach + 1e-9 * a.radius.min(b.radius) {
        features.clearance = left;
        true
    } else {
        false
    }
}

impl World {
    /// One time step with gravity and the loads applied for it.
    pub fn step(&mut self) -> &StepStats {
        self.step_with(&mut |_| Load::default())
    }

    /// One time step with, in addition, the load `field` returns for each grain, evaluated
    /// where the integrator evaluates forces (at the predicted state for Gear). `field` is
    /// called once per grain in slot order (that of the ids on a single process).
    pub fn step_with(&mut self, field: &mut dyn FnMut(&FieldInput) -> Load) -> &StepStats {
        match self.params.integrator {
            IntegratorKind::Gear => self.step_as::<GearState>(field),
            IntegratorKind::Verlet => self.step_as::<VerletState>(field),
        }
    }

    /// The stages of one step with integrator `I`.
    fn step_as<I: Integrator>(&mut self, field: &mut dyn FnMut(&FieldInput) -> Load) -> &StepStats {
        let dt = self.params.dt;
        let t_end = self.time_base + (self.steps_since_base + 1) as f64 * dt;

        // One helper waits actively until the step ends (see [`crate::workers`]), when a
        // stage of this step can be shared: a small world's helpers keep sleeping.
        let _awake = (self.contacts.len() >= PARALLEL_PAIRS || self.parallel_grains())
            .then(|| self.workers.awake());
        let start = Instant::now();
        let every = self.params.renumber_every;
        if every > 0 && self.steps > 0 && self.steps % every == 0 {
            self.renumber();
        }
        let migrating = self.migrate();
        let renumbered = Instant::now();
        self.start_fresh_grains::<I>(field);
        self.predict::<I>(dt);
        let predicted = Instant::now();
        let own_region = self.grain_bounds();
        let (grain_region, ghosts) = self.exchange_ghosts(own_region);
        self.wall_bounds(t_end, grain_region);
        let bounded = Instant::now();
        let (broad, broad_beside, exchange) = self.broad_beside_narrow(dt);
        self.numbering.broad_phase_updated();
        let narrowed = Instant::now();
        let counts = self.accumulate(field, t_end);
        let accumulated = Instant::now();
        self.correct::<I>(dt);
        let corrected = Instant::now();
        self.wrap();
        let wrapped = Instant::now();

        // The broad phase's time is taken out of the narrow phase's when it ran first on the
        // same thread; beside it, on another, it took none of the narrow phase's time.
        let narrow = (narrowed - bounded)
            .saturating_sub(if broad_beside { Duration::ZERO } else { broad })
            .saturating_sub(exchange);
        self.account_narrow(narrow);
        self.pending.iter_mut().for_each(|l| *l = Load::default());
        self.steps_since_base += 1;
        self.steps += 1;
        let (pairs, pairs_started, pairs_ended) = counts.pairs.unwrap_or((
            self.broad.pair_count(),
            self.events.started.len(),
            self.events.ended.len(),
        ));
        self.stats = StepStats {
            renumber: (renumbered - start).saturating_sub(migrating),
            predict: predicted - renumbered,
            bounds: (bounded - predicted).saturating_sub(ghosts),
            broad,
            narrow,
            forces: accumulated - narrowed,
            correct: corrected - accumulated,
            wrap: wrapped - corrected,
            pairs,
            pairs_started,
            pairs_ended,
            contacts: counts.contacts,
            coordination: counts.coordination,
            max_overlap_ratio: counts.max_overlap_ratio,
            grains: counts.grains,
        };
        &self.stats
    }

    /// Whether the stages over the grains run on the worker threads: with several, and
    /// enough grains to share.
    fn parallel_grains(&self) -> bool {
        self.workers.threads() > 1 && self.slots.len() >= PARALLEL_GRAINS
    }

    /// Stage 1: every grain to where the forces are evaluated; its kinematics and inertia
    /// by slot. On the calling thread: spread over two threads it gained nothing measurable
    /// even at 18 000 grains (the stage is a few per cent of a step, and writing the results
    /// by slot from several threads costs what the second thread saves).
    fn predict<I: Integrator>(&mut self, dt: f64) {
        for (slot, pose, state, inertia) in
            self.ecs.query_mut::<(&Slot, &mut Pose, &mut I, &Inertia)>()
        {
            let s = slot.0 as usize;
            let before = *pose;
            let kinematics = state.predict(pose, inertia, dt);
            // Since the last evaluation: the correction that followed it, then this step.
            self.motion[s] = state.corrected().then(Reach::between(&before, pose));
            // Field by field into an entry that holds some already (every one after a
            // grain's first step): the whole entry built apart and moved in went through a
            // call to `memcpy`, 7 % of a step of grains in free fall.
            match &mut self.kinematics[s] {
                Some((k, i)) => {
                    *k = kinematics;
                    *i = *inertia;
                }
                entry => *entry = Some((kinematics, *inertia)),
            }
        }
    }

    /// Stage 2, for the grains: a bounding box per grain stepped here (not the ghosts of a
    /// decomposed run, whose boxes come with them), grown by the margin; returns the box
    /// around them all. Over the proxies, on the worker threads above [`PARALLEL_GRAINS`].
    fn grain_bounds(&mut self) -> Option<Aabb> {
        // A law that reaches across a gap (a liquid bridge) needs the pairs that close.
        let margin = self.box_margin();
        let bounding = self.params.bounding;
        let parallel = self.parallel_grains();
        let (shapes, slots) = (&self.shapes, &self.slots);
        let mut query = self.box_query.query(&self.ecs);
        let grains = query.view();
        let bound = |(aabb, body): (&mut Option<Aabb>, &Body)| {
            let Body::Grain(slot, _) = *body else {
                return None;
            };
            let Some(entity) = slots[slot as usize] else {
                *aabb = None;
                return None;
            };
            let (pose, shape, None) = grains.get(entity)? else {
                return None;
            };
            let b = grain_box(shapes.get(*shape).ok()?, pose, bounding, margin);
            *aabb = Some(b);
            Some(b)
        };
        // The box around all is the same whatever order they are met in (min and max).
        let around = |a: Option<Aabb>, b: Option<Aabb>| match (a, b) {
            (Some(a), Some(b)) => Some(enclose(Some(a), b)),
            (a, b) => a.or(b),
        };
        let (boxes, proxies) = (&mut self.boxes, &self.proxies);
        if !parallel {
            return boxes.iter_mut().zip(proxies).map(bound).fold(None, around);
        }
        let region = Mutex::new(None);
        self.workers.share(
            boxes
                .chunks_mut(PARALLEL_CHUNK)
                .zip(proxies.chunks(PARALLEL_CHUNK)),
            |(boxes, proxies)| {
                let part = boxes.iter_mut().zip(proxies).map(bound).fold(None, around);
                let mut region = region.lock().unwrap_or_else(PoisonError::into_inner);
                *region = around(*region, part);
            },
            &mut || {},
        );
        region.into_inner().unwrap_or_else(PoisonError::into_inner)
    }

    /// Stage 2, for the walls: each wall's state and box at the end of the step. A
    /// half-space's box is infinite along its plane; it is cut to `grain_region`, the box of
    /// all grains' boxes, which is all it can meet.
    fn wall_bounds(&mut self, t_end: f64, grain_region: Option<Aabb>) {
        let margin = self.box_margin();
        self.wall_states.clear();
        self.wall_states
            .extend(self.walls.iter().map(|w| w.state(t_end)));
        // The last step's evaluation, at its end: a wall's motion is a function of time.
        let t_last = self.time_base + self.steps_since_base as f64 * self.params.dt;
        self.wall_motion.clear();
        self.wall_motion
            .extend(self.walls.iter().zip(&self.wall_states).map(|(wall, now)| {
                match &wall.geometry {
                    WallGeometry::Body(poly) => Reach::between(&wall.state(t_last).pose, &now.pose)
                        .within(poly.radius_about_origin()),
                    // A half-space's pairs keep no distance: they are met every step.
                    WallGeometry::HalfSpace { .. } => f64::INFINITY,
                }
            }));
        for (w, wall) in self.walls.iter().enumerate() {
            let proxy = self.wall_proxy[w] as usize;
            self.boxes[proxy] = match grain_region {
                Some(region) if wall.is_present(t_end) => {
                    let b = wall.aabb(&self.wall_states[w].pose).inflated(margin);
                    Some(Aabb {
                        min: b.min.max(region.min),
                        max: b.max.min(region.max),
                    })
                    .filter(|b| b.min.cmple(b.max).all())
                }
                _ => None,
            };
        }
    }

    /// Stages 3 and 4: the broad phase finds this step's pair events while the narrow phase
    /// meets the pairs of the last step's list (beside each other when there are several
    /// threads); then the list takes the events (the ended pairs leave with their forces,
    /// the started ones join) and the narrow phase meets the started pairs. Each pair's
    /// result depends on that pair alone, and an ended pair's is dropped with it: the same
    /// results as the broad phase first, to the last bit. Returns the broad phase's time,
    /// whether it ran beside the narrow phase (on another thread, its time then spent within
    /// the narrow phase's), and the time of the exchanges of a distributed run.
    fn broad_beside_narrow(&mut self, dt: f64) -> (Duration, bool, Duration) {
        self.gather_bodies();
        let assigning = self.assign_owners();
        self.claim_pairs();
        let threads = self.workers.threads();
        let (broad_time, beside) = self.narrow_stage(dt, threads, None);
        let listed_fresh = self.take_events();
        self.adopt_stashed();
        if !self.events.started.is_empty() {
            let threads = if self.events.started.len() >= PARALLEL_PAIRS {
                threads
            } else {
                1
            };
            let fresh = if listed_fresh {
                FreshPairs::Listed
            } else {
                FreshPairs::Joined
            };
            self.narrow_stage(dt, threads, Some(fresh));
        }
        let sharing = self.share_forces() + self.send_forces();
        (broad_time, beside, assigning + sharing)
    }

    /// The broad phase's events taken into the contact list: on a single process marked
    /// and joined, the lists merged only when due ([`crate::joined_pairs`]); in a
    /// distributed run, whose processes read and rewrite the whole list at every step,
    /// merged at once. Returns whether the started pairs are in the list (else they are
    /// among the joined ones).
    fn take_events(&mut self) -> bool {
        let history_len = self.laws.default.as_ref().map_or(0, |m| m.history_len());
        let proxies = &self.proxies;
        let key = |proxy: u32| identity_key(proxies[proxy as usize]);
        if self.distribution.is_some() || self.decomposition.is_some() {
            apply_events(
                (&mut self.contacts, &mut self.contact_forces),
                (&mut self.spare_contacts, &mut self.spare_forces),
                &self.events,
                history_len,
                key,
            );
            return true;
        }
        self.joined.take_events(
            &mut self.contacts,
            &mut self.contact_forces,
            &self.events,
            history_len,
            key,
        );
        if self.joined.is_due(self.contacts.len()) {
            self.merge_contacts();
            return true;
        }
        false
    }

    /// The narrow phase over the listed and the joined pairs (only the fresh ones, where
    /// `fresh` says they are, when given), on `threads` threads; unless `fresh` is given,
    /// the broad phase's update, beside it when there are several threads and enough
    /// pairs. Returns the broad phase's time and whether it ran beside.
    fn narrow_stage(
        &mut self,
        dt: f64,
        threads: usize,
        fresh: Option<FreshPairs>,
    ) -> (Duration, bool) {
        let World {
            broad,
            boxes,
            events,
            contacts,
            contact_forces,
            joined,
            laws,
            bodies,
            shapes,
            walls,
            workers,
            distribution,
            decomposition,
            params,
            ..
        } = self;
        let (rank, table) = match (distribution.as_ref(), decomposition.as_ref()) {
            (Some(d), _) => (d.rank, &d.owners[..]),
            (_, Some(d)) => (d.rank, &d.owners[..]),
            _ => (0, &[][..]),
        };
        let owners = PairOwners { rank, table };
        let views = BodyViews {
            bodies,
            shapes,
            walls,
            periodic: params.periodic,
        };
        contact_forces.resize(contacts.len(), None);
        // The fresh pairs were all started this step, so they are either all in the list
        // (merged this step) or all joined: the other list is not scanned for them.
        let JoinedPairs {
            contacts: joined_contacts,
            forces: joined_forces,
            ..
        } = joined;
        let none = || -> (&mut [Contact], &mut [Option<ContactForce>]) { (&mut [], &mut []) };
        let (listed, joined) = match fresh {
            Some(FreshPairs::Joined) => {
                (none(), (&mut joined_contacts[..], &mut joined_forces[..]))
            }
            Some(FreshPairs::Listed) => ((&mut contacts[..], &mut contact_forces[..]), none()),
            None => (
                (&mut contacts[..], &mut contact_forces[..]),
                (&mut joined_contacts[..], &mut joined_forces[..]),
            ),
        };
        let meet = |beside: &mut dyn FnMut()| {
            narrow(
                [listed, joined],
                &views,
                laws,
                owners,
                dt,
                threads,
                fresh.is_some(),
                workers,
                beside,
            )
        };
        if fresh.is_some() {
            meet(&mut || {});
            return (Duration::ZERO, false);
        }
        let mut time = Duration::ZERO;
        let mut find_events = || {
            let start = Instant::now();
            events.clear();
            broad.update(boxes, events);
            time = start.elapsed();
        };
        let beside = meet(&mut find_events);
        (time, beside)
    }

    /// What each proxy is this step, at its evaluated pose and velocity: one contiguous
    /// array, gathered once per step, that the narrow phase reads by proxy.
    fn gather_bodies(&mut self) {
        let parallel = self.parallel_grains();
        let shapes = &self.shapes;
        let ecs = &self.ecs;
        let walls = &self.walls;
        let (wall_states, wall_motion) = (&self.wall_states, &self.wall_motion);
        let (slots, kinematics, motion) = (&self.slots, &self.kinematics, &self.motion);
        let boxes = &self.boxes;
        let mut solid_query = self.solid_query.query(ecs);
        let solids = solid_query.view();
        let state = |(body, aabb): (&Body, &Option<Aabb>)| {
            let box_center = aabb.map_or(DVec3::ZERO, |b| 0.5 * (b.min + b.max));
            match *body {
                Body::Grain(slot, _) => {
                    let (Some(entity), Some((k, inertia))) =
                        (slots[slot as usize], kinematics[slot as usize])
                    else {
                        return BodyState::ABSENT;
                    };
                    let Some((shape, radius, reach, material)) = solids
                        .get(entity)
                        .map(|(id, m)| (*id, m.0))
                        .and_then(|(id, m)| {
                            shapes
                                .get(id)
                                .ok()
                                .map(|s| (id, s.equivalent_radius, s.radius, m))
                        })
                    else {
                        return BodyState::ABSENT;
                    };
                    BodyState {
                        solid: SolidKey::Grain(shape),
                        pose: k.pose,
                        velocity: k.velocity,
                        angular_velocity: k.angular_velocity,
                        mass: inertia.mass,
                        radius,
                        material,
                        box_center,
                        moved: motion
                            .get(slot as usize)
                            .map_or(f64::INFINITY, |m| m.within(reach)),
                    }
                }
                Body::Wall(w) => {
                    let state = wall_states[w as usize];
                    BodyState {
                        solid: match &walls[w as usize].geometry {
                            WallGeometry::HalfSpace { normal } => {
                                SolidKey::HalfSpace(state.pose.rotation * *normal)
                            }
                            WallGeometry::Body(_) => SolidKey::Wall(w),
                        },
                        pose: state.pose,
                        velocity: state.velocity,
                        angular_velocity: state.angular_velocity,
                        mass: f64::INFINITY,
                        radius: f64::INFINITY,
                        material: walls[w as usize].material.map_or(NO_MATERIAL, |m| m.0),
                        box_center,
                        moved: wall_motion
                            .get(w as usize)
                            .copied()
                            .unwrap_or(f64::INFINITY),
                    }
                }
            }
        };
        let (bodies, proxies) = (&mut self.bodies, &self.proxies);
        if !parallel {
            bodies.clear();
            bodies.extend(proxies.iter().zip(boxes).map(state));
            return;
        }
        // Every entry is written below: last step's list is only cut or lengthened to size
        // (cleared and filled anew, it was written twice).
        bodies.resize(proxies.len().min(boxes.len()), BodyState::ABSENT);
        self.workers.share(
            bodies
                .chunks_mut(PARALLEL_CHUNK)
                .zip(proxies.chunks(PARALLEL_CHUNK))
                .zip(boxes.chunks(PARALLEL_CHUNK)),
            |((bodies, proxies), boxes)| {
                for (body, input) in bodies.iter_mut().zip(proxies.iter().zip(boxes)) {
                    *body = state(input);
                }
            },
            &mut || {},
        );
    }

    /// Stage 5: the contact forces summed into `loads` (grains), each grain's in the order
    /// of its partners' identities ([`crate::load_sums`]), and into `wall_loads`, each
    /// wall's exactly ([`crate::wall_sums`]); then gravity, the pending loads and the field.
    /// Returns the step's counts (in a decomposed run, over all processes).
    fn accumulate(&mut self, field: &mut dyn FnMut(&FieldInput) -> Load, t_end: f64) -> StepCounts {
        let (count, max_ratio, grain_contacts) = self.contact_loads();
        if self.decomposition.is_none() {
            self.wall_sums.write_into(&mut self.wall_loads);
        }
        let gravity = self.params.gravity;
        let mut grains = 0usize;
        for (slot, entry) in self.kinematics.iter().enumerate() {
            let Some((kinematics, inertia)) = entry else {
                continue;
            };
            if let Some(d) = &self.decomposition
                && d.held[slot] != Held::Owned
            {
                continue;
            }
            grains += 1;
            let input = FieldInput {
                id: self.id_of(slot),
                kinematics: *kinematics,
                inertia: *inertia,
                time: t_end,
            };
            let mut load = field(&input);
            load += self.pending[slot];
            load.force += gravity * inertia.mass;
            self.loads[slot] += load;
        }
        if let Some(totals) = self.reduce_step((count, max_ratio, grain_contacts, grains)) {
            return totals;
        }
        StepCounts {
            contacts: count,
            max_overlap_ratio: max_ratio,
            coordination: if grains > 0 {
                grain_contacts as f64 / grains as f64
            } else {
                0.0
            },
            grains,
            pairs: None,
        }
    }

    /// The contact forces summed into `loads` (each grain's in the order of its partners'
    /// identities) and into the walls' exact sums; returns the pairs in contact evaluated
    /// here, their largest relative depth, and the terms summed into grains' loads. With
    /// several threads and many pairs, the lower and the upper half of the slots are summed
    /// at once, each from the whole list: a sum's order is its partners', not the list's,
    /// so the split changes no bit.
    fn contact_loads(&mut self) -> (usize, f64, usize) {
        let World {
            contacts,
            contact_forces,
            joined,
            bodies,
            proxies,
            params,
            decomposition,
            load_sums,
            upper_load_sums,
            wall_sums,
            loads,
            walls,
            workers,
            ..
        } = self;
        wall_sums.clear(walls.len());
        // In a decomposed run: the pairs evaluated here count and give their walls' terms
        // (the processes' wall sums are merged in `reduce_step`), and the loads on this
        // process's own grains are summed.
        let list = PairLoads {
            contacts: [
                (contacts, contact_forces),
                (&joined.contacts, &joined.forces),
            ],
            bodies,
            proxies,
            periodic: params.periodic,
            rank: decomposition.as_ref().map(|d| d.rank),
            held: decomposition.as_ref().map(|d| &d.held[..]),
        };
        if workers.threads() == 1 || contacts.len() + joined.contacts.len() < PARALLEL_PAIRS {
            return list.sum(0, loads, load_sums, Some(wall_sums));
        }
        let split = loads.len() / 2;
        let (lower, upper) = loads.split_at_mut(split);
        let mut counts = [(0, 0.0, 0); 2];
        let [lower_counts, upper_counts] = &mut counts;
        workers.share(
            [
                (0, lower, load_sums, Some(wall_sums), lower_counts),
                (split, upper, upper_load_sums, None, upper_counts),
            ]
            .into_iter(),
            |(base, loads, sums, walls, counts)| *counts = list.sum(base, loads, sums, walls),
            &mut || {},
        );
        let [(count, max_ratio, lower_terms), (_, _, upper_terms)] = counts;
        (count, max_ratio, lower_terms + upper_terms)
    }

    /// Stage 6: every grain's step completed with its load.
    fn correct<I: Integrator>(&mut self, dt: f64) {
        for (slot, pose, state, inertia) in
            self.ecs.query_mut::<(&Slot, &mut Pose, &mut I, &Inertia)>()
        {
            let s = slot.0 as usize;
            if let Some((kinematics, _)) = &self.kinematics[s] {
                state.correct(pose, &self.loads[s], inertia, kinematics, dt);
            }
        }
    }

    /// Stage 7: every grain outside the periodic box moved back in by whole periods; the
    /// integrator's derivatives do not change under the shift.
    fn wrap(&mut self) {
        let periodic = self.params.periodic;
        if periodic.is_none() {
            return;
        }
        // Ghosts are moved by their owners and sent anew each step.
        for (slot, pose) in self
            .ecs
            .query_mut::<(&Slot, &mut Pose)>()
            .without::<&Ghost>()
        {
            let (position, moved) = periodic.wrap(pose.position);
            if moved != [0; 3] {
                pose.position = position;
                let image = &mut self.images[slot.0 as usize];
                for (count, m) in image.iter_mut().zip(moved) {
                    *count += m;
                }
            }
        }
    }

    /// Sets up the integrator state of grains added since the last step, from the forces
    /// at their current state (gravity, the pending loads and the field), so that the
    /// higher derivatives are consistent with them from the start.
    fn start_fresh_grains<I: Integrator>(&mut self, field: &mut dyn FnMut(&FieldInput) -> Load) {
        let dt = self.params.dt;
        let numbering = &self.numbering;
        let mut fresh: Vec<(Entity, u32, Pose, Inertia, Fresh)> = self
            .ecs
            .query_mut::<(Entity, &Slot, &Pose, &Inertia, &Fresh)>()
            .into_iter()
            .map(|(e, slot, pose, inertia, f)| (e, slot.0, *pose, *inertia, *f))
            .collect();
        if fresh.is_empty() {
            return;
        }
        // The field is called in the order of the grains' ids.
        fresh.sort_by_key(|f| numbering.id(f.1 as usize));
        for (entity, slot, pose, inertia, f) in fresh {
            let kinematics = Kinematics {
                pose,
                velocity: f.velocity,
                angular_velocity: f.angular_velocity,
            };
            let input = FieldInput {
                id: self.id_of(slot as usize),
                kinematics,
                inertia,
                time: self.time(),
            };
            let mut load = field(&input);
            load += self.pending[slot as usize];
            load.force += self.params.gravity * inertia.mass;
            // The entity was just listed by the query: these calls cannot fail.
            let _ = self.ecs.remove_one::<Fresh>(entity);
            let _ = self
                .ecs
                .insert_one(entity, I::initial(&kinematics, &inertia, &load, dt));
        }
    }
}

/// The counts of a step (in a decomposed run, summed over the processes).
pub(crate) struct StepCounts {
    /// Pairs of bodies in contact.
    pub contacts: usize,
    /// Largest relative overlap depth.
    pub max_overlap_ratio: f64,
    /// Mean contacts per grain.
    pub coordination: f64,
    /// Grains stepped.
    pub grains: usize,
    /// In a decomposed run: listed, started and ended pairs.
    pub pairs: Option<(usize, usize, usize)>,
}

/// What the sums of contact loads read: the pairs, their forces and bodies, and which
/// of them this process evaluates and holds.
struct PairLoads<'a> {
    /// The list and the joined pairs ([`crate::joined_pairs`]), each with its forces.
    contacts: [(&'a [Contact], &'a [Option<ContactForce>]); 2],
    bodies: &'a [BodyState],
    proxies: &'a [Body],
    periodic: Periodic,
    /// In a decomposed run: this process's rank, and which grains it holds.
    rank: Option<u32>,
    held: Option<&'a [Held]>,
}

impl PairLoads<'_> {
    /// The loads on the grains of slots `base..base + loads.len()` summed into `loads`
    /// (zeroed first) with `sums`, and, with `walls`, those on the walls into their sums;
    /// returns the pairs in contact evaluated here and their largest relative depth (with
    /// `walls` only: they are counted once), and the terms summed into `loads`.
    fn sum(
        &self,
        base: usize,
        loads: &mut [Load],
        sums: &mut LoadSums,
        mut walls: Option<&mut WallSums>,
    ) -> (usize, f64, usize) {
        loads.iter_mut().for_each(|l| *l = Load::default());
        sums.clear();
        let slots = base..base + loads.len();
        let (mut count, mut max_ratio, mut terms) = (0, 0.0f64, 0);
        let [(listed, listed_forces), (joined, joined_forces)] = self.contacts;
        let pairs = listed.iter().zip(listed_forces);
        for (c, f) in pairs.chain(joined.iter().zip(joined_forces)) {
            let Some(f) = f else { continue };
            let evaluated_here = self.rank.is_none_or(|r| c.owner == r);
            if evaluated_here && walls.is_some() {
                count += 1;
                max_ratio = max_ratio.max(f.depth_ratio);
            }
            for on_b in [false, true] {
                let (proxy, other) = if on_b {
                    (f.pair.b, f.pair.a)
                } else {
                    (f.pair.a, f.pair.b)
                };
                match self.proxies[proxy as usize] {
                    Body::Grain(slot, _) if slots.contains(&(slot as usize)) => {
                        let owned = self
                            .held
                            .is_none_or(|held| held[slot as usize] == Held::Owned);
                        if owned {
                            let partner = identity_key(self.proxies[other as usize]);
                            sums.push(slot - base as u32, partner, self.load(f, on_b));
                            terms += 1;
                        }
                    }
                    Body::Wall(w) if evaluated_here => {
                        if let Some(walls) = walls.as_deref_mut() {
                            walls.add(w as usize, &self.load(f, on_b));
                        }
                    }
                    _ => {}
                }
            }
        }
        sums.sum_into(loads);
        (count, max_ratio, terms)
    }

    /// The load of contact force `f` on its pair's body `b` (`on_b`) or `a`, its torque
    /// about the body's position. The force acts where the body met first is; the other
    /// is met at its image nearest it. Always inlined: it is the body of the sums' loop.
    #[inline(always)]
    fn load(&self, f: &ContactForce, on_b: bool) -> Load {
        let (first, second) = f.pair.oriented(f.flipped);
        let (first, second) = (first as usize, second as usize);
        let (proxy, force, couple) = if on_b {
            (f.pair.b as usize, f.force_on_b, f.torque_on_b)
        } else {
            (f.pair.a as usize, -f.force_on_b, -f.torque_on_b)
        };
        let shift = if proxy == second {
            BodyState::image_shift(&self.periodic, &self.bodies[first], &self.bodies[second])
        } else {
            DVec3::ZERO
        };
        let position = self.bodies[proxy].pose.position + shift;
        Load {
            force,
            torque: (f.point - position).cross(force) + couple,
        }
    }
}

/// A grain's bounding box at `pose` by `bounding`, grown by `margin`.
pub(crate) fn grain_box(shape: &Shape, pose: &Pose, bounding: BoundingMethod, margin: f64) -> Aabb {
    match bounding {
        BoundingMethod::MinMax => shape.body.aabb(pose),
        BoundingMethod::Ellipsoid => shape.ellipsoid.aabb(pose),
    }
    .inflated(margin)
}

/// The box around `region` and `b`.
pub(crate) fn enclose(region: Option<Aabb>, b: Aabb) -> Aabb {
    region.map_or(b, |r| Aabb {
        min: r.min.min(b.min),
        max: r.max.max(b.max),
    })
}
