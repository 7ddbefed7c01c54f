//! The loads on the walls, each summed exactly: the same bits whatever the order of its
//! terms and however they are split among processes.
//!
//! A grain's few terms are summed in the order of its partners' ids
//! ([`crate::load_sums`]); a wall (a floor, a hopper's funnel) may hold most of the run's
//! contacts, whose terms a decomposed run finds on every process. Summing them in one order
//! would bring them all to one process each step. Instead each process sums the terms of the
//! pairs it evaluated into an [`ExactSum`] per component, the processes' sums are merged in
//! the round of the step's counts (a few dozen bytes a wall from each), and every process
//! rounds the same exact sums to the same loads.

use serde::{Deserialize, Serialize};
use talus_geom::glam::DVec3;

use crate::exact_sum::ExactSum;
use crate::fixed_sum::FixedSum;
use crate::integrate::Load;

/// Per wall, the exact sums of its load's force and torque components. The terms added
/// since the sums were last read wait in accumulators that take a term at a constant cost
/// ([`FixedSum`]) and are settled into the sums when they are read, merged or sent.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(into = "Settled", from = "Settled")]
pub(crate) struct WallSums {
    walls: Vec<[ExactSum; 6]>,
    adding: Vec<[FixedSum; 6]>,
}

/// [`WallSums`] as sent: the sums, every term settled into them.
#[derive(Serialize, Deserialize)]
struct Settled {
    walls: Vec<[ExactSum; 6]>,
}

impl From<WallSums> for Settled {
    fn from(mut sums: WallSums) -> Settled {
        sums.settle();
        Settled { walls: sums.walls }
    }
}

impl From<Settled> for WallSums {
    fn from(settled: Settled) -> WallSums {
        WallSums {
            adding: vec![Default::default(); settled.walls.len()],
            walls: settled.walls,
        }
    }
}

impl WallSums {
    /// No terms, for `walls` walls (the sums' memory kept).
    pub fn clear(&mut self, walls: usize) {
        self.walls.resize_with(walls, Default::default);
        self.walls.iter_mut().flatten().for_each(ExactSum::clear);
        self.adding.clear();
        self.adding.resize_with(walls, Default::default);
    }

    /// Adds a term of wall `wall`'s load.
    #[inline]
    pub fn add(&mut self, wall: usize, load: &Load) {
        if let Some(sums) = self.adding.get_mut(wall) {
            let terms = [load.force.to_array(), load.torque.to_array()];
            for (sum, x) in sums.iter_mut().zip(terms.into_iter().flatten()) {
                sum.add(x);
            }
        }
    }

    /// The terms added since the last time settled into the sums.
    fn settle(&mut self) {
        for (sums, adding) in self.walls.iter_mut().zip(&mut self.adding) {
            for (sum, fixed) in sums.iter_mut().zip(adding) {
                fixed.settle_into(sum);
            }
        }
    }

    /// Takes in the terms summed in `other` (another process's).
    pub fn merge(&mut self, other: &WallSums) {
        self.settle();
        if self.walls.len() < other.walls.len() {
            self.walls.resize_with(other.walls.len(), Default::default);
            self.adding.resize_with(other.walls.len(), Default::default);
        }
        for (w, (mine, theirs)) in self.walls.iter_mut().zip(&other.walls).enumerate() {
            for (k, (a, b)) in mine.iter_mut().zip(theirs).enumerate() {
                a.merge(b);
                // Terms it has not settled yet (a copy: no memory of its own).
                if let Some(adding) = other.adding.get(w) {
                    adding[k].clone().settle_into(a);
                }
            }
        }
    }

    /// Each wall's load, rounded from its sums, into `loads` (by wall index).
    pub fn write_into(&mut self, loads: &mut [Load]) {
        self.settle();
        for (load, sums) in loads.iter_mut().zip(&self.walls) {
            let v = |k: usize| sums[k].value();
            *load = Load {
                force: DVec3::new(v(0), v(1), v(2)),
                torque: DVec3::new(v(3), v(4), v(5)),
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    use super::*;

    fn load(r: &mut ChaCha8Rng) -> Load {
        let mut v = || {
            DVec3::from_array(
                [0, 1, 2].map(|_| r.random_range(-1.0..1.0) * 10f64.powi(r.random_range(-6..6))),
            )
        };
        Load {
            force: v(),
            torque: v(),
        }
    }

    #[test]
    fn terms_split_among_processes_sum_to_the_bits_of_all_together() {
        let mut r = ChaCha8Rng::seed_from_u64(3);
        let terms: Vec<(usize, Load)> = (0..400)
            .map(|_| (r.random_range(0..3), load(&mut r)))
            .collect();
        let mut whole = WallSums::default();
        whole.clear(3);
        for (w, l) in &terms {
            whole.add(*w, l);
        }
        let mut expected = vec![Load::default(); 3];
        whole.write_into(&mut expected);
        // The oracle of the sum: the plain sum agrees to round-off.
        for (w, e) in expected.iter().enumerate() {
            let plain = terms
                .iter()
                .filter(|t| t.0 == w)
                .fold(Load::default(), |mut s, t| {
                    s += t.1;
                    s
                });
            assert!((plain.force - e.force).length() <= 1e-9 * (1.0 + e.force.length()));
            assert!((plain.torque - e.torque).length() <= 1e-9 * (1.0 + e.torque.length()));
        }
        for processes in 1..6 {
            let mut parts = vec![WallSums::default(); processes];
            for p in &mut parts {
                p.clear(3);
            }
            for (w, l) in terms.iter().rev() {
                parts[r.random_range(0..processes)].add(*w, l);
            }
            let mut merged = WallSums::default();
            for p in parts.iter().rev() {
                merged.merge(p);
            }
            let mut got = vec![Load::default(); 3];
            merged.write_into(&mut got);
            let bits = |l: &[Load]| -> Vec<u64> {
                l.iter()
                    .flat_map(|l| [l.force.to_array(), l.torque.to_array()])
                    .flatten()
                    .map(f64::to_bits)
                    .collect()
            };
            assert_eq!(bits(&got), bits(&expected), "{processes} processes");
        }
    }

    #[test]
    fn clearing_keeps_no_term_and_a_wall_past_the_list_is_ignored() {
        let mut sums = WallSums::default();
        sums.clear(2);
        sums.add(
            0,
            &Load {
                force: DVec3::X,
                torque: DVec3::Y,
            },
        );
        sums.add(
            5,
            &Load {
                force: DVec3::X,
                torque: DVec3::Y,
            },
        );
        sums.clear(2);
        sums.add(
            1,
            &Load {
                force: DVec3::Z,
                torque: DVec3::ZERO,
            },
        );
        let mut loads = vec![
            Load {
                force: DVec3::ONE,
                torque: DVec3::ONE
            };
            2
        ];
        sums.write_into(&mut loads);
        assert_eq!(loads[0], Load::default());
        assert_eq!(loads[1].force, DVec3::Z);
    }
}
