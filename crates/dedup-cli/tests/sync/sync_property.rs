//! Random trees with unreadable parts, exclusions, renames and moves, mirrored with `--delete`
//! as user nobody: nothing DST had under an unreadable or excluded source part is moved,
//! changed or deleted; the exit status is 1 exactly when something could not be read; the dry
//! run prints and counts exactly what the real run then does; everything readable and not
//! excluded is mirrored; with `--backup-dir`, every file the run replaced or deleted is kept at
//! its path there; and once everything is readable again, one more run makes an exact mirror.

use crate::common;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use common::mirror::*;
use common::*;

/// The exclusion patterns of every case: a name glob, an anchored path, a directory-only name.
const EXCLUDES: [&str; 3] = ["*.tmp", "/top-secret", "cache/"];

/// Whether the walk leaves `rel` (or a directory above it) out, by [`EXCLUDES`].
fn excluded(rel: &str, tree: &Path) -> bool {
    let parts: Vec<&str> = rel.split('/').collect();
    (0..parts.len()).any(|i| {
        let name = parts[i];
        let is_dir =
            fs::symlink_metadata(tree.join(parts[..=i].join("/"))).is_ok_and(|m| m.is_dir());
        name.ends_with(".tmp") || (i == 0 && name == "top-secret") || (name == "cache" && is_dir)
    })
}

fn rel_of(root: &Path, p: &Path) -> String {
    p.strip_prefix(root).unwrap().to_string_lossy().into_owned()
}

fn dirs_of(root: &Path) -> Vec<PathBuf> {
    let mut out = vec![root.to_path_buf()];
    let mut i = 0;
    while i < out.len() {
        let mut subs: Vec<PathBuf> = fs::read_dir(&out[i])
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| fs::symlink_metadata(p).unwrap().is_dir())
            .collect();
        subs.sort();
        out.extend(subs);
        i += 1;
    }
    out
}

fn files_of(root: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = dirs_of(root)
        .iter()
        .flat_map(|d| fs::read_dir(d).unwrap().map(|e| e.unwrap().path()))
        .filter(|p| fs::symlink_metadata(p).unwrap().is_file())
        .collect();
    out.sort();
    out
}

/// A random tree of directories, files (with nanosecond stamps in the past, unique), symlinks,
/// and names the exclusions catch.
fn grow(root: &Path, rng: &mut Rng, entries: usize, tag: &str) {
    fs::create_dir_all(root).unwrap();
    for i in 0..entries {
        let dirs = dirs_of(root);
        let parent = dirs[rng.pick(dirs.len())].clone();
        let name = match rng.pick(12) {
            0 => format!("{tag}{i}.tmp"),
            1 => "cache".to_owned(),
            2 if parent == root => "top-secret".to_owned(),
            _ => format!("{tag}{i}"),
        };
        let p = parent.join(&name);
        if fs::symlink_metadata(&p).is_ok() {
            continue;
        }
        match rng.pick(10) {
            0..=2 => fs::create_dir(&p).unwrap(),
            3 => std::os::unix::fs::symlink(format!("t{}", rng.pick(3)), &p).unwrap(),
            _ => {
                let len = [0, 10, 3_000, 20_000, 20_000, 70_000][rng.pick(6)];
                fs::write(&p, pattern(len, rng.next())).unwrap();
                set_mtime(
                    &p,
                    1_600_000_000 + rng.below(1000) as i64,
                    1 + rng.below(999_999_998) as i64,
                );
            }
        }
    }
}

