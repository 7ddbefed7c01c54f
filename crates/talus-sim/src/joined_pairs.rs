//! The broad phase's events taken without rebuilding the contact list at every step.
//!
//! A flowing bed has pair events at every step, a few among thousands of pairs, and merging
//! them into the sorted list ([`crate::contact::apply_events`]) copies the whole list (some
//! 200 bytes a pair) each time: the copy, serial, cost a discharging hopper 6 % of its
//! one-thread step and more of its two-thread one. Here an ended pair is only marked in
//! place ([`Contact::ended`]: no force, not met again) and a started one joins a short
//! second list, sorted too; the two lists are merged into one, dropping the ended pairs,
//! once those and the joined ones are a sixteenth of the list (and whenever the whole
//! list is read: renumbering, snapshots, distributed runs).
//!
//! Nothing a pair computes depends on where it is kept, and every sum over the pairs is
//! in an order of its own (loads by partner identity, walls exactly), so a run gives the
//! same bits whenever its lists are merged.

use crate::broad::{PairEvents, ProxyPair};
use crate::contact::{Contact, ContactForce};

/// The pairs that joined the contact list since it was last merged, with their forces,
/// and how many of the list's pairs ended since (marked, still in it).
#[derive(Debug, Default)]
pub(crate) struct JoinedPairs {
    /// Sorted by pair; none of them is a live pair of the list. Ended ones are marked
    /// until the next started pairs are merged in.
    pub contacts: Vec<Contact>,
    /// The force of each joined pair, as the list's forces.
    pub forces: Vec<Option<ContactForce>>,
    /// Pairs of the list marked ended.
    ended_in_list: usize,
    spare: Vec<Contact>,
    spare_forces: Vec<Option<ContactForce>>,
}

impl JoinedPairs {
    /// Whether nothing joined and nothing of the list ended: the list is all the pairs.
    pub fn is_merged(&self) -> bool {
        self.contacts.is_empty() && self.ended_in_list == 0
    }

    /// Whether the list is due to be merged: the pairs joined and ended since the last merge
    /// are more than a sixteenth of it (or than 32). The merge copies the list once; until
    /// then each step passes over the ended pairs and copies the joined ones when pairs
    /// start, at most a sixteenth of the list's copy.
    pub fn is_due(&self, list_len: usize) -> bool {
        self.contacts.len() + self.ended_in_list > (list_len / 16).max(32)
    }

    /// Takes the broad phase's `events`: each ended pair marked where it is kept (the list
    /// or the joined pairs; a pair in neither never was listed), each started one merged
    /// into the joined pairs, fresh (see [`Contact::fresh`]). The list and its forces
    /// (`list`, `forces`, as long) are not moved.
    pub fn take_events(
        &mut self,
        list: &mut [Contact],
        forces: &mut [Option<ContactForce>],
        events: &PairEvents,
        history_len: usize,
        key: impl Fn(u32) -> u64,
    ) {
        for &pair in &events.ended {
            if end(list, forces, pair) {
                self.ended_in_list += 1;
            } else {
                end(&mut self.contacts, &mut self.forces, pair);
            }
        }
        if events.started.is_empty() {
            return;
        }
        // The joined pairs, less the ended ones, and the started ones, in pair order.
        let (old, old_forces) = (&mut self.contacts, &mut self.forces);
        std::mem::swap(old, &mut self.spare);
        std::mem::swap(old_forces, &mut self.spare_forces);
        let (joined, joined_forces) = (&mut self.contacts, &mut self.forces);
        joined.clear();
        joined_forces.clear();
        let mut kept = self
            .spare
            .iter()
            .zip(&self.spare_forces)
            .filter(|(c, _)| !c.ended)
            .peekable();
        for &pair in &events.started {
            while let Some((c, f)) = kept.next_if(|(c, _)| c.pair < pair) {
                joined.push(*c);
                joined_forces.push(*f);
            }
            joined.push(Contact::fresh(pair, history_len, key(pair.a) > key(pair.b)));
            joined_forces.push(None);
        }
        for (c, f) in kept {
            joined.push(*c);
            joined_forces.push(*f);
        }
        self.spare.clear();
        self.spare_forces.clear();
    }

