//! Read-ahead: background threads that fetch the chunks after a sequential reader's position
//! into the chunk cache, so that the next chunk is usually open before it is asked for. The
//! queue is bounded and a request that does not fit is dropped (the reader then fetches the
//! chunk itself); the threads end when the queue's sender is dropped.

use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Mutex};

use super::chunk_cache::ChunkCache;
use crate::index::Location;

/// Requests waiting at most.
const QUEUE: usize = 64;

/// The sending end of the read-ahead threads' queue.
pub struct ReadAhead {
    requests: SyncSender<Location>,
}

impl ReadAhead {
    /// `threads` threads filling `cache` (none: requests are accepted and never served).
    pub fn start(cache: &Arc<ChunkCache>, threads: usize) -> ReadAhead {
        let (requests, queue) = sync_channel(QUEUE);
        let queue = Arc::new(Mutex::new(queue));
        for n in 0..threads {
            let (cache, queue) = (Arc::clone(cache), Arc::clone(&queue));
            // Without its threads a reader still reads, only without read-ahead.
            let _ = std::thread::Builder::new()
                .name(format!("dedup-read-ahead-{n}"))
                .spawn(move || serve(&cache, &queue));
        }
        ReadAhead { requests }
    }

    /// Asks for the chunk at `location`; false when the queue is full.
    pub fn ask(&self, location: Location) -> bool {
        self.requests.try_send(location).is_ok()
    }
}

/// A read-ahead thread: fetches each requested chunk into the cache (errors are left to the
/// reader, which fetches again and reports them).
fn serve(cache: &ChunkCache, queue: &Mutex<Receiver<Location>>) {
    loop {
        let next = queue.lock().unwrap_or_else(|e| e.into_inner()).recv();
        let Ok(location) = next else { return };
        // A reader asks again for the chunks of its window at every read until one is taken
        // off the queue: a chunk fetched, or being fetched by the other thread, is skipped
        // rather than waited for, which would leave one thread opening chunks.
        if !cache.holds(&location.entry.id) {
            let _ = cache.get(&location);
        }
    }
}
