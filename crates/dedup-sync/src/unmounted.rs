//! Mount points below SRC with nothing mounted on them ([`dedup_core::mount_table`]): mirrored
//! as they stand, `--delete` would empty their part of the mirror. The run treats each as a
//! part of SRC it could not read, which keeps every deletion back, and says why;
//! `--allow-empty-source` mirrors them as they stand. (SRC itself, when it is such a mount
//! point, is caught by the empty-source check.)

use std::os::unix::ffi::OsStringExt;
use std::path::Path;

use crate::tree::Walked;

/// Directories of the walked SRC (paths below it) that `/etc/fstab` names as mount points and
/// on which nothing is mounted, where the mirror holds entries: only those the walk listed (an
/// excluded one is not mirrored), and not those whose mirror is empty or missing (a CD drive's
/// `noauto` mount point, never mounted: nothing of it to lose).
pub fn below(src: &Path, walked: &Walked) -> Vec<Vec<u8>> {
    dedup_core::mount_table::unmounted_below(src)
        .into_iter()
        .map(|rel| rel.into_os_string().into_vec())
        .filter(|rel| {
            let mirrored = walked.dst.dir(rel).is_some_and(|d| !d.entries.is_empty());
            walked.src.dir(rel).is_some() && mirrored
        })
        .collect()
}
