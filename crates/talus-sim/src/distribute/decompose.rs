//! Domain decomposition: each process holds and steps only the grains of its region, with
//! copies (*ghosts*) of the neighbours' grains that can touch them, and the results are the
//! bits of a single process.
//!
//! Unlike the replicated scheme of [`crate::distribute`], where every process holds the
//! whole scene, a process here
//! * **owns** the grains whose centres lie in its region (recursive coordinate bisection,
//!   [`super::bisection`], balanced by the narrow-phase work each grain brings, weighed by
//!   what a unit of it took on its process since the last cut, and cut anew every
//!   `rebalance_every` steps or sooner when a process falls behind: `super::measured`): it
//!   alone predicts, sums and corrects them;
//! * holds **ghosts**: after the prediction each process sends the box of all its grains'
//!   boxes to all others, and every grain whose box meets another process's box is sent to
//!   it (predicted pose and velocities, inertia, shape and material). A pair of grains
//!   whose boxes overlap therefore lies on the owner of each grain, the other as a ghost:
//!   every pair of the single-process list is found by the broad phase of both owners,
//!   and no other ghost is kept;
//! * **evaluates** a pair when it owns the pair's key grain (the grain of the lower id; a
//!   grain–wall pair's grain), sends the force to the owner of the other grain when that is
//!   another process, and keeps the pair's state (closest features, overlap hint, force
//!   history);
//! * **migrates** a grain to the process whose region holds its centre at the start of a
//!   step, with its whole state (integrator derivatives, pending loads) and the states of
//!   the pairs it keys; it stays behind as a ghost, so that the pairs it does not key keep
//!   their states where they are evaluated. A pair state that arrives before its pair is
//!   listed (the other grain not yet a ghost there) waits until the broad phase lists it.
//!
//! Why the bits do not change: every pair is evaluated from the same two body states and
//! its own state, met in the order of its bodies' ids, by whichever process; each body's
//! loads are summed in the order of its partners' ids (`crate::load_sums`), so it does not
//! matter which process found which force; each process sums the load terms on a wall from
//! the pairs it evaluated exactly (`crate::wall_sums`), and the processes' sums, merged with
//! the step's counts, round to the same loads on every process. Each process numbers the
//! grains it
//! holds its own way, both their proxies (renumbering changes no result) and their slots
//! (`crate::numbering`), so its per-grain arrays are as long as what it holds, not as the
//! run; messages name grains by id.
//!
//! Grains are added by the same calls on every process, as the world was built: once the
//! regions are cut (before the grains are added, with [`World::cut_before_adding`], or by a
//! step) only the process whose region holds a new grain keeps it, before that every
//! process does until the first step cuts (in a world restored in shares,
//! [`World::restore_share`], the first process alone keeps it until then). A grain is
//! removed by the calls
//! on the processes that hold it (owner and ghosts); elsewhere [`World::remove_grain`] does
//! not know it.
//!
//! With periodic axes a grain is sent as a ghost where its box meets a process's box of
//! grains shifted by a period or none along each periodic axis, so that the pairs across
//! the faces are found as on a single process.
//!
//! The scenario runner reads the whole run through [`World::gather_owned`] (on every
//! process) and [`World::grain_states_on_first`] (on the first, which writes the run's
//! files), collective operations every process calls at the same point; each process takes
//! its own share of a checkpoint ([`World::snapshot_share`]) and writes it as a piece. The pair and event counts of [`crate::StepStats`]
//! are those of the pairs each process keys, summed.

use std::time::{Duration, Instant};

use rustc_hash::FxHashMap;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use talus_geom::glam::DVec3;
use talus_geom::{Aabb, FeatureCache, OverlapHint, Pose};

use super::bisection::{Bisection, WeightedPoint};
use super::measured::{LAG_TO_CUT, lag, smoothed, weight_factors};
use super::{
    Exchange, GRAIN_WORK, NOT_A_GRAIN, ProcessLoad, Traffic, UNASSIGNED, all_gather, check_group,
    pair_work,
};
use crate::broad::ProxyPair;
use crate::contact::{Contact, ContactForce, History};
use crate::error::SimError;
use crate::integrate::{GearState, Inertia, Kinematics, Load, VerletState};
use crate::kind::GrainKind;
use crate::load_sums::{grain_key, identity_key};
use crate::material::MaterialId;
use crate::motion::Reach;
use crate::numbering::GrainNumbering;
use crate::periodic::ImageCount;
use crate::shape::ShapeId;
use crate::snapshot::{
    ContactSnapshot, GrainSnapshot, WorldSnapshot, check, feature_fits, load_is_finite, mismatch,
    spawn_grain,
};
use crate::step::{StepCounts, enclose, grain_box};
use crate::wall::{WallGeometry, WallId};
use crate::wall_sums::WallSums;
use crate::world::{Body, BodyRef, Fresh, GrainId, GrainState, Slot, World};

/// Component: a copy of a grain another process owns (it is not stepped here).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Ghost;

/// Where a grain is, as this process knows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Held {
    /// Not here.
    Absent,
    /// Owned here.
    Owned,
    /// A ghost of the grain the process `.0` owns.
    Ghost(u32),
}

/// A world's part in a decomposed run.
pub(crate) struct Decomposition {
    exchange: Box<dyn Exchange>,
    pub(crate) rank: u32,
    pub(crate) size: u32,
    rebalance_every: u64,
    regions: Option<Bisection>,
    /// Before the first cut, whether each process holds a share of the grains (those of
    /// the pieces of a checkpoint it read, [`World::restore_share`]) rather than all.
    share: bool,
    /// Per slot: whether the grain is here, and how.
    pub(crate) held: Vec<Held>,
    /// Pair states that arrived with a migrating grain before their pair was listed here.
    stash: FxHashMap<(u64, u64), PairState>,
    /// Per proxy this step: its key and the process that owns it.
    pub(crate) owners: Vec<(u32, u32)>,
    pub(crate) traffic: Traffic,
    /// Every process's load at the last cut, and the step it was made at.
    loads_at_cut: Vec<ProcessLoad>,
    steps_at_cut: u64,
}

/// A grain sent to its new owner.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Migrant {
    id: u32,
    grain: GrainSnapshot,
    pending: Load,
    /// The states of the pairs it keys.
    pairs: Vec<PairState>,
}

/// The state of a pair, its bodies named by identity (grain ids, walls after them) in the
/// order the pair is met in.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct PairState {
    first: u64,
    second: u64,
    features: FeatureCache,
    overlap_hint: OverlapHint,
    touching: bool,
    history: Vec<f64>,
}

/// A ghost's state this step.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
struct GhostState {
    id: u32,
    shape: ShapeId,
    material: MaterialId,
    inertia: Inertia,
    pose: Pose,
    velocity: DVec3,
    angular_velocity: DVec3,
    /// How far it moved since the last step's evaluation (its pairs with this process's
    /// grains skip their query while that keeps them apart, as on one process).
    motion: Reach,
}

/// A force found here for a pair whose other grain another process owns: the pair by its
/// grains' ids (lower first), the force and couple on the higher.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
struct ForceRecord {
    low: u32,
    high: u32,
    force_on_high: DVec3,
    torque_on_high: DVec3,
    point: DVec3,
    depth_ratio: f64,
}

