//! The processes of a run: one, or several started by `mpirun` (with the cargo feature
//! `mpi`), each stepping the grains of its region of one world
//! ([`talus_sim::distribute::decompose`]). The first process writes the run's files and
//! talks to the user; the others send their measures for each row, write their own pieces
//! of each frame and checkpoint into the run's directory, and keep their working copy of
//! the scenario in a scratch directory of their own, removed at the end.

use std::path::{Path, PathBuf};

use talus_sim::distribute::Exchange;

/// Environment variables a launcher (Open MPI's, MPICH's Hydra, Slurm's PMI) sets for the
/// processes it starts: world size.
const SIZE_VARIABLES: [&str; 3] = ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"];

/// Environment variables for the number of processes on this machine.
const LOCAL_SIZE_VARIABLES: [&str; 2] = ["OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS"];

/// Steps between two cuts of the scene into regions, by default: grains move a fraction of
/// their size in a hundred steps, and a cut costs about one step's broad phase.
pub const DEFAULT_REBALANCE_EVERY: u64 = 100;

/// This process and its group.
pub struct Process {
    rank: usize,
    size: usize,
    #[cfg(feature = "mpi")]
    universe: Option<mpi::environment::Universe>,
}

/// The size a launcher gave this process's group, if it was started by one.
fn launched_size() -> Option<usize> {
    SIZE_VARIABLES
        .iter()
        .find_map(|v| std::env::var(v).ok()?.trim().parse().ok())
}

impl Process {
    /// This process: joins the group when started by `mpirun`.
    ///
    /// # Errors
    /// Started by `mpirun` as one of several processes, by a talus built without MPI (each
    /// would run the whole scenario alone, into the same directory).
    pub fn start() -> Result<Process, String> {
        let Some(size) = launched_size() else {
            return Ok(Process::single());
        };
        #[cfg(feature = "mpi")]
        {
            use mpi::topology::Communicator;
            let (universe, _) = mpi::initialize_with_threading(mpi::Threading::Funneled)
                .ok_or("MPI was initialized twice")?;
            let world = universe.world();
            let _ = size;
            Ok(Process {
                rank: world.rank() as usize,
                size: world.size() as usize,
                universe: Some(universe),
            })
        }
        #[cfg(not(feature = "mpi"))]
        {
            if size > 1 {
                return Err(format!(
                    "started by mpirun as one of {size} processes, but this talus was built \
                     without MPI; build it with `cargo build --release -p talus-cli --features \
                     mpi` (see the README), or run it without mpirun"
                ));
            }
            Ok(Process::single())
        }
    }

    fn single() -> Process {
        Process {
            rank: 0,
            size: 1,
            #[cfg(feature = "mpi")]
            universe: None,
        }
    }

    /// This process's number.
    #[must_use]
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// Number of processes.
    #[must_use]
    pub fn size(&self) -> usize {
        self.size
    }

    /// Whether this process writes the run's files and reports to the user.
    #[must_use]
    pub fn is_first(&self) -> bool {
        self.rank == 0
    }

    /// Whether the run has several processes.
    #[must_use]
    pub fn is_distributed(&self) -> bool {
        self.size > 1
    }

    /// The exchange between the processes, for [`talus_sim::World::decompose`] (none for
    /// a single process).
    #[must_use]
    pub fn exchange(&self) -> Option<Box<dyn Exchange>> {
        if self.size <= 1 {
            return None;
        }
        #[cfg(feature = "mpi")]
        {
            Some(Box::new(mpi_exchange::MpiExchange {
                rank: self.rank,
                size: self.size,
            }))
        }
        #[cfg(not(feature = "mpi"))]
        {
            None
        }
    }

    /// The first failure of the group, on every process (a collective step): the rank of
    /// the first process whose `error` is some, and its message.
    #[must_use]
    pub fn first_failure(&self, error: Option<&str>) -> Option<(usize, String)> {
        let mine = error.map(|e| {
            // A failure always says something, even an empty message.
            let mut bytes = vec![1];
            bytes.extend_from_slice(e.as_bytes());
            bytes
        });
        match self.exchange() {
            None => error.map(|e| (self.rank, e.to_string())),
            Some(mut ex) => talus_sim::distribute::all_gather(&mut *ex, mine.unwrap_or_default())
                .iter()
                .enumerate()
                .find(|(_, b)| !b.is_empty())
                .map(|(rank, b)| (rank, String::from_utf8_lossy(&b[1..]).into_owned())),
        }
    }

