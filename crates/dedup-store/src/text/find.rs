//! `find`'s output: each snapshot with matches as a heading and its entries as `ls -l` shows
//! them, or (`--json`) a JSON array with one object per such snapshot, written a snapshot at a
//! time so that memory holds one snapshot's matches, not the run's.

use std::io::{self, Write};

use serde_json::{json, Value};

use super::{json_path, quote, rfc3339, show_time};
use crate::commands::Found;
use crate::format::{Node, NodeKind};
use crate::id::Id;

/// restic's names of entry kinds.
pub fn kind_name(kind: NodeKind) -> &'static str {
    match kind {
        NodeKind::File => "file",
        NodeKind::Dir => "dir",
        NodeKind::Symlink => "symlink",
        NodeKind::Fifo => "fifo",
        NodeKind::CharDevice => "chardev",
        NodeKind::BlockDevice => "dev",
        NodeKind::Socket => "socket",
    }
}

/// One entry found, as `ls -l` shows it.
pub fn find_line(path: &[u8], node: &Node) -> String {
    let mark = if node.incomplete { " (incomplete)" } else { "" };
    format!(
        "{}{:04o} {:>12} {} {}{mark}",
        node.kind.letter(),
        node.mode,
        node.size,
        show_time(node.mtime),
        quote(path)
    )
}

/// One entry found, as a record of `--json`.
pub fn find_match_record(path: &[u8], node: &Node) -> Value {
    json!({
        "path": json_path(path), "type": kind_name(node.kind), "mode": node.mode,
        "size": node.size, "mtime": rfc3339(node.mtime), "mtime_ns": node.mtime,
        "uid": node.uid, "gid": node.gid, "incomplete": node.incomplete,
    })
}

/// Writes what `find` hands over, as text or as JSON.
pub struct FindWriter<W: Write> {
    out: W,
    json: bool,
    /// The snapshot of the last entry.
    current: Option<Id>,
    /// With `--json`: the object of the snapshot whose entries are coming, not yet written.
    group: Option<Value>,
    groups_written: u64,
}

impl<W: Write> FindWriter<W> {
    /// Writes into `out`; with `json`, a JSON array.
    pub fn new(out: W, json: bool) -> Self {
        FindWriter { out, json, current: None, group: None, groups_written: 0 }
    }

    /// Writes (or, with JSON, keeps until its snapshot is done) one entry found.
    pub fn found(&mut self, found: &Found<'_>) -> io::Result<()> {
        let first = self.current != Some(*found.id);
        self.current = Some(*found.id);
        if !self.json {
            if first {
                writeln!(
                    self.out,
                    "Found in snapshot {} of {} ({}):",
                    found.id.short(8),
                    show_time(found.snapshot.time),
                    quote(found.snapshot.host.as_bytes())
                )?;
            }
            return writeln!(self.out, "  {}", find_line(found.path, found.node));
        }
        if first {
            self.write_group()?;
            self.group = Some(json!({
                "snapshot": found.id.to_hex(), "short_id": found.id.short(8),
                "time": rfc3339(found.snapshot.time), "host": found.snapshot.host,
                "hits": 0, "matches": [],
            }));
        }
        if let Some(group) = self.group.as_mut() {
            group["hits"] = (group["hits"].as_u64().unwrap_or(0) + 1).into();
            if let Some(matches) = group["matches"].as_array_mut() {
                matches.push(find_match_record(found.path, found.node));
            }
        }
        Ok(())
    }

    /// Writes what is kept and, with JSON, closes the array.
    pub fn finish(mut self) -> io::Result<()> {
        if !self.json {
            return Ok(());
        }
        self.write_group()?;
        let end = if self.groups_written == 0 { "[]" } else { "\n]" };
        writeln!(self.out, "{end}")
    }

    /// The object of the snapshot done, if any, after the `[` or a `,`.
    fn write_group(&mut self) -> io::Result<()> {
        let Some(group) = self.group.take() else { return Ok(()) };
        let before = if self.groups_written == 0 { "[\n" } else { ",\n" };
        self.groups_written += 1;
        write!(self.out, "{before}{group}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::Snapshot;

    fn write(json: bool) -> String {
        let (a, b) = (Id([1; 32]), Id([2; 32]));
        let snapshot = Snapshot { host: "h".into(), ..Snapshot::default() };
        let node = Node { kind: NodeKind::File, mode: 0o644, size: 3, ..Node::default() };
        let mut out = Vec::new();
        let mut writer = FindWriter::new(&mut out, json);
        for (id, path) in [(&a, &b"/x"[..]), (&a, b"/y"), (&b, b"/x")] {
            let found = Found { id, snapshot: &snapshot, path, node: &node };
            writer.found(&found).unwrap();
        }
        writer.finish().unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn text_has_a_heading_per_snapshot_and_a_line_per_entry() {
        let text = write(false);
        assert_eq!(text.lines().filter(|l| l.starts_with("Found in snapshot")).count(), 2);
        assert!(text.contains("  -0644            3 1970-01-01 00:00:00 /y\n"), "{text}");
    }

    #[test]
    fn json_is_one_array_with_an_object_per_snapshot() {
        let value: Value = serde_json::from_str(&write(true)).unwrap();
        let groups = value.as_array().unwrap();
        assert_eq!((groups.len(), groups[0]["hits"].as_u64()), (2, Some(2)));
        assert_eq!(groups[1]["matches"][0]["path"], "/x");
        let mut none = Vec::new();
        FindWriter::new(&mut none, true).finish().unwrap();
        assert_eq!(none, b"[]\n");
    }
}
