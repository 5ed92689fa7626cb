//! `dedup store restore` into a target that already holds things: a symlink left there (by an
//! earlier restore or anyone else) is never followed, whatever the options; what stands at a
//! name the snapshot fills is kept or replaced as `--overwrite` says, a directory of the user's
//! goes only with `--delete`, each replacement and deletion is a line on stdout, and
//! `--dry-run` prints the same lines and changes nothing. A path longer than PATH_MAX restores.
//! The repository restored from is never restored into, nor removed by `--delete`; nor is the
//! file its password is read from.

use crate::common;

use std::ffi::OsStr;
use std::fs;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{symlink, MetadataExt};
use std::path::{Path, PathBuf};

use common::store::*;
use common::*;

/// A repository, and beside the targets a directory `outside` no restore may touch.
struct Fixture {
    dir: tempfile::TempDir,
    repo: PathBuf,
    outside: PathBuf,
}

fn fixture() -> Fixture {
    let dir = tmp();
    let repo = dir.path().join("repo");
    init_repo(&repo);
    let outside = dir.path().join("outside");
    fs::create_dir_all(outside.join("sub")).unwrap();
    fs::write(outside.join("keep"), b"secret").unwrap();
    fs::write(outside.join("sub/inner"), b"inner").unwrap();
    chmod(&outside.join("keep"), 0o600);
    chmod(&outside, 0o700);
    Fixture { dir, repo, outside }
}

impl Fixture {
    /// Backs up a tree `build` makes in a new directory `name`; returns `ID:PATH` to restore it.
    fn snapshot(&self, name: &str, build: impl FnOnce(&Path)) -> String {
        let src = self.dir.path().join(name);
        fs::create_dir(&src).unwrap();
        build(&src);
        backup_json(&self.repo, &src);
        let id = snapshot_of(&self.repo, &src);
        format!("{}:{}", &id[..8], src.display())
    }

    fn restore(&self, spec: &str, target: &Path, options: &[&str]) -> Out {
        let mut args: Vec<&OsStr> = vec!["restore".as_ref(), spec.as_ref(), "--target".as_ref()];
        args.push(target.as_os_str());
        args.extend(options.iter().map(OsStr::new));
        store(&self.repo, &args)
    }
}

/// The lines of stdout that name changes (`replace PATH`, `delete PATH`, `keep PATH`), sorted.
fn change_lines(out: &Out) -> Vec<String> {
    let mut lines: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| ["replace ", "delete ", "keep "].iter().any(|w| l.starts_with(w)))
        .map(String::from)
        .collect();
    lines.sort();
    lines
}

fn stderr(out: &Out) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[track_caller]
fn assert_no_panic(out: &Out) {
    assert!(matches!(out.code(), 0 | 1), "{}", out.dump());
    assert!(!stderr(out).contains("panicked"), "{}", out.dump());
}

#[test]
fn a_symlink_left_by_one_snapshot_never_leads_the_next_one_outside() {
    let fx = fixture();
    let outside = fx.outside.clone();
    let first = fx.snapshot("one", |src| {
        symlink(&outside, src.join("a")).unwrap();
        symlink(outside.join("keep"), src.join("b")).unwrap();
        fs::create_dir(src.join("c")).unwrap();
        symlink(&outside, src.join("c/d")).unwrap();
        symlink("../../outside/sub", src.join("rel")).unwrap();
    });
    let second = fx.snapshot("two", |src| {
        fs::create_dir_all(src.join("a/deeper")).unwrap();
        fs::write(src.join("a/f1"), b"written through the link?").unwrap();
        fs::write(src.join("a/deeper/x"), b"x").unwrap();
        chmod(&src.join("a"), 0o777);
        fs::write(src.join("b"), b"not into outside/keep").unwrap();
        fs::create_dir_all(src.join("c/d")).unwrap();
        fs::write(src.join("c/d/e"), b"e").unwrap();
        fs::create_dir(src.join("rel")).unwrap();
        fs::write(src.join("rel/inner"), b"replaced?").unwrap();
    });
    let before = look(&outside);
    let runs: [&[&str]; 6] = [
        &[],
        &["--delete"],
        &["--overwrite", "always"],
        &["--overwrite", "always", "--delete"],
        &["--overwrite", "if-changed"],
        &["--overwrite", "if-newer", "--delete"],
    ];
    for (n, options) in runs.iter().enumerate() {
        let target = fx.dir.path().join(format!("target-{n}"));
        fx.restore(&first, &target, &[]).assert_code(0);
        let out = fx.restore(&second, &target, options);
        assert_no_panic(&out);
        assert_looks_equal(&before, &look(&outside), &format!("{options:?}: outside"));
        let a = fs::symlink_metadata(target.join("a")).unwrap();
        if options.contains(&"--overwrite") {
            assert!(a.is_dir(), "{options:?}: a is not the snapshot's directory");
            assert_eq!(a.mode() & 0o7777, 0o777, "{options:?}");
            assert_eq!(fs::read(target.join("a/deeper/x")).unwrap(), b"x");
            assert_eq!(fs::read(target.join("b")).unwrap(), b"not into outside/keep");
            let lines = change_lines(&out);
            let replaced = format!("replace {}", target.join("a").display());
            assert!(lines.contains(&replaced), "{options:?}: {lines:?}");
        } else {
            // never (the default), with --delete too: the names are the snapshot's.
            assert!(a.file_type().is_symlink(), "{options:?}: the link was replaced");
            assert_eq!(fs::read_link(target.join("a")).unwrap(), outside);
            assert!(String::from_utf8_lossy(&out.stdout).contains("kept"), "{}", out.dump());
            out.assert_code(0);
        }
    }
}