/// Moves, renames, deletions and additions in SRC; entries of DST's own.
fn change(s: &Path, d: &Path, rng: &mut Rng) {
    let mine = |p: &PathBuf| !excluded(&rel_of(s, p), s);
    for _ in 0..2 + rng.pick(5) {
        let files: Vec<PathBuf> = files_of(s).into_iter().filter(mine).collect();
        let dirs: Vec<PathBuf> = dirs_of(s).into_iter().filter(mine).collect();
        if files.is_empty() {
            break;
        }
        let f = &files[rng.pick(files.len())];
        let to = dirs[rng.pick(dirs.len())].join(format!("moved{}", rng.below(1000)));
        if fs::symlink_metadata(&to).is_err() {
            fs::rename(f, to).unwrap();
        }
    }
    let dirs: Vec<PathBuf> = dirs_of(s).into_iter().skip(1).filter(mine).collect();
    if !dirs.is_empty() && rng.chance(60) {
        let from = &dirs[rng.pick(dirs.len())];
        let to = from.with_file_name(format!("renamed{}", rng.below(1000)));
        if fs::symlink_metadata(&to).is_err() {
            fs::rename(from, to).unwrap();
        }
    }
    for _ in 0..rng.pick(3) {
        let files = files_of(s);
        if !files.is_empty() {
            fs::remove_file(&files[rng.pick(files.len())]).unwrap();
        }
    }
    // A copy of a file with its stamp (cp -p): a new file that a moved one's old copy may give.
    let files = files_of(s);
    if !files.is_empty() && rng.chance(50) {
        let f = &files[rng.pick(files.len())];
        let ok = std::process::Command::new("cp")
            .arg("-p")
            .arg(f)
            .arg(f.with_file_name(format!("copy{}", rng.below(1000))))
            .status()
            .unwrap();
        assert!(ok.success());
    }
    let (new, own) = (rng.pick(6), rng.pick(6));
    grow(s, rng, new, "new");
    grow(d, rng, own, "dst-own");
}

/// What the test makes unreadable: directories that cannot be listed (everything at and below
/// them unknown), directories whose entries cannot be examined (root's, mode 744: everything
/// below them unknown), files that cannot be read.
#[derive(Debug, Default)]
struct Closed {
    unlisted: Vec<String>,
    unexamined: Vec<String>,
    unread_files: Vec<String>,
}

impl Closed {
    fn any(&self) -> bool {
        !(self.unlisted.is_empty() && self.unexamined.is_empty() && self.unread_files.is_empty())
    }

    /// True when SRC's `rel` is unknown to a run as nobody.
    fn covers(&self, rel: &str) -> bool {
        let at_or_below = |p: &String| rel == p || rel.starts_with(&format!("{p}/"));
        let below = |p: &String| rel.starts_with(&format!("{p}/"));
        self.unlisted.iter().any(at_or_below)
            || self.unexamined.iter().any(below)
            || self.unread_files.iter().any(|p| rel == p)
    }

    /// Close a few parts of `s` that a run must read: not excluded; a directory of entries that
    /// cannot be examined holds one the walk examines; a file that cannot be read has new
    /// content, which the run must copy.
    fn close(&mut self, s: &Path, d: &Path, rng: &mut Rng) {
        let dirs: Vec<PathBuf> =
            dirs_of(s).into_iter().skip(1).filter(|p| !excluded(&rel_of(s, p), s)).collect();
        // Files of new content (named so by `change`): no old copy can stand for them.
        let new =
            |p: &PathBuf| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("new"));
        let files: Vec<PathBuf> = files_of(s)
            .into_iter()
            .filter(|p| new(p) && !excluded(&rel_of(s, p), s) && !d.join(rel_of(s, p)).exists())
            .collect();
        if !dirs.is_empty() && rng.chance(40) {
            let p = &dirs[rng.pick(dirs.len())];
            chmod(p, 0o000);
            self.unlisted.push(rel_of(s, p));
        }
        let examined = |p: &Path| {
            fs::read_dir(p)
                .is_ok_and(|mut r| r.any(|e| !excluded(&rel_of(s, &e.unwrap().path()), s)))
        };
        if !dirs.is_empty() && rng.chance(40) {
            let p = &dirs[rng.pick(dirs.len())];
            let rel = rel_of(s, p);
            let nested = self
                .unlisted
                .iter()
                .any(|u| rel.starts_with(&format!("{u}/")) || u.starts_with(&format!("{rel}/")));
            if !self.covers(&rel) && !nested && examined(p) {
                std::os::unix::fs::chown(p, Some(0), Some(0)).unwrap();
                chmod(p, 0o744);
                self.unexamined.push(rel);
            }
        }
        if !files.is_empty() && rng.chance(40) {
            let f = &files[rng.pick(files.len())];
            let rel = rel_of(s, f);
            if !self.covers(&rel) {
                chmod(f, 0o000);
                self.unread_files.push(rel);
            }
        }
    }

    fn open(&self, s: &Path) {
        for p in self.unlisted.iter().chain(&self.unexamined) {
            chmod(&s.join(p), 0o755);
        }
        for p in &self.unread_files {
            chmod(&s.join(p), 0o644);
        }
        give_to_nobody(s);
    }
}

