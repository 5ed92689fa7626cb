//! Where an inode is in the volume, for a message about it: a file's path, found by looking
//! for it in the directories (a file keeps no pointer to its names, which would cost every
//! inode its size for the rare message that needs one).

use super::table::{Ino, Table, ROOT};

/// The path of one name of inode `ino` (`/a/b`), or `None` for one that has no name (unlinked
/// while open) or that the table does not hold.
pub fn place_of(table: &Table, ino: Ino) -> Option<String> {
    if ino == ROOT {
        return Some("/".to_string());
    }
    let mut names: Vec<&[u8]> = Vec::new();
    let (mut parent, name) = table.directories().find_map(|(dir_ino, dir)| {
        let name = dir.entries.iter().find(|(_, child)| **child == ino)?.0;
        Some((dir_ino, name))
    })?;
    names.push(name);
    // Directories know their parent: up from there, each name looked for in its parent only.
    while parent != ROOT && names.len() <= table.inode_count() {
        let above = table.get(parent).ok()?.dir.as_deref()?.parent;
        let dir = table.get(above).ok()?.dir.as_deref()?;
        names.push(dir.entries.iter().find(|(_, child)| **child == parent)?.0);
        parent = above;
    }
    let mut path = Vec::new();
    for name in names.iter().rev() {
        path.push(b'/');
        path.extend_from_slice(name);
    }
    Some(String::from_utf8_lossy(&path).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::volume::table::Inode;
    use dedup_store::format::NodeKind;

    #[test]
    fn a_file_is_named_by_its_path_and_an_unlinked_one_by_none() {
        let inode = |kind| Inode::new(kind, 0o755, 0, 0, 0);
        let mut t = Table::with_root(inode(NodeKind::Dir));
        let a = t.create(ROOT, b"a", inode(NodeKind::Dir)).unwrap();
        let b = t.create(a, b"b", inode(NodeKind::Dir)).unwrap();
        let f = t.create(b, b"f", inode(NodeKind::File)).unwrap();
        let g = t.create(ROOT, b"g", inode(NodeKind::File)).unwrap();
        assert_eq!(place_of(&t, f).as_deref(), Some("/a/b/f"));
        assert_eq!(place_of(&t, b).as_deref(), Some("/a/b"));
        assert_eq!(place_of(&t, g).as_deref(), Some("/g"));
        assert_eq!(place_of(&t, ROOT).as_deref(), Some("/"));
        t.unlink(ROOT, b"g").unwrap();
        assert_eq!(place_of(&t, g), None);
        assert_eq!(place_of(&t, 999), None);
    }
}
