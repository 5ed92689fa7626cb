//! A counting semaphore whose limit can change while threads wait on it: the scheduler lowers
//! or raises the number of reads that may be in flight on one device.

use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::{Condvar, Mutex};

/// At most `limit` holders at once. Entering and leaving are one atomic operation each while
/// there is room; only threads that must wait touch the mutex, so a gate on a busy warm scan
/// (a million small reads) costs no lock traffic.
#[derive(Debug)]
pub struct Gate {
    active: AtomicUsize,
    limit: AtomicUsize,
    /// Threads parked in `enter`; `leave` only wakes when there is one.
    sleeping: AtomicUsize,
    lock: Mutex<()>,
    freed: Condvar,
}

impl Gate {
    /// A gate letting `limit` holders in.
    pub fn new(limit: usize) -> Gate {
        Gate {
            active: AtomicUsize::new(0),
            limit: AtomicUsize::new(limit.max(1)),
            sleeping: AtomicUsize::new(0),
            lock: Mutex::new(()),
            freed: Condvar::new(),
        }
    }

    fn try_enter(&self) -> bool {
        let mut active = self.active.load(SeqCst);
        while active < self.limit.load(SeqCst) {
            match self.active.compare_exchange_weak(active, active + 1, SeqCst, SeqCst) {
                Ok(_) => return true,
                Err(now) => active = now,
            }
        }
        false
    }

    /// Wait for room, then take a place.
    pub fn enter(&self) {
        while !self.try_enter() {
            let guard = self.lock.lock().unwrap();
            // Announce the wait before the last look, so a `leave` after that look sees us.
            self.sleeping.fetch_add(1, SeqCst);
            if self.active.load(SeqCst) >= self.limit.load(SeqCst) {
                drop(self.freed.wait(guard).unwrap());
            }
            self.sleeping.fetch_sub(1, SeqCst);
        }
    }

    /// Give a place back.
    pub fn leave(&self) {
        self.active.fetch_sub(1, SeqCst);
        if self.sleeping.load(SeqCst) > 0 {
            // Taking the lock orders this wake-up after the sleeper's wait began.
            let _guard = self.lock.lock().unwrap();
            self.freed.notify_one();
        }
    }

    /// Change the limit; waiters are woken when it grows.
    pub fn set_limit(&self, limit: usize) {
        let old = self.limit.swap(limit.max(1), SeqCst);
        if limit > old && self.sleeping.load(SeqCst) > 0 {
            let _guard = self.lock.lock().unwrap();
            self.freed.notify_all();
        }
    }

    /// Current limit.
    pub fn limit(&self) -> usize {
        self.limit.load(SeqCst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    #[test]
    fn never_more_holders_than_the_limit() {
        let gate = Arc::new(Gate::new(3));
        let inside = Arc::new(AtomicUsize::new(0));
        let peak = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..12)
            .map(|_| {
                let (gate, inside, peak) = (gate.clone(), inside.clone(), peak.clone());
                std::thread::spawn(move || {
                    for _ in 0..50 {
                        gate.enter();
                        let now = inside.fetch_add(1, Ordering::SeqCst) + 1;
                        peak.fetch_max(now, Ordering::SeqCst);
                        std::thread::yield_now();
                        inside.fetch_sub(1, Ordering::SeqCst);
                        gate.leave();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert!(peak.load(Ordering::SeqCst) <= 3);
        assert!(peak.load(Ordering::SeqCst) >= 1);
    }

    #[test]
    fn raising_the_limit_releases_waiters() {
        let gate = Arc::new(Gate::new(1));
        gate.enter();
        let waiter = {
            let gate = gate.clone();
            std::thread::spawn(move || {
                gate.enter();
                gate.leave();
            })
        };
        gate.set_limit(2);
        waiter.join().unwrap();
        gate.leave();
        assert_eq!(gate.limit(), 2);
    }
}
