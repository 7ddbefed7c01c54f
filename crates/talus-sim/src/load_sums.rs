//! Each grain's contact loads summed in one canonical order: that of the bodies they come
//! from (grains by id, then walls by index), not that of the pair list. (A wall's many
//! terms are summed exactly instead, [`crate::wall_sums`].)
//!
//! Floating-point sums depend on their order. The pair list is sorted by broad-phase proxy
//! numbers, which the renumbering along the space-filling curve changes every so many
//! steps, and which a process holding part of the scene numbers its own way. Summing each
//! body's terms by its partners' identities makes the loads, and so the whole run, the same
//! to the last bit whatever the numbering, the renumbering interval, or the split of the
//! pairs among threads and processes.
//!
//! The terms are met in list order, gathered per body by a counting sort (stable, O(terms)),
//! and each body's few terms (a dozen in a dense packing) put in partner order by
//! counting, for each, the terms of smaller key. Every buffer is kept from step to step.

use crate::integrate::Load;
use crate::world::Body;

/// Most terms of one body ranked by counting; a body with more is sorted.
const RANKED: usize = 32;

/// The partner key of a wall: walls come after every grain.
const WALL_KEY: u64 = 1 << 32;

/// The identity of a body as a partner in the sums: a grain by its id, a wall after all
/// grains by its index.
#[inline]
pub(crate) fn grain_key(id: u32) -> u64 {
    u64::from(id)
}

/// See [`grain_key`].
#[inline]
pub(crate) fn wall_key(index: u32) -> u64 {
    WALL_KEY | u64::from(index)
}

/// The identity key of a body (see [`grain_key`]).
#[inline]
pub(crate) fn identity_key(body: Body) -> u64 {
    match body {
        Body::Grain(_, id) => grain_key(id),
        Body::Wall(w) => wall_key(w),
    }
}

/// A term's place in a body's sum: its partner and where its load was met.
#[derive(Debug, Clone, Copy, Default)]
struct Place {
    partner: u64,
    term: u32,
}

/// One term of a body's sum, as met.
#[derive(Debug, Clone, Copy)]
struct Term {
    body: u32,
    partner: u64,
    load: Load,
}

/// The terms of a step and the buffers that order them.
#[derive(Debug, Default)]
pub(crate) struct LoadSums {
    /// The terms, in the order met.
    terms: Vec<Term>,
    /// Per body, the start of its terms in `places` (one more entry than bodies).
    starts: Vec<u32>,
    /// The next free place of each body's terms while they are placed.
    next: Vec<u32>,
    /// The terms by body, each body's by partner.
    places: Vec<Place>,
}

impl LoadSums {
    /// Forgets the last step's terms.
    pub fn clear(&mut self) {
        self.terms.clear();
    }

    /// The load `load` on body `body` from the body of key `partner`; each body meets each
    /// partner once.
    #[inline]
    pub fn push(&mut self, body: u32, partner: u64, load: Load) {
        self.terms.push(Term {
            body,
            partner,
            load,
        });
    }

    /// Adds each body's sum, its terms summed from zero in the order of their partners'
    /// keys, to its load: body `b`'s to `loads[b]`.
    pub fn sum_into(&mut self, loads: &mut [Load]) {
        self.gather(loads.len());
        for (b, load) in loads.iter_mut().enumerate() {
            if let Some(sum) = self.body_sum(b) {
                *load += sum;
            }
        }
    }

    /// The terms gathered by body (a counting sort, stable).
    fn gather(&mut self, bodies: usize) {
        self.starts.clear();
        self.starts.resize(bodies + 1, 0);
        for t in &self.terms {
            self.starts[t.body as usize + 1] += 1;
        }
        for b in 0..bodies {
            self.starts[b + 1] += self.starts[b];
        }
        self.next.clear();
        self.next.extend_from_slice(&self.starts[..bodies]);
        self.places.resize(self.terms.len(), Place::default());
        for (i, t) in self.terms.iter().enumerate() {
            let at = &mut self.next[t.body as usize];
            self.places[*at as usize] = Place {
                partner: t.partner,
                term: i as u32,
            };
            *at += 1;
        }
    }

    /// The places of body `b`'s terms.
    fn range(&self, b: usize) -> std::ops::Range<usize> {
        self.starts[b] as usize..self.starts[b + 1] as usize
    }

