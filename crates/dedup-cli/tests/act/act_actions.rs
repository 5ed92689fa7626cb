//! `symlink`, `remove` and `move` end to end, `--script`, and bad input: reports of another
//! version or truncated, paths gone, read-only file systems, permission errors.

use crate::common;

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use common::act::*;
use common::*;

fn pair(d: &Path) -> Vec<u8> {
    let data = pattern(150_000, 21);
    write(d, "t/a/keep", &data);
    write(d, "t/b/dup1", &data);
    write(d, "t/b/c/dup2", &data);
    write(d, "t/other", b"not a duplicate");
    data
}

#[test]
fn symlink_points_duplicates_at_the_kept_file() {
    let t = tmp();
    let d = t.path();
    pair(d);
    let before = contents(d);
    let out = dedup(d, &["symlink", "t"]);
    out.assert_code(0);
    assert_same_contents(&before, d, &out);
    let keep = d.join("t/a/keep").canonicalize().unwrap();
    for p in ["t/b/dup1", "t/b/c/dup2"] {
        let m = fs::symlink_metadata(d.join(p)).unwrap();
        assert!(m.file_type().is_symlink(), "{p}");
        assert_eq!(fs::read_link(d.join(p)).unwrap(), keep, "symlinks are absolute");
    }
    assert!(fs::symlink_metadata(d.join("t/a/keep")).unwrap().is_file());
}

#[test]
fn remove_keeps_exactly_one_copy_and_frees_its_space() {
    let t = tmp();
    let d = t.path();
    let data = pair(d);
    let freed = allocated(&d.join("t/b/dup1")) + allocated(&d.join("t/b/c/dup2"));
    let out = dedup(d, &["remove", "t"]);
    out.assert_code(0);
    assert_eq!(fs::read(d.join("t/a/keep")).unwrap(), data);
    assert!(!d.join("t/b/dup1").exists() && !d.join("t/b/c/dup2").exists());
    assert!(d.join("t/other").exists());
    let human = format!("{}", indicatif::HumanBytes(freed));
    assert!(stderr(&out).contains(&format!("2 files removed, {human} freed")), "{}", out.dump());
}

#[test]
fn move_keeps_the_relative_path_under_the_destination() {
    let t = tmp();
    let d = t.path();
    let data = pair(d);
    let dry = dedup(d, &["move", "--to", "dups", "--dry-run", "t"]);
    dry.assert_code(0);
    assert!(!d.join("dups").exists(), "dry run created the destination");
    let out = dedup(d, &["move", "--to", "dups", "t"]);
    out.assert_code(0);
    assert_eq!(stdout(&dry), stdout(&out));
    for p in ["dups/t/b/dup1", "dups/t/b/c/dup2"] {
        assert_eq!(fs::read(d.join(p)).unwrap(), data, "{p}\n{}", out.dump());
    }
    assert!(!d.join("t/b/dup1").exists());
    assert_eq!(fs::read(d.join("t/a/keep")).unwrap(), data);
}

#[test]
fn move_never_overwrites_an_existing_destination() {
    let t = tmp();
    let d = t.path();
    let data = pair(d);
    write(d, "dups/t/b/dup1", b"already here");
    let out = dedup(d, &["move", "--to", "dups", "t"]);
    out.assert_code(1);
    out.assert_message("skipped", "t/b/dup1");
    assert_eq!(fs::read(d.join("dups/t/b/dup1")).unwrap(), b"already here");
    assert_eq!(fs::read(d.join("t/b/dup1")).unwrap(), data);
    assert_eq!(fs::read(d.join("dups/t/b/c/dup2")).unwrap(), data);
}

#[test]
fn scripts_do_what_the_tool_does_and_recheck_files() {
    for action in ["link", "symlink", "remove", "move"] {
        let (direct, scripted) = (tmp(), tmp());
        for t in [&direct, &scripted] {
            pair(t.path());
        }
        let args: Vec<&str> = match action {
            "move" => vec!["move", "--to", "dups", "t"],
            a => vec![a, "t"],
        };
        dedup(direct.path(), &args).assert_code(0);
        let script = dedup(scripted.path(), &[&args[..], &["--script"]].concat());
        script.assert_code(0);
        // The script changed nothing by itself being written.
        assert!(scripted.path().join("t/b/dup1").is_file());
        let dir = fs::canonicalize(scripted.path()).unwrap();
        fs::write(dir.join("plan.sh"), &script.stdout).unwrap();
        let st =
            std::process::Command::new("sh").arg("plan.sh").current_dir(&dir).status().unwrap();
        assert!(st.success(), "{action}: script failed\n{}", stdout(&script));
        fs::remove_file(dir.join("plan.sh")).unwrap();
        let view =
            |p: &Path| contents(p).into_iter().map(|(k, v)| (k, v.len())).collect::<Vec<_>>();
        assert_eq!(view(direct.path()), view(scripted.path()), "{action}\n{}", stdout(&script));
        let links = |p: &Path| fs::metadata(p.join("t/a/keep")).unwrap().nlink();
        assert_eq!(links(direct.path()), links(scripted.path()), "{action}");
        assert!(no_temp_names(scripted.path()));
    }
    // A file changed after the script was written is left alone, and the script says so.
    let t = tmp();
    let data = pair(t.path());
    let script = dedup(t.path(), &["remove", "--script", "t"]);
    fs::write(t.path().join("plan.sh"), &script.stdout).unwrap();
    fs::write(t.path().join("t/b/dup1"), flip(&data, 3)).unwrap();
    let out =
        std::process::Command::new("sh").arg("plan.sh").current_dir(t.path()).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("t/b/dup1"));
    assert_eq!(fs::read(t.path().join("t/b/dup1")).unwrap(), flip(&data, 3));
    assert!(!t.path().join("t/b/c/dup2").exists());
}

