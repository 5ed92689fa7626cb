//! Asking for a directory's files in the order of the disk before the backup reads them, where
//! the source lies on a disk that seeks: a spinning disk spends 8-12 ms getting to a small file
//! and well under one reading it, and the walk reads a directory's small files in the order of
//! its listing (a hash order on ext4), so the head travels between nearly every two files.
//!
//! There, the files of a listing that are to be read are opened a window at a time, sorted by
//! where their first byte lies (`FIEMAP`, `dedup_scan::layout`; files whose place is unknown go
//! after, by inode number) and asked for in that order, small files together in one call so
//! that files lying back to back are read in merged requests (`dedup_scan::read::together`).
//! The walk then reads them as before, in the order of the listing, from the page cache; the
//! trees are assembled as before. Nothing is decided from what is asked for: a page evicted
//! before its reader comes is simply read again, and each file is still read through the
//! descriptor opened here, with the checks of `visitor::read`.
//!
//! Where it is on: a source device that says it rotates (`queue/rotational`) and whose reads
//! measure slow (the first page of a few files not in the page cache, as sync and the finder
//! decide: a virtual disk may say it rotates on solid-state storage). `DEDUP_PHYSICAL_ORDER=1` or
//! `0` forces it on or off.

use std::ffi::OsStr;
use std::fs::File;
use std::ops::Range;
use std::os::fd::BorrowedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use dedup_core::env_setting::{switch, SettingError};
use dedup_scan::layout::{self, Address};
use dedup_scan::read::ahead::will_need;
use dedup_scan::read::together::{will_need_together, Wanted};

/// Whether the backup asks for its files in the order of the disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Choice {
    /// On every device.
    Always,
    /// Nowhere.
    Never,
    /// Where the device rotates and its reads measure slow.
    Measured,
}

impl Choice {
    /// The choice `DEDUP_PHYSICAL_ORDER` asks for (`1` always, `0` never); measured when unset.
    pub fn from_env() -> Result<Choice, SettingError> {
        Ok(match switch("DEDUP_PHYSICAL_ORDER")? {
            Some(true) => Choice::Always,
            Some(false) => Choice::Never,
            None => Choice::Measured,
        })
    }

    /// Whether the walk lists each directory's subdirectories lowest inode first
    /// (`WalkOptions::inode_order`), as the finder does: where files may be read in the order of
    /// the disk, that is where a path lies on a device that says it rotates. On a disk that seeks
    /// the walk then moves the way the file system laid the directories out, and an unchanged
    /// backup, which reads only inodes and directories, seeks less (docs/BENCHMARKS.md, the
    /// modelled HDD); elsewhere the order costs no more than another.
    pub fn walks_in_inode_order(self, paths: &[PathBuf]) -> bool {
        match self {
            Choice::Always => true,
            Choice::Never => false,
            Choice::Measured => paths.iter().any(|path| {
                rustix::fs::stat(path).is_ok_and(|st| layout::rotational(st.st_dev) == Some(true))
            }),
        }
    }
}

/// Files of one listing opened and asked for at once: enough that the reads of files lying back
/// to back merge into requests of the device's largest size, few enough that the descriptors
/// held stay well under the process's limit with several walk threads.
const WINDOW: usize = 128;

/// Bytes asked for together in one call at most.
const BATCH_BYTES: u64 = 32 << 20;

/// Bytes of one file asked for ahead at most: the kernel's own read-ahead follows a long file
/// read from its start, and asking for all of a huge file would fill the page cache at once.
const AHEAD_PER_FILE: u64 = 32 << 20;

/// What is known of a device.
#[derive(Debug, Clone)]
enum Device {
    Decided(bool),
    /// Rotates; the first-page reads timed so far.
    Probing(Vec<Duration>),
}

/// The backup's choice and, per device, what was decided.
#[derive(Debug)]
pub struct DiskOrder {
    choice: Choice,
    devices: Mutex<Vec<(u64, Device)>>,
}

