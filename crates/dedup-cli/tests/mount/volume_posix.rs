//! What a volume answers to the calls programs make, in the manner of pjdfstest: the errno of
//! each refusal (EEXIST, ENOTEMPTY, ENOTDIR, EISDIR, EINVAL, EPERM, ENAMETOOLONG, ENODATA,
//! EOPNOTSUPP), renames over names and of directories (and with RENAME_NOREPLACE and
//! RENAME_EXCHANGE), hard links and their counts, a file unlinked while open, modes, owners and
//! times (utimens on a symlink never reaching its target), xattrs, holes and fallocate, and
//! statfs; then the same tree after a commit and a mount again.

use crate::volume_helpers::{assert_checks_clean, fuse_available, volume_place, Volume};

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::fd::AsFd;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;

use rustix::fs::{AtFlags, RenameFlags, Timespec, Timestamps, XattrFlags, CWD};
use rustix::io::Errno;

fn errno_of(result: std::io::Result<impl Sized>) -> Option<i32> {
    result.err().and_then(|e| e.raw_os_error())
}

fn set_times(path: &Path, atime: (i64, i64), mtime: (i64, i64), flags: AtFlags) {
    let ts = |(s, n): (i64, i64)| Timespec { tv_sec: s, tv_nsec: n };
    let times = Timestamps { last_access: ts(atime), last_modification: ts(mtime) };
    rustix::fs::utimensat(CWD, path, &times, flags).unwrap();
}