/// What one process sends another after the narrow phase: the forces it found on the
/// other's grains.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct ForceMessage {
    forces: Vec<ForceRecord>,
}

/// What each process adds to the step's totals.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Totals {
    contacts: u64,
    max_overlap_ratio: f64,
    grain_contacts: u64,
    grains: u64,
    pairs: u64,
    pairs_started: u64,
    pairs_ended: u64,
    /// The exact sums of the loads on the walls from the pairs the process evaluated.
    wall_sums: WallSums,
    /// The process's own work so far.
    load: ProcessLoad,
}

fn encode<T: Serialize>(value: &T) -> Vec<u8> {
    postcard::to_stdvec(value).expect("a decomposed run's message serializes")
}

fn decode<'a, T: Deserialize<'a>>(bytes: &'a [u8]) -> T {
    postcard::from_bytes(bytes).expect("a process of the run sent a well-formed message")
}

impl Decomposition {
    /// Whether every process holds every grain: a world decomposed but not cut yet, and
    /// not restored in shares.
    fn holds_everything(&self) -> bool {
        self.regions.is_none() && !self.share
    }

    /// Slot `slot` was just placed (new or taken again): nothing is held in it yet.
    pub(crate) fn hold_new(&mut self, slot: usize) {
        if slot == self.held.len() {
            self.held.push(Held::Absent);
        } else {
            self.held[slot] = Held::Absent;
        }
    }

    /// Grain `slot`, just added here, is owned here: once the regions are cut only the
    /// process whose region holds it adds it ([`World::keeps_added`]); before, every
    /// process holds every grain until the first step cuts.
    pub(crate) fn hold_added(&mut self, slot: u32) {
        self.hold_new(slot as usize);
        self.held[slot as usize] = Held::Owned;
    }

    /// One round of `outgoing` messages, accounted.
    fn round(&mut self, outgoing: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
        self.traffic.bytes_sent += outgoing
            .iter()
            .enumerate()
            .filter(|&(r, _)| r as u32 != self.rank)
            .map(|(_, b)| b.len() as u64)
            .sum::<u64>();
        self.traffic.rounds += 1;
        self.exchange.all_to_all(outgoing)
    }

    /// `bytes` to the first process: every process's there (by rank), none elsewhere.
    fn gather_to_first(&mut self, bytes: Vec<u8>) -> Vec<Vec<u8>> {
        if self.rank != 0 {
            self.traffic.bytes_sent += bytes.len() as u64;
        }
        self.traffic.rounds += 1;
        let mut outgoing = vec![Vec::new(); self.size as usize];
        outgoing[0] = bytes;
        let received = self.exchange.all_to_all(outgoing);
        if self.rank == 0 { received } else { Vec::new() }
    }

    /// `bytes` to every process, theirs back.
    fn gather(&mut self, bytes: Vec<u8>) -> Vec<Vec<u8>> {
        self.traffic.bytes_sent += (bytes.len() * (self.size as usize - 1)) as u64;
        self.traffic.rounds += 1;
        all_gather(&mut *self.exchange, bytes)
    }
}

impl World {
    /// Makes this world one process of a decomposed run over `exchange` (see the module
    /// documentation): every process of the group must hold the same world (built the
    /// same way, or restored from the same checkpoint) and step it the same way; at the
    /// first step each keeps the grains of its region. The regions are cut anew every
    /// `rebalance_every` steps.
    ///
    /// # Errors
    /// [`SimError::InvalidParameter`] for `rebalance_every` zero, a group of more than
    /// 65,536 processes, or a world already distributed.
    pub fn decompose(
        &mut self,
        exchange: Box<dyn Exchange>,
        rebalance_every: u64,
    ) -> Result<(), SimError> {
        let (rank, size) = check_group(&*exchange, rebalance_every)?;
        if self.distribution.is_some() || self.decomposition.is_some() {
            return Err(SimError::InvalidParameter {
                name: "process group",
                value: "a world already distributed".into(),
                allowed: "one call of distribute or decompose per world",
            });
        }
        // Every process reads and rewrites the whole contact list at every step.
        self.merge_contacts();
        let held = self
            .slots
            .iter()
            .map(|s| {
                if s.is_some() {
                    Held::Owned
                } else {
                    Held::Absent
                }
            })
            .collect();
        self.numbering.reuse_slots();
        self.decomposition = Some(Decomposition {
            exchange,
            rank: rank as u32,
            size: size as u32,
            rebalance_every,
            regions: None,
            share: false,
            held,
            stash: FxHashMap::default(),
            owners: Vec::new(),
            traffic: Traffic {
                ranks: size,
                ..Traffic::default()
            },
            loads_at_cut: Vec::new(),
            steps_at_cut: 0,
        });
        Ok(())
    }

    /// The first cut of a decomposed world that holds no grain yet, made from where its
    /// grains will be: `count` grains are about to be added, and `positions(range)` says
    /// where grains `range` of them (numbered in the order they will be added) will be. Each
    /// process asks for its share alone (about `count` over the number of processes, every
    /// grain in one share), and the regions are cut from sums over the processes
    /// ([`Bisection::balance_across`], as a rebalance): a collective operation, which every
    /// process of the group calls. From then on each process keeps only the grains
    /// [`World::add_grain`] adds in its own region, and takes only the ids of the others:
    /// no process ever holds the whole run, not even its start's positions. Without this
    /// call, the first step cuts a world every process holds whole.
    ///
    /// # Errors
    /// [`SimError::InvalidParameter`] for a world not decomposed, already cut (stepped) or
    /// holding grains, or for more grains than ids.
    pub fn cut_before_adding(
        &mut self,
        count: usize,
        positions: &mut dyn FnMut(std::ops::Range<usize>) -> Vec<DVec3>,
    ) -> Result<(), SimError> {
        let invalid = |value: &str| SimError::InvalidParameter {
            name: "first cut",
            value: value.into(),
            allowed: "a decomposed world, not stepped yet, before its first grain is added",
        };
        let first_id = self.numbering.id_count();
        let grains = self.grain_count();
        let periodic = self.params.periodic;
        let Some(d) = self.decomposition.as_mut() else {
            return Err(invalid("a world not decomposed"));
        };
        if d.regions.is_some() {
            return Err(invalid("a world already cut"));
        }
        if grains > 0 {
            return Err(invalid(&format!("a world of {grains} grains")));
        }
        if u64::from(first_id) + count as u64 > u64::from(u32::MAX) {
            return Err(SimError::InvalidParameter {
                name: "grain count",
                value: (u64::from(first_id) + count as u64).to_string(),
                allowed: "fewer than 2^32 grains",
            });
        }
        let (rank, size) = (d.rank as usize, d.size as usize);
        let share = count * rank / size..count * (rank + 1) / size;
        let first = first_id + share.start as u32;
        let mut points: Vec<WeightedPoint> = positions(share)
            .into_iter()
            .zip(first..)
            .map(|(p, key)| WeightedPoint {
                // Where the grain will be: at its image in the periodic box.
                position: periodic.wrap(p).0,
                weight: GRAIN_WORK,
                key,
            })
            .collect();
        let mut gather = |numbers: Vec<f64>| {
            d.gather(encode(&numbers))
                .iter()
                .map(|b| decode(b))
                .collect()
        };
        d.regions = Some(Bisection::balance_across(&mut points, size, &mut gather));
        d.steps_at_cut = self.steps;
        d.traffic.rebalances += 1;
        Ok(())
    }

