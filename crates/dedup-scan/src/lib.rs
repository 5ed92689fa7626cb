//! The part of the engine that touches the file system: walking trees in parallel into compact
//! records, selecting files, and opening and reading them safely. The finder, and later the store
//! and sync, build on it.

pub mod crew;
pub mod io;
mod open;
mod paths;
mod read_buf;
mod select;
mod walk;

pub use open::{
    meta_from_stat, meta_of, open_dir, open_for_read, open_recorded, OpenRecordedError,
};
pub use paths::{NodeId, PathArena, PathWriter};
pub use read_buf::ReadBuf;
pub use select::{Selection, SelectionError};
pub use walk::{walk, FileEntry, Root, Tree};
