//! Renames and moves are renamed in the destination, not copied again (the inode stays); a
//! file moved and edited is copied.

use crate::common;

use std::fs;

use common::mirror::*;
use common::*;

#[test]
fn moved_files_and_renamed_directories_keep_their_inodes() {
    let t = tmp();
    let (s, d) = (t.path().join("src"), t.path().join("dst"));
    write(&s, "photos/2023/a.jpg", &pattern(200_000, 1));
    write(&s, "photos/2023/b.jpg", &pattern(150_000, 2));
    write(&s, "photos/2023/raw/c.raw", &pattern(90_000, 3));
    write(&s, "inbox/moved.txt", &pattern(20_000, 4));
    write(&s, "inbox/edited.txt", &pattern(30_000, 5));
    sync(&[s.clone(), d.clone()]).assert_code(0);
    let ids = |p: &str| ino(&d.join(p));
    let (a, c, moved, edited) = (
        ids("photos/2023/a.jpg"),
        ids("photos/2023/raw/c.raw"),
        ids("inbox/moved.txt"),
        ids("inbox/edited.txt"),
    );
    fs::rename(s.join("photos/2023"), s.join("photos/summer-2023")).unwrap();
    fs::create_dir(s.join("archive")).unwrap();
    fs::rename(s.join("inbox/moved.txt"), s.join("archive/kept.txt")).unwrap();
    fs::rename(s.join("inbox/edited.txt"), s.join("archive/edited.txt")).unwrap();
    let mut f = fs::OpenOptions::new().append(true).open(s.join("archive/edited.txt")).unwrap();
    std::io::Write::write_all(&mut f, b" and more").unwrap();
    drop(f);
    let out = sync(&[os(b"-v"), os(b"--delete"), s.clone().into(), d.clone().into()]);
    out.assert_code(0);
    assert_mirror(&s, &d);
    assert_eq!(ids("photos/summer-2023/a.jpg"), a, "renamed directory: {}", out.dump());
    assert_eq!(ids("photos/summer-2023/raw/c.raw"), c);
    assert_eq!(ids("archive/kept.txt"), moved, "moved file: {}", out.dump());
    assert_ne!(ids("archive/edited.txt"), edited, "moved and edited: copied");
    let lines = changes(&out);
    assert!(lines.contains(&"rename photos/summer-2023 <- photos/2023".to_owned()), "{lines:?}");
    assert!(lines.contains(&"rename archive/kept.txt <- inbox/moved.txt".to_owned()), "{lines:?}");
    assert!(lines.contains(&"copy archive/edited.txt".to_owned()), "{lines:?}");
}

#[test]
fn files_copied_renamed_or_cloned_carry_the_sources_attributes() {
    // A file new to DST or of another size is copied whatever its attributes say, so the walk
    // leaves them to the copy, which reads them from the source it copies; a moved file's are
    // read when it is renamed. Every way must end with the source's attributes, and none of the
    // old copy's.
    let t = tmp();
    let (s, d) = (t.path().join("src"), t.path().join("dst"));
    write(&s, "a", &pattern(10_000, 1));
    write(&s, "b", &pattern(12_000, 2));
    write(&s, "moved", &pattern(30_000, 3));
    write(&s, "cloned", &pattern(40_000, 4));
    // The files move into a directory DST has already: the walk leaves them to the copy there.
    write(&s, "sub/there", &pattern(1_000, 6));
    set_xattr(&s.join("a"), "user.tag", "one");
    set_xattr(&s.join("b"), "user.tag", "two");
    set_xattr(&s.join("moved"), "user.tag", "m");
    set_xattr(&s.join("cloned"), "user.tag", "c");
    sync(&[s.clone(), d.clone()]).assert_code(0);
    assert_mirror(&s, &d);
    let append = |p: &str, bytes: &[u8]| {
        let mut f = fs::OpenOptions::new().append(true).open(s.join(p)).unwrap();
        std::io::Write::write_all(&mut f, bytes).unwrap();
    };
    append("a", b" more");
    set_xattr(&s.join("a"), "user.tag", "one, changed");
    append("b", b" more");
    rustix::fs::lremovexattr(s.join("b"), "user.tag").unwrap();
    set_xattr(&d.join("b"), "user.extra", "only in the old copy");
    write(&s, "new", &pattern(5_000, 5));
    set_xattr(&s.join("new"), "user.tag", "new");
    fs::rename(s.join("moved"), s.join("sub/moved")).unwrap();
    set_xattr(&s.join("sub/moved"), "user.tag", "m, moved");
    let out = sync(&[os(b"-v"), os(b"--delete"), s.clone().into(), d.clone().into()]);
    out.assert_code(0);
    assert!(changes(&out).contains(&"rename sub/moved <- moved".to_owned()), "{}", out.dump());
    assert_mirror(&s, &d);
    // Without --delete the old name stays and the new one is cloned (or copied where the file
    // system cannot clone).
    fs::rename(s.join("cloned"), s.join("sub/cloned")).unwrap();
    set_xattr(&s.join("sub/cloned"), "user.tag", "c, cloned");
    let out = sync(&[os(b"-v"), s.clone().into(), d.clone().into()]);
    out.assert_code(0);
    assert!(d.join("cloned").exists(), "the old name stays without --delete");
    assert_mirror(&s.join("sub"), &d.join("sub"));
}

/// A rename is trusted on sampled bytes (head, middle, tail) only where the stamp is as strong as
/// the one a file at the same path is trusted on: nanosecond digits no other file of that size
/// shares. A whole-second stamp, or one shared by several files (as copying tools leave them),
/// has every byte compared: a file that differs from the old one outside the samples is copied,
/// and files that differ only there are each paired with their own old copy.
#[test]
fn a_move_is_trusted_on_samples_only_where_the_stamp_is_strong() {
    let t = tmp();
    let (s, d) = (t.path().join("src"), t.path().join("dst"));
    let data = pattern(100_000, 7);
    // Byte 20,000 lies outside the samples (0-4 KiB, 48-52 KiB, the last 4 KiB).
    let other = flip(&data, 20_000);
    write(&s, "old.db", &data);
    set_mtime(&s.join("old.db"), 1_600_000_000, 0);
    write(&s, "x1", &data);
    write(&s, "x2", &other);
    for x in ["x1", "x2"] {
        set_mtime(&s.join(x), 1_600_000_000, 123_456_789);
    }
    sync(&[os(b"--delete"), s.clone().into(), d.clone().into()]).assert_code(0);
    fs::remove_file(s.join("old.db")).unwrap();
    write(&s, "new.db", &other);
    set_mtime(&s.join("new.db"), 1_600_000_000, 0);
    // x1 and x2 swap names by way of new ones: y1 holds x2's bytes, y2 x1's.
    fs::rename(s.join("x2"), s.join("y1")).unwrap();
    fs::rename(s.join("x1"), s.join("y2")).unwrap();
    let out = sync(&[os(b"-v"), os(b"--delete"), s.clone().into(), d.clone().into()]);
    out.assert_code(0);
    assert_eq!(fs::read(d.join("new.db")).unwrap(), other, "{}", out.dump());
    assert_eq!(fs::read(d.join("y1")).unwrap(), other, "{}", out.dump());
    assert_eq!(fs::read(d.join("y2")).unwrap(), data, "{}", out.dump());
    let lines = changes(&out);
    assert!(lines.contains(&"copy new.db".to_owned()), "{lines:?}");
    assert!(lines.contains(&"rename y1 <- x2".to_owned()), "{lines:?}");
    assert_mirror(&s, &d);
}
