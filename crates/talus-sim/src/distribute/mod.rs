//! Distributed runs: one world on several processes, the same bits as on one.
//!
//! Every process holds the whole scene and takes every stage of the step but one, in the
//! same order with the same numbers: prediction, bounding boxes, the broad phase, the sums
//! of the forces and the correction. The narrow phase, nearly all of a step's work, is
//! split by space: the scene is cut into one region per process by recursive coordinate
//! bisection ([`bisection`]), balanced by the work each grain brings (one plus its box
//! pairs), and each pair is evaluated by exactly one process, the owner of the region that
//! holds the centre of its *key grain* (the grain of the lower id; a grain–wall pair's
//! grain). A pair's cached state (closest features, overlap hint, force history) lives with
//! its evaluating process and moves to the new owner when the key grain crosses into
//! another region or the regions are rebalanced (every [`World::distribute`]'s
//! `rebalance_every` steps). After the narrow phase every process sends the forces it found
//! to all the others, and each process sums every grain's forces in the order of the ids of
//! the bodies they come from (`crate::load_sums`), which is the same on all: results do not depend on the number of processes, and
//! equal a single process's to the last bit.
//!
//! [`decompose`] holds the other design, where each process holds only its region's grains
//! and ghosts of its neighbours' ([`World::decompose`]).
//!
//! What this costs: the stages besides the narrow phase are repeated on every process, and
//! every touching pair's force crosses the network once per step (84 bytes). See
//! `docs/scaling.md` for the model and its limits.

pub mod bisection;
pub mod decompose;
pub mod exchange;
mod measured;

use std::time::{Duration, Instant};

use talus_geom::glam::DVec3;

use crate::broad::ProxyPair;
use crate::contact::{Contact, ContactForce, History};
use crate::error::SimError;
use crate::snapshot::ContactSnapshot;
use crate::world::{Body, GrainId, World};
use bisection::{Bisection, WeightedPoint};
pub use decompose::{SnapshotFrame, SnapshotPart, SnapshotShare};
pub use exchange::{Exchange, ThreadExchange, all_gather};
use measured::{smoothed, weight_factors};

/// A contact whose evaluating process is not decided yet (a new pair, or one restored from
/// a checkpoint, whose state every process holds).
pub(crate) const UNASSIGNED: u32 = u32::MAX;

/// The key of a proxy that is not a grain: it never decides a pair's owner.
pub(crate) const NOT_A_GRAIN: u32 = u32::MAX;

/// The work of a pair whose bodies touch, in units of the work of a pair whose boxes
/// overlap but bodies do not: an overlap polyhedron and a force (about 1.8 µs for two
/// 18-vertex grains, `narrow_phase` benchmark) against a warm closest-feature query (about
/// 60 ns).
pub(crate) const TOUCHING_WORK: f64 = 30.0;

/// The modelled work of a listed pair: [`TOUCHING_WORK`] when its bodies touch (a force was
/// found), else one.
pub(crate) fn pair_work(touching: bool) -> f64 {
    if touching { TOUCHING_WORK } else { 1.0 }
}

/// The work of a grain without pairs, in the same units: it costs the narrow phase nothing,
/// but every grain needs a weight for the regions to be cut among grains without pairs.
pub(crate) const GRAIN_WORK: f64 = 0.01;

/// Bytes of one force sent to the other processes: its place in the pair list, then force,
/// couple, point of action and depth ratio.
const FORCE_RECORD: usize = 4 + 10 * 8;

/// What the processes of a distributed run sent each other, in total since
/// [`World::distribute`].
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct Traffic {
    /// Processes in the run.
    pub ranks: usize,
    /// Steps taken.
    pub steps: u64,
    /// Bytes this process sent to the others.
    pub bytes_sent: u64,
    /// Rounds of exchange.
    pub rounds: u64,
    /// Time in the distributed stages: assigning the pairs, moving their states, sharing
    /// the forces (including waiting for the slowest process).
    pub exchange: Duration,
    /// Pair states moved from one process to another.
    pub contacts_moved: u64,
    /// Times the regions were cut anew.
    pub rebalances: u64,
    /// Pairs this process evaluated.
    pub pairs_evaluated: u64,
    /// Their modelled work (see [`ProcessLoad::modelled_work`]).
    pub modelled_work: f64,
    /// Time in this process's narrow phase.
    pub narrow: Duration,
    /// What each process had done by the last step, by rank: the balance of the work.
    pub processes: Vec<ProcessLoad>,
    /// The factors each process's grains were weighed by at the last cut, by rank, from
    /// the cost of its work measured since the cut before, averaged with the factors of
    /// that cut (see `measured.rs`); empty when the last cut had no measurements to go by
    /// (the first one) and the model alone weighed.
    pub weight_factors: Vec<f64>,
}

