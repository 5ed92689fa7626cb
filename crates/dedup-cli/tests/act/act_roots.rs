//! An action never reaches outside the trees the user named: a directory swapped for a symlink
//! between the scan and the action, a report whose paths lie under none of its roots or climb
//! out of them with `..`. Each such path is skipped with its reason (exit 1) and the file it
//! would have reached stays as it is.

use crate::common;

use std::fs;

use common::act::*;
use common::*;

const ACTIONS: [&[&str]; 4] = [&["remove"], &["link"], &["symlink"], &["move", "--to", "aside"]];

#[test]
fn a_directory_swapped_for_a_symlink_after_the_scan_is_not_followed() {
    for action in ACTIONS {
        let t = tmp();
        let d = t.path();
        // out/f is a hard link of tree/sub/f made before the scan: the same inode, so every
        // check of identity and stamps passes once tree/sub leads to out.
        write(d, "out/f", b"secret outside the tree");
        hardlink(d, "out/f", "tree/sub/f");
        write(d, "tree/a", b"secret outside the tree");
        save_report(d, &["tree"], &d.join("report.json"));
        fs::rename(d.join("tree/sub"), d.join("tree/sub.old")).unwrap();
        symlink(d, "../out", "tree/sub");
        let out = dedup(d, &[action, &["--keep", "newest", "--from", "report.json"]].concat());
        out.assert_code(1);
        out.assert_message("skipped", "tree/sub/f");
        assert!(stderr(&out).contains("symbolic link"), "{action:?}: {}", out.dump());
        let outside = fs::symlink_metadata(d.join("out/f")).unwrap();
        assert!(outside.is_file(), "{action:?}: out/f changed: {}", out.dump());
        assert_eq!(fs::read(d.join("tree/a")).unwrap(), b"secret outside the tree");
        assert!(!d.join("aside").exists(), "{action:?}");
    }
}

#[test]
fn report_paths_outside_its_roots_are_left_alone() {
    for action in ACTIONS {
        let t = tmp();
        let d = t.path();
        write(d, "tree/a", b"the same bytes");
        write(d, "elsewhere/b", b"the same bytes");
        write(d, "elsewhere/c", b"the same bytes");
        save_report(d, &["tree", "elsewhere"], &d.join("full.json"));
        // The same report, claiming only tree as its root; c named through tree/..
        let text = fs::read_to_string(d.join("full.json")).unwrap();
        let mut report: serde_json::Value = serde_json::from_str(&text).unwrap();
        report["roots"] = serde_json::json!([{ "text": "tree" }]);
        for file in report["groups"][0]["files"].as_array_mut().unwrap() {
            if file["path"]["text"] == "elsewhere/c" {
                file["path"]["text"] = "tree/../elsewhere/c".into();
            }
        }
        fs::write(d.join("report.json"), report.to_string()).unwrap();
        let before = contents(&d.join("elsewhere"));
        let out = dedup(d, &[action, &["--from", "report.json"]].concat());
        out.assert_code(1);
        for path in ["elsewhere/b", "tree/../elsewhere/c"] {
            let said = out.stderr_lines().iter().any(|l| {
                l.starts_with("dedup: skipped: ") && l.contains(path) && l.contains("roots")
            });
            assert!(said, "{action:?}: {path} not named: {}", out.dump());
        }
        assert_same_contents(&before, &d.join("elsewhere"), &out);
        assert!(fs::symlink_metadata(d.join("elsewhere/b")).unwrap().is_file());
        assert!(fs::symlink_metadata(d.join("elsewhere/c")).unwrap().is_file());
        assert_eq!(fs::read(d.join("tree/a")).unwrap(), b"the same bytes");
    }
}

#[test]
fn paths_below_differently_spelled_roots_are_still_acted_on() {
    // The check is by root: `.`, `./tree/`, an absolute root and a symlinked root all still work.
    let t = tmp();
    let d = t.path();
    write(d, "real/x/a", b"same");
    write(d, "real/x/b", b"same");
    symlink(d, "real", "alias");
    for root in [".", "./real/", "alias", &d.join("real").to_string_lossy()] {
        let out = dedup(d, &["link", "-n", root]);
        out.assert_code(0);
        assert_eq!(stdout(&out).lines().count(), 1, "{root}: {}", out.dump());
    }
    let out = dedup(d, &["link", "alias"]);
    out.assert_code(0);
    assert_eq!(ident(&d.join("real/x/a")).1, ident(&d.join("real/x/b")).1);
}

#[test]
fn files_below_path_max_and_beyond_are_acted_on() {
    // 40 directories of 200-byte names: the bottom files' paths are about 8,000 bytes long,
    // beyond PATH_MAX (4096); built bottom-up so no call sees the long path.
    let t = tmp();
    let d = t.path();
    let name = "d".repeat(200);
    write(d, &format!("w0/{name}/bottom"), b"deep and equal");
    write(d, &format!("w0/{name}/bottom2"), b"deep and equal");
    for k in 1..40 {
        mkdir(d, &format!("w{k}/{name}"));
        fs::rename(d.join(format!("w{}/{name}", k - 1)), d.join(format!("w{k}/{name}/{name}")))
            .unwrap();
        fs::remove_dir(d.join(format!("w{}", k - 1))).unwrap();
    }
    fs::rename(d.join("w39"), d.join("tree")).unwrap();
    let out = dedup(d, &["remove", "tree"]);
    out.assert_code(0);
    assert_eq!(stdout(&out).lines().count(), 1, "{}", out.dump());
    let left = std::process::Command::new("find")
        .args(["tree", "-type", "f"])
        .current_dir(d)
        .output()
        .unwrap();
    assert_eq!(left.stdout.split(|&b| b == b'\n').filter(|l| !l.is_empty()).count(), 1);
}

#[test]
fn move_never_follows_a_symlink_planted_below_its_destination() {
    let t = tmp();
    let d = t.path();
    write(d, "tree/a", b"same");
    write(d, "tree/sub/b", b"same");
    mkdir(d, "elsewhere");
    mkdir(d, "aside/tree");
    symlink(d, "../../elsewhere", "aside/tree/sub");
    let dry = dedup(d, &["move", "-n", "--to", "aside", "tree"]);
    let out = dedup(d, &["move", "--to", "aside", "tree"]);
    out.assert_code(1);
    out.assert_message("skipped", "tree/sub/b");
    assert!(stderr(&out).contains("below --to"), "{}", out.dump());
    assert_eq!(stdout(&dry), stdout(&out), "the dry run shows what the run does");
    assert!(fs::read_dir(d.join("elsewhere")).unwrap().next().is_none(), "{}", out.dump());
    assert_eq!(fs::read(d.join("tree/sub/b")).unwrap(), b"same");
    // Without the planted link, the same move goes below the destination as usual.
    fs::remove_file(d.join("aside/tree/sub")).unwrap();
    let out = dedup(d, &["move", "--to", "aside", "tree"]);
    out.assert_code(0);
    assert_eq!(fs::read(d.join("aside/tree/sub/b")).unwrap(), b"same");
}
