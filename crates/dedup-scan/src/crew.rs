//! A stack of tasks worked off by a crew of threads that grows with the I/O scheduler: a task
//! may add tasks (a directory's subdirectories), a thread is started while fewer work than the
//! scheduler allows, and threads leave when it lowers its level. The walk lists directories on
//! it, and the content stages read files on it ([`map_each`]).
//!
//! Why not rayon tasks on a pool sized for the highest level: every thread of the pool took one
//! and then parked at the device's gate, so a warm walk kept dozens of threads waking and
//! sleeping, and a small tree paid for starting threads it never used (docs/benchmarks/find.md has
//! the figures).

use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::Scope;

/// How many threads a crew may have at once, and what its threads are called.
#[derive(Clone, Copy)]
pub struct Staffing<'a> {
    /// Never more threads than this.
    pub most: usize,
    /// Threads wanted now (the caller's among them); asked again whenever a task starts or ends.
    pub wanted: &'a (dyn Fn() -> usize + Sync),
    /// Thread names are this and a number.
    pub name: &'a str,
}

/// Work off `tasks` and every task they add with at most `wanted()` threads (the caller's among
/// them, and at least one) at any time, up to `most`; returns when every task is done. Tasks
/// added last are taken first. A thread the system refuses to start is simply not hired: the
/// others carry on.
pub fn work_off<T: Send>(tasks: Vec<T>, staff: Staffing, work: &(dyn Fn(T) -> Vec<T> + Sync)) {
    let crew = Crew {
        state: Mutex::new(State { tasks, busy: 0, workers: 1, waiting: 0, hired: 0 }),
        wake: Condvar::new(),
        staff,
        work,
    };
    std::thread::scope(|scope| crew.worker(scope));
}

/// `f` of every item, in the order of `items`, computed on a crew (see [`work_off`]). Items are
/// handed out a few at a time, in order: enough per hand-over that taking the lock costs little
/// beside them, few enough that the threads finish together.
pub fn map_each<T: Send, R: Send>(
    items: Vec<T>,
    staff: Staffing,
    f: &(dyn Fn(T) -> R + Sync),
) -> Vec<R> {
    let count = items.len();
    if count <= 1 {
        // Nothing to share: no lock, no thread.
        return items.into_iter().map(f).collect();
    }
    let per_task = (count / (staff.most.max(1) * 16)).clamp(1, 16);
    let mut tasks: Vec<(usize, Vec<T>)> = Vec::with_capacity(count.div_ceil(per_task));
    let mut items = items.into_iter();
    loop {
        let batch: Vec<T> = items.by_ref().take(per_task).collect();
        if batch.is_empty() {
            break;
        }
        tasks.push((tasks.len(), batch));
    }
    // The stack is worked off from its end: the first batch goes last.
    tasks.reverse();
    let done: Mutex<Vec<(usize, Vec<R>)>> = Mutex::new(Vec::with_capacity(tasks.len()));
    work_off(tasks, staff, &|(index, batch)| {
        let results: Vec<R> = batch.into_iter().map(f).collect();
        done.lock().unwrap_or_else(PoisonError::into_inner).push((index, results));
        Vec::new()
    });
    let mut done = done.into_inner().unwrap_or_else(PoisonError::into_inner);
    done.sort_unstable_by_key(|(index, _)| *index);
    done.into_iter().flat_map(|(_, results)| results).collect()
}

struct Crew<'a, T> {
    state: Mutex<State<T>>,
    /// Signalled when tasks are added or the last busy worker finishes.
    wake: Condvar,
    staff: Staffing<'a>,
    work: &'a (dyn Fn(T) -> Vec<T> + Sync),
}

struct State<T> {
    /// Last in, first out: a walk goes deep first, which keeps the stack short.
    tasks: Vec<T>,
    /// Workers running a task (whose new tasks may still come).
    busy: usize,
    /// Workers hired and not yet gone.
    workers: usize,
    /// Workers parked until a task comes.
    waiting: usize,
    /// Threads started so far (for their names).
    hired: usize,
}

