//! Naming what to restore: paths in a snapshot are bytes on every command line that takes one
//! (`ls SNAP PATH`, `dump SNAP PATH`, `restore SNAP:PATH`, `--include`, `--exclude`);
//! `restore --include` takes a path as `ls` prints it and creates only the directories on the
//! way to what it picks; an include that matches nothing is an error. A file the backup could
//! not read whole (backed up as nobody) is never restored, never passes `--verify`, is refused
//! by `dump` and marked by `ls -l`.

use crate::common;

use std::ffi::{OsStr, OsString};
use std::fs;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use common::store::*;
use common::*;

fn join(path: &Path, rel: &[u8]) -> OsString {
    let mut bytes = path.as_os_str().as_bytes().to_vec();
    bytes.extend_from_slice(rel);
    OsString::from_vec(bytes)
}

fn stderr(out: &Out) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Every path below `root`, relative, sorted.
fn names_below(root: &Path) -> Vec<Vec<u8>> {
    let mut found: Vec<Vec<u8>> = look(root).into_keys().filter(|k| !k.is_empty()).collect();
    found.sort();
    found
}

#[test]
fn paths_that_are_not_utf8_are_named_on_every_command_line() {
    let dir = tmp();
    let (src, repo) = (dir.path().join("src"), dir.path().join("repo"));
    write_b(&src, b"d\xff/f\xfe", b"odd bytes");
    write_b(&src, b"d\xff/other", b"other");
    write_b(&src, b"plain", b"plain");
    init_repo(&repo);
    backup_json(&repo, &src);

    let dir_path = join(&src, b"/d\xff");
    let listed =
        store(&repo, &[OsStr::new("ls"), OsStr::new("-0"), OsStr::new("latest"), &dir_path]);
    listed.assert_code(0);
    let text = listed.stdout.clone();
    assert!(text.windows(2).any(|w| w == b"f\xfe"), "{}", listed.dump());
    assert!(!text.windows(5).any(|w| w == b"plain"), "{}", listed.dump());

    let missing = store(&repo, &["ls", "latest", "/no/such/dir"]);
    missing.assert_code(2);
    assert!(stderr(&missing).contains("/no/such/dir: no such path"), "{}", missing.dump());

    let file_path = join(&src, b"/d\xff/f\xfe");
    let dumped = store(&repo, &[OsStr::new("dump"), OsStr::new("latest"), &file_path]);
    dumped.assert_code(0);
    assert_eq!(dumped.stdout, b"odd bytes");

    let mut spec = b"latest:".to_vec();
    spec.extend_from_slice(dir_path.as_bytes());
    let target = dir.path().join("t1");
    let args =
        [OsStr::new("restore"), OsStr::from_bytes(&spec), "--target".as_ref(), target.as_os_str()];
    store(&repo, &args).assert_code(0);
    assert_eq!(names_below(&target), [b"f\xfe".to_vec(), b"other".to_vec()]);

    let target = dir.path().join("t2");
    let spec = format!("latest:{}", src.display());
    let args = [
        OsStr::new("restore"),
        OsStr::new(&spec),
        "--target".as_ref(),
        target.as_os_str(),
        "--include".as_ref(),
        OsStr::from_bytes(b"/d\xff/f\xfe"),
    ];
    store(&repo, &args).assert_code(0);
    assert_eq!(names_below(&target), [b"d\xff".to_vec(), b"d\xff/f\xfe".to_vec()]);
    let args = [
        OsStr::new("restore"),
        OsStr::new(&spec),
        "--target".as_ref(),
        target.as_os_str(),
        "--exclude".as_ref(),
        OsStr::from_bytes(b"f\xfe"),
    ];
    let target3 = dir.path().join("t3");
    let mut args = args.to_vec();
    args[3] = target3.as_os_str();
    store(&repo, &args).assert_code(0);
    assert_eq!(
        names_below(&target3),
        [b"d\xff".to_vec(), b"d\xff/other".to_vec(), b"plain".to_vec()]
    );
}

