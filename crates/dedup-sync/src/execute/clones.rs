//! Pairs of devices between which the file system refused a clone for a reason that holds for
//! every file (another file system, or one without reflinks), so that `--reflink auto` asks
//! once per pair instead of once per file; and, the same way, pairs between which the kernel's
//! copy (`copy_file_range`) was refused, so that their files go through a buffer at once. A refusal that can be the file's own (`EINVAL`:
//! btrfs refuses to clone between a copy-on-write and a no-copy-on-write file) is not
//! remembered.

use std::io;
use std::sync::Mutex;

use rustix::io::Errno;

/// The (source device, destination device) pairs that refuse clones, and those that refuse
/// the kernel's copy.
#[derive(Debug, Default)]
pub struct Refused(Mutex<Vec<(u64, u64)>>, Mutex<Vec<(u64, u64)>>);

impl Refused {
    /// A clone from `src_dev` to `dst_dev` was refused before.
    pub fn has(&self, src_dev: u64, dst_dev: u64) -> bool {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).contains(&(src_dev, dst_dev))
    }

    /// Remember the pair when `e`, the refusal of one clone, holds for every file of the pair.
    pub fn learn(&self, src_dev: u64, dst_dev: u64, e: &io::Error) {
        let every_file = [Errno::XDEV, Errno::OPNOTSUPP, Errno::NOTTY]
            .iter()
            .any(|errno| e.raw_os_error() == Some(errno.raw_os_error()));
        let mut pairs = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if every_file && !pairs.contains(&(src_dev, dst_dev)) {
            pairs.push((src_dev, dst_dev));
        }
    }

    /// The kernel's copy from `src_dev` to `dst_dev` was refused before.
    pub fn kernel_copy_refused(&self, src_dev: u64, dst_dev: u64) -> bool {
        self.1.lock().unwrap_or_else(|e| e.into_inner()).contains(&(src_dev, dst_dev))
    }

    /// Remember that the kernel's copy is refused for every file of the pair.
    pub fn learn_kernel_copy_refused(&self, src_dev: u64, dst_dev: u64) {
        let mut pairs = self.1.lock().unwrap_or_else(|e| e.into_inner());
        if !pairs.contains(&(src_dev, dst_dev)) {
            pairs.push((src_dev, dst_dev));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_refusals_for_every_file_are_remembered() {
        let refused = Refused::default();
        refused.learn(1, 2, &io::Error::from_raw_os_error(Errno::INVAL.raw_os_error()));
        assert!(!refused.has(1, 2), "EINVAL can be one file's own");
        refused.learn(1, 2, &io::Error::from_raw_os_error(Errno::OPNOTSUPP.raw_os_error()));
        assert!(refused.has(1, 2));
        assert!(!refused.has(2, 1), "a pair is ordered");
        refused.learn(1, 3, &io::Error::from_raw_os_error(Errno::XDEV.raw_os_error()));
        assert!(refused.has(1, 3));
        assert!(!refused.kernel_copy_refused(1, 3), "a refused clone says nothing of copies");
    }

    #[test]
    fn kernel_copy_refusals_are_remembered_per_ordered_pair() {
        let refused = Refused::default();
        refused.learn_kernel_copy_refused(1, 2);
        assert!(refused.kernel_copy_refused(1, 2));
        assert!(!refused.kernel_copy_refused(2, 1));
        assert!(!refused.has(1, 2), "a refused copy says nothing of clones");
    }
}
