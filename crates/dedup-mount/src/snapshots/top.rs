//! The top of the mount: `snapshots/`, `hosts/HOST/` and the `latest` links, laid out from the
//! snapshots found when mounting and laid out again when snapshots come or go. Reading a top
//! folder lists the snapshot files again, at most once a second (one listing request); a new
//! snapshot brings the index in again, since its blobs are in index files written since. A
//! snapshot keeps its directory's name and inode for the whole mount; one forgotten since is no
//! longer listed.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Mutex, MutexGuard, RwLock};
use std::time::{Duration, Instant};

use dedup_store::format::Snapshot;
use dedup_store::live_index::LiveIndex;
use dedup_store::repo::Repository;
use dedup_store::Id;

use super::inodes::{Ino, Inode, InodeTable, What, HOSTS_DIR, ROOT, SNAPSHOTS_DIR};
use super::names;

/// The snapshot files are listed again at most this often.
pub const REFRESH_EVERY: Duration = Duration::from_secs(1);

/// The directory of every snapshot.
pub const SNAPSHOTS: &str = "snapshots";
/// The directory of each host's.
pub const HOSTS: &str = "hosts";
/// The link to the newest snapshot.
pub const LATEST: &str = "latest";

/// A snapshot as the mount shows it.
pub struct Shown {
    /// Its id.
    pub id: Id,
    /// What it records.
    pub snapshot: Snapshot,
    /// Its directory's name.
    pub name: String,
}

/// Which snapshots are listed where.
#[derive(Default)]
struct Places {
    /// The snapshots there now (indexes into `Top::shown`), oldest first.
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

/// The top's folders and links, and every snapshot met since mounting.
pub struct Top {
    /// Every snapshot met since mounting, in the order met (those gone since stay, unlisted).
    shown: RwLock<Vec<Shown>>,
    places: Mutex<Places>,
}

impl Top {
    /// The mount's root, `snapshots/` and `hosts/` (the first inodes of `table`), laid out for
    /// `snapshots` (oldest first), listed at `now`.
    pub fn new(table: &InodeTable, snapshots: Vec<(Id, Snapshot)>, now: Instant) -> Top {
        for (ino, parent) in [(ROOT, ROOT), (SNAPSHOTS_DIR, ROOT), (HOSTS_DIR, ROOT)] {
            let made = table.push(Inode::new(parent, What::Folder, None));
            debug_assert_eq!(made, ino);
        }
        let times: Vec<(Id, i64)> = snapshots.iter().map(|(id, s)| (*id, s.time)).collect();
        let present = (0..snapshots.len()).collect();
        let shown = snapshots
            .into_iter()
            .zip(names::snapshot_names(&times))
            .map(|((id, snapshot), name)| Shown { id, snapshot, name })
            .collect();
        let top = Top {
            shown: RwLock::new(shown),
            places: Mutex::new(Places { present, checked: Some(now), ..Places::default() }),
        };
        top.lay_out(table, &mut top.places());
        top
    }

    fn places(&self) -> MutexGuard<'_, Places> {
        self.places.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn shown(&self) -> std::sync::RwLockReadGuard<'_, Vec<Shown>> {
        self.shown.read().unwrap_or_else(|e| e.into_inner())
    }

    /// Snapshot `n`'s time (ns) and root tree.
    pub fn snapshot_time_and_tree(&self, n: usize) -> (i64, Id) {
        let shown = self.shown();
        (shown[n].snapshot.time, shown[n].snapshot.tree)
    }

    /// Snapshot `n`'s directory name.
    pub fn snapshot_name(&self, n: usize) -> String {
        self.shown()[n].name.clone()
    }