impl<'a, T: Send> Crew<'a, T> {
    fn lock(&self) -> MutexGuard<'_, State<T>> {
        // Tasks run without the lock, so a panicking task cannot leave the state half changed.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn wanted(&self) -> usize {
        (self.staff.wanted)().clamp(1, self.staff.most.max(1))
    }

    /// A task is over and added `added`: queue them and wake whoever must go on.
    fn task_done(&self, state: &mut State<T>, mut added: Vec<T>) {
        state.busy -= 1;
        let count = added.len();
        state.tasks.append(&mut added);
        if state.busy == 0 && state.tasks.is_empty() {
            // All done: the parked workers leave.
            self.wake.notify_all();
        } else {
            // The worker that added them takes one itself.
            for _ in 0..count.saturating_sub(1).min(state.waiting) {
                self.wake.notify_one();
            }
        }
    }

    /// Start workers while there are tasks nobody waits to take and the scheduler allows more.
    fn hire<'s>(&'s self, state: &mut State<T>, scope: &'s Scope<'s, '_>) {
        let wanted = self.wanted();
        while state.workers < wanted && state.tasks.len() > state.waiting {
            let name = format!("{}-{}", self.staff.name, state.hired);
            let started =
                std::thread::Builder::new().name(name).spawn_scoped(scope, || self.worker(scope));
            if started.is_err() {
                return;
            }
            state.workers += 1;
            state.hired += 1;
        }
    }

    fn worker<'s>(&'s self, scope: &'s Scope<'s, '_>) {
        let mut state = self.lock();
        loop {
            if state.workers > self.wanted() {
                state.workers -= 1;
                if !state.tasks.is_empty() {
                    // A parked worker takes over what this one leaves.
                    self.wake.notify_one();
                }
                return;
            }
            let Some(task) = state.tasks.pop() else {
                if state.busy == 0 {
                    // Nothing queued and nothing running that could queue more: all done.
                    state.workers -= 1;
                    self.wake.notify_all();
                    return;
                }
                state.waiting += 1;
                state = self.wake.wait(state).unwrap_or_else(PoisonError::into_inner);
                state.waiting -= 1;
                continue;
            };
            state.busy += 1;
            self.hire(&mut state, scope);
            drop(state);
            let finished = Finished { crew: self };
            let added = (self.work)(task);
            state = finished.record(added);
            self.hire(&mut state, scope);
        }
    }
}

/// Marks a task done even when it panics, so the other workers do not wait for it forever.
struct Finished<'c, 'a, T: Send> {
    crew: &'c Crew<'a, T>,
}

impl<'c, T: Send> Finished<'c, '_, T> {
    /// The task ended normally and added these: record it, and go on holding the lock.
    fn record(self, added: Vec<T>) -> MutexGuard<'c, State<T>> {
        let crew = self.crew;
        std::mem::forget(self);
        let mut state = crew.lock();
        crew.task_done(&mut state, added);
        state
    }
}

impl<T: Send> Drop for Finished<'_, '_, T> {
    fn drop(&mut self) {
        let mut state = self.crew.lock();
        self.crew.task_done(&mut state, Vec::new());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};

