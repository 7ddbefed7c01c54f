//! The population of every grain id of a run, kept as runs of consecutive ids.
//!
//! Grains take their ids in the order they are added: a population placed at the start
//! takes one stretch of ids, and poured or dripped grains extend the stretch of their
//! population or start a new one. So the populations of a run of 10⁸ grains are a handful
//! of numbers, which every process of a decomposed run can hold and every checkpoint can
//! carry, where a list by id would be as long as the run.

use serde::{Deserialize, Serialize};
use talus_sim::GrainId;

/// The population of each grain id given so far (see the module documentation).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "Stretches")]
pub struct PopulationsById {
    /// Per stretch of ids of one population: its first id and the population, by
    /// increasing id; each stretch ends where the next begins (the last at `ids`), and two
    /// neighbours differ in population.
    runs: Vec<(u32, u32)>,
    /// Number of ids known: every id below has a population.
    ids: u32,
}

/// [`PopulationsById`] as read, before it is checked.
#[derive(Deserialize)]
struct Stretches {
    runs: Vec<(u32, u32)>,
    ids: u32,
}

impl TryFrom<Stretches> for PopulationsById {
    type Error = String;

    /// The stretches when they are what [`PopulationsById`] keeps: the first starting at
    /// id 0 (none without ids), each later one further on and below the ids known, two
    /// neighbours of different populations.
    fn try_from(read: Stretches) -> Result<Self, String> {
        let Stretches { runs, ids } = read;
        let starts_at_zero = match runs.first() {
            Some(&(first, _)) => first == 0 && ids > 0,
            None => ids == 0,
        };
        let ordered = runs.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 != w[1].1);
        let within = runs.last().is_none_or(|&(first, _)| first < ids);
        if starts_at_zero && ordered && within {
            Ok(PopulationsById { runs, ids })
        } else {
            Err(format!(
                "populations of {ids} grain ids in stretches that do not cover them once, in \
                 order ({} stretches)",
                runs.len()
            ))
        }
    }
}

impl PopulationsById {
    /// Number of ids known (every id below has a population).
    #[must_use]
    pub fn len(&self) -> usize {
        self.ids as usize
    }

    /// Whether no id is known.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.ids == 0
    }

    /// Number of stretches of consecutive ids of one population.
    #[must_use]
    pub fn stretches(&self) -> usize {
        self.runs.len()
    }

    /// The population of grain `id`, none past the ids known.
    #[must_use]
    pub fn get(&self, id: GrainId) -> Option<u32> {
        if id.0 >= self.ids {
            return None;
        }
        // The last stretch starting at or before `id`.
        let at = self.runs.partition_point(|&(first, _)| first <= id.0);
        self.runs.get(at.checked_sub(1)?).map(|&(_, p)| p)
    }

    /// Grain `id` is of `population`. Ids between the known ones and `id` take population
    /// 0 (a run gives every id a population as it adds the grain); an id known already
    /// changes population. Ids go up to `u32::MAX - 1`, the engine's last.
    pub fn set(&mut self, id: GrainId, population: u32) {
        if id.0 >= self.ids {
            if id.0 > self.ids {
                self.append(self.ids, 0);
            }
            self.append(id.0, population);
            self.ids = id.0.saturating_add(1);
            return;
        }
        if self.get(id) == Some(population) {
            return;
        }
        // Split the stretch holding `id` into what lies before it, `id` alone and what lies
        // after it; then merge neighbours of one population.
        let at = self.runs.partition_point(|&(first, _)| first <= id.0) - 1;
        let (first, old) = self.runs[at];
        let end = self.runs.get(at + 1).map_or(self.ids, |r| r.0);
        let mut pieces = Vec::with_capacity(3);
        if first < id.0 {
            pieces.push((first, old));
        }
        pieces.push((id.0, population));
        if id.0 + 1 < end {
            pieces.push((id.0 + 1, old));
        }
        self.runs.splice(at..=at, pieces);
        self.runs.dedup_by(|next, kept| next.1 == kept.1);
    }

    /// A stretch starting at `first` (past the last one's start), merged into the last one
    /// when of its population.
    fn append(&mut self, first: u32, population: u32) {
        if self.runs.last().is_none_or(|&(_, p)| p != population) {
            self.runs.push((first, population));
        }
    }
}

#[cfg(test)]
mod tests {
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    use super::*;

    #[test]
    fn stretches_answer_as_a_list_by_id_does() {
        // The oracle: the list by id, grown with population 0 for skipped ids.
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let mut list: Vec<u32> = Vec::new();
        let mut by_id = PopulationsById::default();
        for _ in 0..4000 {
            let id = if rng.random_bool(0.7) || list.is_empty() {
                // The next id or a few past it, most often of the last population.
                list.len() as u32 + rng.random_range(0..2) * rng.random_range(0..4)
            } else {
                rng.random_range(0..list.len() as u32)
            };
            let population = if rng.random_bool(0.8) {
                list.last().copied().unwrap_or(0)
            } else {
                rng.random_range(0..3)
            };
            if list.len() <= id as usize {
                list.resize(id as usize + 1, 0);
            }
            list[id as usize] = population;
            by_id.set(GrainId(id), population);
            assert_eq!(by_id.len(), list.len());
        }
        for (id, &p) in list.iter().enumerate() {
            assert_eq!(by_id.get(GrainId(id as u32)), Some(p), "id {id}");
        }
        assert_eq!(by_id.get(GrainId(list.len() as u32)), None);
        // As few stretches as the list has changes of population.
        let changes = 1 + list.windows(2).filter(|w| w[0] != w[1]).count();
        assert_eq!(by_id.stretches(), changes);
    }

    #[test]
    fn stretches_read_back_are_checked() {
        let mut by_id = PopulationsById::default();
        for (id, p) in [(0, 1), (1, 1), (2, 0), (5, 2)] {
            by_id.set(GrainId(id), p);
        }
        let json = serde_json::to_string(&by_id).unwrap();
        assert_eq!(
            serde_json::from_str::<PopulationsById>(&json).unwrap(),
            by_id
        );
        for bad in [
            r#"{"runs":[],"ids":3}"#,
            r#"{"runs":[[1,0]],"ids":3}"#,
            r#"{"runs":[[0,0],[2,0]],"ids":3}"#,
            r#"{"runs":[[0,0],[0,1]],"ids":3}"#,
            r#"{"runs":[[0,0],[3,1]],"ids":3}"#,
            r#"{"runs":[[0,0]],"ids":0}"#,
        ] {
            let e = serde_json::from_str::<PopulationsById>(bad).unwrap_err();
            assert!(e.to_string().contains("stretches"), "{bad}: {e}");
        }
    }

    #[test]
    fn a_population_added_at_once_is_one_stretch() {
        let mut by_id = PopulationsById::default();
        for id in 0..1_000_000 {
            by_id.set(GrainId(id), u32::from(id >= 400_000));
        }
        assert_eq!(by_id.stretches(), 2);
        assert_eq!(by_id.get(GrainId(399_999)), Some(0));
        assert_eq!(by_id.get(GrainId(400_000)), Some(1));
        assert!(by_id.get(GrainId(1_000_000)).is_none());
    }
}