#[test]
fn existing_entries_are_kept_by_default_and_replaced_as_overwrite_says() {
    let fx = fixture();
    let spec = fx.snapshot("src", |src| {
        for name in ["same", "changed", "older-here", "newer-here", "link-1"] {
            fs::write(src.join(name), format!("snapshot's {name}")).unwrap();
        }
        fs::hard_link(src.join("link-1"), src.join("link-2")).unwrap();
        symlink("snapshot's target", src.join("symlink")).unwrap();
    });
    let target = fx.dir.path().join("target");
    let prepare = || {
        let _ = fs::remove_dir_all(&target);
        fx.restore(&spec, &target, &[]).assert_code(0);
        fs::write(target.join("changed"), b"the user's longer version").unwrap();
        let past = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000_000);
        let future = std::time::SystemTime::now() + std::time::Duration::from_secs(100_000);
        let touch = |name: &str, when| {
            let f = fs::File::options().write(true).open(target.join(name)).unwrap();
            f.set_times(fs::FileTimes::new().set_modified(when)).unwrap();
        };
        touch("older-here", past);
        touch("newer-here", future);
        for name in ["link-1", "link-2"] {
            fs::remove_file(target.join(name)).unwrap();
            fs::write(target.join(name), format!("the user's {name}")).unwrap();
        }
        fs::remove_file(target.join("symlink")).unwrap();
        symlink("the user's target", target.join("symlink")).unwrap();
        fs::write(target.join("mine"), b"not in the snapshot").unwrap();
        look(&target)
    };
    let path = |name: &str| format!("replace {}", target.join(name).display());
    let cases: [(&[&str], &[&str]); 4] = [
        (&[], &[]),
        (
            &["--overwrite", "if-changed"],
            &["changed", "link-1", "link-2", "newer-here", "older-here", "symlink"],
        ),
        (&["--overwrite", "if-newer"], &["older-here"]),
        (
            &["--overwrite", "always"],
            &["changed", "link-1", "link-2", "newer-here", "older-here", "same", "symlink"],
        ),
    ];
    for (options, replaced) in cases {
        let before = prepare();
        let dry: Vec<&str> = options.iter().copied().chain(["--dry-run"]).collect();
        let planned = fx.restore(&spec, &target, &dry);
        planned.assert_code(0);
        assert_looks_equal(&before, &look(&target), &format!("{options:?} --dry-run"));
        let same_inode = fs::metadata(target.join("same")).unwrap().ino();
        let out = fx.restore(&spec, &target, options);
        out.assert_code(0);
        let expected: Vec<String> = replaced.iter().map(|n| path(n)).collect();
        assert_eq!(change_lines(&out), expected, "{options:?}\n{}", out.dump());
        assert_eq!(change_lines(&planned), expected, "{options:?}: the dry run said otherwise");
        let after = look(&target);
        for (rel, seen) in &before {
            let name = String::from_utf8_lossy(rel).into_owned();
            if replaced.contains(&name.as_str()) {
                let data = after[rel].data.clone();
                let theirs = if name == "symlink" {
                    b"snapshot's target".to_vec()
                } else {
                    format!("snapshot's {name}").replace("link-2", "link-1").into_bytes()
                };
                assert_eq!(data, theirs, "{options:?}: {name}");
            } else if !rel.is_empty() {
                assert_eq!(after.get(rel), Some(seen), "{options:?}: {name} changed");
            }
        }
        assert_eq!(fs::read(target.join("mine")).unwrap(), b"not in the snapshot");
        if replaced.contains(&"link-2") {
            let ino = |n: &str| fs::metadata(target.join(n)).unwrap().ino();
            assert_eq!(ino("link-1"), ino("link-2"), "{options:?}: the hard link");
        }
        let same_now = fs::metadata(target.join("same")).unwrap().ino();
        assert_eq!(same_now == same_inode, !replaced.contains(&"same"), "{options:?}");
        if options.is_empty() {
            let verbose = fx.restore(&spec, &target, &["-v"]);
            let keeps = change_lines(&verbose);
            assert_eq!(keeps.len(), 7, "{keeps:?}");
            assert!(keeps.iter().all(|l| l.starts_with("keep ")), "{keeps:?}");
        }
    }
}

