//! Safe file operations, the layer below the jobs: what acting on duplicates, restoring from
//! the store and mirroring a tree do to a file system, done so that nothing is lost.
//!
//! What it offers:
//! - **Opening relative to a directory** ([`Entry`], [`open_file_at`], [`open_dir_at`]) with
//!   `O_NOFOLLOW`/`AT_SYMLINK_NOFOLLOW`, and **validation** of a file's identity just before a
//!   change ([`open_expected`], [`Opened::still_there`]: device, inode, size, mtime, ctime).
//! - **Comparing** two open files byte for byte ([`same_content`]).
//! - **Replacing** a validated file by a hard link or a symlink through a temporary name and a
//!   rename ([`replace_with_link`], [`replace_with_symlink`]), **removing** and **moving** one
//!   ([`remove`], [`move_to`], never over an existing file, never by copying).
//! - **Sharing extents**: [`dedupe_file`] (`FIDEDUPERANGE`; the kernel compares under lock) and
//!   [`clone_file`] (`FICLONE`); "the file system cannot" is [`FsError::Unsupported`], apart
//!   from real errors.
//! - **Copying** content sparse-aware ([`copy_contents`]): a clone where possible
//!   ([`Reflink`]), else `copy_file_range` over the data ranges (`SEEK_DATA`/`SEEK_HOLE`), else
//!   buffered reads and writes, holes staying holes.
//! - **New files** written under a temporary name and renamed into place ([`TempFile`], or
//!   [`OwnedTempFile`] for many in flight across threads), with an optional fsync of the file
//!   and of its directory ([`Commit`], [`sync_dir`]), and a flush before the name where the
//!   file system may report a failed write only at `close` ([`flush`], [`CloseErrors`]);
//!   their content written without its zero blocks, as holes ([`write_sparse_at`]); their
//!   write-back started early, from one thread, small files first, in an order a disk that
//!   seeks can follow ([`start_write_back_all`]).
//! - **Creating** directories, symlinks, FIFOs, sockets, devices and hard links relative to a
//!   directory ([`create_dir_at`], [`create_symlink_at`], [`create_special_at`],
//!   [`hard_link_at`]), putting one over an existing entry in one rename ([`replace_at`]),
//!   reading a symlink's bytes ([`read_link_at`]) and a directory's names ([`entry_names`]).
//! - **Setting metadata** one field at a time ([`set_owner`], [`set_mode`], [`set_times`],
//!   [`list_xattrs`], [`get_xattr`], [`set_xattr`], [`remove_xattr`]), each failure naming its
//!   field ([`FsError::Metadata`]).
//! - **Working below a tree's root** without following a symlink anywhere on the way
//!   ([`open_dir_beneath`]), renaming over an entry ([`rename_at`]) and removing a whole
//!   subtree ([`remove_tree_at`]): what a mirror does to its destination.
//! - **Cleaning up** our own temporary names left by a crash ([`find_strays`], [`check_stray`],
//!   [`remove_stray`]).
//!
//! Its guarantees:
//! - A name below a directory descriptor is one component and is never followed if it is a
//!   symlink: every call is relative to the descriptor with `O_NOFOLLOW` or
//!   `AT_SYMLINK_NOFOLLOW` (or, where the kernel has no such call, through `/proc/self/fd` on an
//!   entry pinned without following). Only the directory part of a path a caller gives
//!   ([`Entry::open`]) is resolved as any path is.
//! - Nothing is written in place: a replacement is complete under a temporary name before one
//!   `rename` puts it at the final name, so that name always holds the old entry or the whole
//!   new one. Content is written only into the file a caller hands over ([`copy_contents`],
//!   [`clone_file`]: meant for a [`TempFile`]), and an existing file's extents are shared only
//!   by the kernel after it compared them ([`dedupe_file`]).
//! - Only our own temporary names are created and removed: `.dedup-tmp.<16 hex>` and
//!   `.dedup-new.<16 hex>`, created exclusively, and removed by clean-up only when they hold
//!   what a crash of ours would have left there ([`TempKind`]).
//!
//! Libraries never print: everything is returned as values and [`FsError`]s.

mod attrs;
mod beneath;
mod close_errors;
mod compare;
mod copy;
mod create;
mod dirent;
mod error;
mod owned_temp;
mod place;
mod platform;
mod replace;
mod share;
mod sparse_write;
mod stray;
mod temp_file;
#[cfg(test)]
mod test_fs;
mod validate;
mod write_back;
mod xattr;

pub use attrs::{set_mode, set_owner, set_times, Target};
pub use beneath::{open_dir_beneath, remove_tree_at, rename_at};
pub use close_errors::{errors_at_close, CloseErrors};
pub use compare::same_content;
pub use copy::{blocks_cover, copy_contents, copy_data, has_no_holes, Copied, Reflink};
pub use create::{
    create_dir_at, create_special_at, create_symlink_at, hard_link_at, read_link_at, Special,
};
pub use dirent::{open_dir_at, open_file_at, regular, Entry};
pub use error::{Found, FsError, MetaField};
pub use owned_temp::OwnedTempFile;
pub use place::{entry_names, remove_tree_within_fs, replace_at};
pub use replace::{move_precheck, move_to, remove, replace_with_link, replace_with_symlink};
pub use share::{clone_file, dedupe_file};
pub use sparse_write::{is_zero, write_sparse_at, HOLE_BLOCK};
pub use stray::{
    check_stray, check_stray_at, find_strays, is_temp_name, remove_stray, temp_kind, temp_name,
    TempKind,
};
pub use temp_file::{flush, sync_dir, Commit, TempFile};
pub use validate::{open_expected, open_expected_entry, Opened};
pub use write_back::{
    reopen_for_write_back, small_first, start_write_back, start_write_back_all, SMALL_FILE,
};
pub use xattr::{get_xattr, list_xattrs, remove_xattr, set_xattr};