/// One process's share of a distributed run's work so far.
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct ProcessLoad {
    /// Time in its narrow phase, seconds.
    pub narrow_seconds: f64,
    /// Time in the distributed stages (waiting for the others included), seconds.
    pub exchange_seconds: f64,
    /// Pairs it evaluated.
    pub pairs_evaluated: u64,
    /// The modelled work of the pairs it evaluated: one per pair whose boxes overlap,
    /// [`TOUCHING_WORK`] per pair whose grains touch. Its narrow-phase time per unit of this
    /// is what balances the regions (see `measured.rs`).
    pub modelled_work: f64,
    /// Bytes it sent to the others.
    pub bytes_sent: u64,
}

/// Bytes of a [`ProcessLoad`] at the head of each message of the assigning stage.
const LOAD_RECORD: usize = 40;

impl ProcessLoad {
    fn encode(&self) -> [u8; LOAD_RECORD] {
        let mut b = [0u8; LOAD_RECORD];
        b[..8].copy_from_slice(&self.narrow_seconds.to_le_bytes());
        b[8..16].copy_from_slice(&self.exchange_seconds.to_le_bytes());
        b[16..24].copy_from_slice(&self.pairs_evaluated.to_le_bytes());
        b[24..32].copy_from_slice(&self.modelled_work.to_le_bytes());
        b[32..].copy_from_slice(&self.bytes_sent.to_le_bytes());
        b
    }

    fn decode(b: &[u8]) -> ProcessLoad {
        let word = |k: usize| -> [u8; 8] { b[8 * k..8 * k + 8].try_into().expect("8 bytes") };
        ProcessLoad {
            narrow_seconds: f64::from_le_bytes(word(0)),
            exchange_seconds: f64::from_le_bytes(word(1)),
            pairs_evaluated: u64::from_le_bytes(word(2)),
            modelled_work: f64::from_le_bytes(word(3)),
            bytes_sent: u64::from_le_bytes(word(4)),
        }
    }
}

/// A world's part in a distributed run.
pub(crate) struct Distribution {
    exchange: Box<dyn Exchange>,
    pub(crate) rank: u32,
    size: u32,
    rebalance_every: u64,
    /// The regions, cut at the first step and every `rebalance_every` steps.
    regions: Option<Bisection>,
    /// Per proxy this step: its key (the grain's slot, or [`NOT_A_GRAIN`]) and the process
    /// whose region holds it.
    pub(crate) owners: Vec<(u32, u32)>,
    traffic: Traffic,
    /// Every process's load at the last cut.
    loads_at_cut: Vec<ProcessLoad>,
}

/// Who evaluates which pair this step, as the narrow phase sees it.
#[derive(Clone, Copy)]
pub(crate) struct PairOwners<'a> {
    /// This process.
    pub rank: u32,
    /// Per proxy: key and region (empty on a single process: everything is its own).
    pub table: &'a [(u32, u32)],
}

impl PairOwners<'_> {
    /// The process that evaluates `pair`: the owner of its key grain.
    pub fn of(&self, pair: ProxyPair) -> u32 {
        if self.table.is_empty() {
            return 0;
        }
        let (ka, ra) = self.table[pair.a as usize];
        let (kb, rb) = self.table[pair.b as usize];
        match (ka, kb) {
            (NOT_A_GRAIN, NOT_A_GRAIN) => 0,
            _ if ka <= kb => ra,
            _ => rb,
        }
    }

    /// Whether this process evaluates `contact`, deciding it for a new pair.
    pub fn claims(&self, contact: &mut Contact) -> bool {
        if contact.owner == UNASSIGNED {
            contact.owner = self.of(contact.pair);
        }
        contact.owner == self.rank
    }
}

