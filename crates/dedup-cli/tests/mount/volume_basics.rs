//! `dedup store mount --writable`: a volume started with one command takes a tree of awkward
//! entries through `cp -a`, shows it back as written, commits it as snapshots tagged
//! `volume:NAME` that restore byte for byte and check clean, and mounts again with the same
//! content; a second writable mount of the volume is refused by name while the first runs;
//! small files copied twice deduplicate; a commit that lost its tag, or a snapshot that does not
//! read, is not silently passed over.

use crate::common;
use crate::volume_helpers::{assert_checks_clean, commits, data, fuse_available, Volume};

use std::ffi::OsStr;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use common::store::{assert_restores, init_repo, look};

/// A tree of awkward entries: non-UTF-8 names, symlinks (one absolute, pointing outside), an
/// empty file, a sparse one, a multi-chunk one, hard links, a FIFO, modes and xattrs.
fn make_tree(src: &Path, outside: &Path) {
    fs::create_dir_all(src.join("sub/deeper")).unwrap();
    fs::write(src.join("plain.txt"), b"hello through a volume\n").unwrap();
    fs::write(src.join("empty"), b"").unwrap();
    fs::write(src.join(OsStr::from_bytes(b"caf\xe9 \xff name")), b"latin-1 name").unwrap();
    std::os::unix::fs::symlink("plain.txt", src.join("link")).unwrap();
    std::os::unix::fs::symlink(outside, src.join("absolute-link")).unwrap();
    let sparse = fs::File::create(src.join("sparse")).unwrap();
    sparse.set_len(3 << 20).unwrap();
    std::os::unix::fs::FileExt::write_all_at(&sparse, b"an island", 2 << 20).unwrap();
    fs::write(src.join("sub/big.bin"), data((2 << 20) + 12_345, 7)).unwrap();
    fs::write(src.join("sub/hard-a"), data(200_000, 3)).unwrap();
    fs::hard_link(src.join("sub/hard-a"), src.join("sub/deeper/hard-b")).unwrap();
    fs::write(src.join("sub/deeper/secret"), b"mode 0640").unwrap();
    fs::set_permissions(src.join("sub/deeper/secret"), fs::Permissions::from_mode(0o640)).unwrap();
    rustix::fs::mknodat(
        rustix::fs::CWD,
        src.join("fifo"),
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o644),
        0,
    )
    .unwrap();
    rustix::fs::setxattr(
        src.join("plain.txt").as_path(),
        "user.colour",
        b"teal",
        rustix::fs::XattrFlags::empty(),
    )
    .unwrap();
}

fn cp_a(from: &Path, to: &Path) {
    let status = Command::new("cp").arg("-a").arg(from).arg(to).status().unwrap();
    assert!(status.success(), "cp -a {} {}", from.display(), to.display());
}

#[test]
fn a_volume_takes_a_tree_and_every_commit_restores_byte_for_byte() {
    let test = "a_volume_takes_a_tree_and_every_commit_restores_byte_for_byte";
    if !fuse_available(test) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (repo, src, point) =
        (tmp.path().join("repo"), tmp.path().join("src"), tmp.path().join("mnt"));
    let outside = tmp.path().join("outside-file");
    fs::write(&outside, b"not the volume's").unwrap();
    let outside_mtime = fs::symlink_metadata(&outside).unwrap().modified().unwrap();
    fs::create_dir(&src).unwrap();
    fs::create_dir(&point).unwrap();
    make_tree(&src, &outside);
    init_repo(&repo);

    let volume = Volume::start(&repo, "vol", &point, &["--commit-interval", "3600"]);
    // The first mount commits the empty volume: it exists from then on.
    assert_eq!(commits(&repo, "vol").len(), 1);
    cp_a(&src.join("."), &point);
    let expected = look(&src);
    common::store::assert_looks_equal(&expected, &look(&point), "the mounted volume");
    // cp -a sets the times of the absolute symlink itself, never of what it points to.
    assert_eq!(fs::symlink_metadata(&outside).unwrap().modified().unwrap(), outside_mtime);
    volume.unmount_ok();

    let ids = commits(&repo, "vol");
    assert_eq!(ids.len(), 2, "one commit at the first mount, one at unmount");
    assert_restores(&repo, "latest", Path::new("/vol"), &tmp.path().join("restored"), &expected);
    assert_checks_clean(&repo);

    // Mounted again: the same tree, and a change is a new commit beside the old ones.
    let volume = Volume::start(&repo, "vol", &point, &["--commit-interval", "3600"]);
    common::store::assert_looks_equal(&expected, &look(&point), "the volume mounted again");
    fs::write(volume.path("plain.txt"), b"changed\n").unwrap();
    volume.unmount_ok();
    let after = commits(&repo, "vol");
    assert_eq!(after.len(), 3);
    let old = &ids[1][..8];
    assert_restores(&repo, old, Path::new("/vol"), &tmp.path().join("old"), &expected);
    assert_eq!(fs::read(tmp.path().join("old/plain.txt")).unwrap(), b"hello through a volume\n");
}