#[test]
fn an_include_as_ls_prints_it_restores_that_entry_and_only_the_way_to_it() {
    let dir = tmp();
    let (src, repo) = (dir.path().join("src"), dir.path().join("repo"));
    write(&src, "a/b/c/file", b"wanted");
    write(&src, "a/b/also", b"wanted too");
    write(&src, "a/other/file", b"not wanted");
    write(&src, "x/y/z", b"not wanted");
    mkdir(&src, "a/b/empty");
    init_repo(&repo);
    backup_json(&repo, &src);
    let listing = store_ok(&repo, &["ls", "latest"]);
    let wanted = listing.lines().find(|l| l.ends_with("/a/b")).unwrap().to_string();
    assert_eq!(wanted, format!("{}/a/b", src.display()));

    // The whole snapshot, with the path as `ls` prints it.
    let target = dir.path().join("whole");
    let t = target.to_str().unwrap();
    store_ok(&repo, &["restore", "latest", "--target", t, "--include", &wanted]);
    let inside = target.join(src.strip_prefix("/").unwrap());
    assert_eq!(fs::read(inside.join("a/b/c/file")).unwrap(), b"wanted");
    assert!(inside.join("a/b/empty").is_dir(), "a directory picked is restored, empty too");
    assert!(!inside.join("a/other").exists(), "a directory not on the way was made");
    assert!(!inside.join("x").exists(), "a directory not on the way was made");

    // Below a path of the snapshot, relative to it.
    let target = dir.path().join("below");
    let spec = format!("latest:{}", src.display());
    let t = target.to_str().unwrap();
    store_ok(&repo, &["restore", &spec, "--target", t, "--include", "/a/b/c"]);
    assert_eq!(
        names_below(&target),
        [b"a".to_vec(), b"a/b".to_vec(), b"a/b/c".to_vec(), b"a/b/c/file".to_vec()]
    );
    // A name at any depth, and `*` within a name.
    let target = dir.path().join("names");
    let t = target.to_str().unwrap();
    store_ok(&repo, &["restore", &spec, "--target", t, "--include", "fil*", "--exclude", "/x"]);
    assert_eq!(
        names_below(&target),
        [
            b"a".to_vec(),
            b"a/b".to_vec(),
            b"a/b/c".to_vec(),
            b"a/b/c/file".to_vec(),
            b"a/other".to_vec(),
            b"a/other/file".to_vec()
        ]
    );
}

#[test]
fn an_include_that_matches_nothing_is_an_error() {
    let dir = tmp();
    let (src, repo) = (dir.path().join("src"), dir.path().join("repo"));
    write(&src, "a/file", b"a");
    init_repo(&repo);
    backup_json(&repo, &src);
    let spec = format!("latest:{}", src.display());

    let target = dir.path().join("none");
    let t = target.to_str().unwrap();
    let out = store(&repo, &["restore", &spec, "--target", t, "--include", "/a/nothing"]);
    out.assert_code(2);
    assert!(stderr(&out).contains("/a/nothing"), "{}", out.dump());
    assert!(stderr(&out).contains("nothing was restored"), "{}", out.dump());
    assert!(!target.exists(), "an include that matched nothing made the target");

    let out =
        store(&repo, &["restore", &spec, "--target", t, "--include", "/a", "--include", "b*"]);
    out.assert_code(1);
    assert!(stderr(&out).contains("--include b*: matches nothing"), "{}", out.dump());
    assert_eq!(fs::read(target.join("a/file")).unwrap(), b"a");
}

