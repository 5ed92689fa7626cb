//! The part of the engine that touches the file system for every job: walking trees in parallel
//! and handing each directory's entries to the job's visitor, the per-device I/O scheduler, and
//! opening and reading files safely. The finder, the store and sync build on it.

mod cachestat;
pub mod crew;
mod fiemap;
pub mod io;
pub mod layout;
mod open;
mod paths;
pub mod read;
mod walk;
pub mod xattr_at;

pub use open::{
    check_recorded, is_recorded, meta_from_stat, meta_of, open_content_at, open_dir, open_dir_at,
    open_for_read, open_recorded, OpenRecordedError,
};
pub use paths::{NodeId, PathArena, PathWriter};
pub use read::ReadBuf;
pub use walk::{
    read_xattrs, read_xattrs_at, read_xattrs_fd, walk, Detail, Entry, EntryFilter, EntryKind,
    Listing, Metadata, RootVisit, Visitor, WalkOptions, WalkOptionsError, Xattr,
};
