//! The up-to-date test: is a destination entry already what the source entry would make of it?
//! Type, size and modification time decide whether content is written again (with
//! `--checksum`, the content itself); the rest of the metadata whether it is updated in place.
//! Modification times are compared to the nanosecond, or to the destination file system's
//! precision where it keeps less ([`crate::precision`]).

use dedup_scan::{Entry, EntryKind, Metadata, Xattr};

/// How two entries compare, and what making the destination right takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Nothing to do.
    Same,
    /// Only metadata differs (mode, owner, times, extended attributes).
    Meta,
    /// The content must be written again.
    Content,
    /// Size and time match, but that cannot settle it: `--checksum` was asked for, or the
    /// source was modified so close to when the destination was written that an edit in the
    /// same clock tick would leave both stamps alike. The bytes decide; `meta` says whether the
    /// metadata differs as well.
    Verify {
        /// The metadata differs besides.
        meta: bool,
    },
    /// The entry cannot be updated in place (another kind, another symlink target, another
    /// device number): it is made anew.
    Replace,
}

/// What the comparison takes into account.
pub struct Rules<'a> {
    /// Owner and group are compared (and set): only a privileged process can set them.
    pub owner: bool,
    /// Extended attributes of every namespace are compared, not only `user.*` (a privileged
    /// process can set `trusted.*` and `security.*`).
    pub all_xattrs: bool,
    /// `--checksum`: content decides, not the modification time.
    pub checksum: bool,
    /// The destination's timestamp granularity in nanoseconds, probed on first need.
    pub precision: &'a (dyn Fn() -> i64 + Sync),
}

/// A source modified less than this before the destination copy was last changed may have been
/// edited again within one clock tick of the copy (ticks are at most 10 ms on Linux; this leaves
/// a margin for timestamps taken on another machine's clock).
const RACY_NS: i64 = 50_000_000;

/// Where the source keeps whole seconds only (its sub-second part is zero), an edit in the same
/// second (FAT: two seconds) leaves the stamp alike.
const RACY_COARSE_NS: i64 = 2_000_000_000;

/// The longest a stamp in nanoseconds stays the same while its file is edited: the kernel's
/// coarse clock moves once per tick, at most 10 ms (`HZ` 100).
const TICK_NS: i64 = 10_000_000;

/// Until when a file last modified at `mtime_ns` may be edited again without its stamp
/// changing, with the margins above: a copy finished before then cannot be trusted on its stamp
/// alone.
pub(crate) fn racy_until(mtime_ns: i64) -> i64 {
    let margin = if mtime_ns.rem_euclid(1_000_000_000) == 0 { RACY_COARSE_NS } else { RACY_NS };
    mtime_ns.saturating_add(margin)
}

/// Until when a file last modified at `mtime_ns` may be edited again without its stamp changing,
/// on this machine's clock: a copy whose reading began later than that read the last content
/// that stamp can stand for.
pub(crate) fn tick_until(mtime_ns: i64) -> i64 {
    let tick = if mtime_ns.rem_euclid(1_000_000_000) == 0 { RACY_COARSE_NS } else { TICK_NS };
    mtime_ns.saturating_add(tick)
}

