//! Pseudo file systems (`/proc`, `/sys`, debugfs…), whose files the kernel makes up as they are
//! read: their size says nothing (0 for most of `/proc`, 4096 for most of `/sys`) and some never
//! end (`/proc/PID/pagemap` describes the whole address space). A backup reads such a file up to
//! [`PSEUDO_FILE_LIMIT`] and takes its size from what it read; other files are read up to the
//! size their `stat` gave. Which file system a file is on is asked once per device.

use std::collections::HashMap;
use std::os::fd::AsFd;
use std::sync::{PoisonError, RwLock};

/// The most a backup reads of one file of a pseudo file system (`/proc/kallsyms` is a few MiB;
/// anything longer is not a file anyone restores).
pub const PSEUDO_FILE_LIMIT: u64 = 16 << 20;

/// `statfs` magic numbers of the file systems whose contents are made up on reading (the
/// kernel's `include/uapi/linux/magic.h`).
const PSEUDO: [u64; 14] = [
    0x9fa0,      // proc
    0x6265_6572, // sysfs
    0x6462_6720, // debugfs
    0x7472_6163, // tracefs
    0x7363_6673, // securityfs
    0x0027_e0eb, // cgroup
    0x6367_7270, // cgroup2
    0x6265_6570, // configfs
    0xcafe_4a11, // bpf
    0x6165_676c, // pstore
    0xde5e_81e4, // efivarfs
    0xf97c_ff8c, // selinuxfs
    0x4341_5d53, // smackfs
    0x4249_4e4d, // binfmt_misc
];

/// Whether the file system of `fd` is a pseudo file system (false when `fstatfs` fails: the
/// file is then read as any other, up to its size).
fn on_pseudo_fs(fd: impl AsFd) -> bool {
    rustix::fs::fstatfs(fd).is_ok_and(|st| PSEUDO.contains(&(st.f_type as u64)))
}

/// The answer for each device met so far.
#[derive(Debug, Default)]
pub struct PseudoDevices {
    known: RwLock<HashMap<u64, bool>>,
}

impl PseudoDevices {
    /// Whether `fd`, a file of device `dev`, is on a pseudo file system.
    pub fn contains(&self, dev: u64, fd: impl AsFd) -> bool {
        let known = self.known.read().unwrap_or_else(PoisonError::into_inner).get(&dev).copied();
        if let Some(pseudo) = known {
            return pseudo;
        }
        let pseudo = on_pseudo_fs(fd);
        self.known.write().unwrap_or_else(PoisonError::into_inner).insert(dev, pseudo);
        pseudo
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_is_a_pseudo_file_system_and_a_temporary_directory_is_not() {
        let devices = PseudoDevices::default();
        let proc = std::fs::File::open("/proc/self/status").unwrap();
        assert!(devices.contains(1, &proc));
        let dir = tempfile::tempdir().unwrap();
        let plain = std::fs::File::create(dir.path().join("f")).unwrap();
        assert!(!devices.contains(2, &plain));
        // Asked once per device: the answer for device 1 stands whatever the file.
        assert!(devices.contains(1, &plain));
    }
}