#[test]
fn a_volume_answers_as_posix_asks() {
    let test = "a_volume_answers_as_posix_asks";
    if !fuse_available(test) {
        return;
    }
    let (tmp, repo, point) = volume_place();
    let outside = tmp.path().join("outside");
    fs::write(&outside, b"outside the volume").unwrap();
    set_times(&outside, (1_000_000, 0), (1_000_000, 0), AtFlags::empty());
    let volume = Volume::start(&repo, "posix", &point, &["--commit-interval", "3600"]);
    let p = |rel: &str| volume.path(rel);
    let eno = |e: Errno| Some(e.raw_os_error());

    // Creation and removal.
    fs::create_dir(p("d")).unwrap();
    fs::write(p("d/f"), b"in d").unwrap();
    assert_eq!(errno_of(fs::create_dir(p("d"))), eno(Errno::EXIST));
    assert_eq!(
        errno_of(OpenOptions::new().write(true).create_new(true).open(p("d/f"))),
        eno(Errno::EXIST)
    );
    assert_eq!(errno_of(fs::remove_dir(p("d"))), eno(Errno::NOTEMPTY));
    assert_eq!(errno_of(fs::remove_dir(p("d/f"))), eno(Errno::NOTDIR));
    assert_eq!(errno_of(fs::remove_file(p("d"))), eno(Errno::ISDIR));
    assert_eq!(errno_of(fs::write(p(&"n".repeat(256)), b"")), eno(Errno::NAMETOOLONG));
    assert_eq!(errno_of(fs::write(p("missing/f"), b"")), eno(Errno::NOENT));

    // Renames: over a file, of and over directories, refused ones, and renameat2's flags.
    fs::write(p("a"), b"file a").unwrap();
    fs::write(p("b"), b"file b").unwrap();
    let a_ino = fs::metadata(p("a")).unwrap().ino();
    fs::rename(p("a"), p("b")).unwrap();
    assert_eq!(fs::read(p("b")).unwrap(), b"file a");
    assert_eq!(fs::metadata(p("b")).unwrap().ino(), a_ino);
    assert!(!p("a").exists());
    fs::create_dir(p("empty")).unwrap();
    fs::create_dir(p("e2")).unwrap();
    fs::rename(p("e2"), p("empty")).unwrap();
    assert_eq!(errno_of(fs::rename(p("empty"), p("d"))), eno(Errno::NOTEMPTY));
    assert_eq!(errno_of(fs::rename(p("b"), p("d"))), eno(Errno::ISDIR));
    assert_eq!(errno_of(fs::rename(p("empty"), p("b"))), eno(Errno::NOTDIR));
    assert_eq!(errno_of(fs::rename(p("d"), p("d/inside"))), eno(Errno::INVAL));
    fs::rename(p("d"), p("empty/d2")).unwrap();
    assert_eq!(fs::read(p("empty/d2/f")).unwrap(), b"in d");
    fs::write(p("c"), b"file c").unwrap();
    let no_replace = rustix::fs::renameat_with(CWD, p("c"), CWD, p("b"), RenameFlags::NOREPLACE);
    assert_eq!(no_replace, Err(Errno::EXIST));
    rustix::fs::renameat_with(CWD, p("c"), CWD, p("b"), RenameFlags::EXCHANGE).unwrap();
    assert_eq!(
        (fs::read(p("b")).unwrap(), fs::read(p("c")).unwrap()),
        (b"file c".to_vec(), b"file a".to_vec())
    );

    // Hard links.
    fs::hard_link(p("b"), p("b2")).unwrap();
    assert_eq!(fs::metadata(p("b")).unwrap().nlink(), 2);
    assert_eq!(fs::metadata(p("b")).unwrap().ino(), fs::metadata(p("b2")).unwrap().ino());
    assert_eq!(errno_of(fs::hard_link(p("empty"), p("dirlink"))), eno(Errno::PERM));
    fs::write(p("b2"), b"through the other name").unwrap();
    assert_eq!(fs::read(p("b")).unwrap(), b"through the other name");
    // Directory link counts: two plus a link per subdirectory.
    assert_eq!(fs::metadata(p("empty")).unwrap().nlink(), 3);

    // A file unlinked while open stays readable and writable through its descriptor.
    fs::write(p("open"), b"still here").unwrap();
    let mut open = OpenOptions::new().read(true).write(true).open(p("open")).unwrap();
    fs::remove_file(p("open")).unwrap();
    assert!(!p("open").exists());
    let mut text = String::new();
    open.read_to_string(&mut text).unwrap();
    assert_eq!(text, "still here");
    open.write_all(b" and more").unwrap();
    open.seek(SeekFrom::Start(0)).unwrap();
    text.clear();
    open.read_to_string(&mut text).unwrap();
    assert_eq!(text, "still here and more");
    drop(open);

    // Modes, owners and times; utimens of a symlink changes the link, never its target.
    fs::set_permissions(p("b"), fs::Permissions::from_mode(0o4751)).unwrap();
    assert_eq!(fs::metadata(p("b")).unwrap().mode() & 0o7777, 0o4751);
    std::os::unix::fs::chown(p("b"), Some(1234), Some(5678)).unwrap();
    let meta = fs::metadata(p("b")).unwrap();
    assert_eq!((meta.uid(), meta.gid(), meta.mode() & 0o7777), (1234, 5678, 0o751));
    set_times(
        &p("b"),
        (1_600_000_000, 123_456_789),
        (1_500_000_000, 987_654_321),
        AtFlags::empty(),
    );
    let meta = fs::metadata(p("b")).unwrap();
    assert_eq!((meta.mtime(), meta.mtime_nsec()), (1_500_000_000, 987_654_321));
    assert_eq!((meta.atime(), meta.atime_nsec()), (1_600_000_000, 123_456_789));
    std::os::unix::fs::symlink(&outside, p("abs-link")).unwrap();
    assert_eq!(fs::read_link(p("abs-link")).unwrap(), outside);
    set_times(&p("abs-link"), (1_400_000_000, 0), (1_400_000_000, 0), AtFlags::SYMLINK_NOFOLLOW);
    assert_eq!(fs::symlink_metadata(p("abs-link")).unwrap().mtime(), 1_400_000_000);
    assert_eq!(fs::metadata(&outside).unwrap().mtime(), 1_000_000, "the target's time changed");

    // Extended attributes.
    let x = p("c");
    rustix::fs::setxattr(&x, "user.one", b"1", XattrFlags::empty()).unwrap();
    rustix::fs::setxattr(&x, "user.two", b"22", XattrFlags::empty()).unwrap();
    assert_eq!(rustix::fs::setxattr(&x, "user.one", b"x", XattrFlags::CREATE), Err(Errno::EXIST));
    assert_eq!(
        rustix::fs::setxattr(&x, "user.nope", b"x", XattrFlags::REPLACE),
        Err(Errno::NODATA)
    );
    let mut value = [0u8; 16];
    let n = rustix::fs::getxattr(&x, "user.two", &mut value).unwrap();
    assert_eq!(&value[..n], b"22");
    assert_eq!(rustix::fs::getxattr(&x, "user.none", &mut value), Err(Errno::NODATA));
    let mut names = [0u8; 64];
    let n = rustix::fs::listxattr(&x, &mut names).unwrap();
    assert_eq!(&names[..n], b"user.one\0user.two\0");
    rustix::fs::removexattr(&x, "user.one").unwrap();
    assert_eq!(rustix::fs::removexattr(&x, "user.one"), Err(Errno::NODATA));
    // A minimal access ACL (user::rw-, group::r--, other::r--), as `cp -a` sets it.
    let acl_value: &[u8] = &[
        2, 0, 0, 0, 1, 0, 6, 0, 255, 255, 255, 255, 4, 0, 4, 0, 255, 255, 255, 255, 32, 0, 4, 0,
        255, 255, 255, 255,
    ];
    let acl = rustix::fs::setxattr(&x, "system.posix_acl_access", acl_value, XattrFlags::empty());
    assert_eq!(acl, Err(Errno::OPNOTSUPP));

    // Holes: a sparse file allocates nothing for them; a punched range reads as zeros.
    let sparse = File::create(p("sparse")).unwrap();
    sparse.set_len(64 << 20).unwrap();
    std::os::unix::fs::FileExt::write_all_at(&sparse, &[7u8; 300_000], 1 << 20).unwrap();
    let blocks = fs::metadata(p("sparse")).unwrap().blocks();
    assert!(blocks * 512 < 1 << 20, "{blocks} blocks for 300 kB of data");
    use rustix::fs::FallocateFlags as F;
    rustix::fs::fallocate(sparse.as_fd(), F::PUNCH_HOLE | F::KEEP_SIZE, (1 << 20) + 1000, 5000)
        .unwrap();
    let content = fs::read(p("sparse")).unwrap();
    assert_eq!(content.len(), 64 << 20);
    assert!(content[(1 << 20) + 1000..(1 << 20) + 6000].iter().all(|&b| b == 0));
    assert_eq!(content[(1 << 20) + 6000], 7);
    assert_eq!(
        rustix::fs::fallocate(sparse.as_fd(), F::COLLAPSE_RANGE, 0, 4096),
        Err(Errno::OPNOTSUPP)
    );
    rustix::fs::fallocate(sparse.as_fd(), F::empty(), 70 << 20, 4096).unwrap();
    assert_eq!(fs::metadata(p("sparse")).unwrap().len(), (70 << 20) + 4096);
    drop(sparse);

    // statfs tells the repository's file system's space.
    let here = rustix::fs::statvfs(&point).unwrap();
    let there = rustix::fs::statvfs(&repo).unwrap();
    assert_eq!(here.f_blocks * here.f_frsize, there.f_blocks * there.f_frsize);
    assert!(here.f_bavail <= here.f_blocks && here.f_files > 0);

    let before = crate::common::store::look(&point);
    volume.unmount_ok();
    let volume = Volume::start(&repo, "posix", &point, &["--commit-interval", "3600"]);
    crate::common::store::assert_looks_equal(
        &before,
        &crate::common::store::look(&point),
        "mounted again",
    );
    assert_eq!(fs::metadata(volume.path("b")).unwrap().nlink(), 2);
    volume.unmount_ok();
    assert_checks_clean(&repo);
}

