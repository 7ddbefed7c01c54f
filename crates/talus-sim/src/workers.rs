//! The worker threads of the step's parallel stages, one of which stays awake through a
//! step.
//!
//! A parallel stage hands its work to the pool and waits; a worker asleep since the last
//! parallel stage has to be woken first. On a virtual machine whose idle cores halt, that
//! wake-up is slow and uneven: on the two-core machine of the benchmarks, two threads
//! sharing 2.9 ms of work (a step's narrow phase, after 0.7 ms of stages on the calling
//! thread alone) took 0.35 ms longer than half of it, and 0.1 ms longer with a thread kept
//! spinning on the other core meanwhile; the `contact_step` bench's step on two threads
//! took 3.87 ms, and 3.50 ms with the waiting worker below (medians of three alternating
//! runs; see the README's measurements).
//!
//! So, while a step runs, one worker waits actively: it takes any work the pool is given
//! at once and otherwise spins (as OpenMP's active wait policy does), which keeps its core
//! awake through the stages that run on the calling thread alone. Between steps it sleeps,
//! so that an idle world holds no core. With one thread there is no waiting worker.
//!
//! Which thread does which part of the work never changes a result (every parallel stage
//! gives the same bits on any number of threads), so the waiting worker changes only the
//! time a step takes.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};

/// The waiting worker sleeps (between steps).
const ASLEEP: u8 = 0;
/// The waiting worker spins and takes work (during a step).
const AWAKE: u8 = 1;
/// The pool is going away: the waiting worker returns.
const QUIT: u8 = 2;

/// The pool of a world's parallel stages, with its waiting worker when it has two threads
/// or more.
pub(crate) struct Workers {
    pool: rayon::ThreadPool,
    waiting: Option<Arc<Waiting>>,
}

/// What the calling thread and the waiting worker share.
struct Waiting {
    state: AtomicU8,
    lock: Mutex<()>,
    wake: Condvar,
}

impl Waiting {
    /// Sets `state` and wakes the waiting worker if it sleeps.
    fn set(&self, state: u8) {
        self.state.store(state, Ordering::Release);
        // Under the lock, so that the worker cannot check the state and then miss the call.
        let _guard = self.lock.lock().unwrap_or_else(PoisonError::into_inner);
        self.wake.notify_one();
    }

    /// The waiting worker's job: spin and take the pool's work while awake, sleep while
    /// asleep, return on quit.
    fn serve(&self) {
        loop {
            match self.state.load(Ordering::Acquire) {
                AWAKE => {
                    if rayon::yield_now() != Some(rayon::Yield::Executed) {
                        std::hint::spin_loop();
                    }
                }
                QUIT => return,
                _ => {
                    let mut guard = self.lock.lock().unwrap_or_else(PoisonError::into_inner);
                    while self.state.load(Ordering::Acquire) == ASLEEP {
                        guard = self
                            .wake
                            .wait(guard)
                            .unwrap_or_else(PoisonError::into_inner);
                    }
                }
            }
        }
    }
}

impl Workers {
    /// A pool of `threads` workers (0: the runtime's choice).
    ///
    /// The waiting worker's job is the first the pool is given, so an idle worker takes it
    /// (a worker waiting on a join of its own never holds it). Between steps it blocks,
    /// so one worker fewer takes work then, and nothing may need every worker at once
    /// (`broadcast` would never finish): every use of the pool is within a step.
    pub fn new(threads: usize) -> Result<Workers, rayon::ThreadPoolBuildError> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()?;
        let waiting = (pool.current_num_threads() > 1).then(|| {
            let waiting = Arc::new(Waiting {
                state: AtomicU8::new(ASLEEP),
                lock: Mutex::new(()),
                wake: Condvar::new(),
            });
            let worker = Arc::clone(&waiting);
            pool.spawn(move || worker.serve());
            waiting
        });
        Ok(Workers { pool, waiting })
    }

    /// The pool (see [`Workers::new`] for what it may not be asked).
    pub fn pool(&self) -> &rayon::ThreadPool {
        &self.pool
    }

    /// How many workers the pool has.
    pub fn threads(&self) -> usize {
        self.pool.current_num_threads()
    }

    /// Keeps the waiting worker awake until the returned guard is dropped (at the end of a
    /// step, or when it unwinds).
    #[must_use]
    pub fn awake(&self) -> Awake {
        if let Some(waiting) = &self.waiting {
            waiting.set(AWAKE);
        }
        Awake {
            waiting: self.waiting.clone(),
        }
    }
}

impl Drop for Workers {
    fn drop(&mut self) {
        if let Some(waiting) = &self.waiting {
            waiting.set(QUIT);
        }
    }
}

/// While it lives, the waiting worker of a pool stays awake (see [`Workers::awake`]).
pub(crate) struct Awake {
    waiting: Option<Arc<Waiting>>,
}

impl Drop for Awake {
    fn drop(&mut self) {
        if let Some(waiting) = &self.waiting {
            // Nothing to wake: it spins. Only from awake: a pool that went away meanwhile
            // keeps its worker told to quit.
            let _ =
                waiting
                    .state
                    .compare_exchange(AWAKE, ASLEEP, Ordering::Release, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use rayon::prelude::*;

    use super::*;

    /// Parallel loops run on the pool while its waiting worker is awake, asleep, and
    /// after a pool is dropped and another built: every item is met once.
    #[test]
    fn work_is_done_with_the_waiting_worker_awake_or_asleep() {
        for threads in [1, 2, 3] {
            let workers = Workers::new(threads).unwrap();
            assert_eq!(workers.threads(), threads);
            for round in 0..20 {
                let awake = (round % 2 == 0).then(|| workers.awake());
                let sum: u64 = workers
                    .pool()
                    .install(|| (0..10_000u64).into_par_iter().map(|x| x * x).sum());
                assert_eq!(sum, (0..10_000u64).map(|x| x * x).sum::<u64>());
                drop(awake);
            }
        }
    }
}