    /// Restores this process's share of a checkpoint written in pieces and makes the world
    /// one process of a decomposed run over `exchange` (see [`World::decompose`]): `frame`
    /// is the checkpoint's frame (the same on every process) and `parts` the pieces this
    /// process read, every piece read by exactly one process of the group (the pieces may be
    /// dealt to the processes in any way, some processes reading none). The world must hold
    /// no grain. At the first step the regions are cut from sums over the processes, and
    /// every grain goes to the process whose region holds it with the states of the pairs it
    /// keys, as a migrating grain does: no process holds more than the pieces it read (and,
    /// on the first, the grains added before that step), and the run goes on with the bits
    /// of the single process.
    ///
    /// # Errors
    /// As [`World::restore`] for the frame and the grains (a grain is checked against the
    /// world as a restored one is; a pair's cached features against the bodies this process
    /// holds), [`SimError::SnapshotMismatch`] for a grain id past the frame's ids or in two
    /// parts, and as [`World::decompose`].
    pub fn restore_share(
        &mut self,
        frame: SnapshotFrame,
        parts: Vec<SnapshotPart>,
        exchange: Box<dyn Exchange>,
        rebalance_every: u64,
    ) -> Result<(), SimError> {
        let SnapshotFrame { mut world, ids } = frame;
        // The frame as a world of walls alone; the kinds of grain after its checks.
        let extremes = std::mem::take(&mut world.extremes);
        world.proxies = (0..self.walls.len() as u32)
            .map(|w| BodyRef::Wall(WallId(w)))
            .collect();
        world.grains = Vec::new();
        world.pending = Vec::new();
        world.contacts = Vec::new();
        let dt = world.dt;
        self.restore(world)?;
        // An empty broad phase, as at a first cut: every pair, of walls too, starts at the
        // first step (the walls' boxes are computed anew there).
        self.broad = self.params.broad_phase.build(self.params.periodic);
        self.events.clear();
        check(extremes.iter().all(GrainKind::is_valid), || {
            format!("grain kinds {extremes:?}")
        })?;
        self.check_time_step(dt, self.laws.all(), &extremes)?;
        self.extremes = extremes;
        let integrator = self.params.integrator;
        let mut grains = Vec::new();
        let mut pairs = Vec::new();
        for part in parts {
            for (id, g, pending, _) in part.grains {
                // A grain removed in the checkpoint's step left its box alone: the broad
                // phase of a decomposed run is built anew at the first cut.
                let Some(g) = g else { continue };
                check(id < ids, || {
                    format!("grain {id} in a checkpoint of {ids} grain ids")
                })?;
                self.check_grain(id as usize, &g, integrator)?;
                check(load_is_finite(&pending), || {
                    format!("grain {id}: pending load is not finite")
                })?;
                grains.push((id, g, pending));
            }
            // A pair of two walls has no key grain and no state to keep (the first cut
            // drops it from a world held whole too): the broad phase lists it afresh.
            pairs.extend(
                part.pairs
                    .into_iter()
                    .filter(|s| u32::try_from(s.first.min(s.second)).is_ok()),
            );
        }
        let shapes: FxHashMap<u32, ShapeId> =
            grains.iter().map(|(id, g, _)| (*id, g.shape)).collect();
        let history_len = self.laws.default.as_ref().map(|m| m.history_len());
        // Each pair's cached features against its bodies where this process knows them
        // (its key grain always: a piece holds the pairs its process's grains key).
        let fits = |key: u64, feature| match u32::try_from(key) {
            Ok(id) => shapes.get(&id).is_none_or(|&shape| {
                feature_fits(feature, self.shapes.get(shape).ok().map(|s| &s.body))
            }),
            Err(_) => self
                .walls
                .get((key & u64::from(u32::MAX)) as usize)
                .is_some_and(|wall| match &wall.geometry {
                    WallGeometry::Body(poly) => feature_fits(feature, Some(poly.as_ref())),
                    WallGeometry::HalfSpace { .. } => feature_fits(feature, None),
                }),
        };
        // The pairs of a grain removed in the checkpoint's step end with it (its box alone
        // was kept): dropped, as the first cut of a world held whole drops them.
        pairs.retain(|s| {
            u32::try_from(s.first.min(s.second)).is_ok_and(|key| shapes.contains_key(&key))
        });
        for s in &pairs {
            check(
                history_len == Some(s.history.len())
                    && s.history.iter().all(|h| h.is_finite())
                    && s.features.normal_hint.is_finite()
                    && fits(s.first, s.features.feature_a)
                    && fits(s.second, s.features.feature_b),
                || {
                    format!(
                        "the state of the pair of bodies {} and {} does not fit them",
                        s.first, s.second
                    )
                },
            )?;
        }
        self.decompose(exchange, rebalance_every)?;
        let Some(mut d) = self.decomposition.take() else {
            return Err(mismatch("the world was not decomposed"));
        };
        self.numbering = GrainNumbering::after(ids);
        let mut result = Ok(());
        for (id, g, pending) in grains {
            if self.numbering.slot(id).is_some() {
                result = Err(mismatch(format!(
                    "grain {id} in two pieces of the checkpoint"
                )));
                break;
            }
            let slot = self.slot_here(&mut d, id, g.image);
            self.slots[slot] = Some(spawn_grain(&mut self.ecs, slot as u32, &g));
            self.pending[slot] = pending;
            d.held[slot] = Held::Owned;
        }
        for state in pairs {
            d.stash.insert((state.first, state.second), state);
        }
        d.share = true;
        self.decomposition = Some(d);
        result
    }

    /// Whether a grain added at `position` (in the periodic box) is kept by this process:
    /// outside a decomposed run, and in one whose every process holds every grain (not cut
    /// yet), always; once the regions are cut (by [`World::cut_before_adding`] or a step),
    /// by the process whose region holds it alone; in a world restored in shares and not
    /// cut yet, by the first process alone (the first cut sends it to its owner).
    pub fn keeps_added(&self, position: DVec3) -> bool {
        match &self.decomposition {
            Some(Decomposition {
                regions: Some(regions),
                rank,
                ..
            }) => regions.owner(position) == *rank,
            // Restored in shares, not cut yet: the first process keeps it until the first
            // cut sends it to its owner.
            Some(d) if d.share => d.rank == 0,
            _ => true,
        }
    }

    /// Whether this process owns the grain in slot `slot` (every grain on a process that
    /// is not part of a decomposed run).
    pub(crate) fn owns_slot(&self, slot: usize) -> bool {
        match &self.decomposition {
            None => self.slots.get(slot).is_some_and(Option::is_some),
            Some(d) => {
                d.held.get(slot) == Some(&Held::Owned)
                    && self.slots.get(slot).is_some_and(Option::is_some)
            }
        }
    }

