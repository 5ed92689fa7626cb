//! `dump` from start to end: the file a snapshot holds at a path, refused when the backup could
//! not read it whole, written to standard output or into a file of the user's choosing.

use std::ffi::OsStr;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::repo::{Repository, SnapshotFilter};
use crate::restore::NOT_READ_WHOLE;
use dedup_core::text::quote_path;

use super::dump::{open_file, write_file};

/// What `dump` did.
#[derive(Debug, PartialEq, Eq)]
pub enum Dumped {
    /// The file was written whole.
    Written,
    /// The backup could not read the file whole: nothing was written (the reason, naming it).
    Refused(String),
}

/// Writes the file at `path` of the snapshot `spec` into `output` (sparse, renamed into place
/// whole) or, without one, to `stdout`.
pub fn dump_file(
    repo: &Arc<Repository>,
    (spec, filter): (&str, &SnapshotFilter),
    path: &[u8],
    output: Option<&Path>,
    stdout: &mut dyn Write,
) -> Result<Dumped> {
    let (node, file) = open_file(repo, spec, filter, path)?;
    if node.incomplete {
        let shown = quote_path(Path::new(OsStr::from_bytes(path)));
        return Ok(Dumped::Refused(format!("{shown}: {NOT_READ_WHOLE}")));
    }
    match output {
        Some(output) => write_file(&file, node.mode, output)?,
        None => {
            let failed = |e| Error::io("standard output", e);
            for chunk in file.chunks() {
                stdout.write_all(&chunk?.bytes).map_err(failed)?;
            }
            stdout.flush().map_err(failed)?;
        }
    }
    Ok(Dumped::Written)
}