fn run(flags: &[&str], s: &Path, d: &Path) -> Out {
    let mut args: Vec<std::ffi::OsString> = flags.iter().map(|f| os(f.as_bytes())).collect();
    for e in EXCLUDES {
        args.push(os(b"--exclude"));
        args.push(os(e.as_bytes()));
    }
    args.push(s.into());
    args.push(d.into());
    sync_as_nobody(&args)
}

/// The entries of a tree, as root sees them, less those the exclusions leave out; of DST
/// (`other`: SRC) less those left out at the same path of SRC, and the directories SRC does not
/// have that hold some (a deletion keeps those, with the excluded entries).
fn visible(root: &Path, other: Option<&Path>) -> BTreeMap<Vec<u8>, Node> {
    let all = describe(root);
    // Left out here, or at the same path of SRC (another kind there, for `cache/`).
    let left_out = |k: &str| excluded(k, root) || other.is_some_and(|o| excluded(k, o));
    let out: Vec<String> = all
        .keys()
        .map(|k| String::from_utf8_lossy(k).into_owned())
        .filter(|k| k != "." && left_out(k))
        .collect();
    let holds_out = |k: &str| {
        other.is_some_and(|o| !o.join(k).exists())
            && out.iter().any(|o| o.starts_with(&format!("{k}/")))
    };
    all.into_iter()
        .filter(|(k, _)| {
            let k = String::from_utf8_lossy(k);
            k != "." && !left_out(&k) && !holds_out(&k)
        })
        .collect()
}

/// One random case; returns the entries it found kept in the backups.
fn one_case(case: u64) -> usize {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ case.wrapping_mul(0x2545_f491_4f6c_dd1d) | 1);
    let t = tmp();
    chmod(t.path(), 0o755);
    let (s, d, bk) = (t.path().join("src"), t.path().join("dst"), t.path().join("bk"));
    let entries = 8 + rng.pick(20);
    grow(&s, &mut rng, entries, "e");
    fs::create_dir(&d).unwrap();
    fs::create_dir(&bk).unwrap();
    give_to_nobody(&s);
    give_to_nobody(&d);
    give_to_nobody(&bk);
    // Every other case keeps what it replaces or deletes.
    let keep: &[&str] = if case % 2 == 1 { &["--backup-dir", "../bk"] } else { &[] };
    run(&["--delete"], &s, &d).assert_code(0);
    change(&s, &d, &mut rng);
    give_to_nobody(&s);
    give_to_nobody(&d);
    let mut closed = Closed::default();
    closed.close(&s, &d, &mut rng);
    let before = describe(&d);
    // An entry SRC has where DST holds one the exclusions leave out (a directory called cache
    // where SRC has a file of that name) is refused: exit 1 too.
    let refused: Vec<String> = describe(&s)
        .keys()
        .map(|k| String::from_utf8_lossy(k).into_owned())
        .filter(|k| k != "." && !closed.covers(k) && !excluded(k, &s))
        .filter(|k| before.contains_key(k.as_bytes()) && excluded(k, &d))
        .collect();
    let dry = run(&[&["-n", "--delete"], keep].concat(), &s, &d);
    let real = run(&[&["-v", "--delete"], keep].concat(), &s, &d);
    let ctx = || format!("case {case}: {closed:?}, refused {refused:?}\n{}", real.dump());
    assert_same_run(&dry, &real);
    let want = if closed.any() || !refused.is_empty() { 1 } else { 0 };
    assert_eq!(real.code(), want, "{}", ctx());
    assert_eq!(dry.code(), want, "dry run\n{}", ctx());
    // What DST had under an unknown or excluded part is where it was, as it was.
    let after = describe(&d);
    for (k, node) in &before {
        let rel = String::from_utf8_lossy(k);
        if k != b"." && (closed.covers(&rel) || excluded(&rel, &d) || excluded(&rel, &s)) {
            assert_eq!(after.get(k), Some(node), "{rel} moved, changed or deleted\n{}", ctx());
        }
    }
    // What SRC has readable and not excluded is mirrored.
    let (src_view, dst_view) = (visible(&s, None), visible(&d, Some(&s)));
    for (k, node) in &src_view {
        let rel = String::from_utf8_lossy(k);
        let unknown_parent = closed.unexamined.iter().any(|p| *rel == **p);
        let left_alone = closed.covers(&rel) || unknown_parent || excluded(&rel, &d);
        if left_alone || closed.unlisted.iter().any(|p| *rel == **p) {
            continue;
        }
        let mut theirs = dst_view.get(k).cloned();
        if let (Some(t), "dir") = (theirs.as_mut(), node.kind) {
            // A directory holding unknown parts keeps the times of the writes into it.
            t.mtime_ns = node.mtime_ns;
        }
        let (mine, theirs) = (Some(node), theirs.as_ref());
        assert!(
            mine == theirs,
            "{rel} not mirrored: {:?}\n{}",
            differences(&src_view, &dst_view),
            ctx()
        );
    }
    if !closed.any() {
        let extra: Vec<_> = dst_view.keys().filter(|k| !src_view.contains_key(*k)).collect();
        assert!(extra.is_empty(), "not deleted: {extra:?}\n{}", ctx());
    }
    let kept = describe(&bk);
    if !keep.is_empty() {
        assert_kept(&before, &after, &kept, &real, &ctx);
    }
    // Readable again: one more run makes the mirror exact.
    closed.open(&s);
    let last = run(&[&["--delete"], keep].concat(), &s, &d);
    last.assert_code(if refused.is_empty() { 0 } else { 1 });
    let mut diff = differences(&visible(&s, None), &visible(&d, Some(&s)));
    diff.retain(|line| !refused.iter().any(|r| line.starts_with(&format!("{r}: "))));
    assert!(diff.is_empty(), "case {case}: {diff:#?}\n{}", last.dump());
    kept.len() - 1
}

