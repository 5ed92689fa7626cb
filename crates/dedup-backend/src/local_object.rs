//! An object of a local repository written as its bytes come: a temporary file in the folder
//! it belongs to, fsynced and renamed to its final name (which may be in a subfolder, as a
//! pack's shard) when that name is known, exactly as a whole `put` would do it. A pack then
//! never sits whole in memory.

use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use super::local_files::{create_dirs, object_path, publish, PRIVATE_FILE};
use super::temporary::temporary_name;
use super::{ObjectWriter, PutOutcome};

/// Blobs of small files are a few KiB each: gathered into writes of this size; larger writes go
/// straight to the file.
const WRITE_BUFFER: usize = 128 << 10;

/// A local object being written.
pub(super) struct LocalObject {
    root: PathBuf,
    temp: PathBuf,
    file: BufWriter<File>,
    /// Set once the temporary is handed to `publish`, which removes it on failure.
    published: bool,
}

impl LocalObject {
    /// A fresh temporary file in `dir`, for an object of the repository at `root`.
    pub(super) fn create(root: &Path, dir: &Path) -> io::Result<Self> {
        let temp = dir.join(temporary_name(""));
        let file = File::options().write(true).create_new(true).mode(PRIVATE_FILE).open(&temp)?;
        Ok(LocalObject {
            root: root.to_path_buf(),
            temp,
            file: BufWriter::with_capacity(WRITE_BUFFER, file),
            published: false,
        })
    }
}

impl ObjectWriter for LocalObject {
    fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.file.write_all(bytes)
    }

    fn commit(mut self: Box<Self>, name: &str) -> io::Result<PutOutcome> {
        let path = object_path(&self.root, name)?;
        create_dirs(path.parent().expect("object paths have a parent"))?;
        self.file.flush()?;
        self.file.get_ref().sync_all()?;
        self.published = true;
        publish(&self.temp, &path)
    }

    fn keep_alive(&self) -> io::Result<()> {
        self.file.get_ref().set_modified(std::time::SystemTime::now())
    }
}

impl Drop for LocalObject {
    /// An object given up (its writer failed, or the session stopped) leaves nothing behind.
    fn drop(&mut self) {
        if !self.published {
            let _ = fs::remove_file(&self.temp);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Backend, LocalBackend};
    use super::*;

    fn names_in(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn an_object_is_named_only_when_committed_and_write_once() {
        let dir = tempfile::tempdir().unwrap();
        let backend = LocalBackend::new(dir.path());
        let mut object = backend.begin_object("data").unwrap().expect("a local backend streams");
        object.write(b"first ").unwrap();
        object.write(&vec![7u8; 300 << 10]).unwrap();
        assert!(backend.list("data").unwrap().is_empty(), "nothing is an object before commit");
        assert_eq!(object.commit("data/ab/abc").unwrap(), PutOutcome::Created);
        let mut want = b"first ".to_vec();
        want.extend_from_slice(&vec![7u8; 300 << 10]);
        assert_eq!(backend.get("data/ab/abc").unwrap(), want);
        assert_eq!(names_in(&dir.path().join("data")), ["ab"], "no temporary is left");

        let mut again = backend.begin_object("data").unwrap().unwrap();
        again.write(b"other").unwrap();
        assert_eq!(again.commit("data/ab/abc").unwrap(), PutOutcome::AlreadyExisted);
        assert_eq!(backend.get("data/ab/abc").unwrap(), want, "an object is never replaced");
        assert_eq!(names_in(&dir.path().join("data")), ["ab"]);
        assert!(backend.begin_object("data").unwrap().unwrap().commit("../x").is_err());
        assert_eq!(names_in(&dir.path().join("data")), ["ab"]);
    }

    #[test]
    fn an_object_kept_alive_is_not_taken_for_a_dead_writers_leftover() {
        let dir = tempfile::tempdir().unwrap();
        let backend = LocalBackend::new(dir.path());
        let mut object = backend.begin_object("data").unwrap().unwrap();
        object.write(b"a pack that fills slowly").unwrap();
        let temp = dir.path().join("data").join(&names_in(&dir.path().join("data"))[0]);
        let two_hours_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(7200);
        File::options().write(true).open(&temp).unwrap().set_modified(two_hours_ago).unwrap();
        object.keep_alive().unwrap();
        let hour = std::time::Duration::from_secs(3600);
        assert_eq!(backend.remove_stale_temporaries(hour).unwrap(), 0);
        assert_eq!(object.commit("data/ab/abc").unwrap(), PutOutcome::Created);
        assert_eq!(backend.get("data/ab/abc").unwrap(), b"a pack that fills slowly");
    }

    #[test]
    fn an_object_given_up_leaves_nothing_and_a_crash_only_a_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let backend = LocalBackend::new(dir.path());
        let mut dropped = backend.begin_object("data").unwrap().unwrap();
        dropped.write(b"half a pack").unwrap();
        drop(dropped);
        assert!(names_in(&dir.path().join("data")).is_empty());

        // A process killed before the rename runs no destructor: only the temporary remains,
        // which listings skip and the removal of stale temporaries finds.
        let mut killed = backend.begin_object("data").unwrap().unwrap();
        killed.write(&vec![1u8; 200 << 10]).unwrap();
        std::mem::forget(killed);
        let left = names_in(&dir.path().join("data"));
        assert_eq!(left.len(), 1);
        assert!(left[0].starts_with(".tmp-"), "{left:?}");
        assert!(backend.list("data").unwrap().is_empty());
        assert_eq!(backend.remove_stale_temporaries(std::time::Duration::ZERO).unwrap(), 1);
    }
}