#[test]
fn a_users_directory_goes_only_with_delete_and_the_dry_run_tells_the_same() {
    let fx = fixture();
    let source = fx.dir.path().join("src");
    let spec = fx.snapshot("src", |src| {
        fs::write(src.join("x"), b"the snapshot's file x").unwrap();
        fs::create_dir(src.join("d")).unwrap();
        fs::write(src.join("d/kept"), b"kept").unwrap();
        chmod(&src.join("d"), 0o750);
    });
    let target = fx.dir.path().join("target");
    fs::create_dir_all(target.join("x/sub")).unwrap();
    fs::write(target.join("x/sub/inner"), b"the user's").unwrap();
    fs::create_dir_all(target.join("d/extra-dir/deep")).unwrap();
    fs::write(target.join("d/extra"), b"extra").unwrap();
    fs::write(target.join("d/extra-dir/deep/f"), b"f").unwrap();
    symlink(&fx.outside, target.join("d/extra-link")).unwrap();
    fs::write(target.join("stray"), b"stray").unwrap();
    let outside = look(&fx.outside);

    let out = fx.restore(&spec, &target, &["--overwrite", "always"]);
    out.assert_code(1);
    assert!(stderr(&out).contains("a directory is in the way"), "{}", out.dump());
    assert!(stderr(&out).contains(&target.join("x").display().to_string()), "{}", out.dump());
    assert_eq!(fs::read(target.join("x/sub/inner")).unwrap(), b"the user's");
    assert_eq!(fs::read(target.join("stray")).unwrap(), b"stray");

    let before = look(&target);
    let options = ["--overwrite", "always", "--delete"];
    let dry: Vec<&str> = options.iter().copied().chain(["-n"]).collect();
    let planned = fx.restore(&spec, &target, &dry);
    planned.assert_code(0);
    assert_looks_equal(&before, &look(&target), "--dry-run changed the target");
    let out = fx.restore(&spec, &target, &options);
    out.assert_code(0);
    let expected: Vec<String> = [
        "delete d/extra",
        "delete d/extra-dir",
        "delete d/extra-link",
        "delete stray",
        "replace d/kept",
        "replace x",
    ]
    .iter()
    .map(|l| {
        let (word, rel) = l.split_once(' ').unwrap();
        format!("{word} {}", target.join(rel).display())
    })
    .collect();
    assert_eq!(change_lines(&out), expected, "{}", out.dump());
    assert_eq!(change_lines(&planned), expected, "the dry run said otherwise");
    assert_looks_equal(&look(&source), &look(&target), "--overwrite always --delete");
    assert_looks_equal(&outside, &look(&fx.outside), "outside");
}

