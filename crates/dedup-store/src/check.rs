//! `check`: key files, index files and snapshots read and verify; every tree of every snapshot
//! reads, and every blob it names is indexed in a pack that exists; with `read_data`, every pack
//! is read whole (a few at once, one per core), its name, trailer and every blob verified. Each finding names the object, and
//! every snapshot names each of its files and directories that a missing or damaged object
//! took (the packs are read before the trees are walked, so that damaged blobs are known), and
//! a status tree that does not read names its snapshot.

use std::collections::{HashMap, HashSet};
use std::rc::Rc;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::blob::{self, BlobKind};
use crate::error::{Error, Result};
use crate::format::{Content, NodeKind};
use crate::id::Id;
use crate::index::Index;
use crate::pack::{pack_path, parse_pack};
use crate::repo::Repository;

/// What `check` found.
#[derive(Debug, Default, Clone)]
pub struct CheckReport {
    /// Damage: each names the object and what is wrong.
    pub errors: Vec<String>,
    /// Harmless findings (garbage a prune removes).
    pub warnings: Vec<String>,
    /// Snapshots checked.
    pub snapshots: u64,
    /// Trees read.
    pub trees: u64,
    /// Packs present.
    pub packs: u64,
    /// Blobs verified by reading (with `read_data`).
    pub blobs_read: u64,
    /// Packs read whole.
    pub packs_read: u64,
}

/// Which packs `check` reads whole.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ReadData {
    /// None: the structure only.
    None,
    /// Every pack.
    All,
    /// Slice `k` (1-based) of `n`: the packs whose id, read as a number, is `k - 1` modulo `n`,
    /// so that slices 1 to n cover every pack once, whichever day each is run.
    Slice {
        /// Which slice.
        k: u64,
        /// Of how many.
        n: u64,
    },
    /// Each pack with this probability (0 to 1), drawn afresh on every run.
    Fraction(f64),
}

impl ReadData {
    /// Whether pack `id` is read.
    fn reads(self, id: &Id) -> bool {
        let number = u64::from_le_bytes(id.0[..8].try_into().expect("8 bytes"));
        match self {
            ReadData::None => false,
            ReadData::All => true,
            ReadData::Slice { k, n } => n > 0 && number % n == k.wrapping_sub(1),
            ReadData::Fraction(p) => (Id::random().0[0] as f64 + 0.5) / 256.0 < p,
        }
    }
}

impl From<bool> for ReadData {
    fn from(all: bool) -> Self {
        if all {
            ReadData::All
        } else {
            ReadData::None
        }
    }
}

