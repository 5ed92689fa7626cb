//! `backup --json` and `restore --json` (issue 39): JSON lines on stdout as restic prints them —
//! `status` lines while the job runs (their interval forced short by DEDUP_JSON_STATUS_MS), an
//! `error` line for each entry not read, one `summary` last with the counts — and the exit status
//! as without `--json`.

use crate::common::store::*;
use crate::common::{is_root, require};

use std::ffi::OsStr;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use serde_json::Value;

/// Every line of `stdout`, each of which must be a JSON object with a `message_type`.
fn lines(stdout: &[u8]) -> Vec<Value> {
    let text = String::from_utf8(stdout.to_vec()).expect("stdout is UTF-8");
    text.lines()
        .map(|line| {
            let value: Value = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("not a JSON line ({e}): {line:?}\n{text}"));
            assert!(value["message_type"].is_string(), "no message_type: {line}");
            value
        })
        .collect()
}

/// The lines of type `kind`.
fn of_type<'v>(lines: &'v [Value], kind: &str) -> Vec<&'v Value> {
    lines.iter().filter(|l| l["message_type"] == kind).collect()
}

/// The single summary, which must come last.
fn summary(lines: &[Value]) -> &Value {
    assert_eq!(of_type(lines, "summary").len(), 1, "one summary: {lines:?}");
    let last = lines.last().unwrap();
    assert_eq!(last["message_type"], "summary", "the summary comes last: {lines:?}");
    last
}

/// Files of `size` incompressible bytes, enough of them that a backup and a restore each last
/// many status intervals of a millisecond.
fn tree(src: &Path, files: usize, size: usize) {
    fs::create_dir_all(src).unwrap();
    for i in 0..files {
        let bytes =
            crate::common::noise_bytes((i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15), size);
        fs::write(src.join(format!("f{i}")), bytes).unwrap();
    }
}

#[test]
fn backup_and_restore_print_status_lines_then_one_summary_with_the_counts() {
    let dir = tempfile::tempdir().unwrap();
    let (src, repo) = (dir.path().join("src"), dir.path().join("repo"));
    tree(&src, 8, 1 << 20);
    init_repo(&repo);
    let backup = |extra: &[&str]| {
        let mut c = store_cmd(&repo);
        c.env("DEDUP_JSON_STATUS_MS", "1").args(["backup", "--json"]).args(extra).arg(&src);
        let out = crate::common::run(&mut c);
        out.assert_code(0);
        lines(&out.stdout)
    };
    let first = backup(&[]);
    let s = summary(&first);
    assert_eq!((s["files_new"].as_u64(), s["files_unmodified"].as_u64()), (Some(8), Some(0)));
    assert_eq!(s["total_files_processed"], 8);
    assert_eq!(s["total_bytes_processed"], 8 << 20);
    assert!(s["data_added"].as_u64().unwrap() >= 8 << 20, "{s}");
    let id = s["snapshot_id"].as_str().unwrap().to_string();
    assert_eq!(s["snapshot"], id, "the field dedup printed before stays");
    assert_eq!(snapshot_of(&repo, &src), id);
    let status = of_type(&first, "status");
    assert!(!status.is_empty(), "status lines while the backup ran: {first:?}");
    for line in &status {
        let done = line["percent_done"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&done), "{line}");
        assert!(line["bytes_done"].as_u64().unwrap() <= 8 << 20, "{line}");
        assert!(line["seconds_elapsed"].is_u64() && line["files_done"].is_u64(), "{line}");
        for file in line["current_files"].as_array().into_iter().flatten() {
            let file = Path::new(file.as_str().unwrap());
            assert_eq!(file.parent(), Some(src.as_path()), "a file being backed up: {line}");
        }
    }

    // Unchanged but for one file: the parent gives the totals from the start.
    fs::write(src.join("f0"), b"changed").unwrap();
    let second = backup(&[]);
    let s = summary(&second);
    // Files written moments before the first backup may be read again (their times could hide
    // a change made within the same tick), so only the sum and the one change are certain.
    let (changed, unmodified) =
        (s["files_changed"].as_u64().unwrap(), s["files_unmodified"].as_u64().unwrap());
    assert_eq!((s["files_new"].as_u64(), changed + unmodified), (Some(0), 8), "{s}");
    assert!(changed >= 1, "{s}");
    for line in of_type(&second, "status") {
        assert_eq!(line["total_files"], 8, "{line}");
        assert!(line["total_bytes"].is_u64(), "{line}");
    }

    let target = dir.path().join("restored");
    let mut c = store_cmd(&repo);
    c.env("DEDUP_JSON_STATUS_MS", "1")
        .args(["restore", "--json", "latest", "--target"])
        .arg(&target);
    let out = crate::common::run(&mut c);
    out.assert_code(0);
    let restored = lines(&out.stdout);
    let s = summary(&restored);
    assert_eq!(s["files_restored"], 8, "{s}");
    assert_eq!(s["bytes_restored"], 7 * (1 << 20) + 7, "{s}");
    assert_eq!(s["errors"], 0);
    let status = of_type(&restored, "status");
    assert!(!status.is_empty(), "status lines: {restored:?}");
    for pair in status.windows(2) {
        let (a, b) = (&pair[0]["bytes_restored"], &pair[1]["bytes_restored"]);
        assert!(a.as_u64().unwrap() <= b.as_u64().unwrap(), "counts only grow: {status:?}");
    }
    assert!(status.iter().all(|l| l["files_restored"].as_u64().unwrap() <= 8), "{status:?}");
    assert_eq!(
        fs::read(target.join(src.strip_prefix("/").unwrap()).join("f0")).unwrap(),
        b"changed"
    );
}

