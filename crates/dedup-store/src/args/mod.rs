//! Arguments of `dedup store` as clap parses them (the `clap` feature), beside the store's
//! options they fill: the repository and password options every store command shares, and the
//! command list; each command's own options, and what turns them into the library's, are in the
//! files beside this one. The binary keeps the prompt, the printing and the exit status.

mod backup;
mod browse;
mod error;
mod help_examples;
mod history;
mod profile;
mod upkeep;

pub use self::backup::{BackupArgs, InitArgs};
pub use self::browse::{
    DiffArgs, DumpArgs, LsArgs, MountArgs, OverwriteArg, RestoreArgs, SnapshotsArgs,
};
pub use self::error::ArgsError;
pub use self::history::{CopyArgs, FindArgs, RewriteArgs, SelectArgs, SnapshotFilterArgs, TagArgs};
pub use self::upkeep::{
    CheckArgs, ForgetArgs, KeyAction, KeyArgs, NewPasswordArgs, PruneArgs, PruneOptionsArgs,
    RepairArgs, RepairWhat, StatsArgs,
};

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{ArgAction, Args, Subcommand};

use crate::client::open::{self, Reach};
use crate::client::password::Sources;
use crate::repo::SnapshotFilter;

/// `dedup store`.
#[derive(Debug, Args)]
#[command(after_help = help_examples::STORE)]
pub struct StoreArgs {
    /// Shared options.
    #[command(flatten)]
    pub common: CommonArgs,
    /// What to do.
    #[command(subcommand)]
    pub command: StoreCommand,
}

/// Options of every store command.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Repository options")]
pub struct CommonArgs {
    /// The repository [env: DEDUP_REPO]
    #[arg(short = 'r', long = "repo", value_name = "REPO", global = true)]
    pub repo: Option<PathBuf>,
    /// Take the settings the command line leaves out from the profile NAME:
    /// $XDG_CONFIG_HOME/dedup/NAME.toml (else ~/.config/dedup/NAME.toml), else
    /// /etc/dedup/NAME.toml; or from the file NAME when it ends in .toml
    #[arg(short = 'P', long, value_name = "NAME", global = true)]
    pub profile: Option<OsString>,
    /// Read the password from FILE (its first line) [env: DEDUP_PASSWORD_FILE]
    #[arg(long, value_name = "FILE", global = true)]
    pub password_file: Option<PathBuf>,
    /// Run COMMAND with `sh -c` and take its first line of output as the password
    #[arg(long, value_name = "COMMAND", global = true)]
    pub password_command: Option<String>,
    /// Print only errors.
    #[arg(short, long, global = true)]
    pub quiet: bool,
    /// Print more (notes on skipped entries).
    #[arg(short, long, action = ArgAction::Count, global = true)]
    pub verbose: u8,
    /// Object storage: requests in flight at most [default: 8]
    #[arg(long, value_name = "N", global = true)]
    pub connections: Option<usize>,
    /// Object storage: address the bucket as BUCKET.HOST (virtual-host style) instead of HOST/BUCKET
    #[arg(long, global = true)]
    pub s3_virtual_host: bool,
    /// Object storage: keep no local copy of index files and snapshots (under
    /// $XDG_CACHE_HOME/dedup/store/REPO-ID)
    #[arg(long, global = true)]
    pub no_cache: bool,
    /// Accept that the repository at this location is not the one this client used there
    /// before (another id, key or encryption), or that an unencrypted one is opened with a
    /// password given, and remember it from now on
    #[arg(long, global = true)]
    pub accept_repository_change: bool,
    /// Neither read nor keep this client's cached key of the repository (under
    /// $XDG_CACHE_HOME/dedup/keys): the key is derived from the password at every open
    #[arg(long, global = true)]
    pub no_key_cache: bool,
    /// SFTP: accept and record the host key of a server not yet in known_hosts (ssh's
    /// StrictHostKeyChecking=accept-new), whatever ssh_config says
    #[arg(long, global = true)]
    pub accept_new_host_key: bool,
    /// Object storage: use an s3:http:// location off this machine without a warning (requests
    /// and answers travel unencrypted)
    #[arg(long, global = true)]
    pub insecure_http: bool,
}