    /// Merges the joined pairs into the list (`lists`, through the `spares`), both less
    /// their ended pairs: the list is then all the pairs, sorted, and nothing is joined.
    pub fn merge_into(
        &mut self,
        lists: (&mut Vec<Contact>, &mut Vec<Option<ContactForce>>),
        spares: (&mut Vec<Contact>, &mut Vec<Option<ContactForce>>),
    ) {
        if self.is_merged() {
            return;
        }
        let ((list, forces), (old, old_forces)) = (lists, spares);
        std::mem::swap(list, old);
        std::mem::swap(forces, old_forces);
        list.clear();
        forces.clear();
        old_forces.resize(old.len(), None);
        list.reserve(old.len() + self.contacts.len());
        forces.reserve(old.len() + self.contacts.len());
        // The list's pairs below each joined one, as runs between ended pairs.
        let mut from = 0;
        for (c, f) in self.contacts.iter().zip(&self.forces) {
            if c.ended {
                continue;
            }
            let below = from + old[from..].partition_point(|o| o.pair < c.pair);
            extend_live(list, forces, &old[from..below], &old_forces[from..below]);
            list.push(*c);
            forces.push(*f);
            from = below;
        }
        extend_live(list, forces, &old[from..], &old_forces[from..]);
        old.clear();
        old_forces.clear();
        self.contacts.clear();
        self.forces.clear();
        self.ended_in_list = 0;
    }

    /// Forgets the joined pairs and the ended count: for a list set anew (a restored
    /// snapshot).
    pub fn clear(&mut self) {
        self.contacts.clear();
        self.forces.clear();
        self.ended_in_list = 0;
    }
}

/// Marks `pair` ended in the sorted `list` if it is a live pair of it (its force gone);
/// returns whether it was.
fn end(list: &mut [Contact], forces: &mut [Option<ContactForce>], pair: ProxyPair) -> bool {
    let at = list.partition_point(|c| c.pair < pair);
    match list.get_mut(at) {
        Some(c) if c.pair == pair && !c.ended => {
            c.ended = true;
            if let Some(f) = forces.get_mut(at) {
                *f = None;
            }
            true
        }
        _ => false,
    }
}

/// Appends the pairs of `from` that did not end, with their forces, a run at a time.
fn extend_live(
    list: &mut Vec<Contact>,
    forces: &mut Vec<Option<ContactForce>>,
    from: &[Contact],
    from_forces: &[Option<ContactForce>],
) {
    let mut start = 0;
    for (i, c) in from.iter().enumerate() {
        if c.ended {
            list.extend_from_slice(&from[start..i]);
            forces.extend_from_slice(&from_forces[start..i]);
            start = i + 1;
        }
    }
    list.extend_from_slice(&from[start..]);
    forces.extend_from_slice(&from_forces[start..]);
}

