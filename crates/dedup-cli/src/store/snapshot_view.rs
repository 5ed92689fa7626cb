//! How a snapshot is shown: one line of `snapshots` (host, tags and paths escaped, so that no
//! label can forge a line), and its JSON object, with RFC 3339 times and restic's field names
//! beside dedup's own.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use dedup_store::format::Snapshot;
use dedup_store::Id;

use super::show_time;

/// A path in JSON: text when UTF-8, else `{"bytes": base64}` (the report's convention).
pub fn json_path(bytes: &[u8]) -> serde_json::Value {
    match std::str::from_utf8(bytes) {
        Ok(text) => serde_json::Value::from(text),
        Err(_) => serde_json::json!({ "bytes": STANDARD.encode(bytes) }),
    }
}

/// Any bytes as one printable line: as they are when they are printable UTF-8, else quoted
/// with escapes (`"a\nb"`).
pub fn quote(bytes: &[u8]) -> String {
    crate::messages::quote_path(Path::new(OsStr::from_bytes(bytes)))
}

/// A time in ns since the epoch as RFC 3339 in UTC, to the nanosecond:
/// `2023-11-14T22:13:20.123456789Z`.
pub fn rfc3339(ns: i64) -> String {
    format!("{}.{:09}Z", show_time(ns).replacen(' ', "T", 1), ns.rem_euclid(1_000_000_000))
}

/// The uid of a user recorded as `uid<N>`: what a backup records when the user id has no name.
fn bare_uid(user: &str) -> Option<u32> {
    user.strip_prefix("uid").filter(|n| n.bytes().all(|b| b.is_ascii_digit()))?.parse().ok()
}

/// One line of `snapshots`: short id, time (UTC), host, paths, tags, and a mark when incomplete.
pub fn line(id: &Id, s: &Snapshot) -> String {
    let paths: Vec<String> = s.paths.iter().map(|p| quote(p)).collect();
    let tags = if s.tags.is_empty() {
        String::new()
    } else {
        let tags: Vec<String> = s.tags.iter().map(|t| quote(t.as_bytes())).collect();
        format!(" [{}]", tags.join(","))
    };
    let mark = if s.incomplete { " (incomplete)" } else { "" };
    format!(
        "{}  {}  {}  {}{tags}{mark}",
        id.short(8),
        show_time(s.time),
        quote(s.host.as_bytes()),
        paths.join(" ")
    )
}

/// The JSON object of a snapshot in `snapshots --json`. `user` is the user name, or null with
/// `uid` when the backup knew only the user id; `hostname`, `username` and `program_version`
/// are restic's names for the same things.
pub fn json(id: &Id, s: &Snapshot) -> serde_json::Value {
    let mut object = serde_json::json!({
        "id": id.to_hex(), "short_id": id.short(8), "time": rfc3339(s.time), "time_ns": s.time,
        "host": s.host, "hostname": s.host,
        "paths": s.paths.iter().map(|p| json_path(p)).collect::<Vec<_>>(),
        "tags": s.tags, "tree": s.tree.to_hex(), "parent": s.parent.map(|p| p.to_hex()),
        "incomplete": s.incomplete, "bytes_total": s.summary.bytes_total,
        "bytes_added": s.summary.bytes_added, "program_version": s.program,
    });
    if let Some(original) = s.original {
        // restic's field: the snapshot a tag, rewrite or copy made this one from.
        object["original"] = serde_json::Value::from(original.to_hex());
    }
    let user = match bare_uid(&s.user) {
        Some(uid) => {
            object["uid"] = serde_json::Value::from(uid);
            serde_json::Value::Null
        }
        None => serde_json::Value::from(s.user.as_str()),
    };
    object["user"] = user.clone();
    object["username"] = user;
    object
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_rfc3339_in_utc_to_the_nanosecond() {
        assert_eq!(rfc3339(1_700_000_000_123_456_789), "2023-11-14T22:13:20.123456789Z");
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00.000000000Z");
        assert_eq!(rfc3339(-1), "1969-12-31T23:59:59.999999999Z");
    }

    #[test]
    fn labels_with_control_characters_cannot_forge_lines() {
        let s = Snapshot {
            host: "evil\nabcd1234  2020-01-01 00:00:00  h  /x".into(),
            tags: vec!["a\tb".into(), "plain".into()],
            paths: vec![b"/p".to_vec()],
            ..Snapshot::default()
        };
        let shown = line(&Id([1; 32]), &s);
        assert!(!shown.contains('\n') && !shown.contains('\t'), "{shown}");
        assert!(shown.contains("\"evil\\nabcd1234"), "{shown}");
        assert!(shown.contains("[\"a\\tb\",plain]"), "{shown}");
    }

    #[test]
    fn a_user_known_only_by_id_shows_as_a_number() {
        let named = Snapshot { user: "alice".into(), ..Snapshot::default() };
        let value = json(&Id([2; 32]), &named);
        assert_eq!((value["user"].as_str(), value.get("uid")), (Some("alice"), None));
        let bare = Snapshot { user: "uid1000".into(), ..Snapshot::default() };
        let value = json(&Id([2; 32]), &bare);
        assert_eq!((value["user"].is_null(), value["uid"].as_u64()), (true, Some(1000)));
        assert_eq!(bare_uid("uidx"), None);
        assert_eq!(bare_uid("uid"), None);
    }
}