    /// What this process of a decomposed run sent and how long it spent exchanging.
    pub(crate) fn decomposed_traffic(&self) -> Option<Traffic> {
        self.decomposition.as_ref().map(|d| d.traffic.clone())
    }

    /// Decomposed stage at the start of a step: the regions (cut when due), and every
    /// owned grain outside this process's region sent to its new owner with the states of
    /// the pairs it keys, left here as a ghost. Returns the time it took.
    pub(crate) fn migrate(&mut self) -> Duration {
        let Some(mut d) = self.decomposition.take() else {
            return Duration::ZERO;
        };
        let start = Instant::now();
        d.traffic.steps += 1;
        if d.holds_everything() {
            // Every process holds the whole world: all cut it alike, and each keeps its
            // own grains alone.
            let mut points = self.weighted_points(&d);
            let regions = Bisection::balance(&mut points, d.size as usize);
            self.keep_own_grains(&mut d, &regions);
            d.regions = Some(regions);
            d.steps_at_cut = self.steps;
            d.traffic.rebalances += 1;
        } else if d.share || self.steps % d.rebalance_every == 0 || self.fell_behind(&d) {
            // (A world restored in shares is cut this way too, the first time, and its
            // grains then go to their owners as migrants do.)
            d.share = false;
            // This process's grains weigh their work at what a unit of it cost here since
            // the last cut (every process knows every process's figures alike).
            let factors = weight_factors(&d.loads_at_cut, &d.traffic.processes)
                .map(|f| smoothed(&d.traffic.weight_factors, f));
            let factor = factors.as_ref().map_or(1.0, |f| f[d.rank as usize]);
            d.traffic.weight_factors = factors.unwrap_or_default();
            d.loads_at_cut.clone_from(&d.traffic.processes);
            d.steps_at_cut = self.steps;
            let mut mine = self.weighted_points(&d);
            for p in &mut mine {
                p.weight *= factor;
            }
            // Cut from sums over the processes' points (a few rounds of a few hundred
            // numbers per region), not from every grain's point gathered on every process.
            let ranks = d.size as usize;
            let mut gather = |numbers: Vec<f64>| {
                d.gather(encode(&numbers))
                    .iter()
                    .map(|b| decode(b))
                    .collect()
            };
            let regions = Bisection::balance_across(&mut mine, ranks, &mut gather);
            d.regions = Some(regions);
            d.traffic.rebalances += 1;
        }
        let regions = d.regions.clone().expect("cut above");
        let mut outgoing: Vec<Vec<Migrant>> = vec![Vec::new(); d.size as usize];
        let mut moving: FxHashMap<u32, (u32, usize)> = FxHashMap::default();
        for slot in 0..self.slots.len() {
            if d.held[slot] != Held::Owned {
                continue;
            }
            let Some(entity) = self.slots[slot] else {
                continue;
            };
            let owner = regions.owner(self.grain_position(entity));
            if owner == d.rank {
                continue;
            }
            if let Some(migrant) = self.migrant(slot, d.rank) {
                if !d.stash.is_empty() {
                    moving.insert(migrant.id, (owner, outgoing[owner as usize].len()));
                }
                outgoing[owner as usize].push(migrant);
                self.make_ghost(&mut d, slot, owner);
            }
        }
        // Pair states waiting for their pairs (those of a world restored in shares) go with
        // their key grain, the grain of the lower id.
        if !moving.is_empty() {
            let leaving: Vec<(u64, u64)> = d
                .stash
                .keys()
                .filter(|&&(a, b)| {
                    u32::try_from(a.min(b)).is_ok_and(|key| moving.contains_key(&key))
                })
                .copied()
                .collect();
            for pair in leaving {
                if let Some(state) = d.stash.remove(&pair) {
                    let key = pair.0.min(pair.1) as u32;
                    let (owner, k) = moving[&key];
                    outgoing[owner as usize][k].pairs.push(state);
                }
            }
        }
        d.traffic.contacts_moved += outgoing
            .iter()
            .flatten()
            .map(|m| m.pairs.len() as u64)
            .sum::<u64>();
        let outgoing = outgoing.iter().map(encode).collect();
        let received = d.round(outgoing);
        for bytes in &received {
            for migrant in decode::<Vec<Migrant>>(bytes) {
                self.adopt_migrant(&mut d, migrant);
            }
        }
        let elapsed = start.elapsed();
        d.traffic.exchange += elapsed;
        self.decomposition = Some(d);
        elapsed
    }

    /// Whether the regions are cut ahead of schedule: a quarter of the interval or more
    /// since the last cut, some process's narrow phase has fallen behind the mean by
    /// [`LAG_TO_CUT`] since then (the same figures on every process, the same verdict).
    fn fell_behind(&self, d: &Decomposition) -> bool {
        let soonest = d.steps_at_cut + (d.rebalance_every / 4).max(1);
        self.steps >= soonest
            && lag(&d.loads_at_cut, &d.traffic.processes).is_some_and(|l| l > LAG_TO_CUT)
    }

    /// The first cut, on a world every process holds whole: this process keeps only the
    /// grains of its region, in a world rebuilt around them (the ECS, the slots, the proxies,
    /// the contact list and the broad phase), so that nothing of the others' grains stays
    /// in its memory. The states of the pairs its grains key wait in the stash until the
    /// broad phase lists their pairs again, as those of a migrating grain do; the other
    /// grains come back as ghosts where they are needed.
    fn keep_own_grains(&mut self, d: &mut Decomposition, regions: &Bisection) {
        let own: Vec<bool> = self
            .slots
            .iter()
            .map(|e| e.is_some_and(|e| regions.owner(self.grain_position(e)) == d.rank))
            .collect();
        let grains: Vec<(u32, GrainSnapshot, Load)> = (0..self.slots.len())
            .filter(|&slot| own[slot])
            .filter_map(|slot| {
                let g = self.grain_snapshot(slot)?;
                Some((self.numbering.id(slot), g, self.pending[slot]))
            })
            .collect();
        for c in &self.contacts {
            if self
                .pair_key_slot(c.pair)
                .is_some_and(|key| own[key as usize])
            {
                let state = self.pair_state(c);
                d.stash.insert((state.first, state.second), state);
            }
        }
        // The world without grains: its walls alone, as proxies 0, 1, ….
        let walls = self.walls.len() as u32;
        self.ecs = hecs::World::new();
        self.numbering = GrainNumbering::after(self.numbering.id_count());
        self.slots = Vec::new();
        self.grain_proxy = Vec::new();
        self.wall_proxy = (0..walls).collect();
        self.proxies = (0..walls).map(Body::Wall).collect();
        self.boxes = vec![None; walls as usize];
        self.pending = Vec::new();
        self.images = Vec::new();
        self.kinematics = Vec::new();
        self.motion = Vec::new();
        self.loads = Vec::new();
        self.bodies = Vec::new();
        self.contacts = Vec::new();
        self.contact_forces = Vec::new();
        self.joined.clear();
        self.spare_contacts = Vec::new();
        self.spare_forces = Vec::new();
        self.events.clear();
        self.broad = self.params.broad_phase.build(self.params.periodic);
        d.held = Vec::new();
        for (id, g, pending) in grains {
            let slot = self.slot_here(d, id, g.image);
            self.slots[slot] = Some(spawn_grain(&mut self.ecs, slot as u32, &g));
            self.pending[slot] = pending;
            d.held[slot] = Held::Owned;
        }
    }

