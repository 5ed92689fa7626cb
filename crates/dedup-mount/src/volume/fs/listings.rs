//! What `readdir` serves from: a directory's names as they were when it was opened (or rewound),
//! kept per open directory handle. Reading on from an offset then returns every name that was
//! there exactly once, however many are created or removed meanwhile — `readdir` and `unlink`
//! in one loop empty a directory — and a large directory is copied out of the table once per
//! listing, not once per buffer the kernel asks for.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use rustix::io::Errno as Code;

use crate::volume::table::{Ino, Table};

/// A directory's entries, `.` and `..` first; the offset after entry `n` is `n + 1`.
pub(super) type Listing = Vec<(Box<[u8]>, Ino)>;

/// The listings of the open directory handles.
#[derive(Default)]
pub(super) struct Listings {
    next: AtomicU64,
    open: Mutex<HashMap<u64, Arc<Listing>>>,
}

impl Listings {
    /// A handle for a directory being opened (its listing is taken at its first read).
    pub fn open(&self) -> u64 {
        // Handle 0 is what a kernel that did not open the directory passes.
        self.next.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// Directory `ino`'s listing for a read of handle `fh` from `offset`: taken from `table`
    /// now when the read starts at 0 (`opendir`, `rewinddir`) or the handle has none yet.
    pub fn for_read(
        &self,
        table: &Table,
        ino: Ino,
        fh: u64,
        offset: u64,
    ) -> Result<Arc<Listing>, Code> {
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        if offset != 0 {
            if let Some(listing) = open.get(&fh) {
                return Ok(Arc::clone(listing));
            }
        }
        let listing = Arc::new(listing_of(table, ino)?);
        if fh != 0 {
            open.insert(fh, Arc::clone(&listing));
        }
        Ok(listing)
    }

    /// `releasedir` of handle `fh`.
    pub fn release(&self, fh: u64) {
        self.open.lock().unwrap_or_else(PoisonError::into_inner).remove(&fh);
    }
}

fn listing_of(table: &Table, ino: Ino) -> Result<Listing, Code> {
    let (parent, entries) = table.listing(ino)?;
    let dots = [(Box::from(&b"."[..]), ino), (Box::from(&b".."[..]), parent)];
    Ok(dots
        .into_iter()
        .chain(entries.into_iter().map(|(name, child)| (name.into(), child)))
        .collect())
}

/// The entries of `listing` from `offset` on, each with the offset that continues after it.
pub(super) fn from(listing: &Listing, offset: u64) -> impl Iterator<Item = (u64, &[u8], Ino)> {
    let skip = usize::try_from(offset).unwrap_or(usize::MAX);
    listing.iter().enumerate().skip(skip).map(|(n, (name, ino))| (n as u64 + 1, &name[..], *ino))
}