/// Every file DST had (`before`) is, with its content, where it was (`after`), at its path in
/// the backups (`kept`), or was renamed by the run: a file moved whole, or a file below a
/// renamed directory, then looked for at its new path.
fn assert_kept(
    before: &BTreeMap<Vec<u8>, Node>,
    after: &BTreeMap<Vec<u8>, Node>,
    kept: &BTreeMap<Vec<u8>, Node>,
    real: &Out,
    ctx: &dyn Fn() -> String,
) {
    let renames: Vec<(String, String)> = changes(real)
        .iter()
        .filter_map(|l| l.strip_prefix("rename ")?.split_once(" <- "))
        .map(|(to, from)| (to.to_owned(), from.to_owned()))
        .collect();
    for (k, node) in before.iter().filter(|(_, n)| n.kind == "file") {
        let rel = String::from_utf8_lossy(k).into_owned();
        if renames.iter().any(|(_, from)| *from == rel) {
            continue;
        }
        let now = renames
            .iter()
            .find_map(|(to, from)| {
                rel.strip_prefix(&format!("{from}/")).map(|r| format!("{to}/{r}"))
            })
            .unwrap_or_else(|| rel.clone());
        let same = |m: &BTreeMap<Vec<u8>, Node>| {
            m.get(now.as_bytes()).is_some_and(|n| n.content == node.content)
        };
        assert!(same(after) || same(kept), "{rel} (now {now}) neither kept nor in DST\n{}", ctx());
    }
}

/// The paths where two trees differ, each with what either side has (content cut short).
fn differences(a: &BTreeMap<Vec<u8>, Node>, b: &BTreeMap<Vec<u8>, Node>) -> Vec<String> {
    let short = |n: Option<&Node>| {
        n.map(|n| {
            let mut n = n.clone();
            n.content.truncate(8);
            n
        })
    };
    let keys: std::collections::BTreeSet<&Vec<u8>> = a.keys().chain(b.keys()).collect();
    keys.into_iter()
        .filter(|k| a.get(*k) != b.get(*k))
        .map(|k| {
            let (x, y) = (short(a.get(k)), short(b.get(k)));
            format!("{}: src {x:?} dst {y:?}", String::from_utf8_lossy(k))
        })
        .collect()
}

#[test]
fn unread_and_excluded_parts_stay_as_they_were_and_the_dry_run_is_the_run() {
    let test = "unread_and_excluded_parts_stay_as_they_were_and_the_dry_run_is_the_run";
    if !require(is_root(), test, "needs root (trees partly root's, runs as nobody)") {
        return;
    }
    let kept: usize = (0..32).map(one_case).sum();
    assert!(kept > 0, "no case kept anything: the backups went untested");
}
