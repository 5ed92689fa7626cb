//! Read-only commands: `snapshots`, `ls`, `dump`, `diff`.

use std::io::Write;
use std::os::fd::AsFd;
use std::os::unix::ffi::OsStrExt;

use anyhow::{bail, Context, Result};
use base64::Engine;
use dedup_store::blob::BlobKind;
use dedup_store::format::{Content, Node, NodeKind, Tree};
use dedup_store::index::Index;
use dedup_store::repo::Repository;
use dedup_store::Id;

use super::args::{CommonArgs, DiffArgs, DumpArgs, LsArgs, SnapshotsArgs};
use super::show_time;

/// A path in JSON: text when UTF-8, else `{"bytes": base64}` (the report's convention).
pub(super) fn json_path(bytes: &[u8]) -> serde_json::Value {
    match std::str::from_utf8(bytes) {
        Ok(text) => serde_json::Value::from(text),
        Err(_) => {
            serde_json::json!({ "bytes": base64::engine::general_purpose::STANDARD.encode(bytes) })
        }
    }
}

fn shown(bytes: &[u8]) -> String {
    crate::messages::quote_path(std::path::Path::new(
        <std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(bytes),
    ))
}

/// `dedup store snapshots`.
pub fn snapshots(common: &CommonArgs, args: SnapshotsArgs) -> Result<bool> {
    let repo = super::open(common)?;
    let (mut all, bad) = repo.snapshots()?;
    for err in &bad {
        eprintln!("dedup: error: {err}");
    }
    let filter = super::filter(&args.filter);
    all.retain(|(_, s)| filter.accepts(s));
    if args.json {
        let list: Vec<_> = all.iter().map(|(id, s)| super::snapshot_view::json(id, s)).collect();
        println!("{}", serde_json::Value::from(list));
    } else {
        for (id, s) in &all {
            println!("{}", super::snapshot_view::line(id, s));
        }
    }
    Ok(bad.is_empty())
}

fn long_line(path: &[u8], node: &Node) -> String {
    let target = if node.kind == NodeKind::Symlink {
        format!(" -> {}", shown(&node.target))
    } else {
        String::new()
    };
    let mark = if node.incomplete { " (incomplete)" } else { "" };
    format!(
        "{}{:04o} {:>5} {:>5} {:>12} {} /{}{target}{mark}",
        node.kind.letter(),
        node.mode,
        node.uid,
        node.gid,
        node.size,
        show_time(node.mtime),
        shown(path)
    )
}

/// `dedup store ls`.
pub fn ls(common: &CommonArgs, args: LsArgs) -> Result<bool> {
    let repo = super::open(common)?;
    let (_, snapshot) = repo.find_snapshot(&args.snapshot, &super::filter(&args.filter))?;
    let index = repo.load_index()?.index;
    let asked = args.path.as_deref().map_or(&[][..], |p| p.as_bytes());
    let node = dedup_store::tree::resolve(&repo, &index, snapshot.tree, asked)?;
    let base = trim_slashes(asked).to_vec();
    let mut out = std::io::stdout().lock();
    let mut print = |path: &[u8], node: &Node| -> std::io::Result<()> {
        if args.long {
            writeln!(out, "{}", long_line(path, node))
        } else {
            out.write_all(b"/")?;
            out.write_all(path)?;
            out.write_all(b"\n")
        }
    };
    let io = |e: std::io::Error| dedup_store::Error::io("standard output", e);
    if !base.is_empty() {
        print(&base, &node).map_err(io)?;
    }
    if let Content::Subtree(id) = node.content {
        dedup_store::tree::walk(&repo, &index, id, &mut |rel, child| {
            let mut full = base.clone();
            if !full.is_empty() {
                full.push(b'/');
            }
            full.extend_from_slice(rel);
            print(&full, child).map_err(io)
        })?;
    }
    Ok(true)
}

/// `dedup store dump`: the file's bytes on stdout, or into `-o FILE` (sparse, renamed into
/// place whole). A file the backup could not read whole is refused.
pub fn dump(common: &CommonArgs, args: DumpArgs) -> Result<bool> {
    let repo = super::open(common)?;
    let (_, snapshot) = repo.find_snapshot(&args.snapshot, &super::filter(&args.filter))?;
    let index = repo.load_index()?.index;
    let asked = args.file.as_bytes();
    let node = dedup_store::tree::resolve(&repo, &index, snapshot.tree, asked)?;
    let Content::Chunks(chunks) = &node.content else {
        bail!("{}: not a regular file in the snapshot", shown(asked))
    };
    if node.incomplete {
        eprintln!("dedup: error: {}: {}", shown(asked), dedup_store::restore::NOT_READ_WHOLE);
        return Ok(false);
    }
    match &args.output {
        Some(path) => dump_to_file(&repo, &index, &node, chunks, path)?,
        None => {
            let mut out = std::io::stdout().lock();
            for chunk in chunks {
                out.write_all(&repo.read_blob(&index, chunk, BlobKind::Data)?)?;
            }
            out.flush()?;
        }
    }
    Ok(true)
}