#[test]
fn a_second_writable_mount_of_a_volume_is_refused_by_name() {
    let test = "a_second_writable_mount_of_a_volume_is_refused_by_name";
    if !fuse_available(test) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    let points: Vec<_> = (0..3).map(|n| tmp.path().join(format!("mnt{n}"))).collect();
    points.iter().for_each(|p| fs::create_dir(p).unwrap());
    init_repo(&repo);
    let first = Volume::start(&repo, "shared", &points[0], &[] as &[&str]);
    let refused = Volume::try_start(&repo, "shared", &points[1], &[] as &[&str]);
    let Err((status, stderr)) = refused else { panic!("a second writable mount was made") };
    assert!(!status.success(), "{stderr}");
    assert!(stderr.contains("\"shared\" is already mounted writable"), "{stderr}");
    // Another volume of the same repository mounts beside it.
    let other = Volume::start(&repo, "other", &points[2], &[] as &[&str]);
    other.unmount_ok();
    first.unmount_ok();
    // Once the first is gone, the volume mounts again.
    Volume::start(&repo, "shared", &points[1], &[] as &[&str]).unmount_ok();
}

#[test]
fn small_files_copied_twice_add_almost_nothing_the_second_time() {
    let test = "small_files_copied_twice_add_almost_nothing_the_second_time";
    if !fuse_available(test) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (repo, src, point) =
        (tmp.path().join("repo"), tmp.path().join("src"), tmp.path().join("mnt"));
    fs::create_dir(&point).unwrap();
    // Many small files of odd sizes (ddumbfs hashes the stale bytes of its buffer with the
    // last partial block of each, so such files never deduplicate there).
    for dir in 0..10 {
        let dir_path = src.join(format!("d{dir}"));
        fs::create_dir_all(&dir_path).unwrap();
        for n in 0..60u64 {
            let len = 100 + ((n * 7919 + dir * 104_729) % 30_000) as usize;
            fs::write(dir_path.join(format!("f{n}")), data(len, dir * 1000 + n)).unwrap();
        }
    }
    init_repo(&repo);
    let data_bytes = || common::store::pack_bytes(&repo);
    let volume = Volume::start(&repo, "copies", &point, &["--commit-interval", "3600"]);
    cp_a(&src, &point.join("first"));
    fs::File::open(volume.path("first/d0/f0")).unwrap().sync_all().unwrap();
    let after_first = data_bytes();
    cp_a(&src, &point.join("second"));
    fs::File::open(volume.path("second/d0/f0")).unwrap().sync_all().unwrap();
    let after_second = data_bytes();
    volume.unmount_ok();
    let added = after_second - after_first;
    // The second copy adds its trees and little else.
    assert!(added * 100 <= after_first * 2, "the second copy added {added} bytes to {after_first}");
    assert_checks_clean(&repo);
}

/// A prune that plans while a volume is mounted rewrites the index without the packs it means to
/// delete and waits for the mount's session; a commit that deduplicated against such a pack
/// indexes it again before writing its snapshot, so the commit restores at once and the plan,
/// carried out after the unmount, keeps the pack.
#[test]
fn a_commit_keeps_what_a_prune_planned_during_the_mount() {
    let test = "a_commit_keeps_what_a_prune_planned_during_the_mount";
    if !fuse_available(test) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (repo, src, point) =
        (tmp.path().join("repo"), tmp.path().join("src"), tmp.path().join("mnt"));
    fs::create_dir(&point).unwrap();
    fs::create_dir(&src).unwrap();
    let content = data(3 << 20, 11);
    fs::write(src.join("old.bin"), &content).unwrap();
    init_repo(&repo);
    common::store::store_ok(&repo, &["backup", src.to_str().unwrap()]);
    let backed_up = common::store::snapshot_of(&repo, &src);

    let volume = Volume::start(&repo, "vol", &point, &["--commit-interval", "3600"]);
    common::store::store_ok(&repo, &["forget", &backed_up]);
    // The plan: the backup's packs go once the mount's session ends.
    common::store::store_ok(&repo, &["prune"]);
    fs::write(volume.path("copy.bin"), &content).unwrap();
    let file = fs::File::open(volume.path("copy.bin")).unwrap();
    file.sync_all().unwrap();
    drop(file);
    let restored = tmp.path().join("during");
    let target = restored.to_str().unwrap();
    common::store::store_ok(&repo, &["restore", "latest:/vol", "--target", target]);
    assert_eq!(fs::read(restored.join("copy.bin")).unwrap(), content);
    volume.unmount_ok();

    // The plan carried out: the commit's chunks stay.
    common::store::store_ok(&repo, &["prune"]);
    assert_checks_clean(&repo);
    let after = tmp.path().join("after");
    let target = after.to_str().unwrap();
    common::store::store_ok(&repo, &["restore", "latest:/vol", "--target", target]);
    assert_eq!(fs::read(after.join("copy.bin")).unwrap(), content);
}