    fn staff<'a>(most: usize, wanted: &'a (dyn Fn() -> usize + Sync)) -> Staffing<'a> {
        Staffing { most, wanted, name: "test" }
    }

    /// A tree of tasks: task n adds 2n+1 and 2n+2 below `limit`.
    fn binary_tree(limit: usize) -> impl Fn(usize) -> Vec<usize> + Sync {
        move |n| [2 * n + 1, 2 * n + 2].into_iter().filter(|&c| c < limit).collect()
    }

    #[test]
    fn every_task_and_every_added_task_runs_once() {
        let seen: Vec<AtomicUsize> = (0..5000).map(|_| AtomicUsize::new(0)).collect();
        let children = binary_tree(seen.len());
        work_off(vec![0], staff(8, &|| 4), &|n| {
            seen[n].fetch_add(1, SeqCst);
            children(n)
        });
        assert!(seen.iter().all(|s| s.load(SeqCst) == 1));
    }

    #[test]
    fn never_more_workers_at_once_than_wanted_and_more_once_allowed() {
        let (inside, done) = (AtomicUsize::new(0), AtomicUsize::new(0));
        let (peak_at_two, peak) = (AtomicUsize::new(0), AtomicUsize::new(0));
        let children = binary_tree(2000);
        let wanted = || if done.load(SeqCst) < 1000 { 2 } else { 6 };
        work_off(vec![0], staff(16, &wanted), &|n| {
            let now = inside.fetch_add(1, SeqCst) + 1;
            if done.load(SeqCst) < 900 {
                peak_at_two.fetch_max(now, SeqCst);
            }
            peak.fetch_max(now, SeqCst);
            std::thread::sleep(std::time::Duration::from_micros(200));
            inside.fetch_sub(1, SeqCst);
            done.fetch_add(1, SeqCst);
            children(n)
        });
        assert_eq!(done.load(SeqCst), 2000);
        assert!(peak_at_two.load(SeqCst) <= 2, "{peak_at_two:?} at once while 2 were wanted");
        let peak = peak.load(SeqCst);
        assert!((3..=6).contains(&peak), "peak {peak}: should grow to at most 6");
    }

    #[test]
    fn a_lowered_level_never_strands_the_remaining_tasks() {
        // A chain (each task adds one) keeps one worker busy and the others parked; when the
        // level drops, the busy one leaves right after adding the next task, and a parked one
        // must take it over, or the run never ends.
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let done = AtomicUsize::new(0);
            let wanted = || if done.load(SeqCst) < 50 { 8 } else { 1 };
            work_off(vec![0usize], staff(8, &wanted), &|n| {
                done.fetch_add(1, SeqCst);
                std::thread::sleep(std::time::Duration::from_micros(100));
                if n < 300 {
                    vec![n + 1]
                } else {
                    Vec::new()
                }
            });
            tx.send(done.into_inner()).unwrap();
        });
        let done = rx.recv_timeout(std::time::Duration::from_secs(20));
        assert_eq!(done, Ok(301), "the walk of the chain stalled");
    }

    #[test]
    fn works_with_one_thread_and_with_no_task() {
        let count = AtomicUsize::new(0);
        let children = binary_tree(100);
        work_off(vec![0], staff(1, &|| 8), &|n| {
            count.fetch_add(1, SeqCst);
            children(n)
        });
        assert_eq!(count.load(SeqCst), 100);
        work_off(Vec::<usize>::new(), staff(2, &|| 2), &|_| Vec::new());
    }

    #[test]
    fn a_panicking_task_does_not_hang_the_others() {
        let children = binary_tree(200);
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            work_off(vec![0], staff(4, &|| 3), &|n| {
                assert_ne!(n, 17, "task 17 fails");
                children(n)
            })
        }));
        assert!(outcome.is_err());
    }

    #[test]
    fn map_each_gives_every_result_once_in_the_order_of_the_items() {
        for count in [0, 1, 2, 15, 1000, 20_000] {
            let calls = AtomicUsize::new(0);
            let items: Vec<usize> = (0..count).collect();
            let squares = map_each(items, staff(8, &|| 4), &|n| {
                calls.fetch_add(1, SeqCst);
                n * n
            });
            assert_eq!(calls.load(SeqCst), count);
            assert_eq!(squares, (0..count).map(|n| n * n).collect::<Vec<_>>());
        }
    }

    #[test]
    fn map_each_reads_in_parallel_as_far_as_wanted() {
        // Slow items (reads from a slow device): with 4 wanted, 4 run at once, never 5.
        let (inside, peak) = (AtomicUsize::new(0), AtomicUsize::new(0));
        map_each((0..64).collect(), staff(32, &|| 4), &|_: usize| {
            let now = inside.fetch_add(1, SeqCst) + 1;
            peak.fetch_max(now, SeqCst);
            std::thread::sleep(std::time::Duration::from_millis(2));
            inside.fetch_sub(1, SeqCst);
        });
        assert_eq!(peak.load(SeqCst), 4);
    }
}
