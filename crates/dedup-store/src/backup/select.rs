//! restic's backup selection by what a directory holds and by size: `--exclude-caches`,
//! `--exclude-if-present NAME` and `--exclude-larger-than SIZE`, applied to each listing the
//! walk hands the backup (the name globs are the walk's own, set in its options).

use std::ffi::OsStr;
use std::io::Read;
use std::os::fd::BorrowedFd;
use std::os::unix::ffi::OsStrExt;

use dedup_scan::{Entry, EntryKind};

/// The tag file of a cache directory (the Cache Directory Tagging Specification).
const CACHE_TAG: &[u8] = b"CACHEDIR.TAG";
/// What a valid cache tag starts with.
const CACHE_SIGNATURE: &[u8] = b"Signature: 8a477f597d28d172789f06886806bc55";

/// Which entries of a listing a backup leaves out besides the exclusion globs.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    /// Regular files larger than this many bytes are left out.
    pub larger_than: Option<u64>,
    /// A directory holding an entry of one of these names keeps only that entry.
    pub if_present: Vec<Vec<u8>>,
    /// A directory holding a valid `CACHEDIR.TAG` keeps only the tag.
    pub caches: bool,
}

impl Selection {
    /// The tag entries that make the directory `fd` keep only them; empty when none does.
    pub fn tags<'e>(&self, fd: BorrowedFd<'_>, entries: &'e [Entry]) -> Vec<&'e [u8]> {
        let mut tags = Vec::new();
        for entry in entries {
            let name = entry.name.as_slice();
            if self.if_present.iter().any(|tag| tag == name)
                || (self.caches && name == CACHE_TAG && is_cache_tag(fd, entry))
            {
                tags.push(name);
            }
        }
        tags
    }

    /// True when `entry` is left out, given the `tags` of its directory.
    pub fn leaves_out(&self, entry: &Entry, tags: &[&[u8]]) -> bool {
        if !tags.is_empty() && !tags.contains(&entry.name.as_slice()) {
            return true;
        }
        let size = entry.meta.as_ref().filter(|m| m.kind == EntryKind::File).map(|m| m.size);
        matches!((self.larger_than, size), (Some(limit), Some(size)) if size > limit)
    }
}

/// True when the regular file `entry` in `fd` starts with the cache tag's signature; one that
/// cannot be read is no tag (its directory is then backed up whole, the safe side).
fn is_cache_tag(fd: BorrowedFd<'_>, entry: &Entry) -> bool {
    if entry.kind != EntryKind::File {
        return false;
    }
    let Ok(file) = dedup_scan::open_content_at(fd, OsStr::from_bytes(&entry.name)) else {
        return false;
    };
    let mut start = Vec::with_capacity(CACHE_SIGNATURE.len());
    let read = file.take(CACHE_SIGNATURE.len() as u64).read_to_end(&mut start);
    read.is_ok() && start == CACHE_SIGNATURE
}