impl World {
    /// Makes this world one process of a distributed run over `exchange`: every process of
    /// the group must hold the same world (built the same way, or restored from the same
    /// checkpoint) and step it the same way. The regions are cut anew every
    /// `rebalance_every` steps.
    ///
    /// # Errors
    /// [`SimError::InvalidParameter`] for `rebalance_every` zero or a group of more than
    /// 65,536 processes.
    pub fn distribute(
        &mut self,
        exchange: Box<dyn Exchange>,
        rebalance_every: u64,
    ) -> Result<(), SimError> {
        let (rank, size) = check_group(&*exchange, rebalance_every)?;
        // Every process reads and rewrites the whole contact list at every step.
        self.merge_contacts();
        self.distribution = Some(Distribution {
            exchange,
            rank: rank as u32,
            size: size as u32,
            rebalance_every,
            regions: None,
            owners: Vec::new(),
            traffic: Traffic {
                ranks: size,
                ..Traffic::default()
            },
            loads_at_cut: Vec::new(),
        });
        Ok(())
    }

    /// This process's number in a distributed run (0 on a single process).
    #[must_use]
    pub fn rank(&self) -> usize {
        match (&self.distribution, &self.decomposition) {
            (Some(d), _) => d.rank as usize,
            (_, Some(d)) => d.rank as usize,
            _ => 0,
        }
    }

    /// Number of processes of the run (1 on a single process).
    #[must_use]
    pub fn ranks(&self) -> usize {
        match (&self.distribution, &self.decomposition) {
            (Some(d), _) => d.size as usize,
            (_, Some(d)) => d.size as usize,
            _ => 1,
        }
    }

    /// What this process sent and how long it spent exchanging (zeros on a single process).
    #[must_use]
    pub fn traffic(&self) -> Traffic {
        self.distribution
            .as_ref()
            .map(|d| d.traffic.clone())
            .or_else(|| self.decomposed_traffic())
            .unwrap_or_default()
    }

    /// The process whose region held the grain's centre at the last step (0 on a single
    /// process or before the first step).
    ///
    /// # Errors
    /// [`SimError::UnknownId`] for a grain that is not in the world.
    pub fn grain_owner(&self, id: GrainId) -> Result<usize, SimError> {
        self.entity(id)?;
        let proxy = self.grain_proxy[id.0 as usize] as usize;
        Ok(self
            .distribution
            .as_ref()
            .and_then(|d| d.owners.get(proxy))
            .map_or(0, |&(_, rank)| rank as usize))
    }

    /// Brings every pair's cached state to every process (each pair's evaluating process
    /// sends it to all), so that a checkpoint taken on any process holds the whole run. A
    /// collective operation: every process calls it at the same point. Nothing to do on a
    /// single process.
    pub fn synchronize_contacts(&mut self) {
        let Some(mut d) = self.distribution.take() else {
            return;
        };
        let start = Instant::now();
        let own: Vec<ContactSnapshot> = self
            .contacts
            .iter()
            .filter(|c| c.owner == d.rank)
            .map(contact_state)
            .collect();
        let bytes = postcard::to_stdvec(&own).expect("contact states serialize");
        d.traffic.bytes_sent += (bytes.len() * (d.size as usize - 1)) as u64;
        d.traffic.rounds += 1;
        let received = all_gather(&mut *d.exchange, bytes);
        for (from, bytes) in received.iter().enumerate() {
            if from as u32 != d.rank {
                adopt_states(&mut self.contacts, bytes);
            }
        }
        d.traffic.exchange += start.elapsed();
        self.distribution = Some(d);
    }

