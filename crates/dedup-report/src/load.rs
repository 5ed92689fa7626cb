//! A report read back for an action's `--from FILE` (`-`: standard input), its failures naming
//! where it came from.

use std::fs::File;
use std::io::{self, BufReader, Read};
use std::path::{Path, PathBuf};

use dedup_core::text::quote_path;

use crate::{Report, ReportError};

/// A report that could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// Standard input could not be read.
    #[error("cannot read the report from stdin")]
    ReadStdin(#[source] io::Error),
    /// What standard input held is not a report this dedup reads.
    #[error("cannot use the report from stdin")]
    UseStdin(#[source] ReportError),
    /// The file could not be opened.
    #[error("cannot open the report {}", quote_path(.0))]
    Open(PathBuf, #[source] io::Error),
    /// The file is not a report this dedup reads.
    #[error("cannot use the report {}", quote_path(.0))]
    Use(PathBuf, #[source] ReportError),
}

/// The report in `from`; `-` reads it from `stdin`.
pub fn load(from: &Path, stdin: &mut dyn Read) -> Result<Report, LoadError> {
    if from == Path::new("-") {
        let mut buf = Vec::new();
        stdin.read_to_end(&mut buf).map_err(LoadError::ReadStdin)?;
        return Report::from_json_slice(&buf).map_err(LoadError::UseStdin);
    }
    let file = File::open(from).map_err(|e| LoadError::Open(from.to_owned(), e))?;
    Report::from_json(BufReader::new(file)).map_err(|e| LoadError::Use(from.to_owned(), e))
}