    /// The centre of a grain's entity.
    fn grain_position(&self, entity: hecs::Entity) -> DVec3 {
        self.ecs
            .get::<&Pose>(entity)
            .map_or(DVec3::ZERO, |p| p.position)
    }

    /// The owned grains with the narrow-phase work each brings as the key of its pairs.
    fn weighted_points(&self, d: &Decomposition) -> Vec<WeightedPoint> {
        let mut work: FxHashMap<u32, f64> = FxHashMap::default();
        for (i, c) in self.contacts.iter().enumerate() {
            if c.owner != d.rank {
                continue;
            }
            if let Some(key) = self.pair_key_slot(c.pair) {
                let touching = self.contact_forces.get(i).is_some_and(Option::is_some);
                *work.entry(key).or_insert(0.0) += pair_work(touching);
            }
        }
        self.slots
            .iter()
            .enumerate()
            .filter(|&(slot, s)| s.is_some() && d.held[slot] == Held::Owned)
            .map(|(slot, s)| WeightedPoint {
                position: self.grain_position(s.expect("filtered")),
                weight: GRAIN_WORK + work.get(&(slot as u32)).copied().unwrap_or(0.0),
                key: self.numbering.id(slot),
            })
            .filter(|p| p.position.is_finite())
            .collect()
    }

    /// The slot of a pair's key grain: the grain of the lower id, or a grain–wall pair's
    /// grain.
    fn pair_key_slot(&self, pair: ProxyPair) -> Option<u32> {
        let grain = |p: u32| match self.proxies[p as usize] {
            Body::Grain(slot, id) => Some((id, slot)),
            Body::Wall(_) => None,
        };
        match (grain(pair.a), grain(pair.b)) {
            (Some(a), Some(b)) => Some(a.min(b).1),
            (Some((_, slot)), None) | (None, Some((_, slot))) => Some(slot),
            (None, None) => None,
        }
    }

    /// Everything of grain `slot` its new owner needs, and the states of the pairs it keys
    /// (evaluated here, by `rank`).
    fn migrant(&self, slot: usize, rank: u32) -> Option<Migrant> {
        let grain = self.grain_snapshot(slot)?;
        let proxy = self.grain_proxy[slot];
        let pairs = self
            .contacts
            .iter()
            .filter(|c| {
                (c.pair.a == proxy || c.pair.b == proxy)
                    && c.owner == rank
                    && self.pair_key_slot(c.pair) == Some(slot as u32)
            })
            .map(|c| self.pair_state(c))
            .collect();
        Some(Migrant {
            id: self.numbering.id(slot),
            grain,
            pending: self.pending[slot],
            pairs,
        })
    }

    /// Grain `slot` becomes a ghost of `owner`: its integrator state leaves it.
    fn make_ghost(&mut self, d: &mut Decomposition, slot: usize, owner: u32) {
        if let Some(entity) = self.slots[slot] {
            let _ = self.ecs.remove_one::<GearState>(entity);
            let _ = self.ecs.remove_one::<VerletState>(entity);
            let _ = self.ecs.remove_one::<Fresh>(entity);
            let _ = self.ecs.insert_one(entity, Ghost);
        }
        self.pending[slot] = Load::default();
        d.held[slot] = Held::Ghost(owner);
    }

    /// A grain that arrived: owned here from now on, its pairs' states adopted.
    fn adopt_migrant(&mut self, d: &mut Decomposition, m: Migrant) {
        let g = m.grain;
        let slot = self.slot_here(d, m.id, g.image);
        if let Some(entity) = self.slots[slot] {
            let _ = self.ecs.despawn(entity);
        }
        self.slots[slot] = Some(spawn_grain(&mut self.ecs, slot as u32, &g));
        self.pending[slot] = m.pending;
        self.images[slot] = g.image;
        d.held[slot] = Held::Owned;
        for state in m.pairs {
            match self.listed(state.first, state.second) {
                Some((i, first)) => adopt(&mut self.contacts[i], &state, first),
                None => {
                    d.stash.insert((state.first, state.second), state);
                }
            }
        }
    }

    /// The slot of grain `id` here, a new or free one (its entries cleared, its image count
    /// `image`) when this process does not hold it.
    fn slot_here(&mut self, d: &mut Decomposition, id: u32, image: ImageCount) -> usize {
        if let Some(slot) = self.numbering.slot(id) {
            return slot;
        }
        let slot = self.place_slot(id, image) as usize;
        d.hold_new(slot);
        slot
    }

    /// The proxy of a body by its identity key, when this process holds it.
    fn proxy_of_key(&self, key: u64) -> Option<u32> {
        match u32::try_from(key) {
            Ok(id) => self.numbering.slot(id).map(|slot| self.grain_proxy[slot]),
            Err(_) => Some(self.wall_proxy[(key & u64::from(u32::MAX)) as usize]),
        }
    }

    /// The place in the contact list of the pair of the bodies of keys `x` and `y`, and the
    /// proxy of the body of `x`.
    fn listed(&self, x: u64, y: u64) -> Option<(usize, u32)> {
        let (first, second) = (self.proxy_of_key(x)?, self.proxy_of_key(y)?);
        let pair = ProxyPair::new(first, second);
        let i = self.contacts.binary_search_by(|c| c.pair.cmp(&pair)).ok()?;
        Some((i, first))
    }