    /// Distributed stage before the narrow phase: the regions (cut anew when due), each
    /// proxy's owner at its evaluated position, and each listed pair's owner, its state
    /// sent to the new owner when that changed. Returns the time it took.
    pub(crate) fn assign_owners(&mut self) -> Duration {
        let Some(mut d) = self.distribution.take() else {
            return Duration::ZERO;
        };
        let start = Instant::now();
        d.traffic.steps += 1;
        let key_of = |body: &Body| match *body {
            Body::Grain(slot, id) if self.slots[slot as usize].is_some() => id,
            _ => NOT_A_GRAIN,
        };
        let position = |proxy: usize| self.bodies[proxy].pose.position;
        if d.regions.is_none() || self.steps % d.rebalance_every == 0 {
            // The narrow-phase work each grain brings as the key of its pairs, from the last
            // step's list (the same on every process).
            let mut work = vec![GRAIN_WORK; self.proxies.len()];
            let keys: Vec<u32> = self.proxies.iter().map(key_of).collect();
            for (i, c) in self.contacts.iter().enumerate() {
                let (a, b) = (c.pair.a as usize, c.pair.b as usize);
                let key = if keys[a] <= keys[b] { a } else { b };
                work[key] += pair_work(self.contact_forces.get(i).is_some_and(Option::is_some));
            }
            // Each grain's work at what a unit of work cost the process that held it since
            // the last cut (every process knows every process's figures alike).
            let factors = d
                .regions
                .as_ref()
                .and_then(|_| weight_factors(&d.loads_at_cut, &d.traffic.processes))
                .map(|f| smoothed(&d.traffic.weight_factors, f));
            let factor = |x: DVec3| match (&factors, &d.regions) {
                (Some(f), Some(regions)) => f[regions.owner(x) as usize],
                _ => 1.0,
            };
            let mut points: Vec<WeightedPoint> = keys
                .iter()
                .enumerate()
                .filter(|&(_, &k)| k != NOT_A_GRAIN)
                .map(|(proxy, &key)| WeightedPoint {
                    position: position(proxy),
                    weight: work[proxy] * factor(position(proxy)),
                    key,
                })
                .filter(|p| p.position.is_finite())
                .collect();
            d.traffic.weight_factors = factors.unwrap_or_default();
            d.loads_at_cut.clone_from(&d.traffic.processes);
            d.regions = Some(Bisection::balance(&mut points, d.size as usize));
            d.traffic.rebalances += 1;
        }
        let regions = d.regions.as_ref().expect("cut above");
        d.owners.clear();
        d.owners
            .extend(self.proxies.iter().enumerate().map(|(proxy, body)| {
                let key = key_of(body);
                let owner = if key == NOT_A_GRAIN {
                    0
                } else {
                    regions.owner(position(proxy))
                };
                (key, owner)
            }));
        let owners = PairOwners {
            rank: d.rank,
            table: &d.owners,
        };
        let mut outgoing: Vec<Vec<ContactSnapshot>> = vec![Vec::new(); d.size as usize];
        for c in &mut self.contacts {
            let owner = owners.of(c.pair);
            if c.owner != owner {
                if c.owner == d.rank {
                    outgoing[owner as usize].push(contact_state(c));
                }
                c.owner = owner;
            }
        }
        let moved: usize = outgoing.iter().map(Vec::len).sum();
        d.traffic.contacts_moved += moved as u64;
        // Each message starts with this process's load so far, so that every process knows
        // the balance of the work.
        let load = ProcessLoad {
            narrow_seconds: d.traffic.narrow.as_secs_f64(),
            exchange_seconds: d.traffic.exchange.as_secs_f64(),
            pairs_evaluated: d.traffic.pairs_evaluated,
            modelled_work: d.traffic.modelled_work,
            bytes_sent: d.traffic.bytes_sent,
        }
        .encode();
        let outgoing: Vec<Vec<u8>> = outgoing
            .iter()
            .map(|states| {
                let mut bytes = load.to_vec();
                bytes.extend(postcard::to_stdvec(states).expect("contact states serialize"));
                bytes
            })
            .collect();
        d.traffic.bytes_sent += outgoing
            .iter()
            .enumerate()
            .filter(|&(r, _)| r as u32 != d.rank)
            .map(|(_, b)| b.len() as u64)
            .sum::<u64>();
        d.traffic.rounds += 1;
        let received = d.exchange.all_to_all(outgoing);
        d.traffic.processes.clear();
        for bytes in &received {
            let (load, states) = bytes.split_at(LOAD_RECORD);
            d.traffic.processes.push(ProcessLoad::decode(load));
            adopt_states(&mut self.contacts, states);
        }
        let elapsed = start.elapsed();
        d.traffic.exchange += elapsed;
        self.distribution = Some(d);
        elapsed
    }