impl Rules<'_> {
    /// Compare source entry `src` with destination entry `dst` of the same name.
    pub fn compare(&self, src: &Entry, dst: &Entry) -> Verdict {
        let (Some(s), Some(d)) = (src.meta.as_ref(), dst.meta.as_ref()) else {
            return Verdict::Replace;
        };
        if s.kind != d.kind {
            return Verdict::Replace;
        }
        match s.kind {
            EntryKind::File => self.compare_file(src, s, dst, d),
            EntryKind::Symlink if src.target != dst.target => Verdict::Replace,
            EntryKind::CharDevice | EntryKind::BlockDevice if s.rdev != d.rdev => Verdict::Replace,
            _ => self.meta_verdict(src, s, dst, d, true),
        }
    }

    fn compare_file(&self, src: &Entry, s: &Metadata, dst: &Entry, d: &Metadata) -> Verdict {
        if s.size != d.size {
            return Verdict::Content;
        }
        if self.checksum {
            return Verdict::Verify {
                meta: self.meta_verdict(src, s, dst, d, true) == Verdict::Meta,
            };
        }
        if !self.same_time(s.mtime_ns, d.mtime_ns) {
            return Verdict::Content;
        }
        if s.size > 0 && racy_until(s.mtime_ns) > d.ctime_ns {
            return Verdict::Verify {
                meta: self.meta_verdict(src, s, dst, d, false) == Verdict::Meta,
            };
        }
        self.meta_verdict(src, s, dst, d, false)
    }

    /// [`Verdict::Meta`] when mode, owner, extended attributes or (with `times`) the
    /// modification time differ, else [`Verdict::Same`].
    fn meta_verdict(
        &self,
        src: &Entry,
        s: &Metadata,
        dst: &Entry,
        d: &Metadata,
        times: bool,
    ) -> Verdict {
        let link = s.kind == EntryKind::Symlink;
        let differs = (!link && self.mode_for(s) != d.mode)
            || (self.owner && (s.uid != d.uid || s.gid != d.gid))
            || (!link && !self.same_xattrs(&src.xattrs, &dst.xattrs))
            || (times && !self.same_time(s.mtime_ns, d.mtime_ns));
        if differs {
            Verdict::Meta
        } else {
            Verdict::Same
        }
    }

    /// True when `dst_ns` is `src_ns` as the destination keeps it: equal, or equal once cut to
    /// the destination's precision. The precision is probed only when the two differ by less
    /// than two seconds and the destination's could be the source's cut short.
    pub fn same_time(&self, src_ns: i64, dst_ns: i64) -> bool {
        if src_ns == dst_ns {
            return true;
        }
        if dst_ns > src_ns || src_ns - dst_ns >= 2_000_000_000 || dst_ns % 1000 != 0 {
            return false;
        }
        let grain = (self.precision)();
        grain > 1 && src_ns.div_euclid(grain) * grain == dst_ns
    }

    /// The extended attributes this process can set, compared as sets.
    pub fn same_xattrs(&self, src: &[Xattr], dst: &[Xattr]) -> bool {
        if src.is_empty() && dst.is_empty() {
            return true;
        }
        let keep = |x: &&Xattr| self.settable(&x.name);
        src.iter().filter(keep).eq(dst.iter().filter(keep))
    }

    /// An attribute this process may set (and so compares and removes).
    pub fn settable(&self, name: &[u8]) -> bool {
        self.all_xattrs || name.starts_with(b"user.")
    }

    /// The mode a copy of `s` is given and compared with: the source's, less the set-user-ID
    /// bit of a file whose owner is not kept and the set-group-ID bit of one whose group is not,
    /// as `cp -p` does. Kept, they would hand whoever may run the copy this user's rights (or
    /// group's), which the source never granted. A directory keeps both (its set-group-ID bit
    /// only chooses the group of what is made in it).
    pub fn mode_for(&self, s: &Metadata) -> u32 {
        if self.owner || s.kind == EntryKind::Dir {
            return s.mode;
        }
        let (uid, gid) = running_ids();
        let mut mode = s.mode;
        if s.uid != uid {
            mode &= !SET_UID;
        }
        if s.gid != gid {
            mode &= !SET_GID;
        }
        mode
    }
}

const SET_UID: u32 = 0o4000;
const SET_GID: u32 = 0o2000;

