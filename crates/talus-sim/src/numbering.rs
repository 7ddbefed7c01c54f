//! Grain ids and slots: the id ([`crate::GrainId`]) is a grain's identity in the run, the
//! slot its place in this process's per-grain arrays (the entity, the proxy, the box, the
//! kinematics and loads of the step).
//!
//! On a single process the two are the same number, and a removed grain's slot stays empty:
//! ids are given in the order grains are added and never reused. In a decomposed run
//! ([`crate::distribute::decompose`]) a process holds only the grains of its region and
//! their ghosts, so its arrays are numbered by slot, not by id, and stay as long as what it
//! holds, not as the run: a grain that arrives takes a free slot, and a slot freed by a grain
//! that left is reused once a broad-phase update has seen it empty (which ended the pairs
//! of its proxy, so that no pair of the old grain is taken for one of the new). The order of
//! the ids, not of the slots, is what orders the sums of loads and the pairs' evaluation,
//! so the numbering changes no result.

use rustc_hash::FxHashMap;

/// The ids and slots of the grains of one world.
#[derive(Debug, Default, Clone)]
pub(crate) struct GrainNumbering {
    /// Per slot: the id of the grain in it (for a free slot, of the last grain it held).
    ids: Vec<u32>,
    /// Per id of a grain held here: its slot.
    slot_of: FxHashMap<u32, u32>,
    /// How many ids were given: the next grain's id.
    next_id: u32,
    /// Free slots that may be taken (a broad-phase update saw them empty).
    free: Vec<u32>,
    /// Slots freed since the last broad-phase update.
    retiring: Vec<u32>,
    /// Whether freed slots are taken again (in a decomposed run).
    reuse: bool,
}

/// Where a grain was placed: its slot, and whether that slot is new (the per-slot arrays
/// grow by one) or a free one taken again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Placed {
    pub slot: u32,
    pub is_new: bool,
}

impl GrainNumbering {
    /// The numbering of `count` slots, slot `i` holding id `i` when `held(i)`, the next id
    /// `count` (a restored world).
    pub fn identity(count: u32, held: impl Fn(u32) -> bool) -> GrainNumbering {
        GrainNumbering {
            ids: (0..count).collect(),
            slot_of: (0..count).filter(|&i| held(i)).map(|i| (i, i)).collect(),
            next_id: count,
            ..GrainNumbering::default()
        }
    }

    /// A numbering without grains that takes freed slots again, `count` ids given (a
    /// process of a decomposed run keeping its own grains alone).
    pub fn after(count: u32) -> GrainNumbering {
        GrainNumbering {
            next_id: count,
            reuse: true,
            ..GrainNumbering::default()
        }
    }

    /// From now on freed slots are taken again (the world joined a decomposed run).
    pub fn reuse_slots(&mut self) {
        self.reuse = true;
    }

    /// How many ids were given (every grain ever added has an id below).
    pub fn id_count(&self) -> u32 {
        self.next_id
    }

    /// The id of the grain in `slot` (or of the last grain it held).
    #[inline]
    pub fn id(&self, slot: usize) -> u32 {
        self.ids[slot]
    }

    /// The slot of grain `id`, when this world holds it.
    #[inline]
    pub fn slot(&self, id: u32) -> Option<usize> {
        self.slot_of.get(&id).map(|&s| s as usize)
    }

    /// A new id, or `None` when all 2³² are given.
    pub fn new_id(&mut self) -> Option<u32> {
        let id = self.next_id;
        self.next_id = id.checked_add(1)?;
        Some(id)
    }

    /// A slot for grain `id`, which this world does not hold: a free one when there is one
    /// to take, else a new one.
    pub fn place(&mut self, id: u32) -> Placed {
        debug_assert!(!self.slot_of.contains_key(&id), "grain {id} placed twice");
        let placed = match self.free.pop() {
            Some(slot) if self.reuse => {
                self.ids[slot as usize] = id;
                Placed {
                    slot,
                    is_new: false,
                }
            }
            _ => {
                self.ids.push(id);
                Placed {
                    slot: self.ids.len() as u32 - 1,
                    is_new: true,
                }
            }
        };
        self.slot_of.insert(id, placed.slot);
        placed
    }

    /// The grain in `slot` leaves this world; its slot is free after the next broad-phase
    /// update (in a decomposed run; never on a single process, where ids are slots).
    pub fn release(&mut self, slot: usize) {
        let id = self.ids[slot];
        if self.slot_of.get(&id) == Some(&(slot as u32)) {
            self.slot_of.remove(&id);
            if self.reuse {
                self.retiring.push(slot as u32);
            }
        }
    }

    /// A broad-phase update saw the retiring slots empty: they may be taken.
    pub fn broad_phase_updated(&mut self) {
        self.free.append(&mut self.retiring);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_single_process_gives_slots_equal_to_ids_and_never_reuses_them() {
        let mut n = GrainNumbering::default();
        for expected in 0..5 {
            let id = n.new_id().expect("id");
            assert_eq!(
                n.place(id),
                Placed {
                    slot: expected,
                    is_new: true
                }
            );
        }
        n.release(2);
        n.broad_phase_updated();
        assert_eq!(n.slot(2), None);
        let id = n.new_id().expect("id");
        assert_eq!((id, n.place(id).slot), (5, 5));
        assert_eq!(n.slot(4), Some(4));
    }

    #[test]
    fn freed_slots_are_taken_after_a_broad_phase_update_only() {
        let mut n = GrainNumbering::identity(3, |_| true);
        n.reuse_slots();
        n.release(1);
        // Not yet: the broad phase has not seen the slot empty.
        assert_eq!(
            n.place(10),
            Placed {
                slot: 3,
                is_new: true
            }
        );
        n.broad_phase_updated();
        assert_eq!(
            n.place(11),
            Placed {
                slot: 1,
                is_new: false
            }
        );
        assert_eq!((n.id(1), n.slot(11), n.slot(1)), (11, Some(1), None));
        assert_eq!(n.new_id(), Some(3));
    }
}