impl DiskOrder {
    /// Files asked for in the order of the disk as `choice` says.
    pub fn new(choice: Choice) -> DiskOrder {
        DiskOrder { choice, devices: Mutex::new(Vec::new()) }
    }

    /// Whether files on `dev` are asked for in the order of the disk: `Some` once known, `None`
    /// while the device still has to be measured.
    fn known(&self, dev: u64) -> Option<bool> {
        match self.choice {
            Choice::Always => return Some(true),
            Choice::Never => return Some(false),
            Choice::Measured => {}
        }
        let mut devices = self.devices.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((_, device)) = devices.iter().find(|(d, _)| *d == dev) {
            return match device {
                Device::Decided(on) => Some(*on),
                Device::Probing(_) => None,
            };
        }
        if layout::rotational(dev) == Some(true) {
            devices.push((dev, Device::Probing(Vec::new())));
            None
        } else {
            devices.push((dev, Device::Decided(false)));
            Some(false)
        }
    }

    /// Whether files on `dev` may be asked for in the order of the disk: on, or still to be
    /// measured.
    pub fn may_be_on(&self, dev: u64) -> bool {
        self.known(dev) != Some(false)
    }

    /// Adds the first-page reads of `files` to what `dev` measured, and says whether it is on
    /// (`false` until enough were timed).
    fn measure(&self, dev: u64, files: &[(usize, File, u64)]) -> bool {
        let mut devices = self.devices.lock().unwrap_or_else(PoisonError::into_inner);
        let Some((_, device)) = devices.iter_mut().find(|(d, _)| *d == dev) else { return false };
        let Device::Probing(took) = device else { return matches!(device, Device::Decided(true)) };
        // One file a window: the files of one directory often lie back to back, and after the
        // first the drive's own cache would answer the next ones as if the disk did not seek.
        if let Some(t) = files.iter().find_map(|(_, file, _)| layout::first_page_read(file)) {
            took.push(t);
        }
        if took.len() < layout::PROBE_READS {
            return false;
        }
        let on = layout::reads_seek(took);
        *device = Device::Decided(on);
        on
    }
}

/// Where a file's first byte lies, as a key that sorts files in the order of the disk: known
/// places first, by address, then the others by inode number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Place {
    unknown: bool,
    at: u64,
}

impl Place {
    fn new(ino: u64, address: Address) -> Place {
        match address {
            Address::At(at) => Place { unknown: false, at },
            Address::Unknown | Address::Unsupported => Place { unknown: true, at: ino },
        }
    }
}

/// The order in which to ask for files at `places`: indices into `places`, ties kept in the
/// order given.
fn disk_order(places: &[Place]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..places.len()).collect();
    order.sort_by_key(|&n| places[n]);
    order
}

/// A file of a listing that the walk will read: its index in the listing, name, size, inode.
pub struct ToRead<'a> {
    /// Its index in the listing.
    pub index: usize,
    /// Its name in the directory.
    pub name: &'a [u8],
    /// Its size from the listing's `stat`.
    pub size: u64,
    /// Its inode number.
    pub ino: u64,
}

/// The files of one listing to be read, opened and asked for a window at a time in the order of
/// the disk, ahead of the walk's reads of them in the order of the listing.
pub struct ListingAhead<'a> {
    order: &'a DiskOrder,
    dev: u64,
    dir: BorrowedFd<'a>,
    to_read: Vec<ToRead<'a>>,
    /// Windows start here in `to_read`; those before were asked for.
    next: usize,
    /// Files opened for a window and not yet taken, by listing index.
    opened: Vec<(usize, File)>,
    /// Known off for this device: nothing more is opened.
    off: bool,
}

impl<'a> ListingAhead<'a> {
    /// The files `to_read` (in listing order) of the directory `dir` on device `dev`.
    pub fn new(
        order: &'a DiskOrder,
        dev: u64,
        dir: BorrowedFd<'a>,
        to_read: Vec<ToRead<'a>>,
    ) -> Self {
        let off = to_read.is_empty() || order.known(dev) == Some(false);
        ListingAhead { order, dev, dir, to_read, next: 0, opened: Vec::new(), off }
    }

