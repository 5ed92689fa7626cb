//! Arguments of the store commands that read snapshots: `snapshots`, `ls`, `restore`, `dump`,
//! `mount` and `diff`, and the restore request they make.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::FilterArgs;
use crate::commands::RestoreRequest;
use crate::restore::Overwrite;

/// `store snapshots`.
#[derive(Debug, Args)]
pub struct SnapshotsArgs {
    /// Print a JSON array.
    #[arg(long)]
    pub json: bool,
    /// List only snapshots of HOST (--host) that backed up every PATH (--path).
    #[command(flatten)]
    pub filter: FilterArgs,
}

/// `store ls`.
#[derive(Debug, Args)]
pub struct LsArgs {
    /// A snapshot id prefix or `latest`.
    pub snapshot: String,
    /// A path in the snapshot (any bytes).
    pub path: Option<OsString>,
    /// Show kind, mode, owner, size and time; a file the backup could not read whole ends
    /// with " (incomplete)".
    #[arg(short, long)]
    pub long: bool,
    /// Print each path as it is, ending in a NUL byte instead of a newline (for `xargs -0`):
    /// without it, a path that is not printable UTF-8 is shown quoted with escapes, so that a
    /// name holding a newline cannot pass for two entries.
    #[arg(short = '0', long, conflicts_with = "long")]
    pub null: bool,
    /// Which snapshots `latest` chooses among.
    #[command(flatten)]
    pub filter: FilterArgs,
}

/// `store restore`.
#[derive(Debug, Args)]
pub struct RestoreArgs {
    /// SNAPSHOT or SNAPSHOT:PATH (PATH any bytes).
    #[arg(value_name = "SNAPSHOT[:PATH]")]
    pub snapshot: OsString,
    /// Where to restore (made if missing; a symlink here is followed, none below it).
    #[arg(long, value_name = "DIR")]
    pub target: PathBuf,
    /// Restore only entries matching GLOB (repeatable), with what is below them. A GLOB with a
    /// `/` is a path below the restored one (`/home/me/docs` as `ls` shows it), one without is
    /// a name at any depth; `*` stays within a name, `**` crosses directories.
    #[arg(long = "include", value_name = "GLOB")]
    pub includes: Vec<OsString>,
    /// Leave out entries matching GLOB (repeatable), with what is below them.
    #[arg(long = "exclude", value_name = "GLOB")]
    pub excludes: Vec<OsString>,
    /// What happens to an entry of the target where the snapshot has one of the same name:
    /// never replaced (the default), replaced always, if it changed (size or mtime differ), or
    /// if the snapshot's is newer. A directory of the target is only replaced with --delete.
    #[arg(long, value_enum, value_name = "WHEN", default_value_t = OverwriteArg::Never)]
    pub overwrite: OverwriteArg,
    /// Remove what the target holds that the snapshot does not, in every directory restored,
    /// and let the snapshot's entries replace directories of the target (with --overwrite).
    /// The repository restored from and its password file are never removed nor replaced.
    #[arg(long)]
    pub delete: bool,
    /// Print the replacements and deletions a restore would make; change nothing.
    #[arg(short = 'n', long, conflicts_with = "verify")]
    pub dry_run: bool,
    /// Read the restored files back and compare them with the snapshot.
    #[arg(long)]
    pub verify: bool,
    /// Print JSON lines (status while running, an error line per entry not restored, a
    /// summary), as restic does.
    #[arg(long)]
    pub json: bool,
    /// Which snapshots `latest` chooses among.
    #[command(flatten)]
    pub filter: FilterArgs,
}

/// `restore --overwrite` (restic's values).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OverwriteArg {
    /// Replace every entry of the target the snapshot has.
    Always,
    /// Replace an entry unless it looks the same (a file of the same size and mtime).
    IfChanged,
    /// Replace an entry when the snapshot's mtime is later.
    IfNewer,
    /// Keep every entry the target has; restore only what it lacks.
    Never,
}

/// `store dump`.
#[derive(Debug, Args)]
pub struct DumpArgs {
    /// A snapshot id prefix or `latest`.
    pub snapshot: String,
    /// The file's path in the snapshot (any bytes).
    pub file: OsString,
    /// Write it to FILE instead of standard output: sparse where its content has zero blocks,
    /// written under a temporary name beside FILE and renamed over it whole (a symlink at FILE
    /// is replaced, not followed).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Which snapshots `latest` chooses among.
    #[command(flatten)]
    pub filter: FilterArgs,
}

/// `store mount`.
#[derive(Debug, Args)]
pub struct MountArgs {
    /// An empty directory to mount the snapshots (or the volume) on.
    #[arg(value_name = "MOUNTPOINT")]
    pub mountpoint: PathBuf,
    /// Mount the volume NAME read-write (created empty on its first mount): a file system that
    /// deduplicates as it is written, committed as a snapshot of the volume at an interval, at
    /// each fsync of a file or directory in it (`sync FILE`, `sync MOUNTPOINT`) and at unmount.
    /// `sync` and `sync -f` alone do not commit: Linux does not pass them on to a FUSE mount.
    /// One writable mount of a volume at a time.
    #[arg(long, value_name = "NAME")]
    pub writable: Option<String>,
    /// With --writable: seconds between commits while something changed.
    #[arg(long, value_name = "SECONDS", default_value_t = 10, requires = "writable")]
    pub commit_interval: u64,
    /// With --writable: host name recorded in the commits [default: this machine's]
    #[arg(long, value_name = "HOST", requires = "writable")]
    pub host: Option<String>,
    /// With --writable: tag the commits (repeatable; `volume:NAME` is always added).
    #[arg(long = "tag", value_name = "TAG", requires = "writable")]
    pub tags: Vec<String>,
}

/// `store diff`.
#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The older snapshot.
    pub first: String,
    /// The newer snapshot.
    pub second: String,
    /// Which snapshots `latest` chooses among.
    #[command(flatten)]
    pub filter: FilterArgs,
}

impl RestoreArgs {
    /// The restore these arguments ask for.
    pub fn request(&self) -> RestoreRequest<'_> {
        RestoreRequest {
            spec: &self.snapshot,
            filter: self.filter.filter(),
            includes: &self.includes,
            excludes: &self.excludes,
            target: &self.target,
            overwrite: self.overwrite.into(),
            delete: self.delete,
            dry_run: self.dry_run,
            verify: self.verify,
            repository: None,
            password_file: None,
        }
    }
}

impl From<OverwriteArg> for Overwrite {
    fn from(arg: OverwriteArg) -> Overwrite {
        match arg {
            OverwriteArg::Always => Overwrite::Always,
            OverwriteArg::IfChanged => Overwrite::IfChanged,
            OverwriteArg::IfNewer => Overwrite::IfNewer,
            OverwriteArg::Never => Overwrite::Never,
        }
    }
}
