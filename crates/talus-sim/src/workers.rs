//! The threads of the step's parallel stages: the calling thread and helpers from a pool,
//! one of which stays awake through a step.
//!
//! A stage run on `n` threads is shared by the calling thread and `n − 1` helpers of the
//! pool ([`Workers::share`]): all take items of the stage's work (chunks of pairs, halves
//! of the grains) from one list until it is empty, and the calling thread then waits
//! actively for the helpers' last items, for a while: a helper that has not even started
//! (its core taken by other programs) is awaited asleep. A pool of `n` workers with the
//! calling thread asleep in `install` meanwhile costs two wake-ups a stage instead (the
//! pool's, and the caller's after the pool's work, 5–50 µs each on the two-core virtual
//! machine of the benchmarks, whose idle cores halt), and puts three threads on two cores
//! while a worker spins.
//!
//! A helper asleep since the last parallel stage would have to be woken first. So, while a
//! step runs, one helper waits actively: it takes any work the pool is given at once and
//! otherwise spins (as OpenMP's active wait policy does), which keeps its core awake
//! through the stages that run on the calling thread alone; idle for a moment, it offers
//! its core to any other runnable thread at each check ([`ActiveWait`]), so that worlds
//! stepped side by side on more threads than cores (tests, several runs at once) still
//! share the cores: the `yade_bed` bench's two beds at once on two threads each went from
//! 190 000–310 000 to 350 000–460 000 grain-steps/s in all on two cores, and two runs of
//! `configs/hopper.ron` to 0.3 s at once, `--threads 2` each, from 183 s to 31 s. Between
//! steps it sleeps, so that an idle world holds no core.
//!
//! Which thread does which part of the work never changes a result (every parallel stage
//! gives the same bits on any number of threads), so none of this changes more than the
//! time a step takes.

use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// The waiting worker sleeps (between steps).
const ASLEEP: u8 = 0;
/// The waiting worker spins and takes work (during a step).
const AWAKE: u8 = 1;
/// The pool is going away: the waiting worker returns.
const QUIT: u8 = 2;

/// The helpers of a world's parallel stages (a pool of one thread fewer than the stages
/// run on), with the waiting one when there are any.
pub(crate) struct Workers {
    pool: rayon::ThreadPool,
    threads: usize,
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