/// A volume holds files of up to 2^21 chunks of the repository's largest size (16 TiB with the
/// default chunker, 512 GiB with the tests' 256 KiB): a commit lists a hole's chunks of zeros in
/// memory, so a larger size (`truncate -s 1E` took the mount's memory until the kernel killed
/// it, losing every write since the last commit) is refused with EFBIG, and the mount goes on.
#[test]
fn a_size_beyond_the_largest_file_is_refused_and_a_hole_that_large_commits() {
    let test = "a_size_beyond_the_largest_file_is_refused_and_a_hole_that_large_commits";
    if !fuse_available(test) {
        return;
    }
    let (_tmp, repo, point) = volume_place();
    let volume = Volume::start(&repo, "large", &point, &["--commit-interval", "3600"]);
    let most = (256u64 << 10) << 21;
    let file = File::create(volume.path("too-large")).unwrap();
    assert_eq!(errno_of(file.set_len(most + 1)), Some(Errno::FBIG.raw_os_error()));
    assert_eq!(errno_of(file.set_len(1 << 60)), Some(Errno::FBIG.raw_os_error()));
    assert_eq!(
        rustix::fs::fallocate(file.as_fd(), rustix::fs::FallocateFlags::empty(), 0, most + 1),
        Err(Errno::FBIG)
    );
    drop(file);
    let image = File::create(volume.path("vm.img")).unwrap();
    image.set_len(most).unwrap();
    image.sync_all().unwrap();
    drop(image);
    fs::write(volume.path("after"), b"written after the large commit").unwrap();
    volume.unmount_ok();

    // Mounted again, the hole is a hole (it takes no blocks), and a write into it lands.
    let volume = Volume::start(&repo, "large", &point, &["--commit-interval", "3600"]);
    let image = fs::metadata(volume.path("vm.img")).unwrap();
    assert_eq!((image.len(), image.blocks()), (most, 0));
    assert_eq!(fs::metadata(volume.path("too-large")).unwrap().len(), 0);
    assert_eq!(fs::read(volume.path("after")).unwrap(), b"written after the large commit");
    let mut image = OpenOptions::new().write(true).open(volume.path("vm.img")).unwrap();
    image.seek(SeekFrom::Start(most / 2 + 1)).unwrap();
    image.write_all(b"a block in the middle").unwrap();
    drop(image);
    volume.unmount_ok();

    let volume = Volume::start(&repo, "large", &point, &["--commit-interval", "3600"]);
    let mut image = File::open(volume.path("vm.img")).unwrap();
    let mut around = vec![1u8; 64];
    image.seek(SeekFrom::Start(most / 2 - 10)).unwrap();
    image.read_exact(&mut around).unwrap();
    let mut expected = vec![0u8; 64];
    expected[11..11 + 21].copy_from_slice(b"a block in the middle");
    assert_eq!(around, expected);
    let blocks = image.metadata().unwrap().blocks() * 512;
    assert!(blocks > 0 && blocks <= 2 << 20, "{blocks} bytes allocated");
    drop(image);
    volume.unmount_ok();
    assert_checks_clean(&repo);
}