    /// Lists the snapshot files of `repo` again, unless that was done less than
    /// [`REFRESH_EVERY`] ago, and lays the top out again if snapshots came or went (reading
    /// `index` again for new ones). A listing that fails keeps the top as it is; a snapshot that
    /// does not read is tried again at the next look.
    pub fn refresh(&self, table: &InodeTable, repo: &Repository, index: &LiveIndex) {
        let mut places = self.places();
        if places.checked.is_some_and(|at| at.elapsed() < REFRESH_EVERY) {
            return;
        }
        places.checked = Some(Instant::now());
        let Ok(ids) = repo.list_snapshot_ids() else { return };
        let ids: HashSet<Id> = ids.into_iter().collect();
        let (known, gone) = {
            let shown = self.shown();
            let known: HashSet<Id> = shown.iter().map(|s| s.id).collect();
            (known, places.present.iter().any(|&n| !ids.contains(&shown[n].id)))
        };
        let mut new: Vec<(Id, Snapshot)> = ids
            .iter()
            .filter(|id| !known.contains(id))
            .filter_map(|id| repo.load_snapshot(id).ok().map(|s| (*id, s)))
            .collect();
        // Their files could not be read without it: they come at the next look.
        if !new.is_empty() && index.reload(repo).is_err() {
            new.clear();
        }
        if new.is_empty() && !gone {
            return;
        }
        new.sort_by(|a, b| a.1.time.cmp(&b.1.time).then(a.0.cmp(&b.0)));
        {
            let mut shown = self.shown.write().unwrap_or_else(|e| e.into_inner());
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
            places.present = present;
        }
        self.lay_out(table, &mut places);
    }

    /// Gives the root, `snapshots/`, `hosts/` and each host's folder their entries.
    fn lay_out(&self, table: &InodeTable, places: &mut Places) {
        let shown = self.shown();
        let present = places.present.clone();
        let mut root = vec![(SNAPSHOTS.into(), SNAPSHOTS_DIR), (HOSTS.into(), HOSTS_DIR)];
        if let Some(&newest) = present.last() {
            let target = format!("{SNAPSHOTS}/{}", shown[newest].name).into_bytes();
            root.push((LATEST.into(), table.push(Inode::new(ROOT, What::Link(target), None))));
        }
        // `snapshots/latest` would be a name no snapshot can take; the top's `latest` serves.
        let entries = snapshot_entries(table, places, &shown, SNAPSHOTS_DIR, &present, false);
        table.set_children(SNAPSHOTS_DIR, entries);
        let mut by_host: BTreeMap<Vec<u8>, Vec<usize>> = BTreeMap::new();
        for &n in &present {
            by_host.entry(host_name(&shown[n].snapshot.host)).or_default().push(n);
        }
        let mut hosts = Vec::new();
        for (host, listed) in by_host {
            let dir = *places
                .hosts
                .entry(host.clone())
                .or_insert_with(|| table.push(Inode::new(HOSTS_DIR, What::Folder, None)));
            let entries = snapshot_entries(table, places, &shown, dir, &listed, true);
            table.set_children(dir, entries);
            hosts.push((host, dir));
        }
        table.set_children(HOSTS_DIR, hosts);
        table.set_children(ROOT, root);
    }

    /// In `snapshots/` or `hosts/HOST/`: a link to the snapshot listed there whose id starts
    /// with `name`, if exactly one does.
    pub fn by_id(&self, table: &InodeTable, dir: Ino, name: &[u8]) -> Option<Ino> {
        if !names::is_id_prefix(name) {
            return None;
        }
        let mut places = self.places();
        let shown = self.shown();
        let listed = places.listed.get(&dir)?;
        let id = names::find_by_prefix(name, listed.iter().map(|&n| &shown[n].id))?;
        let n = *listed.iter().find(|&&n| shown[n].id == *id)?;
        if let Some(&ino) = places.id_links.get(&(dir, n)) {
            return Some(ino);
        }
        let target = shown[n].name.clone().into_bytes();
        let ino = table.push(Inode::new(dir, What::Link(target), None));
        places.id_links.insert((dir, n), ino);
        Some(ino)
    }

