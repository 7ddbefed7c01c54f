//! The grains at an output time, counted and measured where they are: each process of a
//! decomposed run over the grains it owns, the processes' parts then put together.
//!
//! Every part is made so that putting parts together is exact: counts add, sums are
//! [`ExactSum`]s, heights take the highest, the intruder is the grain of the lowest id. So
//! the totals are the same to the bit whatever the split of the grains, and equal to those
//! of a single process; no process gathers the grains of the others. Each process receives
//! the others' parts (a few numbers per probe, a profile's bins for the surfaces and the
//! chute), and all of them then hold the same totals and update their probes alike.

use serde::{Deserialize, Serialize};
use talus_sim::World;
use talus_sim::exact_sum::ExactSum;

use super::chute::ChuteSums;
use super::stability::HeapTops;
use super::transport::TransportSums;
use super::vibration::BedSums;
use super::{Probe, Sample, kinetic_energy};
use crate::analysis::repose::SurfaceTops;

/// What some grains give a probe (see [`Probe::partial`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Partial {
    /// The tops of a pile's surface.
    Repose(SurfaceTops),
    /// The vibrated bed's sums.
    Vibration(BedSums),
    /// The grains left in a hopper.
    Discharge(u64),
    /// The grains of a fed heap and the tops of its surface.
    Stability(HeapTops),
    /// The conveyor's sums.
    Transport(TransportSums),
    /// The chute's sums.
    Chute(ChuteSums),
}

impl Partial {
    /// Takes in what other grains give the same probe.
    pub fn merge(&mut self, other: &Partial) {
        match (self, other) {
            (Partial::Repose(a), Partial::Repose(b)) => a.merge(b),
            (Partial::Vibration(a), Partial::Vibration(b)) => a.merge(b),
            (Partial::Discharge(a), Partial::Discharge(b)) => *a += b,
            (Partial::Stability(a), Partial::Stability(b)) => a.merge(b),
            (Partial::Transport(a), Partial::Transport(b)) => a.merge(b),
            (Partial::Chute(a), Partial::Chute(b)) => a.merge(b),
            // Parts of one probe are always of its kind: the processes run the same probes.
            _ => {}
        }
    }
}

/// The run's grains at an output time: their number, their kinetic energy, and what they
/// give each of a list of probes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Census {
    /// Grains counted.
    pub grains: u64,
    /// Their kinetic energy, translation plus rotation.
    pub kinetic_energy: ExactSum,
    /// Per probe of the list, in its order.
    pub partials: Vec<Partial>,
}

impl Census {
    /// The grains of `sample` (one process's, or all) and what they give `probes`.
    #[must_use]
    pub fn of<'p>(sample: &Sample, probes: impl IntoIterator<Item = &'p Probe>) -> Census {
        Census {
            grains: sample.grains.len() as u64,
            kinetic_energy: sample
                .grains
                .iter()
                .map(|g| kinetic_energy(&g.state))
                .collect(),
            partials: probes.into_iter().map(|p| p.partial(sample)).collect(),
        }
    }

    /// Takes in the census of other grains (over the same probes).
    pub fn merge(&mut self, other: &Census) {
        self.grains += other.grains;
        self.kinetic_energy.merge(&other.kinetic_energy);
        for (mine, theirs) in self.partials.iter_mut().zip(&other.partials) {
            mine.merge(theirs);
        }
    }

    /// The census of all of the run's grains, from `sample`, the grains this process owns
    /// (in a decomposed run a collective operation, on every process with the same
    /// `probes`; before the first decomposed step every process holds every grain, and
    /// nothing is exchanged). Every process gets the same census.
    pub fn taken(world: &mut World, sample: &Sample, probes: &[&Probe]) -> Census {
        let mut census = merged(world, Census::of(sample, probes.iter().copied()));
        // The passes that need the first's totals over all grains.
        let second: Vec<Option<Partial>> = probes
            .iter()
            .zip(&census.partials)
            .map(|(p, first)| p.second_partial(sample, first))
            .collect();
        // The same on every process: decided from the totals.
        if second.iter().any(Option::is_some) {
            let parts = world.gather_owned(vec![second]);
            for part in parts {
                for (total, rest) in census.partials.iter_mut().zip(part) {
                    if let Some(rest) = rest {
                        total.merge(&rest);
                    }
                }
            }
        }
        census
    }
}

/// The processes' censuses merged, on every process (in rank order; the merge is exact,
/// so any order gives the same).
fn merged(world: &mut World, local: Census) -> Census {
    let fallback = local.clone();
    let mut parts = world.gather_owned(vec![local]).into_iter();
    let Some(mut total) = parts.next() else {
        return fallback;
    };
    for part in parts {
        total.merge(&part);
    }
    total
}