    /// The first process's `value`, on every process (a collective step).
    #[must_use]
    pub fn first_says(&self, value: u8) -> u8 {
        match self.exchange() {
            None => value,
            Some(mut ex) => talus_sim::distribute::all_gather(&mut *ex, vec![value])
                .first()
                .and_then(|b| b.first().copied())
                .unwrap_or(value),
        }
    }

    /// Ends every process of the group: for an error on one process while the others may
    /// be waiting for it in the middle of a step.
    pub fn abort(&self, code: i32) -> ! {
        #[cfg(feature = "mpi")]
        if let Some(universe) = &self.universe {
            use mpi::topology::Communicator;
            universe.world().abort(code);
        }
        std::process::exit(code)
    }

    /// Worker threads per process for `--threads 0`: the machine's cores shared among the
    /// processes on it.
    #[must_use]
    pub fn default_threads(&self, requested: usize) -> usize {
        if requested > 0 || self.size <= 1 {
            return requested;
        }
        let local = LOCAL_SIZE_VARIABLES
            .iter()
            .find_map(|v| std::env::var(v).ok()?.trim().parse::<usize>().ok())
            .unwrap_or(self.size)
            .max(1);
        let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
        (cores / local).max(1)
    }

    /// The scratch directory of a process other than the first; those of processes that
    /// ended without removing theirs (killed) are removed first.
    #[must_use]
    pub fn scratch(&self) -> PathBuf {
        let temp = std::env::temp_dir();
        remove_stale_scratch(&temp);
        temp.join(format!(
            "{SCRATCH_PREFIX}{}-{}",
            self.rank,
            std::process::id()
        ))
    }
}

/// Scratch directories are named `talus-rank<rank>-<process id>`.
const SCRATCH_PREFIX: &str = "talus-rank";

/// Removes the scratch directories in `temp` whose process is gone (where `/proc` says so).
fn remove_stale_scratch(temp: &Path) {
    let proc = Path::new("/proc");
    if !proc.is_dir() {
        return;
    }
    let Ok(entries) = std::fs::read_dir(temp) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let pid = name
            .strip_prefix(SCRATCH_PREFIX)
            .and_then(|rest| rest.split_once('-'))
            .and_then(|(rank, pid)| rank.parse::<u32>().ok().and(pid.parse::<u32>().ok()));
        if let Some(pid) = pid
            && !proc.join(pid.to_string()).exists()
        {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// Removes a scratch directory when dropped.
pub struct Scratch(pub PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

impl Scratch {
    /// The directory.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.0
    }
}

#[cfg(feature = "mpi")]
mod mpi_exchange {
    use mpi::datatype::{Partition, PartitionMut};
    use mpi::topology::SimpleCommunicator;
    use mpi::traits::*;
    use talus_sim::distribute::Exchange;

    /// [`Exchange`] over MPI's world communicator: the message sizes first
    /// (`MPI_Alltoall`), then the messages (`MPI_Alltoallv`).
    pub struct MpiExchange {
        pub rank: usize,
        pub size: usize,
    }

    impl Exchange for MpiExchange {
        fn rank(&self) -> usize {
            self.rank
        }

        fn size(&self) -> usize {
            self.size
        }

        fn all_to_all(&mut self, outgoing: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
            let world = SimpleCommunicator::world();
            let count = |n: usize| i32::try_from(n).expect("a message under 2 GiB");
            let send_counts: Vec<i32> = outgoing.iter().map(|m| count(m.len())).collect();
            let mut recv_counts = vec![0i32; self.size];
            world.all_to_all_into(&send_counts[..], &mut recv_counts[..]);
            let displacements = |counts: &[i32]| {
                counts
                    .iter()
                    .scan(0i32, |at, &c| {
                        let d = *at;
                        *at += c;
                        Some(d)
                    })
                    .collect::<Vec<i32>>()
            };
            let send_displs = displacements(&send_counts);
            let recv_displs = displacements(&recv_counts);
            // One byte past the messages: an empty vector's address is 1, which Open MPI
            // reads as MPI_IN_PLACE.
            let mut send: Vec<u8> = outgoing.concat();
            send.push(0);
            let total: i32 = recv_counts.iter().sum();
            let mut recv = vec![0u8; total as usize + 1];
            {
                let partition = Partition::new(&send[..], &send_counts[..], &send_displs[..]);
                let mut received =
                    PartitionMut::new(&mut recv[..], &recv_counts[..], &recv_displs[..]);
                world.all_to_all_varcount_into(&partition, &mut received);
            }
            recv_counts
                .iter()
                .zip(&recv_displs)
                .map(|(&c, &d)| recv[d as usize..(d + c) as usize].to_vec())
                .collect()
        }
    }
}
