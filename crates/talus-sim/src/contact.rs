//! The contact pipeline: per-pair caches kept across steps, narrow phase and force per pair.
//!
//! A pair of bodies (grains or walls) enters the contact list when its bounding boxes start
//! to overlap and leaves it when they stop; meanwhile it keeps the closest-feature pair of
//! the narrow phase (so each query starts warm) and the force model's history (reset when
//! the bodies stop touching, so a new contact starts fresh). The list is kept sorted by
//! pair (on a single process with the pairs joined since it was last merged in a second,
//! short sorted list, and its ended pairs marked until then: [`crate::joined_pairs`]); a
//! pair is met from the body of the lower id, and each body's forces are summed in
//! the order of its partners' ids ([`crate::load_sums`]): whatever the number of threads or
//! processes that computed them, and whatever the numbering of the pairs, the sums are the
//! same to the last bit.

use talus_geom::glam::DVec3;
use talus_geom::{
    ConvexPolyhedron, FeatureCache, Overlap, OverlapHint, Pose, Proximity, closest_features,
    overlap_coherent, overlap_half_space,
};

use crate::broad::{PairEvents, ProxyPair};
use crate::force::{ContactInput, ForceModel, MAX_HISTORY};

/// One body as the contact stage sees it this step.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BodyView<'a> {
    /// The solid.
    pub solid: Solid<'a>,
    /// Pose (centre of mass for grains).
    pub pose: Pose,
    /// Velocity of the pose's origin.
    pub velocity: DVec3,
    /// Angular velocity.
    pub angular_velocity: DVec3,
    /// Mass; infinite for walls.
    pub mass: f64,
    /// Radius of the sphere of equal volume; infinite for walls.
    pub radius: f64,
}

impl BodyView<'_> {
    /// Velocity of the body's material at world point `x`.
    fn velocity_at(&self, x: DVec3) -> DVec3 {
        self.velocity + self.angular_velocity.cross(x - self.pose.position)
    }
}

/// The solid of a body.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Solid<'a> {
    /// A convex polyhedron in the body frame (a grain or a wall body).
    Polyhedron(&'a ConvexPolyhedron),
    /// A half-space `normal · (x − pose.position) ≤ 0`, normal in the world frame.
    HalfSpace(DVec3),
    /// Nothing (a removed body): no contact.
    Absent,
}

/// A pair of bodies whose boxes overlap. Plain data (no heap, `Copy`): the list moves its
/// pairs in bulk.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Contact {
    pub pair: ProxyPair,
    pub features: FeatureCache,
    /// What the last overlap learned: the faces that bounded it.
    pub overlap_hint: OverlapHint,
    pub touching: bool,
    /// Joined the list this step, after the narrow phase met the others: its force is
    /// still to be found.
    pub fresh: bool,
    /// The pair's state (features, hint, history) was made with its bodies the other way
    /// round, `b` first: the pair is met in that order, so that renumbering the proxies
    /// (which can swap a pair's order) changes nothing the pair computes.
    pub flipped: bool,
    /// The broad phase ended the pair, which is kept in the list until the list is next
    /// merged ([`crate::joined_pairs`]): it has no force and is not met.
    pub ended: bool,
    pub history: History,
    /// The process that evaluates the pair in a distributed run
    /// ([`crate::distribute`]); always 0 on a single process.
    pub owner: u32,
}

impl Contact {
    /// A pair that joins the list, met `b` first when `flipped`: cold caches, a history of
    /// `history_len` zeros, marked `fresh` (its force still to be found).
    pub fn fresh(pair: ProxyPair, history_len: usize, flipped: bool) -> Contact {
        Contact {
            pair,
            features: FeatureCache::default(),
            overlap_hint: OverlapHint::default(),
            touching: false,
            fresh: true,
            flipped,
            ended: false,
            history: History::zeros(history_len),
            owner: crate::distribute::UNASSIGNED,
        }
    }

    /// The pair's two proxies in the order it is met in (`a` first unless flipped).
    pub fn oriented(&self) -> (u32, u32) {
        self.pair.oriented(self.flipped)
    }
}

/// A force model's history of one contact, inline: the first `len` values count.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct History {
    values: [f64; MAX_HISTORY],
    len: u8,
}