/// The user and group this process runs as, which an unprivileged copy gets.
fn running_ids() -> (u32, u32) {
    static IDS: std::sync::OnceLock<(u32, u32)> = std::sync::OnceLock::new();
    *IDS.get_or_init(|| (rustix::process::geteuid().as_raw(), rustix::process::getegid().as_raw()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(kind: EntryKind, size: u64, mtime_ns: i64) -> Metadata {
        Metadata {
            kind,
            mode: 0o644,
            uid: 1000,
            gid: 1000,
            size,
            blocks: 0,
            nlink: 1,
            dev: 1,
            ino: 1,
            rdev: 0,
            atime_ns: 0,
            mtime_ns,
            ctime_ns: mtime_ns + 10_000_000_000,
        }
    }

    fn entry(m: Metadata) -> Entry {
        Entry {
            name: b"f".to_vec(),
            kind: m.kind,
            followed: false,
            meta: Some(m),
            target: None,
            xattrs: Vec::new(),
        }
    }

    fn rules(grain: &(dyn Fn() -> i64 + Sync)) -> Rules<'_> {
        Rules { owner: true, all_xattrs: false, checksum: false, precision: grain }
    }

    const T: i64 = 1_700_000_000_123_456_789;

    #[test]
    fn same_stamps_are_up_to_date_and_a_nanosecond_apart_is_not() {
        let r = rules(&|| 1);
        let s = entry(meta(EntryKind::File, 10, T));
        assert_eq!(r.compare(&s, &s.clone()), Verdict::Same);
        assert_eq!(r.compare(&s, &entry(meta(EntryKind::File, 10, T + 1))), Verdict::Content);
        assert_eq!(r.compare(&s, &entry(meta(EntryKind::File, 11, T))), Verdict::Content);
        // An older source replacing a newer file is a change too.
        assert_eq!(r.compare(&entry(meta(EntryKind::File, 10, T - 5)), &s), Verdict::Content);
    }

    #[test]
    fn a_coarse_destination_matches_the_source_cut_to_its_precision_only_when_probed_so() {
        let cut = T / 1_000_000_000 * 1_000_000_000;
        let s = entry(meta(EntryKind::File, 10, T));
        let d = entry(meta(EntryKind::File, 10, cut));
        assert_eq!(rules(&|| 1_000_000_000).compare(&s, &d), Verdict::Same);
        assert_eq!(rules(&|| 1).compare(&s, &d), Verdict::Content);
        let probed = std::sync::atomic::AtomicBool::new(false);
        let grain = || {
            probed.store(true, std::sync::atomic::Ordering::Relaxed);
            1
        };
        assert_eq!(rules(&grain).compare(&s, &s.clone()), Verdict::Same);
        assert!(!probed.into_inner(), "equal stamps need no probe");
    }

    #[test]
    fn set_id_bits_are_kept_only_with_the_owner_or_group_they_belong_to() {
        let (uid, gid) = running_ids();
        let unprivileged = Rules { owner: false, ..rules(&|| 1) };
        let mut m = meta(EntryKind::File, 1, T);
        m.mode = 0o106755;
        (m.uid, m.gid) = (uid.wrapping_add(1), gid.wrapping_add(1));
        assert_eq!(unprivileged.mode_for(&m), 0o100755, "neither kept");
        (m.uid, m.gid) = (uid, gid.wrapping_add(1));
        assert_eq!(unprivileged.mode_for(&m), 0o104755, "the owner kept");
        (m.uid, m.gid) = (uid.wrapping_add(1), gid);
        assert_eq!(unprivileged.mode_for(&m), 0o102755, "the group kept");
        m.uid = uid.wrapping_add(1);
        assert_eq!(rules(&|| 1).mode_for(&m), 0o106755, "owner and group set: all kept");
        let mut d = meta(EntryKind::Dir, 0, T);
        (d.mode, d.gid) = (0o042775, gid.wrapping_add(1));
        assert_eq!(unprivileged.mode_for(&d), 0o042775, "a directory's bit only picks a group");
        // A copy without the bits is up to date, not changed again on every run.
        let src = entry(m);
        let mut copy = m;
        (copy.mode, copy.uid, copy.gid) = (0o102755, uid, gid);
        assert_eq!(unprivileged.compare(&src, &entry(copy)), Verdict::Same);
    }

    #[test]
    fn permission_owner_and_xattr_changes_are_metadata_only() {
        let r = rules(&|| 1);
        let s = entry(meta(EntryKind::File, 10, T));
        let mut d = s.clone();
        d.meta.as_mut().unwrap().mode = 0o600;
        assert_eq!(r.compare(&s, &d), Verdict::Meta);
        let mut d = s.clone();
        d.meta.as_mut().unwrap().uid = 0;
        assert_eq!(r.compare(&s, &d), Verdict::Meta);
        let unprivileged = Rules { owner: false, ..rules(&|| 1) };
        assert_eq!(unprivileged.compare(&s, &d), Verdict::Same);
        let mut d = s.clone();
        d.xattrs.push(Xattr { name: b"user.x".to_vec(), value: b"1".to_vec() });
        assert_eq!(r.compare(&s, &d), Verdict::Meta);
        let mut d = s.clone();
        d.xattrs.push(Xattr { name: b"security.selinux".to_vec(), value: b"1".to_vec() });
        assert_eq!(r.compare(&s, &d), Verdict::Same, "an attribute we could not set is ignored");
    }

    #[test]
    fn kinds_targets_and_devices_replace() {
        let r = rules(&|| 1);
        let f = entry(meta(EntryKind::File, 3, T));
        let d = entry(meta(EntryKind::Dir, 3, T));
        assert_eq!(r.compare(&f, &d), Verdict::Replace);
        let mut a = entry(meta(EntryKind::Symlink, 3, T));
        a.target = Some(b"one".to_vec());
        let mut b = a.clone();
        b.target = Some(b"two".to_vec());
        assert_eq!(r.compare(&a, &b), Verdict::Replace);
        b.target = a.target.clone();
        b.meta.as_mut().unwrap().mode = 0o777;
        assert_eq!(r.compare(&a, &b), Verdict::Same, "a symlink's mode means nothing");
    }

    #[test]
    fn a_copy_written_just_after_the_source_changed_is_verified_and_checksum_always_is() {
        let r = rules(&|| 1);
        let s = entry(meta(EntryKind::File, 10, T));
        let mut d = s.clone();
        d.meta.as_mut().unwrap().ctime_ns = T + 1_000_000;
        assert_eq!(r.compare(&s, &d), Verdict::Verify { meta: false });
        let c = Rules { checksum: true, ..rules(&|| 1) };
        assert_eq!(c.compare(&s, &s.clone()), Verdict::Verify { meta: false });
        let older = entry(meta(EntryKind::File, 10, T - 1));
        assert_eq!(c.compare(&older, &s), Verdict::Verify { meta: true });
    }
}