    /// Distributed stage after the narrow phase: every process sends the forces of the
    /// pairs it evaluated to all the others and takes theirs, so that each holds the whole
    /// force list. Returns the time it took.
    pub(crate) fn share_forces(&mut self) -> Duration {
        let Some(mut d) = self.distribution.take() else {
            return Duration::ZERO;
        };
        let start = Instant::now();
        let mut bytes = Vec::new();
        let mut evaluated = 0u64;
        for (i, (c, f)) in self.contacts.iter().zip(&self.contact_forces).enumerate() {
            if c.owner != d.rank {
                continue;
            }
            evaluated += 1;
            d.traffic.modelled_work += pair_work(f.is_some());
            if let Some(f) = f {
                bytes.extend_from_slice(&(i as u32).to_le_bytes());
                for x in [f.force_on_b, f.torque_on_b, f.point] {
                    for v in x.to_array() {
                        bytes.extend_from_slice(&v.to_le_bytes());
                    }
                }
                bytes.extend_from_slice(&f.depth_ratio.to_le_bytes());
            }
        }
        d.traffic.pairs_evaluated += evaluated;
        d.traffic.bytes_sent += (bytes.len() * (d.size as usize - 1)) as u64;
        d.traffic.rounds += 1;
        let received = all_gather(&mut *d.exchange, bytes);
        for (from, bytes) in received.iter().enumerate() {
            if from as u32 == d.rank {
                continue;
            }
            for record in bytes.chunks_exact(FORCE_RECORD) {
                let index = u32::from_le_bytes(record[..4].try_into().expect("4 bytes")) as usize;
                let value = |k: usize| {
                    let at = 4 + 8 * k;
                    f64::from_le_bytes(record[at..at + 8].try_into().expect("8 bytes"))
                };
                let vector = |k: usize| DVec3::new(value(k), value(k + 1), value(k + 2));
                self.contact_forces[index] = Some(ContactForce {
                    pair: self.contacts[index].pair,
                    force_on_b: vector(0),
                    torque_on_b: vector(3),
                    point: vector(6),
                    depth_ratio: value(9),
                    flipped: self.contacts[index].flipped,
                });
            }
        }
        let elapsed = start.elapsed();
        d.traffic.exchange += elapsed;
        self.distribution = Some(d);
        elapsed
    }

    /// Adds a step's narrow-phase time to this process's account.
    pub(crate) fn account_narrow(&mut self, narrow: Duration) {
        if let Some(d) = self.distribution.as_mut() {
            d.traffic.narrow += narrow;
        }
        if let Some(d) = self.decomposition.as_mut() {
            d.traffic.narrow += narrow;
        }
    }

    /// Forgets the regions, so that they are cut anew at the next step (after a restore).
    pub(crate) fn reset_regions(&mut self) {
        if let Some(d) = self.distribution.as_mut() {
            d.regions = None;
        }
    }
}

/// This process's rank and the group's size, once the group and the rebalancing interval
/// are checked.
pub(crate) fn check_group(
    exchange: &dyn Exchange,
    rebalance_every: u64,
) -> Result<(usize, usize), SimError> {
    if rebalance_every == 0 {
        return Err(SimError::InvalidParameter {
            name: "rebalance_every",
            value: "0".into(),
            allowed: "a positive number of steps",
        });
    }
    let (rank, size) = (exchange.rank(), exchange.size());
    if size == 0 || size > 1 << 16 || rank >= size {
        return Err(SimError::InvalidParameter {
            name: "process group",
            value: format!("rank {rank} of {size}"),
            allowed: "1 to 65,536 processes, the rank below their number",
        });
    }
    Ok((rank, size))
}

/// The cached state of a contact, to send.
fn contact_state(c: &Contact) -> ContactSnapshot {
    ContactSnapshot {
        pair: c.pair,
        features: c.features,
        overlap_hint: c.overlap_hint,
        touching: c.touching,
        flipped: c.flipped,
        history: c.history.as_slice().to_vec(),
    }
}

/// Takes the states in `bytes` (sent by another process of this run, so they decode and
/// name pairs of the list) into the sorted contact list.
fn adopt_states(contacts: &mut [Contact], bytes: &[u8]) {
    let states: Vec<ContactSnapshot> =
        postcard::from_bytes(bytes).expect("a process of the run sent contact states");
    for s in states {
        if let Ok(i) = contacts.binary_search_by(|c| c.pair.cmp(&s.pair)) {
            let c = &mut contacts[i];
            c.features = s.features;
            c.overlap_hint = s.overlap_hint;
            c.touching = s.touching;
            c.flipped = s.flipped;
            if let Some(h) = History::from_slice(&s.history) {
                c.history = h;
            }
        }
    }
}