#[test]
fn with_status_lines_off_stdout_is_the_summary_alone() {
    let dir = tempfile::tempdir().unwrap();
    let (src, repo) = (dir.path().join("src"), dir.path().join("repo"));
    tree(&src, 2, 1000);
    init_repo(&repo);
    let s = backup_json(&repo, &src);
    assert_eq!(s["message_type"], "summary");
    assert_eq!(s["files_new"], 2);
}

#[test]
fn an_unreadable_file_is_an_error_line_and_the_backup_exits_1() {
    let test = "an_unreadable_file_is_an_error_line_and_the_backup_exits_1";
    if !require(is_root(), test, "running as user nobody (setpriv) needs root") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755)).unwrap();
    let (src, repo) = (dir.path().join("src"), dir.path().join("repo"));
    fs::create_dir_all(&src).unwrap();
    fs::write(src.join("open"), b"anyone reads this").unwrap();
    fs::write(src.join("secret"), b"root only").unwrap();
    fs::set_permissions(src.join("secret"), fs::Permissions::from_mode(0o600)).unwrap();
    init_repo(&repo);
    std::process::Command::new("chown").args(["-R", "65534:65534"]).arg(&repo).status().unwrap();
    let args = [OsStr::new("backup"), OsStr::new("--json"), src.as_os_str()];
    let out = store_as_nobody(&repo, &args);
    out.assert_code(1);
    let all = lines(&out.stdout);
    let errors = of_type(&all, "error");
    assert_eq!(errors.len(), 1, "{all:?}");
    let secret = src.join("secret");
    assert_eq!(errors[0]["item"], secret.to_str().unwrap());
    assert_eq!(errors[0]["during"], "archival");
    let message = errors[0]["error"]["message"].as_str().unwrap();
    assert!(message.contains("Permission denied"), "{message}");
    let s = summary(&all);
    assert_eq!((s["incomplete"].as_bool(), s["errors"].as_u64()), (Some(true), Some(1)));
    assert_eq!(s["files_new"], 2, "the unreadable file is in the snapshot, flagged: {s}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("Permission denied"), "still named on stderr: {stderr}");
}

/// Without `--json`, a backup's stdout is its summary alone: an entry it could not read (here a
/// path that is not there) is named on stderr, with no JSON `error` line among the text.
#[test]
fn without_json_an_entry_not_read_is_named_on_stderr_only() {
    let dir = tempfile::tempdir().unwrap();
    let (src, repo) = (dir.path().join("src"), dir.path().join("repo"));
    tree(&src, 1, 10);
    init_repo(&repo);
    let missing = dir.path().join("missing");
    let out = store(&repo, &[OsStr::new("backup"), src.as_os_str(), missing.as_os_str()]);
    out.assert_code(1);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!stdout.contains("message_type"), "{stdout}");
    assert!(stdout.lines().all(|l| !l.starts_with('{')), "{stdout}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(missing.to_str().unwrap()), "named on stderr: {stderr}");
}