/// Two commits of the volume "vol" mounted on `point`: the first holds `first`, the second
/// `second` too; returns the id of the second, the newest.
fn two_commits(repo: &std::path::Path, point: &std::path::Path) -> String {
    for name in ["first", "second"] {
        let volume = Volume::start(repo, "vol", point, &["--commit-interval", "3600"]);
        fs::write(volume.path(name), name.as_bytes()).unwrap();
        volume.unmount_ok();
    }
    commits(repo, "vol").pop().unwrap()
}

/// `store tag --set` replaces every tag, `volume:NAME` too. The mount took the newest snapshot
/// still tagged as the volume's latest state: after `tag --set keep latest` the volume came up
/// one commit older, and after `tag --set keep` (every snapshot) it came up empty and its first
/// commit buried the real state, without a word. Now such a mount is refused and says how to
/// give the tag back; with it back, the volume mounts as it was.
#[test]
fn a_mount_refuses_to_pass_over_a_newer_commit_that_lost_its_tag() {
    let test = "a_mount_refuses_to_pass_over_a_newer_commit_that_lost_its_tag";
    if !fuse_available(test) {
        return;
    }
    let (_tmp, repo, point) = crate::volume_helpers::volume_place();
    let newest = two_commits(&repo, &point);
    let short = &newest[..8];

    for set in [&["tag", "--set", "keep", short][..], &["tag", "--set", "keep"][..]] {
        common::store::store_ok(&repo, set);
        let listed = common::store::store_ok(&repo, &["snapshots"]);
        let retagged = listed.lines().last().unwrap().split_whitespace().next().unwrap();
        let refused = Volume::try_start(&repo, "vol", &point, &["--commit-interval", "3600"]);
        let Err((status, stderr)) = refused else {
            panic!("the volume mounted without its newest commit ({set:?})")
        };
        assert_eq!(status.code(), Some(2), "{stderr}");
        assert!(
            stderr.contains(&format!("snapshot {retagged} is a commit of volume \"vol\""))
                && stderr.contains(&format!("dedup store tag --add volume:vol {retagged}")),
            "{stderr}"
        );
        let snapshots = common::store::store_ok(&repo, &["snapshots"]);
        assert_eq!(snapshots, listed, "a refused mount committed");
        common::store::store_ok(&repo, &["tag", "--add", "volume:vol", retagged]);
        let volume = Volume::start(&repo, "vol", &point, &["--commit-interval", "3600"]);
        assert_eq!(fs::read(volume.path("second")).unwrap(), b"second");
        assert_eq!(fs::read(volume.path("first")).unwrap(), b"first");
        volume.unmount_ok();
    }
    assert_checks_clean(&repo);
}

/// A snapshot that does not read (damaged, or lost to a failed request on object storage) may
/// be the volume's newest commit: the mount took the newest commit that read, so a truncated
/// snapshot file made the volume come up one commit older without a word, and its next commit
/// buried the newer state. Now the mount is refused, naming the snapshot; once it reads again
/// the volume mounts as it was.
#[test]
fn a_mount_refuses_while_a_snapshot_does_not_read() {
    let test = "a_mount_refuses_while_a_snapshot_does_not_read";
    if !fuse_available(test) {
        return;
    }
    let (_tmp, repo, point) = crate::volume_helpers::volume_place();
    let newest = two_commits(&repo, &point);
    let file = repo.join("snapshots").join(&newest);
    let bytes = fs::read(&file).unwrap();
    fs::write(&file, &bytes[..50]).unwrap();

    let refused = Volume::try_start(&repo, "vol", &point, &["--commit-interval", "3600"]);
    let Err((status, stderr)) = refused else {
        panic!("the volume mounted while its newest commit did not read")
    };
    assert_eq!(status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("while a snapshot does not read") && stderr.contains(&newest),
        "{stderr}"
    );
    assert_eq!(
        fs::read_dir(repo.join("snapshots")).unwrap().count(),
        3,
        "a refused mount committed"
    );

    fs::write(&file, &bytes).unwrap();
    let volume = Volume::start(&repo, "vol", &point, &["--commit-interval", "3600"]);
    assert_eq!(fs::read(volume.path("second")).unwrap(), b"second");
    volume.unmount_ok();
    assert_checks_clean(&repo);
}
