//! A counting semaphore whose limit can change while threads wait on it: the scheduler lowers
//! or raises the number of reads that may be in flight on one device.

use std::sync::{Condvar, Mutex};

/// At most `limit` holders at once.
#[derive(Debug)]
pub struct Gate {
    state: Mutex<GateState>,
    freed: Condvar,
}

#[derive(Debug)]
struct GateState {
    active: usize,
    limit: usize,
}

impl Gate {
    /// A gate letting `limit` holders in.
    pub fn new(limit: usize) -> Gate {
        Gate {
            state: Mutex::new(GateState { active: 0, limit: limit.max(1) }),
            freed: Condvar::new(),
        }
    }

    /// Wait for room, then take a place.
    pub fn enter(&self) {
        let mut s = self.state.lock().unwrap();
        while s.active >= s.limit {
            s = self.freed.wait(s).unwrap();
        }
        s.active += 1;
    }

    /// Give a place back.
    pub fn leave(&self) {
        let mut s = self.state.lock().unwrap();
        s.active -= 1;
        drop(s);
        self.freed.notify_one();
    }

    /// Change the limit; waiters are woken when it grows.
    pub fn set_limit(&self, limit: usize) {
        let mut s = self.state.lock().unwrap();
        let grew = limit > s.limit;
        s.limit = limit.max(1);
        drop(s);
        if grew {
            self.freed.notify_all();
        }
    }

    /// Current limit.
    pub fn limit(&self) -> usize {
        self.state.lock().unwrap().limit
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
