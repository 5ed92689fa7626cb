//! What the measuring examples share: the regular files of a tree, in a fixed order.

use std::path::{Path, PathBuf};

/// Appends the regular files under `path` to `files`, depth first in name order; what cannot be
/// read is left out.
pub fn visit(path: &Path, files: &mut Vec<PathBuf>) {
    let Ok(meta) = std::fs::symlink_metadata(path) else { return };
    if meta.is_dir() {
        let Ok(entries) = std::fs::read_dir(path) else { return };
        let mut children: Vec<_> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        children.sort();
        for child in children {
            visit(&child, files);
        }
    } else if meta.is_file() {
        files.push(path.to_path_buf());
    }
}