impl History {
    /// `len` zeros; `len` is at most [`MAX_HISTORY`] (checked when the model is set).
    pub fn zeros(len: usize) -> History {
        History {
            values: [0.0; MAX_HISTORY],
            len: len.min(MAX_HISTORY) as u8,
        }
    }

    /// The values of `slice`, or `None` if there are more than [`MAX_HISTORY`].
    pub fn from_slice(slice: &[f64]) -> Option<History> {
        let mut h = History::zeros(slice.len());
        h.values.get_mut(..slice.len())?.copy_from_slice(slice);
        Some(h)
    }

    pub fn as_slice(&self) -> &[f64] {
        &self.values[..usize::from(self.len)]
    }

    pub fn as_mut_slice(&mut self) -> &mut [f64] {
        &mut self.values[..usize::from(self.len)]
    }
}

/// The force a contact transmits this step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct ContactForce {
    /// The two bodies (kept here so that the sum per body reads this list alone).
    pub pair: ProxyPair,
    /// Force on body b (body a feels the opposite).
    pub force_on_b: DVec3,
    /// Couple on body b besides the moment of the force (body a feels the opposite).
    pub torque_on_b: DVec3,
    /// Where it acts: the overlap's centroid.
    pub point: DVec3,
    /// Overlap depth (volume over area) relative to the smaller grain's diameter.
    pub depth_ratio: f64,
    /// The pair's [`Contact::flipped`]: the order it is met in (kept here too, so that the
    /// sums read this list alone, not the larger contact list; it fits in the padding).
    pub flipped: bool,
}

/// Brings the contact list and its forces in line with the broad phase's events: the ended
/// pairs leave, the started ones join with fresh caches, marked `fresh` (their forces still
/// to be found); both lists stay sorted. A started pair is met from the body of the smaller
/// identity `key` (of its proxy: grain ids before walls), not of the smaller proxy, so that
/// what it computes does not depend on the numbering. The merge writes into the spares and
/// swaps them in, so all lists keep their memory from step to step.
///
/// A flowing bed has events at every step, a few among thousands of pairs: each event's
/// place is found by bisection and the pairs between two events are copied as one run,
/// so that the work is a search per event and one bulk copy of the list. The copy streams
/// the whole list (192 bytes a pair, some 6 % of a discharging hopper's one-thread step):
/// a single process defers it ([`crate::joined_pairs`]); the processes of a distributed
/// run, which read and rewrite the whole list at every step, merge at once.
pub(crate) fn apply_events(
    lists: (&mut Vec<Contact>, &mut Vec<Option<ContactForce>>),
    spares: (&mut Vec<Contact>, &mut Vec<Option<ContactForce>>),
    events: &PairEvents,
    history_len: usize,
    key: impl Fn(u32) -> u64,
) {
    if events.started.is_empty() && events.ended.is_empty() {
        return;
    }
    let ((contacts, forces), (old, old_forces)) = (lists, spares);
    std::mem::swap(contacts, old);
    std::mem::swap(forces, old_forces);
    contacts.clear();
    forces.clear();
    contacts.reserve(old.len() + events.started.len());
    forces.reserve(old.len() + events.started.len());
    // The forces list is as long as the contact list, or empty when no force was found.
    old_forces.resize(old.len(), None);
    let fresh = |pair: ProxyPair| Contact::fresh(pair, history_len, key(pair.a) > key(pair.b));
    // The old pairs before `from` are placed; each event in pair order (an ended pair
    // before a started one of the same pair) copies the run of old pairs below it.
    let mut from = 0;
    let (mut ended, mut started) = (
        events.ended.iter().peekable(),
        events.started.iter().peekable(),
    );
    loop {
        let (pair, ends) = match (ended.peek(), started.peek()) {
            (Some(&&e), Some(&&s)) if e <= s => (e, true),
            (_, Some(&&s)) => (s, false),
            (Some(&&e), None) => (e, true),
            (None, None) => break,
        };
        if ends {
            ended.next();
        } else {
            started.next();
        }
        let below = from + old[from..].partition_point(|c| c.pair < pair);
        contacts.extend_from_slice(&old[from..below]);
        forces.extend_from_slice(&old_forces[from..below]);
        from = below;
        if ends {
            // An ended pair not in the list (it never was) leaves nothing to remove.
            if old.get(below).is_some_and(|c| c.pair == pair) {
                from += 1;
            }
        } else {
            contacts.push(fresh(pair));
            forces.push(None);
        }
    }
    contacts.extend_from_slice(&old[from..]);
    forces.extend_from_slice(&old_forces[from..]);
    old.clear();
    old_forces.clear();
}