    /// The waiting worker's job: take the pool's work while awake, waiting actively
    /// between jobs ([`ActiveWait`], ignoring its end), sleep while asleep, return on quit.
    fn serve(&self) {
        loop {
            match self.state.load(Ordering::Acquire) {
                AWAKE => {
                    let mut idle = ActiveWait::new();
                    while self.state.load(Ordering::Acquire) == AWAKE {
                        if rayon::yield_now() == Some(rayon::Yield::Executed) {
                            idle = ActiveWait::new();
                        } else {
                            idle.go_on();
                        }
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
    /// The helpers of stages run on `threads` threads (0: the runtime's choice), the calling
    /// thread being one of them.
    ///
    /// The waiting helper's job is the first the pool is given, so an idle worker takes it
    /// (a worker waiting on a join of its own never holds it). Between steps it blocks,
    /// so one helper fewer takes work then, and nothing may need every helper at once
    /// (`broadcast` would never finish): the pool is used through [`Workers::share`]
    /// alone, which wakes the waiting helper for its stage when no step keeps it awake.
    pub fn new(threads: usize) -> Result<Workers, rayon::ThreadPoolBuildError> {
        let threads = if threads == 0 {
            // The runtime's choice, as a pool of its own size would make it.
            rayon::ThreadPoolBuilder::new()
                .build()?
                .current_num_threads()
        } else {
            threads
        };
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads((threads - 1).max(1))
            .build()?;
        let waiting = (threads > 1).then(|| {
            let waiting = Arc::new(Waiting {
                state: AtomicU8::new(ASLEEP),
                lock: Mutex::new(()),
                wake: Condvar::new(),
            });
            let worker = Arc::clone(&waiting);
            pool.spawn(move || worker.serve());
            waiting
        });
        Ok(Workers {
            pool,
            threads,
            waiting,
        })
    }

    /// How many threads the parallel stages run on (the calling thread and the helpers).
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Runs `beside`, then `work` on every item of `items`, on the calling thread and, when
    /// the stages run on several threads, on the helpers at once: the calling thread takes
    /// items from the front, the helpers from the back, until none is left (so that each
    /// works mostly on one run of neighbouring items). Returns when every item is done (the
    /// calling thread waits for the helpers actively; see the module documentation).
    pub fn share<I, F>(&self, items: I, work: F, beside: &mut dyn FnMut())
    where
        I: DoubleEndedIterator + Send,
        I::Item: Send,
        F: Fn(I::Item) + Sync,
    {
        let helpers = self.threads - 1;
        if helpers == 0 {
            beside();
            items.for_each(work);
            return;
        }
        // Awake for this stage if no step keeps it so (the pool may have no other worker).
        let asleep = self
            .waiting
            .as_ref()
            .is_some_and(|w| w.state.load(Ordering::Acquire) == ASLEEP);
        let _awake = asleep.then(|| self.awake());
        let items = Mutex::new(items);
        let take = |from_back: bool| {
            loop {
                let mut items = items.lock().unwrap_or_else(PoisonError::into_inner);
                let next = if from_back {
                    items.next_back()
                } else {
                    items.next()
                };
                drop(items);
                let Some(item) = next else { break };
                work(item);
            }
        };
        let done = AtomicUsize::new(0);
        self.pool.in_place_scope(|scope| {
            for _ in 0..helpers {
                scope.spawn(|_| {
                    // Counted however the helper ends (a panic is raised again when the
                    // scope ends), so that the wait below ends.
                    let _count = Finished(&done);
                    take(true);
                });
            }
            beside();
            take(false);
            // Actively for a while only: a helper not yet running (its core taken by other
            // programs) is then awaited asleep, by the scope's own wait, which gives the
            // core away; spinning on would hold it from the helper for a whole time slice.
            let mut wait = ActiveWait::new();
            while done.load(Ordering::Acquire) < helpers && wait.go_on() {}
        });
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

/// An active wait that stays polite when the cores are shared with other programs (tests
/// run side by side, sweeps with several jobs): it spins for [`ActiveWait::SPIN`], then
/// offers its core to any other runnable thread between checks, and tells its caller to
/// stop after [`ActiveWait::ACTIVE`].
struct ActiveWait {
    start: Instant,
    checks: u32,
    yielding: bool,
}

impl ActiveWait {
    /// Pure spinning: longer than a helper takes to pick up a stage's work on an idle core.
    const SPIN: Duration = Duration::from_micros(20);
    /// The whole active wait: longer than the last chunk of a stage takes (64 pairs of the
    /// narrow phase, some 60 µs), far shorter than a time slice of the scheduler (ms).
    const ACTIVE: Duration = Duration::from_micros(200);

    fn new() -> ActiveWait {
        ActiveWait {
            start: Instant::now(),
            checks: 0,
            yielding: false,
        }
    }

    /// Waits a moment; false once the active wait is over (the caller should then block, or
    /// go on waiting this way, at a yield a check).
    fn go_on(&mut self) -> bool {
        if !self.yielding {
            self.checks = self.checks.wrapping_add(1);
            // The clock read every 64 checks: a few dozen nanoseconds against 64 pauses.
            if self.checks % 64 != 0 || self.start.elapsed() < Self::SPIN {
                std::hint::spin_loop();
                return true;
            }
            self.yielding = true;
        }
        std::thread::yield_now();
        self.start.elapsed() < Self::ACTIVE
    }
}

/// Counts a helper of [`Workers::share`] as finished when dropped.
struct Finished<'a>(&'a AtomicUsize);

impl Drop for Finished<'_> {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::Release);
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
    use std::sync::atomic::AtomicU64;

    use super::*;

    /// Work shared while the waiting helper is awake, asleep, and after one set of helpers is
    /// dropped and another built: every item is met once, and `beside` runs.
    #[test]
    fn work_is_shared_with_the_waiting_helper_awake_or_asleep() {
        for threads in [1, 2, 3] {
            let workers = Workers::new(threads).unwrap();
            assert_eq!(workers.threads(), threads);
            for round in 0..20 {
                let awake = (round % 2 == 0).then(|| workers.awake());
                let sum = AtomicU64::new(0);
                let mut beside_ran = false;
                workers.share(
                    (0..10_000u64).collect::<Vec<_>>().chunks(64),
                    |chunk| {
                        let part: u64 = chunk.iter().map(|x| x * x).sum();
                        sum.fetch_add(part, Ordering::Relaxed);
                    },
                    &mut || beside_ran = true,
                );
                assert!(beside_ran);
                assert_eq!(sum.into_inner(), (0..10_000u64).map(|x| x * x).sum::<u64>());
                drop(awake);
            }
        }
    }

    /// A panic in the shared work reaches the caller, and the helpers serve again after it.
    #[test]
    fn a_panic_in_shared_work_is_raised_again() {
        let workers = Workers::new(2).unwrap();
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            workers.share(0..1_000u32, |k| assert!(k != 500, "item 500"), &mut || {});
        }));
        assert!(caught.is_err());
        let count = AtomicU64::new(0);
        workers.share(
            0..1_000u32,
            |_| {
                count.fetch_add(1, Ordering::Relaxed);
            },
            &mut || {},
        );
        assert_eq!(count.into_inner(), 1_000);
    }
}
