//! Reading ahead in an order of the caller's choosing: one thread asks the kernel for each item's
//! bytes in turn (`posix_fadvise(WILLNEED)`, which queues the reads and returns), and the
//! caller's threads then read the items from the page cache in whatever order their work needs,
//! each first waiting until its item has been asked for.
//!
//! On a disk that serves one request at a time in the order they come, the order of the requests
//! is the order of the head's travels. Readers on several threads send theirs in the order the
//! threads happen to run, and a reader that compares whole classes of files sends them in the
//! order of its classes; one thread asking in the order of the disk (`crate::layout`) keeps the
//! head sweeping while the readers, however many and in whatever order, wait for pages already
//! on their way instead of sending requests of their own. Nothing is decided from what is read
//! ahead: it only warms the page cache, so a page evicted before its reader comes is read again
//! as it would have been without it.

use std::fs::File;
use std::sync::{Condvar, Mutex, PoisonError};

use rustix::fs::{fadvise, Advice};

use crate::read::together::{will_need_together, Wanted};

/// How far the read-ahead has got; readers wait on it.
pub struct ReadAhead {
    /// Items asked for so far (`usize::MAX` once the thread has ended).
    requested: Mutex<usize>,
    moved: Condvar,
}

impl ReadAhead {
    fn new() -> ReadAhead {
        ReadAhead { requested: Mutex::new(0), moved: Condvar::new() }
    }

    /// Wait until item `index` has been asked for (or the read-ahead has ended): reading it from
    /// then on finds its pages in the page cache or on their way there, and sends no request of
    /// its own ahead of the items before it.
    pub fn wait_for(&self, index: usize) {
        let mut requested = self.requested.lock().unwrap_or_else(PoisonError::into_inner);
        while *requested <= index {
            requested = self.moved.wait(requested).unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// Items asked for so far.
    pub fn requested(&self) -> usize {
        *self.requested.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn advance(&self, to: usize) {
        let mut requested = self.requested.lock().unwrap_or_else(PoisonError::into_inner);
        *requested = (*requested).max(to);
        self.moved.notify_all();
    }
}

/// Ends the read-ahead when dropped, also by a panic, so that no reader waits for it forever.
struct Ends<'a>(&'a ReadAhead);

impl Drop for Ends<'_> {
    fn drop(&mut self) {
        self.0.advance(usize::MAX);
    }
}

/// Items whose ranges the thread asks for in one call (`crate::read::together`): enough that
/// the reads of files lying back to back merge into requests of the device's largest size, few
/// enough that the first reader does not wait long for its item.
const BATCH_ITEMS: usize = 128;
/// Bytes asked for in one call at most.
const BATCH_BYTES: u64 = 32 << 20;

/// Run `body` while a thread asks, in order, for the bytes of items `0..count` (`request(i)`
/// opens item `i` and says which range of it is wanted, or `None` for nothing); returns what
/// `body` returns. Ranges of one piece or less are asked for a batch at a time in one call
/// (`crate::read::together`), so that files lying one after another are read in merged
/// requests; a longer range is asked for on its own ([`will_need`]). An item counts as asked
/// for once its batch was. When `body` returns first, the thread stops after the batch it is
/// on. Without a thread (the system refused one) nobody waits: the readers read as they would
/// without read-ahead.
pub fn reading_ahead<R>(
    count: usize,
    request: &(dyn Fn(usize) -> Option<Wanted> + Sync),
    body: impl FnOnce(&ReadAhead) -> R,
) -> R {
    let ahead = ReadAhead::new();
    let done = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|scope| {
        let started =
            std::thread::Builder::new().name("dedup-ahead".into()).spawn_scoped(scope, || {
                let _ends = Ends(&ahead);
                let mut batch = Batch::default();
                for i in 0..count {
                    if done.load(std::sync::atomic::Ordering::Relaxed) {
                        break;
                    }
                    match request(i) {
                        Some(wanted) if wanted.len <= wanted.piece => batch.push(wanted),
                        Some(wanted) => {
                            // In the order of the items: what came before first.
                            batch.ask();
                            will_need(&wanted.file, wanted.offset, wanted.len, wanted.piece);
                        }
                        None => {}
                    }
                    if batch.is_empty() || batch.full() || i + 1 == count {
                        batch.ask();
                        ahead.advance(i + 1);
                    }
                }
                // Left unasked only when the body returned first: nobody wants it any more.
            });
        if started.is_err() {
            ahead.advance(usize::MAX);
        }
        let result = {
            let _ends = Ends(&ahead);
            body(&ahead)
        };
        done.store(true, std::sync::atomic::Ordering::Relaxed);
        result
    })
}

/// Ranges waiting to be asked for together.
#[derive(Default)]
struct Batch {
    wanted: Vec<Wanted>,
    bytes: u64,
}

impl Batch {
    fn push(&mut self, wanted: Wanted) {
        self.bytes += wanted.len;
        self.wanted.push(wanted);
    }

    fn is_empty(&self) -> bool {
        self.wanted.is_empty()
    }