impl ContactForce {
    /// The same force with the pair's bodies named the other way round: the force on `a`.
    pub fn reversed(self) -> ContactForce {
        ContactForce {
            force_on_b: -self.force_on_b,
            torque_on_b: -self.torque_on_b,
            ..self
        }
    }
}

/// Narrow phase and force for one pair met as `a` then `b` (its [`Contact::oriented`]
/// order); `None` when the bodies do not touch. The force is on `b`.
pub(crate) fn evaluate(
    contact: &mut Contact,
    a: &BodyView,
    b: &BodyView,
    model: &dyn ForceModel,
    dt: f64,
) -> Option<ContactForce> {
    let overlap = match (a.solid, b.solid) {
        (Solid::Polyhedron(pa), Solid::Polyhedron(pb)) => {
            let found = overlap_coherent(
                pa,
                &a.pose,
                pb,
                &b.pose,
                &mut contact.features,
                &mut contact.overlap_hint,
            );
            // The next step's overlap starts from this normal (temporal coherence).
            if let Some(o) = &found {
                contact.features.remember_normal(o, &b.pose);
            }
            found
        }
        (Solid::Polyhedron(pa), Solid::HalfSpace(n)) => {
            overlap_half_space(pa, &a.pose, n, b.pose.position)
        }
        (Solid::HalfSpace(n), Solid::Polyhedron(pb)) => {
            overlap_half_space(pb, &b.pose, n, a.pose.position).map(flip)
        }
        _ => None,
    };
    let (overlap, gap) = match overlap {
        Some(overlap) => (overlap, 0.0),
        None => {
            contact.touching = false;
            let range = model.range();
            if range <= 0.0 {
                return None;
            }
            // A law that reaches across a gap: the pair up to its range, its history
            // forgotten beyond.
            match separation(contact, a, b) {
                Some((overlap, gap)) if gap <= range => (overlap, gap),
                _ => {
                    contact.history.as_mut_slice().fill(0.0);
                    return None;
                }
            }
        }
    };
    let new_contact = gap == 0.0 && !contact.touching;
    if new_contact {
        contact.history.as_mut_slice().fill(0.0);
        contact.touching = true;
    }
    let effective_mass = match (a.mass.is_finite(), b.mass.is_finite()) {
        (true, true) => a.mass * b.mass / (a.mass + b.mass),
        (true, false) => a.mass,
        _ => b.mass,
    };
    let length = match (a.radius.is_finite(), b.radius.is_finite()) {
        (true, true) => 2.0 * a.radius * b.radius / (a.radius + b.radius),
        (true, false) => 2.0 * a.radius,
        _ => 2.0 * b.radius,
    };
    let input = ContactInput {
        overlap,
        relative_velocity: b.velocity_at(overlap.centroid) - a.velocity_at(overlap.centroid),
        relative_angular_velocity: b.angular_velocity - a.angular_velocity,
        effective_mass,
        length,
        dt,
        new_contact,
        gap,
    };
    let load = model.load(&input, contact.history.as_mut_slice());
    let depth = if overlap.area > 0.0 {
        overlap.volume / overlap.area
    } else {
        (overlap.volume).cbrt()
    };
    let size = 2.0 * a.radius.min(b.radius);
    Some(ContactForce {
        pair: contact.pair,
        force_on_b: load.force,
        torque_on_b: load.torque,
        point: overlap.centroid,
        depth_ratio: depth / size,
        flipped: contact.flipped,
    })
}