/// The live pairs of the sorted `list` and of the sorted `joined` ones, each with its
/// force (none past the end of a shorter force list: a list just restored has none), in
/// pair order: the contact list as one merged list would be.
pub(crate) fn merged<'a>(
    list: (&'a [Contact], &'a [Option<ContactForce>]),
    joined: (&'a [Contact], &'a [Option<ContactForce>]),
) -> impl Iterator<Item = (&'a Contact, &'a Option<ContactForce>)> + 'a {
    let live = |(c, f): (&'a Contact, &'a Option<ContactForce>)| (!c.ended).then_some((c, f));
    let with_forces = |(contacts, forces): (&'a [Contact], &'a [Option<ContactForce>])| {
        let forces = forces.iter().chain(std::iter::repeat(&None));
        contacts.iter().zip(forces).filter_map(live).peekable()
    };
    let (mut list, mut joined) = (with_forces(list), with_forces(joined));
    std::iter::from_fn(move || match (list.peek(), joined.peek()) {
        (Some((c, _)), Some((j, _))) if j.pair < c.pair => joined.next(),
        (Some(_), _) => list.next(),
        (None, _) => joined.next(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contact::apply_events;
    use crate::contact::tests::random_events;
    use rand::{Rng, SeedableRng};
    use std::collections::BTreeSet;
    use talus_geom::glam::DVec3;

    fn mark(c: &Contact) -> f64 {
        f64::from(c.pair.a * 100 + c.pair.b)
    }

    fn force(pair: ProxyPair) -> ContactForce {
        ContactForce {
            pair,
            force_on_b: DVec3::splat(f64::from(pair.a)),
            torque_on_b: DVec3::ZERO,
            point: DVec3::ZERO,
            depth_ratio: 0.0,
            flipped: false,
        }
    }

    #[test]
    fn deferred_events_keep_the_pairs_the_merged_list_keeps() {
        // Random events taken both ways, step after step: by the merge of every step, and
        // marked and joined with merges only when due. The merged view, and the list once
        // merged, are the merged list, every pair with its own state and force.
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        let (mut list, mut spare) = (Vec::new(), Vec::new());
        let (mut forces, mut spare_forces) = (Vec::new(), Vec::new());
        let (mut each, mut each_spare) = (Vec::new(), Vec::new());
        let (mut each_forces, mut each_spare_forces) = (Vec::new(), Vec::new());
        let mut joined = JoinedPairs::default();
        let mut expected: BTreeSet<ProxyPair> = BTreeSet::new();
        let (mut merges, mut deferred) = (0, 0);
        for round in 0..400 {
            let (events, ended, started) = random_events(&mut rng, &expected);
            apply_events(
                (&mut each, &mut each_forces),
                (&mut each_spare, &mut each_spare_forces),
                &events,
                1,
                u64::from,
            );
            forces.resize(list.len(), None);
            joined.take_events(&mut list, &mut forces, &events, 1, u64::from);
            if joined.is_due(list.len()) || rng.random_bool(0.05) {
                joined.merge_into((&mut list, &mut forces), (&mut spare, &mut spare_forces));
                assert!(joined.is_merged());
                merges += 1;
            } else {
                deferred += usize::from(!joined.is_merged());
            }
            expected = expected.difference(&ended).copied().collect();
            expected.extend(started.iter().copied());
            let view: Vec<(Contact, Option<ContactForce>)> =
                merged((&list, &forces), (&joined.contacts, &joined.forces))
                    .map(|(c, f)| (*c, *f))
                    .collect();
            let pairs: Vec<ProxyPair> = view.iter().map(|(c, _)| c.pair).collect();
            assert_eq!(
                pairs,
                expected.iter().copied().collect::<Vec<_>>(),
                "{round}"
            );
            assert_eq!(pairs, each.iter().map(|c| c.pair).collect::<Vec<_>>());
            for ((c, f), (e, ef)) in view.iter().zip(each.iter().zip(&each_forces)) {
                assert_eq!(c.fresh, e.fresh, "round {round}");
                assert_eq!(c.fresh, started.contains(&c.pair), "round {round}");
                assert_eq!(c.history, e.history, "round {round}");
                assert_eq!(f, ef, "round {round}");
            }
            // As the narrow phase leaves them: each live pair's state and force set, in
            // both keepings.
            let meet = |contacts: &mut [Contact], forces: &mut [Option<ContactForce>]| {
                for (c, f) in contacts.iter_mut().zip(forces.iter_mut()) {
                    if c.ended {
                        assert!(f.is_none(), "an ended pair has no force");
                        continue;
                    }
                    c.fresh = false;
                    c.history.as_mut_slice()[0] = mark(c);
                    *f = Some(force(c.pair));
                }
            };
            meet(&mut list, &mut forces);
            meet(&mut joined.contacts, &mut joined.forces);
            meet(&mut each, &mut each_forces);
        }
        assert!(
            merges > 10 && deferred > 100,
            "{merges} merges, {deferred} deferred"
        );
        joined.merge_into((&mut list, &mut forces), (&mut spare, &mut spare_forces));
        let pairs: Vec<ProxyPair> = list.iter().map(|c| c.pair).collect();
        assert_eq!(pairs, each.iter().map(|c| c.pair).collect::<Vec<_>>());
        assert!(
            list.iter()
                .all(|c| !c.ended && c.history.as_slice()[0] == mark(c))
        );
        assert_eq!(forces, each_forces);
    }
}
