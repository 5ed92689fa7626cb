//! Renamed and moved directories: a new source directory is matched with a destination
//! directory that the source no longer has, when most of its files are there by name, size and
//! modification time (or, holding no files, when the two hold the same names). The match is
//! renamed in the destination instead of copied again; what differs inside is then fixed like
//! in any directory. Only with `--delete`: without it the old directory must stay.

use std::collections::{HashMap, HashSet};

use dedup_scan::EntryKind;

use crate::rel_path::{join, split, within};
use crate::tree::{Dir, Walked};

type FileKey = (Vec<u8>, u64, i64);

/// Destination directories the source does not have, indexed for matching.
#[derive(Debug, Default)]
pub struct Candidates {
    /// By a file they hold (name, size, mtime).
    by_file: HashMap<FileKey, Vec<Vec<u8>>>,
    /// By the names they hold, for directories without files.
    by_names: HashMap<Vec<u8>, Vec<Vec<u8>>>,
    /// Matched already, by path below DST as walked.
    consumed: Vec<Vec<u8>>,
}

impl Candidates {
    /// Index the destination directories whose path the source does not have as a directory
    /// and whose parent the source does (or which lie below such a one), less those holding
    /// excluded entries (`kept`), which stay where they are, and (with `--files-from`) those in
    /// a directory not mirrored whole.
    pub fn new(
        walked: &Walked,
        kept: &HashSet<Vec<u8>>,
        listed: Option<&crate::files_from::FileList>,
    ) -> Candidates {
        let mut rels: Vec<&Vec<u8>> = walked.dst.dirs.keys().collect();
        rels.sort();
        let mut set: HashSet<&[u8]> = HashSet::new();
        let mut c = Candidates::default();
        for rel in rels {
            if rel.is_empty() {
                continue;
            }
            let (parent, name) = split(rel);
            let src_has_dir = walked
                .src
                .dir(parent)
                .and_then(|d| d.entry(name))
                .is_some_and(|e| e.kind == EntryKind::Dir);
            let parent_paired = walked.src.dir(parent).is_some() && !set.contains(parent);
            if src_has_dir || !(parent_paired || set.contains(parent)) {
                continue;
            }
            set.insert(rel);
            // Kept with excluded entries or backups; or, with `--files-from`, in a directory
            // not mirrored whole, where what SRC lacks stays.
            if kept.contains(rel.as_slice()) || listed.is_some_and(|f| !f.complete(parent)) {
                continue;
            }
            let dir = &walked.dst.dirs[rel];
            match files(dir).next() {
                Some(_) => {
                    for key in files(dir) {
                        c.by_file.entry(key).or_default().push(rel.clone());
                    }
                }
                None if !dir.entries.is_empty() => {
                    c.by_names.entry(names(dir)).or_default().push(rel.clone());
                }
                None => {}
            }
        }
        c
    }

    /// The destination directory the new source directory `src` was most likely renamed
    /// from, now taken; `None` when none matches well enough.
    pub fn take(&mut self, src: &Dir) -> Option<Vec<u8>> {
        let wanted = files(src).count();
        let best = if wanted == 0 {
            if src.entries.is_empty() {
                return None;
            }
            let list = self.by_names.get(&names(src))?;
            list.iter().find(|c| self.available(c)).cloned()
        } else {
            let mut votes: HashMap<&Vec<u8>, usize> = HashMap::new();
            for key in files(src) {
                for c in self.by_file.get(&key).into_iter().flatten() {
                    *votes.entry(c).or_default() += 1;
                }
            }
            let mut ranked: Vec<(&Vec<u8>, usize)> = votes.into_iter().collect();
            ranked.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
            ranked
                .into_iter()
                .find(|(c, n)| n * 2 >= wanted && self.available(c))
                .map(|(c, _)| c.clone())
        }?;
        self.consumed.push(best.clone());
        Some(best)
    }

    /// Directories taken, by path below DST as walked.
    pub fn consumed(&self) -> &[Vec<u8>] {
        &self.consumed
    }

    /// Not taken, and neither inside nor around one taken (their paths would move under it).
    fn available(&self, c: &[u8]) -> bool {
        !self.consumed.iter().any(|t| within(c, t) || within(t, c))
    }
}

fn files(dir: &Dir) -> impl Iterator<Item = FileKey> + '_ {
    dir.entries.iter().filter_map(|e| match e.meta {
        Some(m) if e.kind == EntryKind::File && m.size > 0 => {
            Some((e.name.clone(), m.size, m.mtime_ns))
        }
        _ => None,
    })
}

fn names(dir: &Dir) -> Vec<u8> {
    let mut key = Vec::new();
    for e in &dir.entries {
        key = join(&key, &e.name);
    }
    key
}