/// Makes `names` as nested directories below `root`, one name at a time (the whole path is
/// longer than the kernel takes in one call); the deepest, open.
fn nest(root: &Path, names: &[Vec<u8>]) -> OwnedFd {
    let mut dir = dedup_scan::open_dir(root, true).unwrap();
    for name in names {
        let name = OsStr::from_bytes(name);
        match dedup_fs::create_dir_at(&dir, name, 0o755) {
            Ok(()) | Err(dedup_fs::FsError::Exists) => {}
            Err(e) => panic!("{e}"),
        }
        dir = dedup_fs::open_dir_at(&dir, name).unwrap();
    }
    dir
}

#[test]
fn a_path_longer_than_path_max_restores_and_verifies() {
    let fx = fixture();
    let names: Vec<Vec<u8>> = (0..18).map(|i| vec![b'a' + i as u8; 250]).collect();
    let content = pattern(70_000, 4);
    let src = fx.dir.path().join("long");
    fs::create_dir(&src).unwrap();
    {
        let deepest = nest(&src, &names);
        let file = rustix::fs::openat(
            &deepest,
            "file",
            rustix::fs::OFlags::CREATE | rustix::fs::OFlags::WRONLY,
            rustix::fs::Mode::from_raw_mode(0o640),
        )
        .unwrap();
        use std::io::Write;
        fs::File::from(file).write_all(&content).unwrap();
    }
    assert!(names.iter().map(|n| n.len() + 1).sum::<usize>() > 4096);
    backup_json(&fx.repo, &src);
    let spec = format!("latest:{}", src.display());
    let target = fx.dir.path().join("target");
    let out = fx.restore(&spec, &target, &["--verify"]);
    out.assert_code(0);
    let deepest = nest(&target, &names);
    let file = dedup_fs::open_file_at(&deepest, OsStr::new("file")).unwrap();
    let mut back = Vec::new();
    use std::io::Read;
    let mut file = file;
    file.read_to_end(&mut back).unwrap();
    assert!(back == content, "the deep file's content differs");
    let st = rustix::fs::statat(&deepest, "file", rustix::fs::AtFlags::SYMLINK_NOFOLLOW).unwrap();
    assert_eq!(st.st_mode & 0o7777, 0o640);
    // Restoring again over it keeps it, and says so.
    let again = fx.restore(&spec, &target, &[]);
    again.assert_code(0);
    assert!(String::from_utf8_lossy(&again.stdout).contains("kept"), "{}", again.dump());
}

