//! Set-user-ID and set-group-ID, cleared by the volume on write, truncate and chown as Linux
//! clears them on its own file systems. The volume asks the kernel for
//! `FUSE_HANDLE_KILLPRIV_V2`: without it the kernel asks for `security.capability` before every
//! `write(2)` (a round trip per write) and clears the bits itself; with it the kernel asks once
//! per inode (it still removes a file capability itself, by `removexattr`) and leaves the mode
//! bits to the file system.
//!
//! Linux's rules (the mount tests hold the volume to what tmpfs does): a write or truncate by a
//! caller without CAP_FSETID clears set-user-ID, and set-group-ID when the group may execute
//! (without group execute it marks mandatory locking and stays); a chown of anything but a
//! directory clears set-user-ID whoever asks, and set-group-ID when the group may execute or
//! the caller is neither in the file's group nor holds CAP_FSETID. The kernel says so on a
//! write (`FUSE_WRITE_KILL_SUIDGID`); on a truncate it says so in a flag fuser does not pass
//! on, so the caller is looked at in `/proc`, and only when the file has a bit to lose.

use std::fs;

use super::super::table::Inode;

const SET_UID: u32 = 0o4000;
const SET_GID: u32 = 0o2000;
const GROUP_EXECUTE: u32 = 0o0010;

/// The bit of CAP_FSETID in a capability set.
const CAP_FSETID: u64 = 1 << 4;

/// What the volume knows of the process behind a request, for the rules above.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Caller {
    /// Holds CAP_FSETID in the user namespace the volume runs in.
    pub may_keep_ids: bool,
    /// Its file-system group and supplementary groups.
    pub groups: Vec<u32>,
}

impl Caller {
    /// The process `pid` (as the kernel names it to the volume), read from `/proc`. One that
    /// cannot be read (gone, in a pid namespace the volume does not see, or in another user
    /// namespace) counts as holding no capability and no group: the bits are then cleared,
    /// which is the side that never leaves a privilege behind.
    pub fn of(pid: u32) -> Caller {
        if pid == 0 || !same_user_namespace(pid) {
            return Caller::default();
        }
        match fs::read_to_string(format!("/proc/{pid}/status")) {
            Ok(status) => Caller::from_status(&status),
            Err(_) => Caller::default(),
        }
    }

    /// Parses `/proc/PID/status`: `CapEff` (hexadecimal) and the groups of `Gid` (its fourth
    /// field, the file-system group) and `Groups`.
    fn from_status(status: &str) -> Caller {
        let mut caller = Caller::default();
        for line in status.lines() {
            if let Some(caps) = line.strip_prefix("CapEff:") {
                let caps = u64::from_str_radix(caps.trim(), 16).unwrap_or(0);
                caller.may_keep_ids = caps & CAP_FSETID != 0;
            } else if let Some(gids) = line.strip_prefix("Gid:") {
                caller
                    .groups
                    .extend(gids.split_whitespace().nth(3).and_then(|g| g.parse::<u32>().ok()));
            } else if let Some(groups) = line.strip_prefix("Groups:") {
                caller
                    .groups
                    .extend(groups.split_whitespace().filter_map(|g| g.parse::<u32>().ok()));
            }
        }
        caller
    }
}

/// Whether process `pid` is in the volume's user namespace (its capabilities are then the
/// ones the kernel checked against).
fn same_user_namespace(pid: u32) -> bool {
    match (fs::read_link("/proc/self/ns/user"), fs::read_link(format!("/proc/{pid}/ns/user"))) {
        (Ok(own), Ok(its)) => own == its,
        _ => false,
    }
}

/// Whether `inode` has a bit a write, truncate or chown may clear.
pub(super) fn has_ids(inode: &Inode) -> bool {
    inode.mode & (SET_UID | SET_GID) != 0
}

/// A write or truncate by a caller without CAP_FSETID.
pub(super) fn clear_on_write(inode: &mut Inode) {
    inode.mode &= !SET_UID;
    if inode.mode & GROUP_EXECUTE != 0 {
        inode.mode &= !SET_GID;
    }
}

/// A chown (of owner, group or both) by `caller`, read before the owner changes.
pub(super) fn clear_on_chown(inode: &mut Inode, caller: impl FnOnce() -> Caller) {
    if inode.dir.is_some() || !has_ids(inode) {
        return;
    }
    inode.mode &= !SET_UID;
    if inode.mode & SET_GID == 0 {
        return;
    }
    let clear_gid = inode.mode & GROUP_EXECUTE != 0 || {
        let caller = caller();
        !caller.may_keep_ids && !caller.groups.contains(&inode.gid)
    };
    if clear_gid {
        inode.mode &= !SET_GID;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dedup_store::format::NodeKind;

    fn file(mode: u32, gid: u32) -> Inode {
        Inode::new(NodeKind::File, mode, 0, gid, 0)
    }

    #[test]
    fn a_status_file_gives_the_capability_and_the_groups() {
        let status = "Name:\tsh\nUid:\t0\t0\t0\t0\nGid:\t5\t6\t7\t8\nGroups:\t10 20 \n\
                      CapInh:\t0000000000000000\nCapEff:\t000001ffffffffff\n";
        let caller = Caller::from_status(status);
        assert!(caller.may_keep_ids);
        assert_eq!(caller.groups, [8, 10, 20]);
        let without = Caller::from_status("CapEff:\t000001ffffffffef\nGroups:\n");
        assert!(!without.may_keep_ids);
        assert!(without.groups.is_empty());
    }

    #[test]
    fn this_process_is_read_from_proc() {
        let me = Caller::of(std::process::id());
        let gid = rustix::process::getegid().as_raw();
        assert!(me.groups.contains(&gid), "{me:?}");
        assert_eq!(Caller::of(0), Caller::default());
    }

    #[test]
    fn a_write_clears_set_group_id_only_with_group_execute() {
        let mut inode = file(0o6755, 0);
        clear_on_write(&mut inode);
        assert_eq!(inode.mode, 0o755);
        let mut inode = file(0o6745, 0);
        clear_on_write(&mut inode);
        assert_eq!(inode.mode, 0o2745);
    }

    #[test]
    fn a_chown_keeps_set_group_id_without_group_execute_for_a_member_or_a_holder() {
        let member = || Caller { may_keep_ids: false, groups: vec![7] };
        let holder = || Caller { may_keep_ids: true, groups: vec![] };
        let stranger = Caller::default;
        for (caller, kept) in [(&member as &dyn Fn() -> Caller, true), (&holder, true)] {
            let mut inode = file(0o6745, 7);
            clear_on_chown(&mut inode, caller);
            assert_eq!(inode.mode, if kept { 0o2745 } else { 0o745 });
        }
        let mut inode = file(0o6745, 7);
        clear_on_chown(&mut inode, stranger);
        assert_eq!(inode.mode, 0o745);
        let mut inode = file(0o6755, 7);
        clear_on_chown(&mut inode, || unreachable!("group execute decides alone"));
        assert_eq!(inode.mode, 0o755);
    }
}