/// The store's commands.
#[derive(Debug, Subcommand)]
pub enum StoreCommand {
    /// Create a repository.
    #[command(after_help = help_examples::INIT)]
    Init(InitArgs),
    /// Save a snapshot of PATHs (or of standard input).
    ///
    /// What could not be read whole (a file unreadable, or changed again while read a second
    /// time; a directory that cannot be listed; a PATH that does not exist) is named on stderr
    /// with what the snapshot holds of it, and the snapshot is marked incomplete (exit 1). With
    /// no PATH present, or none readable, no snapshot is written (exit 2).
    #[command(after_help = help_examples::BACKUP)]
    Backup(BackupArgs),
    /// List snapshots.
    #[command(after_help = help_examples::SNAPSHOTS)]
    Snapshots(SnapshotsArgs),
    /// List the entries of a snapshot, under PATH if given.
    #[command(after_help = help_examples::LS)]
    Ls(LsArgs),
    /// Recreate a snapshot, or a path in it, under a target directory.
    #[command(after_help = help_examples::RESTORE)]
    Restore(RestoreArgs),
    /// Write one file of a snapshot to standard output (or to a file with -o).
    #[command(after_help = help_examples::DUMP)]
    Dump(DumpArgs),
    /// Show what differs between two snapshots.
    #[command(after_help = help_examples::DIFF)]
    Diff(DiffArgs),
    /// Show every snapshot as a read-only file system at MOUNTPOINT (FUSE), until unmounted.
    ///
    /// MOUNTPOINT/snapshots/TIME holds each snapshot's tree (TIME in UTC, with the short id
    /// after it when two snapshots share a second; a short id also finds it),
    /// MOUNTPOINT/hosts/HOST/TIME the same by host, MOUNTPOINT/latest links to the newest. Runs
    /// in the foreground until `fusermount3 -u MOUNTPOINT`, Ctrl-C or SIGTERM.
    #[command(after_help = help_examples::MOUNT)]
    Mount(MountArgs),
    /// Sizes, dedup and compression ratios, chunks and packs.
    ///
    /// Logical size: the sum, over every snapshot, of the sizes of its regular files as `ls -l`
    /// shows them (holes of sparse files included; a file counted once for each of its names
    /// and in each snapshot that holds it): the bytes restoring every snapshot gives back. Unique
    /// data: the distinct file chunks, uncompressed. Stored data: those chunks compressed and
    /// encrypted. Repository size: every file of the repository (packs, index, snapshots, keys,
    /// config). Dedup ratio = logical size / unique data; compression ratio = unique data /
    /// stored data; total ratio = logical size / repository size.
    #[command(after_help = help_examples::STATS)]
    Stats(StatsArgs),
    /// Verify the repository's structure, and with --read-data every byte.
    #[command(after_help = help_examples::CHECK)]
    Check(CheckArgs),
    /// Manage the passwords (key slots) that open the repository.
    #[command(after_help = help_examples::KEY)]
    Key(KeyArgs),
    /// Remove snapshots: those named, or those a retention policy does not keep.
    ///
    /// Snapshots are grouped by host and paths; in each group, newest first, a snapshot is kept
    /// by --keep-last while any remain, by --keep-hourly … --keep-yearly when it is the newest of
    /// an hour, day, ISO week, month or year (UTC) not yet kept, by --keep-within when it is
    /// younger than the group's newest by less than DURATION, and by --keep-tag. The rules are
    /// applied to the complete snapshots alone; an incomplete one is kept only in addition, when
    /// the rules applied to the whole group keep it. A policy that keeps nothing is refused
    /// unless --unsafe-allow-remove-all. Only snapshot files are removed; `prune` (or --prune)
    /// frees the data.
    #[command(after_help = help_examples::FORGET)]
    Forget(ForgetArgs),
    /// Delete data no snapshot needs, repacking mostly-unused packs; safe while backups run.
    #[command(after_help = help_examples::PRUNE)]
    Prune(PruneArgs),
    /// Rebuild the index from the packs, or rewrite snapshots without what is lost.
    #[command(after_help = help_examples::REPAIR)]
    Repair(RepairArgs),
    /// Find which snapshots hold files or directories whose name or path matches PATTERN.
    ///
    /// Each match is listed under its snapshot with its kind, mode, size and modification time
    /// (UTC). Finding nothing is not an error (exit 0, as restic's `find`); a snapshot or a
    /// directory that could not be searched is named on stderr (exit 1).
    #[command(after_help = help_examples::FIND)]
    Find(history::FindArgs),
    /// Add, remove or set the tags of snapshots.
    ///
    /// A snapshot file is never changed in place: each snapshot whose tags change is written
    /// anew, recording the snapshot it replaces as its original, and the old file is removed
    /// only after the new one is written (an interruption leaves one or both, never neither).
    /// Its id therefore changes.
    #[command(after_help = help_examples::TAG)]
    Tag(history::TagArgs),
    /// Write snapshots again without the files and directories that match (a leaked secret).
    ///
    /// Each snapshot that holds a match gets a copy without it (new trees on the way to it;
    /// time, host and paths kept; its original recorded); the original stays unless --forget.
    /// The data left out leaves the repository with a prune, once no snapshot refers to it:
    /// after `rewrite --forget` and `prune --max-unused 0` its bytes are in no pack. A rewrite
    /// that would leave nothing of a snapshot is refused: `forget` removes snapshots.
    #[command(after_help = help_examples::REWRITE)]
    Rewrite(history::RewriteArgs),
    /// Copy snapshots from another repository (--from-repo) into this one.
    ///
    /// Trees are written in this repository's format; a file's chunks are carried over as they
    /// are when both repositories cut files alike, and cut again otherwise. A snapshot already
    /// copied (this repository holds one with the same original) is skipped, so running the
    /// same copy again copies only what is new. The source's password comes from
    /// DEDUP_FROM_PASSWORD, --from-password-file, --from-password-command or a prompt.
    #[command(after_help = help_examples::COPY)]
    Copy(history::CopyArgs),
}