#[test]
fn an_interrupted_restore_leaves_only_whole_files_and_a_second_run_finishes_it() {
    let fx = fixture();
    let source = fx.dir.path().join("src");
    let spec = fx.snapshot("src", |src| {
        fs::create_dir(src.join("sub")).unwrap();
        for i in 0..6 {
            fs::write(src.join(format!("sub/big-{i}")), pattern(6 << 20, i)).unwrap();
        }
        for i in 0..40 {
            fs::write(src.join(format!("small-{i}")), pattern(3000, 100 + i)).unwrap();
        }
        chmod(&src.join("sub"), 0o750);
    });
    let target = fx.dir.path().join("target");
    let mut child = std::process::Command::new(BIN)
        .args(["store", "-r"])
        .arg(&fx.repo)
        .args(["restore", &spec, "--target"])
        .arg(&target)
        .env("DEDUP_PASSWORD", PASSWORD)
        .env_remove("DEDUP_REPO")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Killed as soon as a file of `sub` is being written (or left to finish, if it is fast).
    let started = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        let writing =
            fs::read_dir(target.join("sub")).is_ok_and(|mut names| names.next().is_some());
        if writing || started.elapsed() > std::time::Duration::from_secs(120) {
            child.kill().unwrap();
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    child.wait().unwrap();
    let expected = look(&source);
    for (rel, seen) in look(&target).iter().filter(|(_, s)| s.kind == 'f') {
        let shown = String::from_utf8_lossy(rel);
        if shown.contains(".dedup-new.") {
            continue;
        }
        assert!(seen.data == expected[rel].data, "{shown}: a partial file at its own name");
    }
    // Without `--delete`: the temporaries of the killed run go all the same.
    let out = fx.restore(&spec, &target, &["--overwrite", "if-changed"]);
    out.assert_code(0);
    assert_looks_equal(&expected, &look(&target), "after the second run");
}

#[test]
fn delete_never_reaches_into_a_file_system_mounted_in_the_target() {
    let test = "delete_never_reaches_into_a_file_system_mounted_in_the_target";
    if !require(is_root(), test, "mounting a tmpfs needs root") {
        return;
    }
    let fx = fixture();
    let spec = fx.snapshot("src", |src| fs::write(src.join("file"), b"file").unwrap());
    let target = fx.dir.path().join("target");
    let point = target.join("extra/mnt");
    fs::create_dir_all(&point).unwrap();
    fs::write(target.join("extra/other"), b"goes").unwrap();
    let mounted =
        std::process::Command::new("mount").args(["-t", "tmpfs", "none"]).arg(&point).status();
    if !require(mounted.is_ok_and(|s| s.success()), test, "mount -t tmpfs failed") {
        return;
    }
    fs::write(point.join("theirs"), b"on another file system").unwrap();
    let out = fx.restore(&spec, &target, &["--delete"]);
    let theirs = fs::read(point.join("theirs"));
    let _ = std::process::Command::new("umount").arg(&point).status();
    out.assert_code(1);
    assert_eq!(theirs.unwrap(), b"on another file system");
    assert!(stderr(&out).contains("a file system is mounted below it"), "{}", out.dump());
    assert!(!target.join("extra/other").exists(), "the rest of the extra directory stays");
    assert!(change_lines(&out).is_empty(), "a deletion that did not happen was told");
    assert_eq!(fs::read(target.join("file")).unwrap(), b"file");
}

#[test]
fn the_target_may_be_named_through_a_symlink_and_a_single_file_restores_into_it() {
    let fx = fixture();
    let source = fx.dir.path().join("src");
    let spec = fx.snapshot("src", |src| {
        fs::create_dir(src.join("d")).unwrap();
        fs::write(src.join("d/f"), b"f").unwrap();
    });
    let real = fx.dir.path().join("real");
    fs::create_dir(&real).unwrap();
    let link = fx.dir.path().join("link");
    symlink(&real, &link).unwrap();
    fx.restore(&spec, &link, &[]).assert_code(0);
    assert!(fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    assert_eq!(fs::read(real.join("d/f")).unwrap(), b"f");
    let file = format!("latest:{}/d/f", source.display());
    let single = fx.dir.path().join("single");
    fx.restore(&file, &single, &[]).assert_code(0);
    assert_eq!(fs::read(single.join("f")).unwrap(), b"f");
}

/// `restore --delete` over a tree that holds the repository (a home restored in place, the
/// repository in it) removed the repository with every snapshot, as an entry the snapshot
/// lacks; a snapshot holding a directory where the repository stands merged into it, and
/// `--delete` removed the repository's newer files. Now neither happens: each is a problem
/// naming the directory (exit 1), and a target inside the repository is refused.
#[test]
fn a_restore_never_removes_nor_writes_into_the_repository_it_reads() {
    let dir = tmp();
    let home = dir.path().join("home");
    let repo = home.join("backups/repo");
    init_repo(&repo);
    write(&home, "docs/a", b"a");
    store_ok(&repo, &[OsStr::new("backup"), home.join("docs").as_os_str()]);
    // A snapshot of a tree with a directory where the repository is (an old copy of it).
    let other = dir.path().join("other");
    write(&other, "backups/repo/snapshots/old", b"not a snapshot");
    write(&other, "file", b"f");
    store_ok(&repo, &[OsStr::new("backup"), other.as_os_str()]);
    let snapshots = || fs::read_dir(repo.join("snapshots")).unwrap().count();
    assert_eq!(snapshots(), 2);

    let spec = format!("{}:{}", &store_ok(&repo, &["snapshots"])[..8], home.join("docs").display());
    for dry in [true, false] {
        let mut args = vec![OsStr::new("restore"), OsStr::new("--delete"), OsStr::new(&spec)];
        args.extend([OsStr::new("--target"), home.as_os_str()]);
        if dry {
            args.push(OsStr::new("-n"));
        }
        let out = store(&repo, &args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.code, Some(1), "{}", out.dump());
        let named =
            format!("{}: not removed: it holds the repository", home.join("backups").display());
        assert!(stderr.contains(&named), "{stderr}");
        let deleted = format!("delete {}", home.join("backups").display());
        assert!(!String::from_utf8_lossy(&out.stdout).contains(&deleted), "{}", out.dump());
        assert_eq!(snapshots(), 2, "the repository lost snapshots");
    }
    assert_eq!(fs::read(home.join("a")).unwrap(), b"a");

    let spec = format!("latest:{}", other.display());
    let args = [
        OsStr::new("restore"),
        OsStr::new("--delete"),
        OsStr::new("--overwrite"),
        OsStr::new("always"),
        OsStr::new(&spec),
        OsStr::new("--target"),
        home.as_os_str(),
    ];
    let out = store(&repo, &args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.code, Some(1), "{}", out.dump());
    assert!(stderr.contains("not restored into: it is the repository restored from"), "{stderr}");
    assert!(!repo.join("snapshots/old").exists(), "the snapshot's files went into the repository");
    assert_eq!(snapshots(), 2, "the repository lost snapshots");
    store_ok(&repo, &["check", "--read-data"]);

    let inside = repo.join("data/restored");
    let args =
        [OsStr::new("restore"), OsStr::new(&spec), OsStr::new("--target"), inside.as_os_str()];
    let out = store(&repo, &args);
    assert_eq!(out.code, Some(2), "{}", out.dump());
    assert!(String::from_utf8_lossy(&out.stderr).contains("lies inside the repository"));
    assert!(!inside.exists());
    // Named relative to a working directory inside it, and not there yet.
    let out = run(store_cmd(&repo).current_dir(repo.join("data")).args([
        OsStr::new("restore"),
        OsStr::new(&spec),
        OsStr::new("--target"),
        OsStr::new("new"),
    ]));
    assert_eq!(out.code, Some(2), "{}", out.dump());
    assert!(!repo.join("data/new").exists());
}

/// `restore --delete` over a home holding the password file (left out of the backups, as
/// secrets often are) removed it with the directory it was in: with a repository whose key
/// cache is cold, maybe the only copy of the key to every snapshot. A snapshot holding an older
/// password file at its path replaced it. Neither happens now: each is a problem naming the
/// file (exit 1), and the rest of the restore is done.
#[test]
fn a_restore_never_removes_nor_replaces_the_password_file_it_reads() {
    let dir = tmp();
    let repo = dir.path().join("repo");
    init_repo(&repo);
    let home = dir.path().join("home");
    write(&home, "docs/a", b"a");
    store_ok(&repo, &[OsStr::new("backup"), home.as_os_str()]);
    // After the backup: a password file in a directory of its own, and one beside the docs.
    let (secret, beside) = (home.join("secrets/pass"), home.join("docs/pass"));
    let restore_with = |file: &Path, spec: &str, overwrite: &str| {
        let args =
            ["restore", "--delete", "--overwrite", overwrite, spec, "--target"].map(OsStr::new);
        let mut cmd = store_cmd(&repo);
        cmd.env_remove("DEDUP_PASSWORD").arg("--password-file").arg(file);
        run(cmd.args(args).arg(&home))
    };
    let spec = format!("latest:{}", home.display());
    for file in [&secret, &beside] {
        // Each run's other file is the user's own, and goes as --delete says.
        write(&home, "secrets/pass", format!("{PASSWORD}\n").as_bytes());
        write(&home, "docs/pass", format!("{PASSWORD}\n").as_bytes());
        write(&home, "docs/new", b"goes");
        let out = restore_with(file, &spec, "if-changed");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.code, Some(1), "{}", out.dump());
        assert_eq!(fs::read(file).unwrap(), format!("{PASSWORD}\n").as_bytes(), "{stderr}");
        let why = if file == &secret {
            format!("{}: not removed: it holds the password file", home.join("secrets").display())
        } else {
            format!("{}: not removed nor replaced: it is the password file", beside.display())
        };
        assert!(stderr.contains(&why), "{stderr}");
        assert!(!home.join("docs/new").exists(), "the rest of --delete was not done");
    }

    // A snapshot with another file at the password file's path does not replace it.
    write(&home, "docs/pass", b"an old password\n");
    store_ok(&repo, &[OsStr::new("backup"), home.as_os_str()]);
    fs::write(&beside, format!("{PASSWORD}\n")).unwrap();
    let out = restore_with(&beside, &spec, "always");
    assert_eq!(out.code, Some(1), "{}", out.dump());
    assert_eq!(fs::read(&beside).unwrap(), format!("{PASSWORD}\n").as_bytes());
    assert_eq!(fs::read(home.join("docs/a")).unwrap(), b"a");
}
