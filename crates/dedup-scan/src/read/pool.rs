//! Read buffers handed back after each chunk and reused by the next one (the finder's exact stage
//! reads through them; so can any job that reads many large chunks).
//!
//! A buffer fresh from the allocator costs more than the read it serves when the data is in the
//! page cache: large allocations are new pages the kernel must map and clear, and glibc hands them
//! back to the kernel when they are freed, so every chunk paid for that again. Pooled buffers have
//! rooms of powers of two, so that reads of nearby lengths share them; they are page-aligned
//! ([`ReadBuf`] says why) and never grown past their room (a grown buffer is copied by `realloc`).
//!
//! The pool keeps only large buffers ([`ReadBuf::LARGE`]; small ones are cheap to allocate). It
//! never holds more memory than the stage once had in use: a read that finds no idle buffer of
//! its room first frees idle buffers (the longest idle first) of at least that room, so buffers
//! of rooms no longer asked for give way to the new ones instead of piling up.

use std::collections::VecDeque;
use std::sync::Mutex;

use super::ReadBuf;

/// Idle buffers, the longest idle first.
#[derive(Default)]
pub struct BufferPool {
    idle: Mutex<VecDeque<ReadBuf>>,
}

impl BufferPool {
    /// A buffer of `len` bytes (their content is whatever the buffer held last).
    pub fn take(&self, len: usize) -> ReadBuf {
        if len < ReadBuf::LARGE {
            return ReadBuf::new(len);
        }
        let room = len.next_power_of_two();
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        // The most recently returned first: its pages are the likeliest to be in the CPU cache.
        let mut buf = match idle.iter().rposition(|buf| buf.room() == room) {
            Some(i) => idle.remove(i).expect("found above"),
            None => {
                let mut freed = 0;
                let mut unfit = Vec::new();
                while freed < room {
                    let Some(buf) = idle.pop_front() else { break };
                    freed += buf.room();
                    unfit.push(buf);
                }
                // Freed after the lock is released: returning large buffers to the kernel is slow.
                drop(idle);
                drop(unfit);
                ReadBuf::with_room(room)
            }
        };
        buf.set_len(len);
        buf
    }

    /// Hand a buffer back for reuse (small ones are simply freed).
    pub fn give(&self, buf: ReadBuf) {
        if buf.room() >= ReadBuf::LARGE {
            self.idle.lock().unwrap_or_else(|e| e.into_inner()).push_back(buf);
        }
    }

    /// Room of the buffers held idle.
    #[cfg(test)]
    fn idle_bytes(&self) -> usize {
        self.idle.lock().unwrap().iter().map(ReadBuf::room).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_buffer_given_back_serves_the_next_read_of_a_length_in_its_room() {
        let pool = BufferPool::default();
        let buf = pool.take(300_000);
        let addr = buf.bytes().as_ptr();
        pool.give(buf);
        // 300,000 and 500,000 bytes share the room of 512 KiB.
        let again = pool.take(500_000);
        assert_eq!(again.bytes().as_ptr(), addr);
        assert_eq!(again.bytes().len(), 500_000);
        // 600,000 do not.
        assert_ne!(pool.take(600_000).bytes().as_ptr(), addr);
        // A shorter read gets exactly its length, not what the buffer held before.
        pool.give(again);
        let shorter = pool.take(300_000);
        assert_eq!(shorter.bytes().as_ptr(), addr);
        assert_eq!(shorter.bytes().len(), 300_000);
    }

    #[test]
    fn a_read_that_finds_no_fit_frees_idle_buffers_of_other_rooms_first() {
        let pool = BufferPool::default();
        let small: Vec<ReadBuf> = (0..8).map(|_| pool.take(1 << 20)).collect();
        for buf in small {
            pool.give(buf);
        }
        assert_eq!(pool.idle_bytes(), 8 << 20);
        // A 4 MiB read frees 4 MiB of the idle 1 MiB buffers: the pool plus the buffer in use
        // never hold more than the 8 MiB the stage had in use before.
        let large = pool.take(4 << 20);
        assert_eq!(pool.idle_bytes(), 4 << 20);
        pool.give(large);
        assert_eq!(pool.idle_bytes(), 8 << 20);
    }

    #[test]
    fn small_buffers_are_not_kept() {
        let pool = BufferPool::default();
        pool.give(pool.take(100));
        assert_eq!(pool.idle_bytes(), 0);
    }
}