    /// Body `b`'s sum, `None` without terms.
    fn body_sum(&mut self, b: usize) -> Option<Load> {
        match self.range(b).len() {
            0 => None,
            n if n <= RANKED => self.ranked_sum(b),
            _ => Some(self.sorted_sum(b)),
        }
    }

    /// Body `b`'s sum, of at most [`RANKED`] terms.
    fn ranked_sum(&self, b: usize) -> Option<Load> {
        let places = &self.places[self.range(b)];
        // Each term's rank among its body's, by counting the smaller keys: no branch on
        // the data (the terms come in random order), unlike a sort.
        let mut order = [0u32; RANKED];
        for p in places {
            let rank = places.iter().filter(|q| q.partner < p.partner).count();
            order[rank] = p.term;
        }
        let mut sum = Load::default();
        for &term in &order[..places.len()] {
            sum += self.terms[term as usize].load;
        }
        Some(sum)
    }

    /// Body `b`'s sum, its terms sorted (a body of many terms: a wall, a large grain).
    fn sorted_sum(&mut self, b: usize) -> Load {
        let range = self.range(b);
        let places = &mut self.places[range];
        places.sort_unstable_by_key(|p| p.partner);
        let mut sum = Load::default();
        for p in places.iter() {
            sum += self.terms[p.term as usize].load;
        }
        sum
    }
}

#[cfg(test)]
mod tests {
    use rand::seq::SliceRandom;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use talus_geom::glam::DVec3;

    use super::*;

    /// Random terms: per body a few partners, each with a load of widely spread magnitude
    /// (so that the order of the sum shows in its bits).
    fn terms(r: &mut ChaCha8Rng, bodies: u32) -> Vec<(u32, u64, Load)> {
        let mut all = Vec::new();
        for body in 0..bodies {
            let mut partners: Vec<u64> =
                (0..60).map(grain_key).chain((0..3).map(wall_key)).collect();
            partners.shuffle(r);
            // Body 0 meets many partners, as a wall does: its terms are sorted, not ranked.
            let count = if body == 0 {
                partners.len()
            } else {
                r.random_range(0..8)
            };
            for &partner in &partners[..count] {
                let v = |r: &mut ChaCha8Rng| {
                    DVec3::new(r.random(), r.random(), r.random())
                        * 10f64.powi(r.random_range(-8..8))
                };
                all.push((
                    body,
                    partner,
                    Load {
                        force: v(r),
                        torque: v(r),
                    },
                ));
            }
        }
        all
    }

    #[test]
    fn each_body_sums_its_terms_in_partner_order_whatever_order_they_come_in() {
        let mut r = ChaCha8Rng::seed_from_u64(3);
        let bodies = 30;
        let all = terms(&mut r, bodies);
        // The oracle: each body's terms sorted by partner and summed from zero.
        let mut expected = vec![None; bodies as usize];
        for body in 0..bodies {
            let mut mine: Vec<_> = all.iter().filter(|t| t.0 == body).collect();
            mine.sort_by_key(|t| t.1);
            if !mine.is_empty() {
                let mut sum = Load::default();
                for t in mine {
                    sum += t.2;
                }
                expected[body as usize] = Some(sum);
            }
        }
        let mut sums = LoadSums::default();
        for round in 0..5 {
            let mut shuffled = all.clone();
            if round > 0 {
                shuffled.shuffle(&mut r);
            }
            sums.clear();
            for &(body, partner, load) in &shuffled {
                sums.push(body, partner, load);
            }
            let mut got = vec![Load::default(); bodies as usize];
            sums.sum_into(&mut got);
            for (g, e) in got.iter().zip(&expected) {
                let e = e.unwrap_or_default();
                assert_eq!(
                    (
                        g.force.to_array().map(f64::to_bits),
                        g.torque.to_array().map(f64::to_bits)
                    ),
                    (
                        e.force.to_array().map(f64::to_bits),
                        e.torque.to_array().map(f64::to_bits)
                    )
                );
            }
        }
    }

    #[test]
    fn walls_come_after_every_grain() {
        assert!(wall_key(0) > grain_key(u32::MAX));
        assert!(wall_key(1) > wall_key(0));
    }
}
