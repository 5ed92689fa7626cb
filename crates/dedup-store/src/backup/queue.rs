//! A bounded queue between the backup's stages, for many producers and many consumers: a full
//! queue makes producers wait, which is what bounds the memory of the whole pipeline whatever
//! the tree; closing it lets consumers drain what is left and stop. A side is woken only when
//! someone waits on it: std's condition variable makes a `futex` call for every notification,
//! waiter or not, which was two system calls per file of a backup.

use std::collections::VecDeque;
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

/// A bounded multi-producer, multi-consumer queue.
pub struct Queue<T> {
    state: Mutex<State<T>>,
    not_empty: Condvar,
    not_full: Condvar,
    capacity: usize,
}

struct State<T> {
    items: VecDeque<T>,
    closed: bool,
    /// Consumers waiting for an item, producers waiting for room.
    consumers_waiting: usize,
    producers_waiting: usize,
}

impl<T> Queue<T> {
    /// A queue holding at most `capacity` items (at least one).
    pub fn new(capacity: usize) -> Self {
        Queue {
            state: Mutex::new(State {
                items: VecDeque::new(),
                closed: false,
                consumers_waiting: 0,
                producers_waiting: 0,
            }),
            not_empty: Condvar::new(),
            not_full: Condvar::new(),
            capacity: capacity.max(1),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State<T>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Adds `item`, waiting while the queue is full; gives it back if the queue is closed.
    pub fn push(&self, item: T) -> Result<(), T> {
        let mut state = self.lock();
        while state.items.len() >= self.capacity && !state.closed {
            state.producers_waiting += 1;
            state = self.not_full.wait(state).unwrap_or_else(PoisonError::into_inner);
            state.producers_waiting -= 1;
        }
        if state.closed {
            return Err(item);
        }
        state.items.push_back(item);
        let wake = state.consumers_waiting > 0;
        drop(state);
        if wake {
            self.not_empty.notify_one();
        }
        Ok(())
    }

    /// The next item, waiting while the queue is empty and open; `None` once it is closed and
    /// drained.
    pub fn pop(&self) -> Option<T> {
        let mut state = self.lock();
        loop {
            if let Some(item) = state.items.pop_front() {
                let wake = state.producers_waiting > 0;
                drop(state);
                if wake {
                    self.not_full.notify_one();
                }
                return Some(item);
            }
            if state.closed {
                return None;
            }
            state.consumers_waiting += 1;
            state = self.not_empty.wait(state).unwrap_or_else(PoisonError::into_inner);
            state.consumers_waiting -= 1;
        }
    }

    /// No more items will come: waiting consumers drain the rest and stop.
    pub fn close(&self) {
        self.lock().closed = true;
        self.not_empty.notify_all();
        self.not_full.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_item_reaches_one_consumer_and_producers_wait_when_full() {
        let queue = Queue::new(3);
        let total: u64 = std::thread::scope(|s| {
            let consumers: Vec<_> = (0..3)
                .map(|_| {
                    s.spawn(|| {
                        let mut sum = 0u64;
                        while let Some(n) = queue.pop() {
                            sum += n;
                        }
                        sum
                    })
                })
                .collect();
            let producers: Vec<_> = (0..4)
                .map(|p| {
                    let queue = &queue;
                    s.spawn(move || {
                        for n in 0..1000u64 {
                            queue.push(p * 1000 + n).unwrap();
                            assert!(queue.lock().items.len() <= 3);
                        }
                    })
                })
                .collect();
            producers.into_iter().for_each(|p| p.join().unwrap());
            queue.close();
            consumers.into_iter().map(|c| c.join().unwrap()).sum()
        });
        assert_eq!(total, (0..4000u64).sum::<u64>());
        assert_eq!(queue.push(1), Err(1), "a closed queue refuses items");
        assert_eq!(queue.pop(), None);
    }
}