    /// The file of listing entry `index` if it was opened to be asked for (the caller opens it
    /// otherwise); its window is asked for first when it is the next one.
    pub fn take(&mut self, index: usize) -> Option<File> {
        while !self.off && self.to_read.get(self.next).is_some_and(|f| f.index <= index) {
            let end = (self.next + WINDOW).min(self.to_read.len());
            self.ask(self.next..end);
            self.next = end;
        }
        let at = self.opened.iter().position(|(i, _)| *i == index)?;
        Some(self.opened.swap_remove(at).1)
    }

    /// Opens the files of `window` and, where the device is on, asks for them in disk order.
    fn ask(&mut self, window: Range<usize>) {
        let mut files: Vec<(usize, File, u64)> = Vec::with_capacity(window.len());
        let mut inos = Vec::with_capacity(window.len());
        for f in &self.to_read[window] {
            // One that cannot be opened now is opened (and reported) by the walk as before.
            let Ok(file) = dedup_scan::open_content_at(self.dir, OsStr::from_bytes(f.name)) else {
                continue;
            };
            inos.push(f.ino);
            files.push((f.index, file, f.size));
        }
        let on = match self.order.known(self.dev) {
            Some(on) => on,
            None => self.order.measure(self.dev, &files),
        };
        if on {
            let places: Vec<Place> = files
                .iter()
                .zip(&inos)
                .map(|((_, file, _), &ino)| Place::new(ino, layout::address_of(file, 0)))
                .collect();
            let mut slots: Vec<Option<(usize, File, u64)>> = files.into_iter().map(Some).collect();
            let sorted = disk_order(&places).into_iter().filter_map(|n| slots[n].take()).collect();
            self.opened.extend(ask_in_order(sorted, layout::read_ahead_piece(self.dev)));
            return;
        }
        self.off = self.order.known(self.dev) == Some(false);
        self.opened.extend(files.into_iter().map(|(index, file, _)| (index, file)));
    }
}

/// How files of lengths `lens`, in the order given, are asked for: runs of ranges of one piece
/// or less together (at most [`BATCH_BYTES`] a run), a longer range on its own.
fn batches(lens: &[u64], piece: u64) -> Vec<Range<usize>> {
    let mut runs = Vec::new();
    let (mut start, mut bytes) = (0, 0);
    for (n, &len) in lens.iter().enumerate() {
        if len > piece {
            if start < n {
                runs.push(start..n);
            }
            runs.push(n..n + 1);
            (start, bytes) = (n + 1, 0);
            continue;
        }
        bytes += len;
        if bytes >= BATCH_BYTES {
            runs.push(start..n + 1);
            (start, bytes) = (n + 1, 0);
        }
    }
    if start < lens.len() {
        runs.push(start..lens.len());
    }
    runs
}

