//! A volume's commits as the store's ordinary snapshots (docs/store-format.md §14): finding the
//! latest commit of a volume, loading its tree into an inode table, and turning the table back
//! into trees. A commit's root tree holds one directory, the volume's name, whose node keeps the
//! volume root's own metadata; files with several names carry one inode number and their link
//! count, so that restore links them as a backup's hard links are.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use dedup_store::format::{Content as NodeContent, Node, NodeKind, Snapshot, Summary, Tree};
use dedup_store::{Error, Id};

use super::content::{Content, Piece};
use super::store::VolumeStore;
use super::table::{Ino, Inode, Table, ROOT};

/// The tag that marks a snapshot as a commit of volume `name`.
pub fn volume_tag(name: &str) -> String {
    format!("volume:{name}")
}

/// The path a commit of volume `name` records.
pub fn volume_path(name: &str) -> Vec<u8> {
    format!("/{name}").into_bytes()
}

/// The newest commit of volume `name`, if any. Refused when a snapshot newer than it is a
/// commit of the volume rewritten without the tag (`store tag --set` or `--remove` took it
/// off): the volume would come up older than it is, or empty, and its next commit would bury
/// the newer state under itself, all without a word. Refused likewise while a snapshot does
/// not read (damaged, or lost to a failed request): it may be the newest commit.
pub fn latest_commit(store: &VolumeStore, name: &str) -> Result<Option<(Id, Snapshot)>, Error> {
    let tag = volume_tag(name);
    let (mut all, bad) = store.repo().snapshots()?;
    if let Some(err) = bad.first() {
        return Err(Error::Invalid(format!(
            "cannot tell the newest commit of volume {name:?} while a snapshot does not read \
             ({err}): it may be that commit, and the volume would go back to an older state. Try \
             again if the repository was busy; `dedup store repair snapshots --forget` removes \
             a snapshot lost for good"
        )));
    }
    all.retain(|(_, s)| s.paths == [volume_path(name)]);
    while let Some((id, snapshot)) = all.pop() {
        if snapshot.tags.contains(&tag) {
            return Ok(Some((id, snapshot)));
        }
        if retagged_commit(store, name, &snapshot) {
            let short = &id.to_hex()[..8];
            return Err(Error::Invalid(format!(
                "snapshot {short} is a commit of volume {name:?}, newer than any that carries the \
                 tag {tag}, but has lost that tag (store tag --set or --remove): mounted, the \
                 volume would go back to an older state or start empty. Give it the tag again \
                 (`dedup store tag --add {tag} {short}`) or forget it, then mount again"
            )));
        }
    }
    Ok(None)
}

/// Whether `snapshot` is a commit of volume `name` that a tag change rewrote: it records an
/// original (`tag` and `rewrite` write one, a commit never does), and its tree is one a commit
/// writes, a root of one directory, the volume's name, with the volume root's inode number (a
/// backup of a directory of that name carries its file system's, which is 1 only for the root
/// of a tmpfs). A tree that cannot be read is not one.
fn retagged_commit(store: &VolumeStore, name: &str, snapshot: &Snapshot) -> bool {
    if snapshot.original.is_none() {
        return false;
    }
    let status = snapshot.status_tree.as_ref();
    let Ok(top) = store.sink().read_tree_with_status(&snapshot.tree, status) else {
        return false;
    };
    matches!(&top.nodes[..], [root] if root.name == name.as_bytes()
        && root.kind == NodeKind::Dir
        && root.ino == ROOT)
}

fn inode_of(node: &Node) -> Inode {
    let mut inode = Inode::new(node.kind, node.mode, node.uid, node.gid, node.mtime);
    inode.atime = node.atime;
    inode.ctime = node.ctime;
    inode.rdev = node.rdev;
    inode.target = node.target.clone();
    inode.xattrs = node.xattrs.iter().cloned().collect();
    inode
}