#[test]
fn a_file_the_backup_could_not_read_is_never_restored_nor_passed() {
    let test = "a_file_the_backup_could_not_read_is_never_restored_nor_passed";
    if !require(is_root(), test, "running as user nobody (setpriv) needs root") {
        return;
    }
    let dir = tmp();
    fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755)).unwrap();
    let (src, repo) = (dir.path().join("src"), dir.path().join("repo"));
    write(&src, "public", b"anyone may read this");
    write(&src, "secret", b"root only");
    chmod(&src.join("secret"), 0o600);
    chmod(&src, 0o755);
    init_repo(&repo);
    let chown = std::process::Command::new("chown").args(["-R", "65534:65534"]).arg(&repo).status();
    assert!(chown.unwrap().success());
    let out = store_as_nobody(&repo, &[OsStr::new("backup"), src.as_os_str()]);
    out.assert_code(1);
    assert!(stderr(&out).contains("Permission denied"), "{}", out.dump());

    let secret = format!("{}/secret", src.display());
    let long = store_ok(&repo, &["ls", "-l", "latest"]);
    let line = long.lines().find(|l| l.contains(&secret)).unwrap();
    assert!(line.ends_with(" (incomplete)"), "{line}");
    let public_line = long.lines().find(|l| l.contains("/public")).unwrap();
    assert!(!public_line.contains("incomplete"), "{public_line}");

    let dumped = store(&repo, &["dump", "latest", &secret]);
    dumped.assert_code(1);
    assert!(dumped.stdout.is_empty());
    assert!(stderr(&dumped).contains("the backup could not read it whole"), "{}", dumped.dump());

    let target = dir.path().join("target");
    let spec = format!("latest:{}", src.display());
    let t = target.to_str().unwrap();
    let out = store(&repo, &["restore", &spec, "--target", t, "--verify"]);
    out.assert_code(1);
    let said = stderr(&out);
    let named = format!(
        "{}: not restored: the backup could not read it whole",
        target.join("secret").display()
    );
    assert!(said.contains(&named), "{}", out.dump());
    assert!(said.contains("--verify: not restored"), "--verify passed it\n{}", out.dump());
    assert!(fs::symlink_metadata(target.join("secret")).is_err(), "a plausible file was made");
    assert_eq!(fs::read(target.join("public")).unwrap(), b"anyone may read this");

    // Over a file of the same name, with every option that replaces: the user's file stays.
    fs::write(target.join("secret"), b"the user's").unwrap();
    let out = store(&repo, &["restore", &spec, "--target", t, "--overwrite", "always", "--delete"]);
    out.assert_code(1);
    assert_eq!(fs::read(target.join("secret")).unwrap(), b"the user's");
}

#[test]
fn a_directory_the_backup_could_not_list_restores_empty_named_and_deletes_nothing_in_it() {
    let test =
        "a_directory_the_backup_could_not_list_restores_empty_named_and_deletes_nothing_in_it";
    if !require(is_root(), test, "running as user nobody (setpriv) needs root") {
        return;
    }
    let dir = tmp();
    fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755)).unwrap();
    let (src, repo) = (dir.path().join("src"), dir.path().join("repo"));
    write(&src, "public", b"anyone may read this");
    write(&src, "closed/inside", b"root only");
    chmod(&src.join("closed"), 0o700);
    chmod(&src, 0o755);
    init_repo(&repo);
    let chown = std::process::Command::new("chown").args(["-R", "65534:65534"]).arg(&repo).status();
    assert!(chown.unwrap().success());
    let out = store_as_nobody(&repo, &[OsStr::new("backup"), src.as_os_str()]);
    out.assert_code(1);

    // The user's files in that directory of the target: not the snapshot's to keep or delete.
    let target = dir.path().join("target");
    write(&target, "closed/users-own", b"the user's");
    write(&target, "gone", b"not in the snapshot");
    let spec = format!("latest:{}", src.display());
    let t = target.to_str().unwrap();
    for dry in [true, false] {
        let mut args = vec!["restore", &spec, "--target", t, "--overwrite", "always", "--delete"];
        if dry {
            args.push("--dry-run");
        }
        let out = store(&repo, &args);
        out.assert_code(1);
        let named = format!(
            "{}: restored empty: the backup could not list this directory",
            target.join("closed").display()
        );
        assert!(stderr(&out).contains(&named), "{}", out.dump());
        assert!(!String::from_utf8_lossy(&out.stdout).contains("users-own"), "{}", out.dump());
    }
    assert_eq!(fs::read(target.join("closed/users-own")).unwrap(), b"the user's");
    assert!(target.join("closed").is_dir());
    assert!(!target.join("gone").exists(), "--delete still removes what the snapshot lacks");
    assert_eq!(fs::read(target.join("public")).unwrap(), b"anyone may read this");
}