/// Checks the repository's structure, and the bytes of the packs `read_data` selects.
pub fn check(repo: &Repository, read_data: impl Into<ReadData>) -> Result<CheckReport> {
    let read_data = read_data.into();
    let mut report = CheckReport::default();
    for slot in crate::repo::key_slot_errors(repo)? {
        report.errors.push(slot);
    }
    let loaded = repo.load_index()?;
    report.errors.extend(loaded.problems.iter().map(Error::to_string));
    let index = loaded.index;
    let listing = repo.backend().list("data").map_err(|e| Error::io("data", e))?;
    let mut present: HashMap<Id, u64> = HashMap::new();
    for object in &listing {
        match object.name.rsplit('/').next().and_then(Id::from_hex) {
            Some(id) if object.name == pack_path(&id) => {
                present.insert(id, object.size);
            }
            _ => report.warnings.push(format!("{}: not a pack name; ignored", object.name)),
        }
    }
    report.packs = present.len() as u64;
    for (id, _) in index.packs() {
        if !present.contains_key(id) {
            report.errors.push(format!("{}: missing (the index lists it)", pack_path(id)));
        }
    }
    // A truncated pack shows in the listing's sizes, without reading it.
    let mut truncated = HashSet::new();
    for (id, end) in index.pack_ends() {
        if let Some(&size) = present.get(&id).filter(|&&size| size < end) {
            report.errors.push(format!(
                "{}: damaged: {size} bytes, but the index has blobs in it up to byte {end} \
                 (truncated)",
                pack_path(&id)
            ));
            truncated.insert(id);
        }
    }
    // Format version 4 pads every pack of an encrypted repository to a bucket (§7): a pack of
    // another size was cut (or grew), maybe in its trailer or padding, which the index cannot
    // show.
    if repo.config().padded_packs() && repo.encrypted() {
        for (id, &size) in &present {
            if crate::pack::bucket(size) != size && truncated.insert(*id) {
                report.errors.push(format!(
                    "{}: damaged: {size} bytes, not the size of a padded pack (cut short or \
                     grown)",
                    pack_path(id)
                ));
            }
        }
    }
    let planned = repo.planned_deletions()?;
    for id in present.keys() {
        if planned.contains(id) {
            report.warnings.push(format!(
                "{}: named by a deletion plan (deleted once the backups it waits for finish)",
                pack_path(id)
            ));
        } else if !index.has_pack(id) {
            report.warnings.push(format!(
                "{}: not in any index (left by an interrupted backup, or its index file is lost: \
                 the next backup or `dedup store repair index` indexes it)",
                pack_path(id)
            ));
        }
    }

    // The packs are read before the trees are walked, so that the walk can name every file
    // whose data a damaged pack held.
    let mut suspect: HashSet<Id> = truncated;
    if read_data != ReadData::None {
        let mut ids: Vec<Id> = present.keys().filter(|id| read_data.reads(id)).copied().collect();
        ids.sort();
        for (id, read) in ids.iter().zip(read_packs(repo, &index, &ids)) {
            report.packs_read += 1;
            report.blobs_read += read.blobs_read;
            report.errors.extend(read.errors);
            if !read.sound {
                suspect.insert(*id);
            }
        }
    }

    let (snapshots, bad) = repo.snapshots()?;
    report.errors.extend(bad.iter().map(Error::to_string));
    let mut walk = Walk {
        repo,
        index: &index,
        present: &present,
        suspect: &suspect,
        clean: HashSet::new(),
        damaged: HashMap::new(),
        verified: HashMap::new(),
        trees: 0,
        sound_status: HashSet::new(),
    };
    for (snapshot_id, snapshot) in &snapshots {
        report.snapshots += 1;
        let findings = walk.tree(snapshot.tree);
        for (path, why) in findings.iter().take(FINDINGS_PER_SNAPSHOT) {
            report.errors.push(format!(
                "snapshot {}: /{}: {why}",
                snapshot_id.short(8),
                String::from_utf8_lossy(path)
            ));
        }
        if let Some(why) = snapshot.status_tree.and_then(|status| walk.status_problem(status)) {
            report.errors.push(format!(
                "snapshot {}: status trees: {why} (the next backup from it reads the files \
                 they covered again; `dedup store repair snapshots` writes a copy without the \
                 status trees that do not read)",
                snapshot_id.short(8)
            ));
        }
        if findings.len() > FINDINGS_PER_SNAPSHOT {
            report.errors.push(format!(
                "snapshot {}: and {} more damaged files and directories",
                snapshot_id.short(8),
                findings.len() - FINDINGS_PER_SNAPSHOT
            ));
        }
    }
    report.trees = walk.trees;
    Ok(report)
}

/// Damaged paths named per snapshot; past this, a count (a lost pack of trees can hide many).
const FINDINGS_PER_SNAPSHOT: usize = 200;

/// A damaged path below a tree (relative to it; empty for the tree itself) and why.
type Finding = (Vec<u8>, String);

