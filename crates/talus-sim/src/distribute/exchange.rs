//! What connects the processes of a distributed run: every process sends each other one
//! message per round and receives one from each. MPI provides it in a cluster
//! (`talus-mpi`); [`ThreadExchange`] provides it between threads of one process, so that a
//! distributed run can be tested without MPI.

use std::sync::mpsc::{Receiver, Sender, channel};

/// The collective operation a distributed step is built on.
///
/// Every process of the group calls [`Exchange::all_to_all`] the same number of times in
/// the same order (the step and the run are the same program on every process), so rounds
/// match without tags.
pub trait Exchange: Send {
    /// This process's number, `0..size()`.
    fn rank(&self) -> usize;

    /// Number of processes in the group.
    fn size(&self) -> usize;

    /// One round: `outgoing[r]` goes to process `r` (this process's own entry comes back to
    /// it); returns what every process sent to this one, by sender. `outgoing` has
    /// [`Exchange::size`] entries.
    fn all_to_all(&mut self, outgoing: Vec<Vec<u8>>) -> Vec<Vec<u8>>;
}

/// Every process's `bytes`, by rank, on every process.
pub fn all_gather(exchange: &mut dyn Exchange, bytes: Vec<u8>) -> Vec<Vec<u8>> {
    let outgoing = vec![bytes; exchange.size()];
    exchange.all_to_all(outgoing)
}

/// An [`Exchange`] between threads of one process: one channel per ordered pair of
/// members, so that each pair's messages arrive in the order sent and a fast member's next
/// round never mixes with a slow one's current round.
pub struct ThreadExchange {
    rank: usize,
    /// Channel to each member (none to itself).
    to: Vec<Option<Sender<Vec<u8>>>>,
    /// Channel from each member (none from itself).
    from: Vec<Option<Receiver<Vec<u8>>>>,
}

impl ThreadExchange {
    /// A group of `size` members, to be moved to one thread each.
    #[must_use]
    pub fn group(size: usize) -> Vec<ThreadExchange> {
        let mut members: Vec<ThreadExchange> = (0..size)
            .map(|rank| ThreadExchange {
                rank,
                to: (0..size).map(|_| None).collect(),
                from: (0..size).map(|_| None).collect(),
            })
            .collect();
        for sender in 0..size {
            for receiver in 0..size {
                if sender != receiver {
                    let (tx, rx) = channel();
                    members[sender].to[receiver] = Some(tx);
                    members[receiver].from[sender] = Some(rx);
                }
            }
        }
        members
    }
}

impl Exchange for ThreadExchange {
    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.to.len()
    }

    fn all_to_all(&mut self, outgoing: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
        let mut own = Vec::new();
        for (r, bytes) in outgoing.into_iter().enumerate() {
            match &self.to[r] {
                // A member that has gone has panicked; its thread's panic is the error.
                Some(tx) => tx
                    .send(bytes)
                    .expect("a member of the exchange group has stopped"),
                None => own = bytes,
            }
        }
        self.from
            .iter()
            .map(|rx| match rx {
                Some(rx) => rx
                    .recv()
                    .expect("a member of the exchange group has stopped"),
                None => std::mem::take(&mut own),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_member_receives_what_each_sent_it_round_after_round() {
        let n = 3;
        let handles: Vec<_> = ThreadExchange::group(n)
            .into_iter()
            .map(|mut ex| {
                std::thread::spawn(move || {
                    let mut seen = Vec::new();
                    for round in 0..20u8 {
                        let me = ex.rank() as u8;
                        let out = (0..n as u8).map(|to| vec![round, me, to]).collect();
                        seen.push(ex.all_to_all(out));
                    }
                    (ex.rank() as u8, seen)
                })
            })
            .collect();
        for h in handles {
            let (me, seen) = h.join().unwrap();
            for (round, got) in seen.iter().enumerate() {
                for (from, msg) in got.iter().enumerate() {
                    assert_eq!(msg, &vec![round as u8, from as u8, me]);
                }
            }
        }
    }
}
