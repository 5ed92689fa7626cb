//! The file operations the local backend and its streamed objects share: where an object lives,
//! private modes, creating directories durably, and publishing a written temporary under its
//! final name without replacing anything.

use std::fs::{self, File};
use std::io;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

use rustix::fs::{renameat_with, RenameFlags, CWD};

use super::PutOutcome;

/// Where object `name` lives under `root`; names with an empty, `.`-led or `..` part are refused.
pub(crate) fn object_path(root: &Path, name: &str) -> io::Result<PathBuf> {
    if name
        .split('/')
        .any(|part| part.is_empty() || part == "." || part == ".." || part.starts_with('.'))
    {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("bad object name {name:?}"),
        ));
    }
    Ok(root.join(name))
}

/// The mode of every file the backend creates: the repository's files are the user's alone
/// (a key file is what an offline attack on the password needs), whatever the umask.
pub(crate) const PRIVATE_FILE: u32 = 0o600;
/// The mode of every directory the backend creates.
pub(crate) const PRIVATE_DIR: u32 = 0o700;

/// Creates `dir` and its parents (private: [`PRIVATE_DIR`]), fsyncing each parent a new entry
/// went into.
pub(crate) fn create_dirs(dir: &Path) -> io::Result<()> {
    if dir.as_os_str().is_empty() || dir.is_dir() {
        return Ok(());
    }
    if let Some(parent) = dir.parent() {
        create_dirs(parent)?;
    }
    match fs::DirBuilder::new().mode(PRIVATE_DIR).create(dir) {
        Ok(()) => sync_dir(dir.parent().unwrap_or(dir)),
        Err(err) if err.kind() == io::ErrorKind::AlreadyExists => Ok(()),
        Err(err) => Err(err),
    }
}

pub(crate) fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

/// Gives the written and fsynced temporary file `temp` its final name `path` without replacing
/// an existing file, and fsyncs the directory of `path`; the temporary is removed whatever
/// happens but success.
pub(crate) fn publish(temp: &Path, path: &Path) -> io::Result<PutOutcome> {
    match renameat_with(CWD, temp, CWD, path, RenameFlags::NOREPLACE) {
        Ok(()) => {
            sync_dir(path.parent().expect("object paths have a parent"))?;
            Ok(PutOutcome::Created)
        }
        Err(rustix::io::Errno::EXIST) => {
            fs::remove_file(temp)?;
            Ok(PutOutcome::AlreadyExisted)
        }
        Err(err) => {
            let _ = fs::remove_file(temp);
            Err(err.into())
        }
    }
}