    fn full(&self) -> bool {
        self.wanted.len() >= BATCH_ITEMS || self.bytes >= BATCH_BYTES
    }

    /// Ask for every range in one call; those it could not map, one by one.
    fn ask(&mut self) {
        if self.wanted.is_empty() {
            return;
        }
        let asked = will_need_together(&self.wanted);
        for (wanted, asked) in self.wanted.iter().zip(asked) {
            if !asked {
                will_need(&wanted.file, wanted.offset, wanted.len, wanted.piece);
            }
        }
        self.wanted.clear();
        self.bytes = 0;
    }
}

/// Ask the kernel to read `len` bytes of `file` from `offset` into the page cache, and return
/// without waiting. The kernel reads at most one device request's worth (`piece`: the larger
/// of the device's largest request and its read-ahead window, `crate::layout::read_ahead_piece`)
/// per call and drops the rest, so a longer range is asked for a piece at a time.
pub fn will_need(file: &File, offset: u64, len: u64, piece: u64) {
    let piece = piece.max(4096);
    let end = offset.saturating_add(len);
    let mut at = offset;
    while at < end {
        let this = (end - at).min(piece);
        // Only a hint: a file system that ignores it is read when its reader comes.
        let _ = fadvise(file, at, std::num::NonZeroU64::new(this), Advice::WillNeed);
        at += this;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};

    #[test]
    fn every_item_is_asked_for_once_in_order_and_readers_wait_for_theirs() {
        let asked = Mutex::new(Vec::new());
        let seen = AtomicUsize::new(0);
        let request = |i: usize| {
            std::thread::sleep(std::time::Duration::from_micros(200));
            asked.lock().unwrap().push(i);
            None
        };
        reading_ahead(50, &request, |ahead| {
            for i in (0..50).rev() {
                ahead.wait_for(i);
                // Waiting for item i means items up to i were asked for.
                assert!(asked.lock().unwrap().len() > i);
                seen.fetch_add(1, SeqCst);
            }
        });
        assert_eq!(*asked.lock().unwrap(), (0..50).collect::<Vec<_>>());
        assert_eq!(seen.load(SeqCst), 50);
    }

    #[test]
    fn a_body_that_returns_early_stops_the_thread_and_a_panic_releases_the_readers() {
        let asked = AtomicUsize::new(0);
        let request = |_| {
            asked.fetch_add(1, SeqCst);
            std::thread::sleep(std::time::Duration::from_millis(1));
            None
        };
        reading_ahead(100_000, &request, |ahead| ahead.wait_for(2));
        assert!(asked.load(SeqCst) < 100_000);
        // A request that panics ends the read-ahead: readers are not left waiting.
        let outcome = std::panic::catch_unwind(|| {
            let request = |i| {
                assert_ne!(i, 3, "item 3 fails");
                None
            };
            reading_ahead(10, &request, |ahead| ahead.wait_for(9))
        });
        assert!(outcome.is_err(), "the panic goes on in the caller");
    }

    #[test]
    fn reading_ahead_fills_the_page_cache_without_changing_a_byte() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let bytes: Vec<u8> = (0..300_000).map(|i| (i % 253) as u8).collect();
        std::fs::write(&path, &bytes).unwrap();
        let file = File::open(&path).unwrap();
        will_need(&file, 0, bytes.len() as u64, 64 << 10);
        will_need(&file, 299_000, 10_000, 64 << 10);
        assert_eq!(std::fs::read(&path).unwrap(), bytes);
    }

    /// Items of one piece or less are asked for a batch at a time, longer ones on their own; a
    /// reader of any item is let go once its batch was asked for, and every item is, also the
    /// last ones of an unfinished batch and files that cannot be opened.
    #[test]
    fn small_ranges_are_asked_for_in_batches_and_every_reader_is_let_go() {
        let dir = tempfile::tempdir().unwrap();
        let count = BATCH_ITEMS * 2 + 7;
        let mut contents = Vec::new();
        for n in 0..count {
            let len = if n % 50 == 0 { 600_000 } else { 1 + n * 37 };
            let bytes: Vec<u8> = (0..len).map(|i| (i * 3 + n) as u8).collect();
            let path = dir.path().join(n.to_string());
            if n != 5 {
                std::fs::write(&path, &bytes).unwrap();
            }
            contents.push((path, bytes));
        }
        let opened = AtomicUsize::new(0);
        let request = |n: usize| {
            let (path, bytes) = &contents[n];
            let file = File::open(path).ok()?;
            opened.fetch_add(1, SeqCst);
            Some(Wanted { file, offset: 0, len: bytes.len() as u64, piece: 128 << 10 })
        };
        reading_ahead(count, &request, |ahead| {
            for n in (0..count).rev() {
                ahead.wait_for(n);
                assert!(ahead.requested() > n);
            }
        });
        assert_eq!(opened.load(SeqCst), count - 1, "all but the missing file");
        for (path, bytes) in contents.iter().filter(|(path, _)| path.exists()) {
            assert_eq!(&std::fs::read(path).unwrap(), bytes);
        }
    }
}
