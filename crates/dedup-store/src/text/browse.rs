//! Lines of the read-only commands: a snapshot in `snapshots`, an entry in `ls -l`, an entry
//! of `diff`. Labels and paths are quoted, so that no host, tag or name can forge a line.

use super::{quote, show_time};
use crate::commands::DiffEntry;
use crate::format::{Node, NodeKind, Snapshot};
use crate::id::Id;

/// One line of `snapshots`: short id, time (UTC), host, paths, tags, and a mark when incomplete.
pub fn snapshot_line(id: &Id, s: &Snapshot) -> String {
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

/// One line of `ls`: the path below the snapshot's root, with its leading `/`, quoted when it
/// is not printable UTF-8.
pub fn ls_line(path: &[u8]) -> String {
    quote(&rooted(path))
}

/// `/path`: a path below a snapshot's root as `ls` and `diff` show it.
fn rooted(path: &[u8]) -> Vec<u8> {
    let mut shown = Vec::with_capacity(path.len() + 1);
    shown.push(b'/');
    shown.extend_from_slice(path);
    shown
}

/// One line of `ls -l`: kind and mode, owner, size, modification time, path (below the
/// snapshot's root), a symlink's target, and a mark when incomplete.
pub fn ls_long_line(path: &[u8], node: &Node) -> String {
    let target = if node.kind == NodeKind::Symlink {
        format!(" -> {}", quote(&node.target))
    } else {
        String::new()
    };
    let mark = if node.incomplete { " (incomplete)" } else { "" };
    format!(
        "{}{:04o} {:>5} {:>5} {:>12} {} {}{target}{mark}",
        node.kind.letter(),
        node.mode,
        node.uid,
        node.gid,
        node.size,
        show_time(node.mtime),
        ls_line(path)
    )
}

impl DiffEntry {
    /// The entry as `diff` shows it: `+`, `-` or `M`, then its path.
    pub fn line(&self) -> String {
        format!("{}    {}", self.change.mark(), quote(&self.path))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_with_control_characters_cannot_forge_lines() {
        let s = Snapshot {
            host: "evil\nabcd1234  2020-01-01 00:00:00  h  /x".into(),
            tags: vec!["a\tb".into(), "plain".into()],
            paths: vec![b"/p".to_vec()],
            ..Snapshot::default()
        };
        let shown = snapshot_line(&Id([1; 32]), &s);
        assert!(!shown.contains('\n') && !shown.contains('\t'), "{shown}");
        assert!(shown.contains("\"evil\\nabcd1234"), "{shown}");
        assert!(shown.contains("[\"a\\tb\",plain]"), "{shown}");
    }

    #[test]
    fn a_symlink_shows_its_target_quoted() {
        let node = Node {
            kind: NodeKind::Symlink,
            mode: 0o777,
            target: b"to\nthere".to_vec(),
            ..Node::default()
        };
        let line = ls_long_line(b"dir/link", &node);
        assert!(line.ends_with(" /dir/link -> \"to\\nthere\""), "{line}");
        assert!(!line.contains('\n'), "{line}");
    }
}