/// Loads the tree of commit `snapshot` of volume `name` into a table.
pub fn load(store: &VolumeStore, name: &str, snapshot: &Snapshot) -> Result<Table, Error> {
    let index_tree = |id: &Id| store.sink().read_tree(id);
    let top = index_tree(&snapshot.tree)?;
    let root =
        top.find(name.as_bytes()).filter(|node| node.kind == NodeKind::Dir).ok_or_else(|| {
            Error::damaged(format!("snapshot tree {}", snapshot.tree), "no volume root")
        })?;
    let mut table = Table::with_root(inode_of(root));
    let NodeContent::Subtree(id) = root.content else {
        return Ok(table);
    };
    let mut linked: HashMap<u64, Ino> = HashMap::new();
    let mut pending = vec![(ROOT, id)];
    while let Some((dir, tree)) = pending.pop() {
        for node in index_tree(&tree)?.nodes {
            if node.kind == NodeKind::File && node.nlink > 1 {
                if let Some(&ino) = linked.get(&node.ino) {
                    table.name_loaded(dir, &node.name, ino).map_err(|e| bad(&tree, e))?;
                    continue;
                }
            }
            let mut inode = inode_of(&node);
            match &node.content {
                NodeContent::Chunks(chunks) if node.kind == NodeKind::File => {
                    let lens: Option<Vec<(Id, u64)>> =
                        chunks.iter().map(|id| Some((*id, store.chunk_len(id)?))).collect();
                    match lens {
                        Some(lens) => {
                            let zero = |id: &Id| store.is_zero_chunk(id);
                            let content = Content::from_chunks_and_holes(lens, zero);
                            inode.file = Some(Arc::new(Mutex::new(content)))
                        }
                        None => inode.damaged = Some(Box::new((chunks.clone(), node.size))),
                    }
                }
                _ => {}
            }
            let ino = table.adopt(inode);
            table.name_loaded(dir, &node.name, ino).map_err(|e| bad(&tree, e))?;
            if node.kind == NodeKind::File && node.nlink > 1 {
                linked.insert(node.ino, ino);
            }
            if let NodeContent::Subtree(sub) = node.content {
                pending.push((ino, sub));
            }
        }
    }
    Ok(table)
}

fn bad(tree: &Id, errno: rustix::io::Errno) -> Error {
    Error::damaged(format!("tree blob {tree}"), format!("cannot be loaded ({errno})"))
}

/// Stores the trees of `table` (every file's written bytes already cut) and returns the root
/// tree of a commit of volume `name` with its status tree; counts the entries in `summary`.
pub fn store_trees(
    store: &VolumeStore,
    table: &Table,
    name: &str,
    summary: &mut Summary,
) -> Result<(Id, Option<Id>), Error> {
    let mut root = node_of(store, table, ROOT, name.as_bytes())?;
    let stored = store_dir(store, table, ROOT, &mut root.status_tree, summary)?;
    root.content = NodeContent::Subtree(stored.0);
    store.sink().store_tree(Tree { nodes: vec![root], ..Tree::default() })
}

fn store_dir(
    store: &VolumeStore,
    table: &Table,
    ino: Ino,
    status: &mut Option<Id>,
    summary: &mut Summary,
) -> Result<(Id, Option<Id>), Error> {
    let (_, entries) =
        table.listing(ino).map_err(|e| Error::Invalid(format!("inode {ino}: {e}")))?;
    let mut nodes = Vec::with_capacity(entries.len());
    for (name, child) in entries {
        let mut node = node_of(store, table, child, &name)?;
        match node.kind {
            NodeKind::File => {
                summary.files_new += 1;
                summary.bytes_total += node.size;
            }
            NodeKind::Dir => summary.dirs += 1,
            _ => summary.others += 1,
        }
        if node.kind == NodeKind::Dir {
            let (id, child_status) = store_dir(store, table, child, &mut None, summary)?;
            node.content = NodeContent::Subtree(id);
            node.status_tree = child_status;
        }
        nodes.push(node);
    }
    let stored = store.sink().store_tree(Tree { nodes, ..Tree::default() })?;
    *status = stored.1;
    Ok(stored)
}

fn node_of(store: &VolumeStore, table: &Table, ino: Ino, name: &[u8]) -> Result<Node, Error> {
    let inode = table.get(ino).map_err(|e| Error::Invalid(format!("inode {ino}: {e}")))?;
    let mut node = Node {
        name: name.to_vec(),
        kind: inode.kind,
        mode: inode.mode,
        uid: inode.uid,
        gid: inode.gid,
        atime: inode.atime,
        mtime: inode.mtime,
        ctime: inode.ctime,
        rdev: inode.rdev,
        target: inode.target.clone(),
        xattrs: inode.xattrs.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
        nlink: u64::from(inode.links.max(1)),
        ino,
        dev: 1,
        ..Node::default()
    };
    if let Some((chunks, size)) = inode.damaged.as_deref() {
        node.content = NodeContent::Chunks(chunks.clone());
        node.size = *size;
        node.incomplete = true;
    } else if let Some(file) = &inode.file {
        let mut content = file.lock().unwrap_or_else(|e| e.into_inner());
        // Bytes written since the commit cut every file (the kernel writes cached pages back
        // when it likes) are cut now, under the file's lock: the file as it is at this moment.
        content.settle(store.repo().chunker(), true, &mut |bytes| store.store(bytes, &mut None))?;
        node.size = content.size();
        let mut chunks = Vec::new();
        for (_, piece) in content.pieces() {
            match piece {
                Piece::Stored { id, .. } => {
                    store.ensure_stored(id)?;
                    chunks.push(*id)
                }
                Piece::Hole { len } => chunks.extend(store.zero_chunks(*len)?),
                Piece::Fresh(_) => {
                    return Err(Error::Invalid(format!("inode {ino}: written bytes not cut")))
                }
            }
        }
        node.content = NodeContent::Chunks(chunks);
    }
    Ok(node)
}