/// The walk of every snapshot's trees. Each tree is walked once; what is damaged below it is
/// kept (only for damaged trees) so that every snapshot reaching it names the same paths.
struct Walk<'a> {
    repo: &'a Repository,
    index: &'a Index,
    present: &'a HashMap<Id, u64>,
    /// Packs read whole that did not verify: their blobs are read again one by one.
    suspect: &'a HashSet<Id>,
    clean: HashSet<Id>,
    damaged: HashMap<Id, Rc<Vec<Finding>>>,
    /// Data blobs of suspect packs: why each does not open, or `None` when it does.
    verified: HashMap<Id, Option<String>>,
    trees: u64,
    /// Status trees read whole below: each is walked once.
    sound_status: HashSet<Id>,
}

impl Walk<'_> {
    /// What is damaged below tree `id`.
    fn tree(&mut self, id: Id) -> Rc<Vec<Finding>> {
        if self.clean.contains(&id) {
            return Rc::new(Vec::new());
        }
        if let Some(found) = self.damaged.get(&id) {
            return Rc::clone(found);
        }
        let found = self.walk_tree(id);
        if found.is_empty() {
            self.clean.insert(id);
            return Rc::new(found);
        }
        let found = Rc::new(found);
        self.damaged.insert(id, Rc::clone(&found));
        found
    }

    fn walk_tree(&mut self, id: Id) -> Vec<Finding> {
        let in_pack = self.index.lookup(&id, BlobKind::Tree).map(|l| l.pack);
        if let Some(pack) = in_pack.filter(|p| !self.present.contains_key(p)) {
            return vec![(
                Vec::new(),
                format!("tree blob {id} is in missing pack {}", pack_path(&pack)),
            )];
        }
        let tree = match self.repo.read_tree(self.index, &id) {
            Ok(tree) => tree,
            Err(err) => return vec![(Vec::new(), err.to_string())],
        };
        self.trees += 1;
        let mut found = Vec::new();
        for node in &tree.nodes {
            match &node.content {
                Content::Subtree(sub) => {
                    for (below, why) in self.tree(*sub).iter() {
                        let mut path = node.name.clone();
                        if !below.is_empty() {
                            path.push(b'/');
                            path.extend_from_slice(below);
                        }
                        found.push((path, why.clone()));
                    }
                }
                Content::Chunks(chunks) if node.kind == NodeKind::File => {
                    if let Some(why) = chunks.iter().find_map(|chunk| self.data_problem(chunk)) {
                        found.push((node.name.clone(), why));
                    }
                }
                _ => {}
            }
        }
        found
    }

    /// Why a status tree below `root` (itself included) cannot be read, if one cannot.
    fn status_problem(&mut self, root: Id) -> Option<String> {
        let mut pending = vec![root];
        let mut read = Vec::new();
        while let Some(id) = pending.pop() {
            if self.sound_status.contains(&id) {
                continue;
            }
            match self.repo.read_status_tree(self.index, &id) {
                Ok(status) => pending.extend(status.subtrees()),
                Err(err) => return Some(err.to_string()),
            }
            read.push(id);
        }
        self.sound_status.extend(read);
        None
    }

    /// Why data blob `chunk` cannot be read, if it cannot.
    fn data_problem(&mut self, chunk: &Id) -> Option<String> {
        let location = match self.index.lookup(chunk, BlobKind::Data) {
            None => return Some(format!("data blob {chunk} is not in the index")),
            Some(location) => location,
        };
        if !self.present.contains_key(&location.pack) {
            return Some(format!(
                "data blob {chunk} is in missing pack {}",
                pack_path(&location.pack)
            ));
        }
        if !self.suspect.contains(&location.pack) {
            return None;
        }
        let repo = self.repo;
        self.verified
            .entry(*chunk)
            .or_insert_with(|| {
                repo.read_blob_at(&location, BlobKind::Data).err().map(|e| e.to_string())
            })
            .clone()
    }
}

/// Workers reading packs at most: reading, hashing and opening a pack is CPU-bound once the pack
/// is in the page cache, and each worker holds one pack in memory.
const MOST_READERS: usize = 4;