#[test]
fn bad_reports_are_refused_and_nothing_changes() {
    let t = tmp();
    let d = t.path();
    pair(d);
    save_report(d, &["t"], &d.join("r.json"));
    let good = fs::read_to_string(d.join("r.json")).unwrap();
    fs::write(d.join("truncated.json"), &good[..good.len() / 2]).unwrap();
    let mut v2: serde_json::Value = serde_json::from_str(&good).unwrap();
    v2["version"] = 2.into();
    fs::write(d.join("v2.json"), v2.to_string()).unwrap();
    let before = contents(&d.join("t"));
    for (file, says) in [
        ("truncated.json", "not a valid dedup report"),
        ("v2.json", "version 2"),
        ("missing.json", "cannot open"),
    ] {
        let out = dedup(d, &["remove", "--from", file]);
        out.assert_code(2);
        assert!(stderr(&out).contains(says), "{file}\n{}", out.dump());
        assert_same_contents(&before, &d.join("t"), &out);
    }
    let out = dedup(d, &["remove", "--reference", "no-such-dir", "t"]);
    out.assert_code(2);
    assert_same_contents(&before, &d.join("t"), &out);
    // From stdin, with one path gone since.
    fs::remove_file(d.join("t/b/c/dup2")).unwrap();
    let out = dedup_stdin(d, &["link", "--from", "-"], good.as_bytes());
    out.assert_code(1);
    out.assert_message("skipped", "t/b/c/dup2");
    assert_eq!(
        fs::metadata(d.join("t/b/dup1")).unwrap().ino(),
        fs::metadata(d.join("t/a/keep")).unwrap().ino()
    );
}

#[test]
fn read_only_file_systems_lose_nothing() {
    let Some(fs_) = Tmpfs::new("read_only_file_systems_lose_nothing") else { return };
    let data = pair(&fs_.mnt);
    fs_.remount_ro();
    let before = contents(&fs_.mnt);
    for action in ["link", "symlink", "remove"] {
        let out = dedup(&fs_.mnt, &[action, "t"]);
        out.assert_code(1);
        assert!(stderr(&out).contains("Read-only file system"), "{action}\n{}", out.dump());
        assert_same_contents(&before, &fs_.mnt, &out);
    }
    assert_eq!(fs::read(fs_.mnt.join("t/b/dup1")).unwrap(), data);
}

#[test]
fn permission_errors_are_reported_and_lose_nothing() {
    if !require(
        is_root(),
        "permission_errors_are_reported_and_lose_nothing",
        "needs root to switch to nobody",
    ) {
        return;
    }
    let t = tmp();
    let d = t.path();
    pair(d);
    chmod(d, 0o755);
    for p in ["t", "t/a", "t/b", "t/b/c"] {
        chmod(&d.join(p), 0o755);
    }
    let before = contents(d);
    let out = dedup_as_nobody(d, &["remove", "t"]);
    out.assert_code(1);
    assert!(stderr(&out).contains("Permission denied"), "{}", out.dump());
    assert_same_contents(&before, d, &out);
}

#[test]
fn odd_names_are_acted_on_and_printed_one_per_line() {
    let t = tmp();
    let d = t.path();
    let data = pattern(5000, 41);
    write(d, "t/-dash", &data);
    write_b(d, b"t/new\nline", &data);
    write_b(d, b"t/bad\xffbyte", &data);
    write(d, "t/it's", &data);
    let before = contents(d);
    let dry = dedup(d, &["link", "--dry-run", "t"]);
    dry.assert_code(0);
    assert_eq!(stdout(&dry).lines().count(), 3, "{}", dry.dump());
    let out = dedup(d, &["link", "t"]);
    out.assert_code(0);
    assert_eq!(stdout(&dry), stdout(&out));
    assert_same_contents(&before, d, &out);
    let ino = |rel: &[u8]| fs::metadata(bpath(d, rel)).unwrap().ino();
    assert!([&b"t/new\nline"[..], b"t/bad\xffbyte", b"t/it's"]
        .iter()
        .all(|p| ino(p) == ino(b"t/-dash")));
}