/// Two bodies that do not overlap: an overlap of no volume at the middle of their closest
/// points, its normal from `a`'s closest point to `b`'s, and the gap between them; `None` for
/// a pair without a distance (an absent body, or two that touch without a direction).
fn separation(contact: &mut Contact, a: &BodyView, b: &BodyView) -> Option<(Overlap, f64)> {
    // The closest points, and where a force across the gap acts: the middle of the two
    // bodies' nearest features, faces and edges taken whole, so that two faces parallel
    // across the gap pull at their middles, not at whichever corner is found closest.
    let (point_a, point_b, middle) = match (a.solid, b.solid) {
        (Solid::Polyhedron(pa), Solid::Polyhedron(pb)) => {
            match closest_features(pa, &a.pose, pb, &b.pose, &mut contact.features) {
                Proximity::Separated {
                    point_a, point_b, ..
                } => {
                    let n = (point_b - point_a).try_normalize()?;
                    let ends = (nearest(pa, &a.pose, n), nearest(pb, &b.pose, -n));
                    (point_a, point_b, 0.5 * (ends.0 + ends.1))
                }
                Proximity::Penetrating { .. } => return None,
            }
        }
        (Solid::Polyhedron(pa), Solid::HalfSpace(n)) => {
            let lowest = nearest(pa, &a.pose, -n);
            let on_plane = lowest - n * n.dot(lowest - b.pose.position);
            (lowest, on_plane, 0.5 * (lowest + on_plane))
        }
        (Solid::HalfSpace(n), Solid::Polyhedron(pb)) => {
            let lowest = nearest(pb, &b.pose, -n);
            let on_plane = lowest - n * n.dot(lowest - a.pose.position);
            (on_plane, lowest, 0.5 * (lowest + on_plane))
        }
        _ => return None,
    };
    let between = point_b - point_a;
    let gap = between.length();
    let normal = between.try_normalize()?;
    Some((
        Overlap {
            volume: 0.0,
            centroid: middle,
            normal,
            area: 0.0,
            area_moment: DVec3::ZERO,
        },
        gap,
    ))
}

/// The middle of the vertices of `body` at `pose` that lie farthest along `direction` (to a
/// billionth of its size): its nearest vertex, edge or face towards that side.
fn nearest(body: &ConvexPolyhedron, pose: &Pose, direction: DVec3) -> DVec3 {
    // In the body's frame: the vertices as they are, the direction turned once.
    let along = pose.rotation.inverse() * direction;
    let farthest = body
        .vertices()
        .iter()
        .map(|v| along.dot(*v))
        .fold(f64::NEG_INFINITY, f64::max);
    let level = farthest - 1e-9 * body.diameter_bound();
    let (sum, count) = body
        .vertices()
        .iter()
        .filter(|v| along.dot(**v) >= level)
        .fold((DVec3::ZERO, 0.0), |(s, c), v| (s + *v, c + 1.0));
    if count > 0.0 {
        pose.transform_point(sum / count)
    } else {
        pose.position
    }
}