/// Writes the file `node` into a new file beside `path`, leaving its zero blocks as holes, and
/// renames it over `path` (whatever stands there but a directory: a symlink is replaced, never
/// followed). Its permission bits are the snapshot's, less the umask.
fn dump_to_file(
    repo: &Repository,
    index: &Index,
    node: &Node,
    chunks: &[Id],
    path: &std::path::Path,
) -> Result<()> {
    let shown_path = crate::messages::quote_path(path);
    let entry =
        dedup_fs::Entry::open(path).with_context(|| format!("{shown_path}: cannot write it"))?;
    let len: u64 = chunks
        .iter()
        .map(|id| index.lookup(id, BlobKind::Data).map_or(0, |l| u64::from(l.entry.raw_len)))
        .sum();
    let temp = dedup_fs::TempFile::with_mode(entry.dir.as_fd(), node.mode & 0o777)
        .with_context(|| format!("{shown_path}: cannot create a file beside it"))?;
    temp.file().set_len(len).with_context(|| format!("{shown_path}: cannot size it"))?;
    let mut at = 0u64;
    for chunk in chunks {
        let bytes = repo.read_blob(index, chunk, BlobKind::Data)?;
        dedup_fs::write_sparse_at(temp.file(), at, &bytes)
            .with_context(|| format!("{shown_path}: cannot write it"))?;
        at += bytes.len() as u64;
    }
    // A chunk whose length differs from its index entry would leave the size wrong.
    temp.file().set_len(at).with_context(|| format!("{shown_path}: cannot size it"))?;
    temp.commit(&entry.name).with_context(|| format!("{shown_path}: cannot put it in place"))?;
    Ok(())
}

/// A path in a snapshot without its leading and trailing `/`s.
pub(super) fn trim_slashes(mut bytes: &[u8]) -> &[u8] {
    while let [b'/', rest @ ..] = bytes {
        bytes = rest;
    }
    while let [rest @ .., b'/'] = bytes {
        bytes = rest;
    }
    bytes
}

/// `dedup store diff`: entries added (+), removed (-) and modified (M), skipping subtrees whose
/// ids are equal.
pub fn diff(common: &CommonArgs, args: DiffArgs) -> Result<bool> {
    let repo = super::open(common)?;
    let filter = super::filter(&args.filter);
    let (_, a) = repo.find_snapshot(&args.first, &filter)?;
    let (_, b) = repo.find_snapshot(&args.second, &filter)?;
    let index = repo.load_index()?.index;
    let mut out = std::io::stdout().lock();
    diff_trees(&repo, &index, Some(a.tree), Some(b.tree), &mut Vec::new(), &mut out)?;
    Ok(true)
}

fn same(a: &Node, b: &Node) -> bool {
    a.kind == b.kind
        && a.size == b.size
        && a.mode == b.mode
        && a.uid == b.uid
        && a.gid == b.gid
        && a.mtime == b.mtime
        && a.target == b.target
        && a.content == b.content
        && a.xattrs == b.xattrs
}

fn diff_trees(
    repo: &Repository,
    index: &Index,
    a: Option<Id>,
    b: Option<Id>,
    path: &mut Vec<u8>,
    out: &mut dyn Write,
) -> Result<()> {
    if a == b {
        return Ok(());
    }
    let load = |id: Option<Id>| -> Result<Tree> {
        Ok(match id {
            Some(id) => repo.read_tree(index, &id)?,
            None => Tree::default(),
        })
    };
    let (ta, tb) = (load(a)?, load(b)?);
    let (mut i, mut j) = (0, 0);
    while i < ta.nodes.len() || j < tb.nodes.len() {
        let order = match (ta.nodes.get(i), tb.nodes.get(j)) {
            (Some(x), Some(y)) => x.name.cmp(&y.name),
            (Some(_), None) => std::cmp::Ordering::Less,
            _ => std::cmp::Ordering::Greater,
        };
        let (left, right) = match order {
            std::cmp::Ordering::Less => {
                i += 1;
                (ta.nodes.get(i - 1), None)
            }
            std::cmp::Ordering::Greater => {
                j += 1;
                (None, tb.nodes.get(j - 1))
            }
            std::cmp::Ordering::Equal => {
                i += 1;
                j += 1;
                (ta.nodes.get(i - 1), tb.nodes.get(j - 1))
            }
        };
        let name = left.or(right).map(|n| n.name.clone()).unwrap_or_default();
        let len = path.len();
        path.push(b'/');
        path.extend_from_slice(&name);
        let sub = |n: Option<&Node>| match n.map(|n| &n.content) {
            Some(Content::Subtree(id)) => Some(*id),
            _ => None,
        };
        match (left, right) {
            (Some(x), Some(y)) if same(x, y) => {}
            (Some(x), Some(y)) if x.kind == NodeKind::Dir && y.kind == NodeKind::Dir => {}
            (Some(_), Some(_)) => writeln!(out, "M    {}", shown(path))?,
            (Some(_), None) => writeln!(out, "-    {}", shown(path))?,
            (None, Some(_)) => writeln!(out, "+    {}", shown(path))?,
            (None, None) => {}
        }
        if sub(left).is_some() || sub(right).is_some() {
            diff_trees(repo, index, sub(left), sub(right), path, out)?;
        }
        path.truncate(len);
    }
    Ok(())
}