    /// The newest listed snapshot's time (ns), the time of the top's folders.
    pub fn newest_time(&self) -> Option<i64> {
        let places = self.places();
        let shown = self.shown();
        places.present.last().map(|&n| shown[n].snapshot.time)
    }
}

/// The entries of folder `dir`: a directory for each of `listed` and, `with_latest`, a `latest`
/// link to the newest.
fn snapshot_entries(
    table: &InodeTable,
    places: &mut Places,
    shown: &[Shown],
    dir: Ino,
    listed: &[usize],
    with_latest: bool,
) -> Vec<(Vec<u8>, Ino)> {
    let mut entries: Vec<(Vec<u8>, Ino)> = listed
        .iter()
        .map(|&n| {
            let root = *places
                .roots
                .entry((dir, n))
                .or_insert_with(|| table.push(Inode::new(dir, What::SnapshotRoot(n), Some(n))));
            (shown[n].name.clone().into_bytes(), root)
        })
        .collect();
    if let (true, Some(&newest)) = (with_latest, listed.last()) {
        let target = shown[newest].name.clone().into_bytes();
        entries.push((LATEST.into(), table.push(Inode::new(dir, What::Link(target), None))));
    }
    places.listed.insert(dir, listed.to_vec());
    entries
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

#[cfg(test)]
mod tests {
    use super::*;

    fn names_in(table: &InodeTable, dir: Ino) -> Vec<String> {
        let children = table.get(dir).unwrap().children().clone().unwrap();
        children
            .entries
            .iter()
            .map(|(name, _)| String::from_utf8_lossy(name).into_owned())
            .collect()
    }

    fn link_target(table: &InodeTable, ino: Ino) -> String {
        match &table.get(ino).unwrap().what {
            What::Link(target) => String::from_utf8_lossy(target).into_owned(),
            _ => panic!("inode {ino} is not a link"),
        }
    }

    #[test]
    fn the_top_lists_each_snapshot_by_time_and_by_host_with_latest_links() {
        let second = 1_700_000_000_000_000_000;
        let snapshot =
            |host: &str, time: i64| Snapshot { host: host.into(), time, ..Snapshot::default() };
        let (old, new) = (Id([0xab; 32]), Id([0xcd; 32]));
        let table = InodeTable::default();
        let top = Top::new(
            &table,
            vec![(old, snapshot("alpha", second)), (new, snapshot("a/b", second + 60_000_000_000))],
            Instant::now(),
        );
        assert_eq!(names_in(&table, ROOT), ["hosts", "latest", "snapshots"]);
        assert_eq!(
            names_in(&table, SNAPSHOTS_DIR),
            ["2023-11-14T22:13:20Z", "2023-11-14T22:14:20Z"]
        );
        assert_eq!(names_in(&table, HOSTS_DIR), ["a_b", "alpha"]);
        let latest = table.get(ROOT).unwrap().children().clone().unwrap().find(b"latest").unwrap();
        assert_eq!(link_target(&table, latest), "snapshots/2023-11-14T22:14:20Z");
        assert_eq!(top.newest_time(), Some(second + 60_000_000_000));

        let by_id = top.by_id(&table, SNAPSHOTS_DIR, b"abab").unwrap();
        assert_eq!(link_target(&table, by_id), "2023-11-14T22:13:20Z");
        assert_eq!(top.by_id(&table, SNAPSHOTS_DIR, b"ABAB"), Some(by_id), "one link per snapshot");
        assert_eq!(top.by_id(&table, SNAPSHOTS_DIR, b"ffff"), None);
        assert_eq!(top.by_id(&table, SNAPSHOTS_DIR, b"2023"), None, "a time is no id");
    }

    #[test]
    fn host_names_that_cannot_be_directory_names_are_changed() {
        assert_eq!(host_name("a/b\0c"), b"a_b_c");
        assert_eq!(host_name(""), b"host");
        assert_eq!(host_name(".."), b"host..");
        assert_eq!(host_name("plain"), b"plain");
    }
}