    /// Decomposed stage after the boxes of the grains stepped here (`own_region` is the box
    /// around them): that box to all processes, each owned grain whose box meets another
    /// process's box sent to it as a ghost, and the ghosts here replaced by those received,
    /// with their boxes. Returns the box around every process's grains (what the walls'
    /// boxes are cut to, as on a single process; `own_region` outside a decomposed run) and
    /// the time it took.
    pub(crate) fn exchange_ghosts(&mut self, own_region: Option<Aabb>) -> (Option<Aabb>, Duration) {
        let Some(mut d) = self.decomposition.take() else {
            return (own_region, Duration::ZERO);
        };
        let start = Instant::now();
        let reaches: Vec<Option<Aabb>> = d
            .gather(encode(&own_region))
            .iter()
            .map(|b| decode(b))
            .collect();
        let region = reaches
            .iter()
            .flatten()
            .fold(None, |r, &b| Some(enclose(r, b)));
        // Across periodic faces a grain meets the other side's grains through its images.
        let shifts = self.params.periodic.neighbour_shifts();
        let mut outgoing: Vec<Vec<GhostState>> = vec![Vec::new(); d.size as usize];
        for slot in 0..self.slots.len() {
            if d.held[slot] != Held::Owned {
                continue;
            }
            let (Some(entity), Some((k, inertia)), Some(b)) = (
                self.slots[slot],
                self.kinematics[slot],
                self.boxes[self.grain_proxy[slot] as usize],
            ) else {
                continue;
            };
            let (Ok(shape), Ok(material)) = (
                self.ecs.get::<&ShapeId>(entity).map(|s| *s),
                self.ecs.get::<&MaterialId>(entity).map(|m| *m),
            ) else {
                continue;
            };
            let ghost = GhostState {
                id: self.numbering.id(slot),
                shape,
                material,
                inertia,
                pose: k.pose,
                velocity: k.velocity,
                angular_velocity: k.angular_velocity,
                motion: self.motion[slot],
            };
            for (r, reach) in reaches.iter().enumerate() {
                let meets = |reach: &Aabb| {
                    shifts.iter().any(|&s| {
                        reach.intersects(&Aabb {
                            min: b.min + s,
                            max: b.max + s,
                        })
                    })
                };
                if r as u32 != d.rank && reach.as_ref().is_some_and(meets) {
                    outgoing[r].push(ghost);
                }
            }
        }
        let outgoing = outgoing.iter().map(encode).collect();
        let received = d.round(outgoing);
        let mut kept = vec![false; self.slots.len()];
        for (from, bytes) in received.iter().enumerate() {
            for g in decode::<Vec<GhostState>>(bytes) {
                let slot = self.place_ghost(&mut d, g, from as u32);
                if slot >= kept.len() {
                    kept.resize(slot + 1, false);
                }
                kept[slot] = true;
            }
        }
        for (slot, kept) in kept.into_iter().enumerate() {
            if !kept && matches!(d.held[slot], Held::Ghost(_)) {
                if let Some(entity) = self.slots[slot].take() {
                    let _ = self.ecs.despawn(entity);
                }
                self.kinematics[slot] = None;
                // The broad phase sees it gone in this step: its slot is free after that.
                self.boxes[self.grain_proxy[slot] as usize] = None;
                self.numbering.release(slot);
                d.held[slot] = Held::Absent;
            }
        }
        let elapsed = start.elapsed();
        d.traffic.exchange += elapsed;
        self.decomposition = Some(d);
        (region, elapsed)
    }

    /// A ghost at its state of this step, created when it is new here; returns its slot.
    fn place_ghost(&mut self, d: &mut Decomposition, g: GhostState, owner: u32) -> usize {
        let slot = self.slot_here(d, g.id, [0; 3]);
        match self.slots[slot] {
            Some(entity) if matches!(d.held[slot], Held::Ghost(_)) => {
                if let Ok(mut pose) = self.ecs.get::<&mut Pose>(entity) {
                    *pose = g.pose;
                }
            }
            _ => {
                if let Some(entity) = self.slots[slot] {
                    let _ = self.ecs.despawn(entity);
                }
                let entity = self.ecs.spawn((
                    Slot(slot as u32),
                    g.pose,
                    g.inertia,
                    g.shape,
                    g.material,
                    Ghost,
                ));
                self.slots[slot] = Some(entity);
            }
        }
        d.held[slot] = Held::Ghost(owner);
        let margin = self.box_margin();
        self.boxes[self.grain_proxy[slot] as usize] = self
            .shapes
            .get(g.shape)
            .ok()
            .map(|shape| grain_box(shape, &g.pose, self.params.bounding, margin));
        self.motion[slot] = g.motion;
        self.kinematics[slot] = Some((
            Kinematics {
                pose: g.pose,
                velocity: g.velocity,
                angular_velocity: g.angular_velocity,
            },
            g.inertia,
        ));
        slot
    }

    /// Decomposed stage before the narrow phase: each proxy's key and owner, and each
    /// listed pair's evaluating process.
    pub(crate) fn claim_pairs(&mut self) {
        let Some(d) = self.decomposition.as_mut() else {
            return;
        };
        d.owners.clear();
        d.owners.extend(self.proxies.iter().map(|body| match *body {
            Body::Grain(slot, id) => match d.held[slot as usize] {
                Held::Owned => (id, d.rank),
                Held::Ghost(owner) => (id, owner),
                Held::Absent => (NOT_A_GRAIN, u32::MAX),
            },
            Body::Wall(_) => (NOT_A_GRAIN, 0),
        }));
        for c in &mut self.contacts {
            c.owner = UNASSIGNED;
        }
    }

    /// The pair states that waited for their pairs, given to the pairs the broad phase
    /// listed this step; the others are dropped (their pairs ended).
    pub(crate) fn adopt_stashed(&mut self) {
        let Some(mut d) = self.decomposition.take() else {
            return;
        };
        if !d.stash.is_empty() {
            let stash = std::mem::take(&mut d.stash);
            for ((first, second), state) in stash {
                if let Some((i, first)) = self.listed(first, second) {
                    adopt(&mut self.contacts[i], &state, first);
                }
            }
        }
        self.decomposition = Some(d);
    }

    /// Decomposed stage after the narrow phase: the forces found here for pairs whose
    /// other grain another process owns, sent to it; theirs taken. Returns the time it
    /// took.
    pub(crate) fn send_forces(&mut self) -> Duration {
        let Some(mut d) = self.decomposition.take() else {
            return Duration::ZERO;
        };
        let start = Instant::now();
        let mut outgoing: Vec<ForceMessage> = vec![ForceMessage::default(); d.size as usize];
        let mut evaluated = 0u64;
        for (c, f) in self.contacts.iter().zip(&self.contact_forces) {
            if c.owner != d.rank {
                continue;
            }
            evaluated += 1;
            d.traffic.modelled_work += pair_work(f.is_some());
            let Some(f) = f else { continue };
            let (Body::Grain(slot_a, a), Body::Grain(slot_b, b)) = (
                self.proxies[c.pair.a as usize],
                self.proxies[c.pair.b as usize],
            ) else {
                // A wall's load is summed here (`World::accumulate`), the sums merged over
                // the processes in `reduce_step`.
                continue;
            };
            for slot in [slot_a, slot_b] {
                if let Held::Ghost(owner) = d.held[slot as usize] {
                    let (low, high) = (a.min(b), a.max(b));
                    let (force, torque) = if high == b {
                        (f.force_on_b, f.torque_on_b)
                    } else {
                        (-f.force_on_b, -f.torque_on_b)
                    };
                    outgoing[owner as usize].forces.push(ForceRecord {
                        low,
                        high,
                        force_on_high: force,
                        torque_on_high: torque,
                        point: f.point,
                        depth_ratio: f.depth_ratio,
                    });
                }
            }
        }
        d.traffic.pairs_evaluated += evaluated;
        let outgoing = outgoing.iter().map(encode).collect();
        let received = d.round(outgoing);
        for bytes in &received {
            let message: ForceMessage = decode(bytes);
            for r in message.forces {
                let Some((i, low)) = self.listed(grain_key(r.low), grain_key(r.high)) else {
                    continue;
                };
                let pair = self.contacts[i].pair;
                let high_is_b = pair.a == low;
                let force = ContactForce {
                    pair,
                    force_on_b: r.force_on_high,
                    torque_on_b: r.torque_on_high,
                    point: r.point,
                    depth_ratio: r.depth_ratio,
                    flipped: self.contacts[i].flipped,
                };
                self.contact_forces[i] = Some(if high_is_b { force } else { force.reversed() });
            }
        }
        let elapsed = start.elapsed();
        d.traffic.exchange += elapsed;
        self.decomposition = Some(d);
        elapsed
    }