/// Asks for `files` (listing index, file, size) in the order given, as [`batches`] groups
/// them; gives the files back with their listing indices.
fn ask_in_order(files: Vec<(usize, File, u64)>, piece: u64) -> Vec<(usize, File)> {
    let lens: Vec<u64> = files.iter().map(|f| f.2.min(AHEAD_PER_FILE)).collect();
    let mut back = Vec::with_capacity(files.len());
    let mut files = files.into_iter();
    for run in batches(&lens, piece) {
        let mut indices = Vec::with_capacity(run.len());
        let wanted: Vec<Wanted> = files
            .by_ref()
            .take(run.len())
            .zip(&lens[run.clone()])
            .map(|((index, file, _), &len)| {
                indices.push(index);
                Wanted { file, offset: 0, len, piece }
            })
            .collect();
        let alone = run.len() == 1 && lens[run.start] > piece;
        let asked = if alone { vec![false] } else { will_need_together(&wanted) };
        for (w, asked) in wanted.iter().zip(asked) {
            if !asked {
                will_need(&w.file, w.offset, w.len, w.piece);
            }
        }
        back.extend(indices.into_iter().zip(wanted.into_iter().map(|w| w.file)));
    }
    back
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_places_go_first_by_address_then_unknown_ones_by_inode_ties_as_listed() {
        let places = [
            Place::new(50, Address::Unknown),
            Place::new(10, Address::At(9 << 20)),
            Place::new(99, Address::At(4096)),
            Place::new(5, Address::Unsupported),
            Place::new(7, Address::At(9 << 20)),
        ];
        assert_eq!(disk_order(&places), [2, 1, 4, 3, 0]);
        assert!(disk_order(&[]).is_empty());
    }

    #[test]
    fn the_walk_goes_in_inode_order_when_forced_or_on_a_device_that_rotates() {
        let on_shm = [PathBuf::from("/dev/shm")];
        assert!(Choice::Always.walks_in_inode_order(&on_shm));
        assert!(!Choice::Never.walks_in_inode_order(&on_shm));
        // tmpfs has no block queue to say it rotates: the walk keeps the listing's order.
        if std::fs::metadata("/dev/shm").is_ok() {
            assert!(!Choice::Measured.walks_in_inode_order(&on_shm));
        }
        assert!(!Choice::Measured.walks_in_inode_order(&[PathBuf::from("/no/such/path")]));
    }

    #[test]
    fn small_ranges_are_asked_for_together_and_long_ones_alone() {
        let piece = 128 << 10;
        assert_eq!(batches(&[10, 20, piece, 30], piece), [Range { start: 0, end: 4 }]);
        assert_eq!(batches(&[10, piece + 1, 30, 40], piece), [0..1, 1..2, 2..4]);
        assert_eq!(batches(&[piece + 1], piece), [Range { start: 0, end: 1 }]);
        assert!(batches(&[], piece).is_empty());
        // A run ends once it holds BATCH_BYTES.
        let full = vec![piece; (BATCH_BYTES / piece) as usize + 3];
        let runs = batches(&full, piece);
        assert_eq!(
            runs,
            [0..(BATCH_BYTES / piece) as usize, (BATCH_BYTES / piece) as usize..full.len()]
        );
    }

    #[test]
    fn forced_choices_stand_without_measuring() {
        assert_eq!(DiskOrder::new(Choice::Always).known(u64::MAX), Some(true));
        assert_eq!(DiskOrder::new(Choice::Never).known(u64::MAX), Some(false));
    }

    /// Every file of a listing is given back once, by its own index, opened on the right name,
    /// whether asked for in disk order (forced on) or not at all (forced off).
    #[test]
    fn each_file_comes_back_once_by_its_index_whatever_the_choice() {
        let dir = tempfile::tempdir().unwrap();
        let names: Vec<Vec<u8>> = (0..(WINDOW + 5)).map(|n| format!("f{n}").into_bytes()).collect();
        for (n, name) in names.iter().enumerate() {
            std::fs::write(dir.path().join(OsStr::from_bytes(name)), vec![n as u8; n * 100])
                .unwrap();
        }
        let fd = File::open(dir.path()).unwrap();
        let dev =
            std::fs::metadata(dir.path()).map(|m| std::os::unix::fs::MetadataExt::dev(&m)).unwrap();
        for choice in [Choice::Always, Choice::Never] {
            let order = DiskOrder::new(choice);
            // Every other entry is to be read.
            let to_read = names
                .iter()
                .enumerate()
                .filter(|(n, _)| n % 2 == 0)
                .map(|(n, name)| ToRead { index: n, name, size: n as u64 * 100, ino: n as u64 })
                .collect();
            let mut ahead = ListingAhead::new(&order, dev, std::os::fd::AsFd::as_fd(&fd), to_read);
            for n in 0..names.len() {
                let file = ahead.take(n);
                if choice == Choice::Never || n % 2 == 1 {
                    assert!(file.is_none(), "{choice:?} {n}");
                    continue;
                }
                let mut bytes = Vec::new();
                std::io::Read::read_to_end(&mut file.unwrap(), &mut bytes).unwrap();
                assert_eq!(bytes, vec![n as u8; n * 100]);
                assert!(ahead.take(n).is_none(), "given once");
            }
        }
    }
}
