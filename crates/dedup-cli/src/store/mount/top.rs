//! The top of the mount: `snapshots/`, `hosts/HOST/` and the `latest` links, laid out from the
//! snapshots found when mounting and laid out again when snapshots come or go. Reading a top
//! folder lists the snapshot files again, at most once a second (one listing request); a new
//! snapshot brings the index in again, since its blobs are in index files written since. A
//! snapshot keeps its directory's name and inode for the whole mount; one forgotten since is no
//! longer listed.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::{Duration, Instant};

use dedup_store::format::Snapshot;
use dedup_store::Id;

use super::inodes::{Ino, Inode, Inodes, Shown, What, HOSTS, HOSTS_DIR, LATEST, ROOT};
use super::inodes::{SNAPSHOTS, SNAPSHOTS_DIR};
use super::names;

/// The snapshot files are listed again at most this often.
pub const REFRESH_EVERY: Duration = Duration::from_secs(1);

/// Which snapshots are listed where.
#[derive(Default)]
pub struct Top {
    /// The snapshots there now (indexes into `Inodes::snapshots`), oldest first.
    present: Vec<usize>,
    /// Each snapshot's directory in each folder.
    roots: HashMap<(Ino, usize), Ino>,
    /// Each host's folder.
    hosts: HashMap<Vec<u8>, Ino>,
    /// The snapshots listed in each folder (for names by id).
    listed: HashMap<Ino, Vec<usize>>,
    /// The link made for each (folder, snapshot) found by id.
    id_links: HashMap<(Ino, usize), Ino>,
    /// When the snapshot files were last listed.
    checked: Option<Instant>,
}

impl Inodes {
    fn lock_top(&self) -> std::sync::MutexGuard<'_, Top> {
        self.top.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Lays out the top for `snapshots` (oldest first), listed at `now`.
    pub(super) fn start_top(&self, snapshots: Vec<(Id, Snapshot)>, now: Instant) {
        let times: Vec<(Id, i64)> = snapshots.iter().map(|(id, s)| (*id, s.time)).collect();
        let count = snapshots.len();
        {
            let mut shown = self.snapshots.write().unwrap_or_else(|e| e.into_inner());
            for ((id, snapshot), name) in snapshots.into_iter().zip(names::snapshot_names(&times)) {
                shown.push(Shown { id, snapshot, name });
            }
        }
        let mut top = self.lock_top();
        top.present = (0..count).collect();
        top.checked = Some(now);
        self.lay_out(&mut top);
    }

    /// Lists the snapshot files again, unless that was done less than [`REFRESH_EVERY`] ago,
    /// and lays the top out again if snapshots came or went. A listing that fails keeps the top
    /// as it is; a snapshot that does not read is tried again at the next look.
    pub(super) fn refresh_top(&self) {
        let mut top = self.lock_top();
        if top.checked.is_some_and(|at| at.elapsed() < REFRESH_EVERY) {
            return;
        }
        top.checked = Some(Instant::now());
        let Ok(ids) = self.repo.list_snapshot_ids() else { return };
        let ids: HashSet<Id> = ids.into_iter().collect();
        let (known, gone) = {
            let shown = self.snapshots.read().unwrap_or_else(|e| e.into_inner());
            let known: HashSet<Id> = shown.iter().map(|s| s.id).collect();
            (known, top.present.iter().any(|&n| !ids.contains(&shown[n].id)))
        };
        let mut new: Vec<(Id, Snapshot)> = ids
            .iter()
            .filter(|id| !known.contains(id))
            .filter_map(|id| self.repo.load_snapshot(id).ok().map(|s| (*id, s)))
            .collect();
        // Their files could not be read without it: they come at the next look.
        if !new.is_empty() && !self.reload_index() {
            new.clear();
        }
        if new.is_empty() && !gone {
            return;
        }
        new.sort_by(|a, b| a.1.time.cmp(&b.1.time).then(a.0.cmp(&b.0)));
        {
            let mut shown = self.snapshots.write().unwrap_or_else(|e| e.into_inner());
            let mut taken: HashSet<String> = shown.iter().map(|s| s.name.clone()).collect();
            for (id, snapshot) in new {
                let name = names::unique_name(snapshot.time, &id, &taken);
                taken.insert(name.clone());
                shown.push(Shown { id, snapshot, name });
            }
            let mut present: Vec<usize> =
                (0..shown.len()).filter(|&n| ids.contains(&shown[n].id)).collect();
            present.sort_by(|&a, &b| {
                let (a, b) = (&shown[a], &shown[b]);
                a.snapshot.time.cmp(&b.snapshot.time).then(a.id.cmp(&b.id))
            });
            top.present = present;
        }
        self.lay_out(&mut top);
    }

