//! A snapshot's JSON object in `snapshots --json`, with RFC 3339 times and restic's field names
//! beside dedup's own (its line is [`super::snapshot_line`]).

use serde_json::{json, Value};

use super::{json_path, rfc3339};
use crate::format::Snapshot;
use crate::id::Id;

/// The uid of a user recorded as `uid<N>`: what a backup records when the user id has no name.
fn bare_uid(user: &str) -> Option<u32> {
    user.strip_prefix("uid").filter(|n| n.bytes().all(|b| b.is_ascii_digit()))?.parse().ok()
}

/// The JSON object of a snapshot in `snapshots --json`. `user` is the user name, or null with
/// `uid` when the backup knew only the user id; `hostname`, `username` and `program_version`
/// are restic's names for the same things.
pub fn snapshot_record(id: &Id, s: &Snapshot) -> Value {
    let mut object = json!({
        "id": id.to_hex(), "short_id": id.short(8), "time": rfc3339(s.time), "time_ns": s.time,
        "host": s.host, "hostname": s.host,
        "paths": s.paths.iter().map(|p| json_path(p)).collect::<Vec<_>>(),
        "tags": s.tags, "tree": s.tree.to_hex(), "parent": s.parent.map(|p| p.to_hex()),
        "incomplete": s.incomplete, "bytes_total": s.summary.bytes_total,
        "bytes_added": s.summary.bytes_added, "program_version": s.program,
    });
    if let Some(original) = s.original {
        // restic's field: the snapshot a tag, rewrite or copy made this one from.
        object["original"] = Value::from(original.to_hex());
    }
    let user = match bare_uid(&s.user) {
        Some(uid) => {
            object["uid"] = Value::from(uid);
            Value::Null
        }
        None => Value::from(s.user.as_str()),
    };
    object["user"] = user.clone();
    object["username"] = user;
    object
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_user_known_only_by_id_shows_as_a_number() {
        let named = Snapshot { user: "alice".into(), ..Snapshot::default() };
        let value = snapshot_record(&Id([2; 32]), &named);
        assert_eq!((value["user"].as_str(), value.get("uid")), (Some("alice"), None));
        let bare = Snapshot { user: "uid1000".into(), ..Snapshot::default() };
        let value = snapshot_record(&Id([2; 32]), &bare);
        assert_eq!((value["user"].is_null(), value["uid"].as_u64()), (true, Some(1000)));
        assert_eq!(bare_uid("uidx"), None);
        assert_eq!(bare_uid("uid"), None);
    }
}