/// The same overlap seen from the other body.
fn flip(o: Overlap) -> Overlap {
    // The other body's surface inside this one spans the same rim the other way round.
    Overlap {
        normal: -o.normal,
        area_moment: -o.area_moment,
        ..o
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn a_force_record_with_its_order_is_no_larger_than_without() {
        // The pair, three vectors and the depth: 88 bytes; the order and `Option`'s tag
        // take the padding to the alignment of 8.
        assert_eq!(size_of::<Option<ContactForce>>(), 96);
    }

    fn pairs(list: &[(u32, u32)]) -> Vec<ProxyPair> {
        list.iter().map(|&(a, b)| ProxyPair::new(a, b)).collect()
    }

    #[test]
    fn events_merge_into_a_sorted_list() {
        let (mut contacts, mut spare) = (Vec::new(), Vec::new());
        let (mut forces, mut spare_forces) = (Vec::new(), Vec::new());
        let mut events = PairEvents {
            started: pairs(&[(0, 1), (0, 3), (2, 5)]),
            ended: vec![],
        };
        apply_events(
            (&mut contacts, &mut forces),
            (&mut spare, &mut spare_forces),
            &events,
            3,
            u64::from,
        );
        assert!(contacts.iter().all(|c| c.fresh) && forces.len() == contacts.len());
        contacts[1].history.as_mut_slice()[0] = 7.0;
        contacts.iter_mut().for_each(|c| c.fresh = false);
        events.started = pairs(&[(0, 2), (4, 5)]);
        events.ended = pairs(&[(0, 1), (2, 5)]);
        apply_events(
            (&mut contacts, &mut forces),
            (&mut spare, &mut spare_forces),
            &events,
            3,
            u64::from,
        );
        let got: Vec<ProxyPair> = contacts.iter().map(|c| c.pair).collect();
        assert_eq!(got, pairs(&[(0, 2), (0, 3), (4, 5)]));
        assert_eq!(
            contacts[1].history.as_slice()[0],
            7.0,
            "the surviving pair keeps its history"
        );
        let fresh: Vec<bool> = contacts.iter().map(|c| c.fresh).collect();
        assert_eq!(
            fresh,
            [true, false, true],
            "only the started pairs are fresh"
        );
        assert_eq!(forces.len(), contacts.len());
    }

    /// Random events for the pairs `listed`: a few of them end (now and then with one
    /// never listed), a few start (of those not listed or ending); returned as events and
    /// as the sets of ended and started pairs.
    pub(crate) fn random_events(
        rng: &mut impl rand::Rng,
        listed: &BTreeSet<ProxyPair>,
    ) -> (PairEvents, BTreeSet<ProxyPair>, BTreeSet<ProxyPair>) {
        let present: Vec<ProxyPair> = listed.iter().copied().collect();
        let mut ended = BTreeSet::new();
        for _ in 0..rng.random_range(0..6) {
            if !present.is_empty() && rng.random_bool(0.8) {
                ended.insert(present[rng.random_range(0..present.len())]);
            }
        }
        if rng.random_bool(0.1) {
            ended.insert(ProxyPair::new(40, 41));
        }
        let mut started = BTreeSet::new();
        for _ in 0..rng.random_range(0..8) {
            let (a, b) = (rng.random_range(0..30u32), rng.random_range(0..30u32));
            let pair = ProxyPair::new(a.min(b), a.max(b) + 1);
            if !listed.contains(&pair) || ended.contains(&pair) {
                started.insert(pair);
            }
        }
        let events = PairEvents {
            started: started.iter().copied().collect(),
            ended: ended.iter().copied().collect(),
        };
        (events, ended, started)
    }

    #[test]
    fn events_merge_as_a_set_of_pairs_does() {
        // Against sets: random lists and events, every pair kept with its own state.
        use rand::SeedableRng;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        let (mut contacts, mut spare) = (Vec::new(), Vec::new());
        let (mut forces, mut spare_forces) = (Vec::new(), Vec::new());
        let mut expected = BTreeSet::new();
        for round in 0..300 {
            let (events, ended, started) = random_events(&mut rng, &expected);
            apply_events(
                (&mut contacts, &mut forces),
                (&mut spare, &mut spare_forces),
                &events,
                1,
                u64::from,
            );
            expected = expected.difference(&ended).copied().collect();
            expected.extend(started.iter().copied());
            let got: Vec<ProxyPair> = contacts.iter().map(|c| c.pair).collect();
            assert_eq!(
                got,
                expected.iter().copied().collect::<Vec<_>>(),
                "round {round}"
            );
            assert_eq!(forces.len(), contacts.len());
            for (c, f) in contacts.iter().zip(&forces) {
                // A started pair is fresh with no force; a kept one keeps its mark.
                let kept = c.history.as_slice()[0] == f64::from(c.pair.a * 100 + c.pair.b);
                assert_eq!(c.fresh, started.contains(&c.pair), "round {round}");
                assert!(c.fresh != kept, "a pair keeps its state, round {round}");
                assert_eq!(f.is_none(), c.fresh, "round {round}");
            }
            // Marks as the narrow phase leaves them: state and a force for each pair.
            for (c, f) in contacts.iter_mut().zip(forces.iter_mut()) {
                c.fresh = false;
                c.history.as_mut_slice()[0] = f64::from(c.pair.a * 100 + c.pair.b);
                *f = Some(ContactForce {
                    pair: c.pair,
                    force_on_b: DVec3::ZERO,
                    torque_on_b: DVec3::ZERO,
                    point: DVec3::ZERO,
                    depth_ratio: 0.0,
                    flipped: false,
                });
            }
        }
    }
}