    /// Gives the root, `snapshots/`, `hosts/` and each host's folder their entries.
    fn lay_out(&self, top: &mut Top) {
        let shown = self.snapshots.read().unwrap_or_else(|e| e.into_inner());
        let present = top.present.clone();
        let mut root = vec![(SNAPSHOTS.into(), SNAPSHOTS_DIR), (HOSTS.into(), HOSTS_DIR)];
        if let Some(&newest) = present.last() {
            let target = format!("{SNAPSHOTS}/{}", shown[newest].name).into_bytes();
            root.push((LATEST.into(), self.push(Inode::new(ROOT, What::Link(target), None))));
        }
        // `snapshots/latest` would be a name no snapshot can take; the top's `latest` serves.
        let entries = self.snapshot_entries(top, &shown, SNAPSHOTS_DIR, &present, false);
        self.set_children(SNAPSHOTS_DIR, entries);
        let mut by_host: BTreeMap<Vec<u8>, Vec<usize>> = BTreeMap::new();
        for &n in &present {
            by_host.entry(host_name(&shown[n].snapshot.host)).or_default().push(n);
        }
        let mut hosts = Vec::new();
        for (host, listed) in by_host {
            let dir = *top
                .hosts
                .entry(host.clone())
                .or_insert_with(|| self.push(Inode::new(HOSTS_DIR, What::Folder, None)));
            let entries = self.snapshot_entries(top, &shown, dir, &listed, true);
            self.set_children(dir, entries);
            hosts.push((host, dir));
        }
        self.set_children(HOSTS_DIR, hosts);
        self.set_children(ROOT, root);
    }

    /// The entries of folder `dir`: a directory for each of `listed` and, `with_latest`, a
    /// `latest` link to the newest.
    fn snapshot_entries(
        &self,
        top: &mut Top,
        shown: &[Shown],
        dir: Ino,
        listed: &[usize],
        with_latest: bool,
    ) -> Vec<(Vec<u8>, Ino)> {
        let mut entries: Vec<(Vec<u8>, Ino)> = listed
            .iter()
            .map(|&n| {
                let root = *top
                    .roots
                    .entry((dir, n))
                    .or_insert_with(|| self.push(Inode::new(dir, What::SnapshotRoot(n), Some(n))));
                (shown[n].name.clone().into_bytes(), root)
            })
            .collect();
        if let (true, Some(&newest)) = (with_latest, listed.last()) {
            let target = shown[newest].name.clone().into_bytes();
            entries.push((LATEST.into(), self.push(Inode::new(dir, What::Link(target), None))));
        }
        top.listed.insert(dir, listed.to_vec());
        entries
    }

    /// In `snapshots/` or `hosts/HOST/`: a link to the snapshot listed there whose id starts
    /// with `name`, if exactly one does.
    pub fn by_id(&self, dir: Ino, name: &[u8]) -> Option<Ino> {
        if !names::is_id_prefix(name) {
            return None;
        }
        let mut top = self.lock_top();
        let shown = self.snapshots.read().unwrap_or_else(|e| e.into_inner());
        let listed = top.listed.get(&dir)?;
        let id = names::find_by_prefix(name, listed.iter().map(|&n| &shown[n].id))?;
        let n = *listed.iter().find(|&&n| shown[n].id == *id)?;
        if let Some(&ino) = top.id_links.get(&(dir, n)) {
            return Some(ino);
        }
        let target = shown[n].name.clone().into_bytes();
        let ino = self.push(Inode::new(dir, What::Link(target), None));
        top.id_links.insert((dir, n), ino);
        Some(ino)
    }

    /// The newest listed snapshot's time (ns), the time of the top's folders.
    pub fn newest_time(&self) -> Option<i64> {
        let top = self.lock_top();
        let shown = self.snapshots.read().unwrap_or_else(|e| e.into_inner());
        top.present.last().map(|&n| shown[n].snapshot.time)
    }
}

/// A host's name as a directory name: `/` and NUL cannot be in one, and an empty name would
/// not be listed.
fn host_name(host: &str) -> Vec<u8> {
    let name: String = host.chars().map(|c| if c == '/' || c == '\0' { '_' } else { c }).collect();
    match name.as_str() {
        "" | "." | ".." => format!("host{name}").into_bytes(),
        _ => name.into_bytes(),
    }
}