    /// Decomposed part of the sums: the loads on walls, every process's exact sums merged,
    /// and the step's counts summed over the processes (`local`: this process's contacts
    /// evaluated, largest overlap, grain contacts and grains).
    pub(crate) fn reduce_step(&mut self, local: (usize, f64, usize, usize)) -> Option<StepCounts> {
        let mut d = self.decomposition.take()?;
        let start = Instant::now();
        // A pair counts on the owner of its key grain; a pair of walls on the first process.
        let keyed = |pair: ProxyPair| match self.pair_key_slot(pair) {
            Some(s) => d.held[s as usize] == Held::Owned,
            None => d.rank == 0,
        };
        let (mut started, mut ended) = (0u64, 0u64);
        for p in &self.events.started {
            started += u64::from(keyed(*p));
        }
        for p in &self.events.ended {
            ended += u64::from(keyed(*p));
        }
        let pairs = self.contacts.iter().filter(|c| keyed(c.pair)).count() as u64;
        let totals = Totals {
            contacts: local.0 as u64,
            max_overlap_ratio: local.1,
            grain_contacts: local.2 as u64,
            grains: local.3 as u64,
            pairs,
            pairs_started: started,
            pairs_ended: ended,
            wall_sums: std::mem::take(&mut self.wall_sums),
            load: ProcessLoad {
                narrow_seconds: d.traffic.narrow.as_secs_f64(),
                exchange_seconds: d.traffic.exchange.as_secs_f64(),
                pairs_evaluated: d.traffic.pairs_evaluated,
                modelled_work: d.traffic.modelled_work,
                bytes_sent: d.traffic.bytes_sent,
            },
        };
        let all: Vec<Totals> = d
            .gather(encode(&totals))
            .iter()
            .map(|b| decode(b))
            .collect();
        let mut sum = Totals::default();
        d.traffic.processes = all.iter().map(|t| t.load).collect();
        for t in &all {
            sum.contacts += t.contacts;
            sum.max_overlap_ratio = sum.max_overlap_ratio.max(t.max_overlap_ratio);
            sum.grain_contacts += t.grain_contacts;
            sum.grains += t.grains;
            sum.pairs += t.pairs;
            sum.pairs_started += t.pairs_started;
            sum.pairs_ended += t.pairs_ended;
            sum.wall_sums.merge(&t.wall_sums);
        }
        sum.wall_sums.write_into(&mut self.wall_loads);
        // The buffers back, for the next step's sums.
        self.wall_sums = totals.wall_sums;
        d.traffic.exchange += start.elapsed();
        self.decomposition = Some(d);
        Some(StepCounts {
            contacts: sum.contacts as usize,
            max_overlap_ratio: sum.max_overlap_ratio,
            coordination: if sum.grains > 0 {
                sum.grain_contacts as f64 / sum.grains as f64
            } else {
                0.0
            },
            grains: sum.grains as usize,
            pairs: Some((
                sum.pairs as usize,
                sum.pairs_started as usize,
                sum.pairs_ended as usize,
            )),
        })
    }
}

impl World {
    /// Whether the run's grains are split between several processes, each holding only
    /// those of its region (a decomposed run of more than one process, once its regions
    /// are cut): [`World::grain_states`] then gives this process's grains alone.
    #[must_use]
    pub fn grains_split(&self) -> bool {
        self.decomposition
            .as_ref()
            .is_some_and(|d| d.size > 1 && !d.holds_everything())
    }

    /// What every process found on its own grains, put together: `local` holds what this
    /// process found on the grains [`World::grains`] lists, and the result what all found,
    /// those of the first process first. Outside a decomposed run, and in one not stepped
    /// yet whose every process holds every grain, that is `local` itself. A collective
    /// operation in a decomposed run: every process calls it at the same point.
    pub fn gather_owned<T: Serialize + DeserializeOwned>(&mut self, local: Vec<T>) -> Vec<T> {
        self.gather_parts(local, true)
    }

    /// What every process found on its own grains, put together on the first process (in
    /// process order); nothing on the others. Outside a decomposed run, and in one not
    /// stepped yet whose every process holds every grain, `local` itself on every process. A collective operation in a decomposed
    /// run: for what only the first process needs (it writes the run's files).
    pub fn gather_owned_on_first<T: Serialize + DeserializeOwned>(
        &mut self,
        local: Vec<T>,
    ) -> Vec<T> {
        self.gather_parts(local, false)
    }

    /// What every process found, on every process (`to_all`) or on the first.
    fn gather_parts<T: Serialize + DeserializeOwned>(
        &mut self,
        local: Vec<T>,
        to_all: bool,
    ) -> Vec<T> {
        let Some(d) = self.decomposition.as_mut() else {
            return local;
        };
        if d.holds_everything() {
            return local;
        }
        let start = Instant::now();
        let bytes = encode(&local);
        let parts = if to_all {
            d.gather(bytes)
        } else {
            d.gather_to_first(bytes)
        };
        let all = parts.iter().flat_map(|b| decode::<Vec<T>>(b)).collect();
        d.traffic.exchange += start.elapsed();
        all
    }

    /// The states of all the run's grains, in slot order, on the first process of a
    /// decomposed run (none on the others; a collective operation there); on a single
    /// process [`World::grain_states`].
    pub fn grain_states_on_first(&mut self) -> Vec<GrainState> {
        self.gather_grain_states(false)
    }

    /// The states of all the run's grains, in slot order: [`World::grain_states`] on a
    /// single process, gathered from every process in a decomposed run (a collective
    /// operation there).
    pub fn gathered_grain_states(&mut self) -> Vec<GrainState> {
        self.gather_grain_states(true)
    }

    /// Every process's grain states, on every process (`to_all`) or on the first, by id.
    fn gather_grain_states(&mut self, to_all: bool) -> Vec<GrainState> {
        let local: Vec<GrainState> = self.grain_states().collect();
        let mut all = self.gather_parts(local, to_all);
        all.sort_unstable_by_key(|g| g.id);
        all
    }
}

/// Gives the listed `contact` the state `s`, met from the body of proxy `first` (the body
/// `s` names first).
fn adopt(contact: &mut Contact, s: &PairState, first: u32) {
    contact.features = s.features;
    contact.overlap_hint = s.overlap_hint;
    contact.touching = s.touching;
    if let Some(h) = History::from_slice(&s.history) {
        contact.history = h;
    }
    contact.flipped = contact.pair.a != first;
}

/// What one process contributes to the run's state: its own grains by id (with their
/// pending loads and boxes; a grain removed since the last step with its box alone, which
/// the broad phase still holds) and the states of the pairs it evaluates. The parts of all
/// processes, put into the frame of [`SnapshotShare::Part`] by [`SnapshotFrame::assembled`],
/// are the whole run's snapshot.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SnapshotPart {
    grains: Vec<(u32, Option<GrainSnapshot>, Load, Option<Aabb>)>,
    pairs: Vec<PairState>,
}

impl SnapshotPart {
    /// How many grains the part holds.
    #[must_use]
    pub fn grain_count(&self) -> usize {
        self.grains
            .iter()
            .filter(|(_, g, _, _)| g.is_some())
            .count()
    }
}