/// Which snapshots `latest` chooses among (an id prefix is never filtered).
#[derive(Debug, Clone, Default, Args)]
pub struct FilterArgs {
    /// `latest` is the newest snapshot of HOST.
    #[arg(long, value_name = "HOST")]
    pub host: Option<String>,
    /// `latest` is the newest snapshot that backed up PATH (repeatable: every PATH).
    #[arg(long = "path", value_name = "PATH")]
    pub paths: Vec<PathBuf>,
}

impl CommonArgs {
    /// The repository location from `-r`, else DEDUP_REPO.
    pub fn location(&self) -> Result<PathBuf, ArgsError> {
        Ok(open::location(self.repo.as_deref())?)
    }

    /// How the repository's storage is reached.
    pub fn reach(&self) -> Reach {
        Reach {
            connections: self.connections,
            s3_virtual_host: self.s3_virtual_host,
            accept_new_host_key: self.accept_new_host_key,
            insecure_http: self.insecure_http,
        }
    }

    /// The sources of the repository's password the command line gives.
    pub fn password_sources(&self) -> Sources {
        Sources { file: self.password_file.clone(), command: self.password_command.clone() }
    }
}

impl FilterArgs {
    /// The library's snapshot filter: `--host`, and each `--path` made absolute.
    pub fn filter(&self) -> SnapshotFilter {
        SnapshotFilter {
            host: self.host.clone(),
            paths: self.paths.iter().map(|p| crate::commands::absolute_bytes(p)).collect(),
        }
    }
}