/// What reading one pack whole found.
#[derive(Default)]
struct PackRead {
    /// Nothing in it is damaged.
    sound: bool,
    /// Blobs that opened and verified.
    blobs_read: u64,
    /// Each finding, naming the pack.
    errors: Vec<String>,
}

/// Reads the packs `ids` whole, a few at once (one per core, at most MOST_READERS), and returns
/// what each showed, in the order of `ids`, so that the report does not depend on the timing.
fn read_packs(repo: &Repository, index: &Index, ids: &[Id]) -> Vec<PackRead> {
    let cores = std::thread::available_parallelism().map_or(2, usize::from);
    let workers = cores.clamp(1, MOST_READERS).min(ids.len());
    if workers <= 1 {
        let mut buf = Vec::new();
        return ids.iter().map(|id| read_pack(repo, index, id, &mut buf)).collect();
    }
    let next = AtomicUsize::new(0);
    let work = || {
        let mut done = Vec::new();
        let mut buf = Vec::new();
        loop {
            let at = next.fetch_add(1, Ordering::Relaxed);
            let Some(id) = ids.get(at) else { return done };
            done.push((at, read_pack(repo, index, id, &mut buf)));
        }
    };
    let mut done: Vec<(usize, PackRead)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                std::thread::Builder::new()
                    .name("dedup-check".into())
                    .spawn_scoped(scope, work)
                    .expect("a thread can be started")
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    });
    done.sort_by_key(|(at, _)| *at);
    done.into_iter().map(|(_, read)| read).collect()
}

/// Reads pack `id` whole into `buf` and verifies its name, trailer and every blob.
fn read_pack(repo: &Repository, index: &Index, id: &Id, buf: &mut Vec<u8>) -> PackRead {
    let mut read = PackRead::default();
    let name = pack_path(id);
    let bytes = match repo.backend().get_into(&name, buf) {
        Ok(()) => &buf[..],
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
            read.errors.push(Error::Missing { object: name }.to_string());
            return read;
        }
        Err(err) => {
            read.errors.push(Error::io(name, err).to_string());
            return read;
        }
    };
    read.sound = true;
    if Id::of_file(bytes) != *id {
        // Go on: which blobs still open tells which files are lost.
        read.errors.push(format!("{name}: damaged: content does not match its name (hash)"));
        read.sound = false;
    }
    let parsed = match parse_pack(repo.sealer(), bytes) {
        Ok(parsed) => parsed,
        Err(err) => {
            read.errors.push(format!("{name}: damaged: {err}"));
            read.sound = false;
            return read;
        }
    };
    for entry in &parsed.entries {
        let sealed = &bytes[entry.offset as usize..(entry.offset + entry.stored_len) as usize];
        match blob::open(repo.sealer(), &repo.keys().id, parsed.kind, entry, sealed) {
            Ok(_) => read.blobs_read += 1,
            Err(err) => {
                read.sound = false;
                read.errors.push(format!("{name}: {} blob {}: {err}", parsed.kind.name(), entry.id))
            }
        }
        if index.has_pack(id) && index.lookup(&entry.id, parsed.kind).is_none() {
            read.errors.push(format!(
                "{name}: {} blob {} is in the pack but not in the index",
                parsed.kind.name(),
                entry.id
            ));
        }
    }
    read
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_cover_every_pack_exactly_once() {
        let ids: Vec<Id> = (0..200).map(|_| Id::random()).collect();
        for id in &ids {
            let slices = (1..=7).filter(|&k| ReadData::Slice { k, n: 7 }.reads(id)).count();
            assert_eq!(slices, 1);
            assert!(ReadData::All.reads(id) && !ReadData::None.reads(id));
            assert!(!ReadData::Fraction(0.0).reads(id) && ReadData::Fraction(1.0).reads(id));
        }
        let some = ids.iter().filter(|id| ReadData::Fraction(0.5).reads(id)).count();
        assert!((40..160).contains(&some), "{some} of 200 at 50 %");
    }
}