/// One process's share of the run's state, for a checkpoint written in pieces
/// ([`World::snapshot_share`]).
#[derive(Debug, Clone)]
pub enum SnapshotShare {
    /// The whole run's state: a single process, or a distributed run whose processes all
    /// hold every grain.
    Whole(WorldSnapshot),
    /// A decomposed run: this process's grains and the pairs it evaluates, and, on the first
    /// process, the frame they go into.
    Part {
        /// The frame, on the first process only.
        frame: Option<SnapshotFrame>,
        /// This process's part.
        part: SnapshotPart,
    },
}

/// Everything of a decomposed run's state but its grains and pairs, in the numbering of a
/// single process (grain `id` in slot and proxy `id`, the walls' proxies after them): the
/// snapshot's per-grain lists are left empty (only the walls' boxes are kept), so that the
/// frame's size does not grow with the run, and the number of grain ids says how long they
/// are.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SnapshotFrame {
    /// The snapshot without grains, pairs, pending loads or proxies; its boxes the walls'.
    pub world: WorldSnapshot,
    /// Grain ids the run has given out (grains removed since included).
    pub ids: u32,
}

impl SnapshotFrame {
    /// The whole run's snapshot from this frame and the parts of all the processes (in any
    /// order; every grain and pair in exactly one part).
    #[must_use]
    pub fn assembled(self, parts: impl IntoIterator<Item = SnapshotPart>) -> WorldSnapshot {
        let SnapshotFrame { mut world, ids } = self;
        let walls = world.boxes.len() as u32;
        world.grains = vec![None; ids as usize];
        world.pending = vec![Load::default(); ids as usize];
        world.proxies = (0..ids)
            .map(|id| BodyRef::Grain(GrainId(id)))
            .chain((0..walls).map(|w| BodyRef::Wall(WallId(w))))
            .collect();
        world
            .boxes
            .splice(0..0, std::iter::repeat_n(None, ids as usize));
        let proxy_of_key = |key: u64| match u32::try_from(key) {
            Ok(id) => id,
            Err(_) => ids.saturating_add((key & u64::from(u32::MAX)) as u32),
        };
        let mut contacts = Vec::new();
        for part in parts {
            for (id, g, pending, aabb) in part.grains {
                let Some(slot) = world.grains.get_mut(id as usize) else {
                    continue;
                };
                *slot = g;
                world.pending[id as usize] = pending;
                world.boxes[id as usize] = aabb;
            }
            for s in part.pairs {
                let (first, second) = (proxy_of_key(s.first), proxy_of_key(s.second));
                contacts.push(ContactSnapshot {
                    pair: ProxyPair::new(first, second),
                    features: s.features,
                    overlap_hint: s.overlap_hint,
                    touching: s.touching,
                    flipped: first > second,
                    history: s.history,
                });
            }
        }
        contacts.sort_by_key(|c| c.pair);
        world.contacts = contacts;
        world
    }
}

impl World {
    /// The whole run's state, as one process would checkpoint it: in a decomposed run every
    /// process sends its own grains and the states of the pairs it evaluates to all, and
    /// each puts them together in its own numbering (which changes no result), so that the
    /// snapshot resumes on any number of processes, or on one. A collective operation in a
    /// distributed or decomposed run (every process calls it at the same point); a plain
    /// [`World::snapshot`] on a single process.
    pub fn gathered_snapshot(&mut self) -> WorldSnapshot {
        self.gather_snapshot(true)
            .expect("gathered on every process")
    }

    /// [`World::gathered_snapshot`] on the first process of a decomposed run only (`None`
    /// on the others, which send their parts).
    pub fn snapshot_on_first(&mut self) -> Option<WorldSnapshot> {
        self.gather_snapshot(false)
    }

    /// This process's share of the run's state, with nothing sent to another process in a
    /// decomposed run: each process keeps its part (to write it itself), and the parts
    /// [`SnapshotFrame::assembled`] into the first process's frame are
    /// [`World::gathered_snapshot`]. A collective operation in a distributed run (whose
    /// processes first bring every pair's state up to date everywhere); a plain
    /// [`World::snapshot`] on a single process, or before the regions are cut while every
    /// process holds every grain. A world restored in shares gives its share before its
    /// first step too, but without the grains' boxes (computed at that step): a checkpoint
    /// is taken after a step.
    pub fn snapshot_share(&mut self) -> SnapshotShare {
        self.synchronize_contacts();
        match &self.decomposition {
            Some(d) if !d.holds_everything() => SnapshotShare::Part {
                frame: (d.rank == 0).then(|| self.snapshot_frame()),
                part: self.snapshot_part(d),
            },
            _ => SnapshotShare::Whole(self.snapshot()),
        }
    }

    /// The whole run's snapshot, on every process (`to_all`) or on the first.
    fn gather_snapshot(&mut self, to_all: bool) -> Option<WorldSnapshot> {
        self.synchronize_contacts();
        let Some(mut d) = self.decomposition.take() else {
            return Some(self.snapshot());
        };
        if d.holds_everything() {
            // Not stepped yet since the decomposition: every process holds everything.
            self.decomposition = Some(d);
            return Some(self.snapshot());
        }
        let bytes = encode(&self.snapshot_part(&d));
        let parts: Vec<SnapshotPart> = if to_all {
            d.gather(bytes)
        } else {
            d.gather_to_first(bytes)
        }
        .iter()
        .map(|b| decode(b))
        .collect();
        let snapshot = (!parts.is_empty()).then(|| self.snapshot_frame().assembled(parts));
        self.decomposition = Some(d);
        snapshot
    }

    /// This process's grains and the states of the pairs it evaluates.
    fn snapshot_part(&self, d: &Decomposition) -> SnapshotPart {
        SnapshotPart {
            grains: (0..self.slots.len())
                .filter(|&slot| d.held[slot] == Held::Owned)
                .filter_map(|slot| {
                    let aabb = self.boxes[self.grain_proxy[slot] as usize];
                    let g = self.grain_snapshot(slot);
                    (g.is_some() || aabb.is_some())
                        .then(|| (self.numbering.id(slot), g, self.pending[slot], aabb))
                })
                .collect(),
            // With the states still waiting for their pairs (none after a step: a world
            // restored in shares holds them until its first).
            pairs: self
                .contacts
                .iter()
                .filter(|c| c.owner == d.rank)
                .map(|c| self.pair_state(c))
                .chain(d.stash.values().cloned())
                .collect(),
        }
    }

    /// The run's state without grains or pairs (see [`SnapshotFrame`]).
    fn snapshot_frame(&self) -> SnapshotFrame {
        let mut world = self.snapshot_head();
        world.boxes = self
            .wall_proxy
            .iter()
            .map(|&p| self.boxes[p as usize])
            .collect();
        SnapshotFrame {
            world,
            ids: self.numbering.id_count(),
        }
    }

    /// A listed pair's state, its bodies named by identity in the order it is met in.
    fn pair_state(&self, c: &Contact) -> PairState {
        let (first, second) = c.oriented();
        PairState {
            first: identity_key(self.proxies[first as usize]),
            second: identity_key(self.proxies[second as usize]),
            features: c.features,
            overlap_hint: c.overlap_hint,
            touching: c.touching,
            history: c.history.as_slice().to_vec(),
        }
    }
}
