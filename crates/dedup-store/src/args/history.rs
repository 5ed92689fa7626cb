//! Arguments of the store commands that search or rework existing snapshots, as restic names
//! them: `find`, `tag`, `rewrite` and `copy`, the snapshot selection they share, and the
//! options they make.

use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

use clap::{ArgGroup, Args};

use super::{ArgsError, CommonArgs};
use crate::client::password::Sources;
use crate::commands::{self, FindOptions, Patterns, RewriteOptions, Selection, TagChange};
use crate::repo::this_host;
use crate::text::parse_time;

/// Which snapshots a command works on: those named, or else every one the filters accept.
#[derive(Debug, Clone, Default, Args)]
pub struct SelectArgs {
    /// Snapshots to work on (id prefixes or `latest`) [default: every snapshot the filters
    /// accept]
    #[arg(value_name = "SNAPSHOT")]
    pub snapshots: Vec<String>,
    /// The filters.
    #[command(flatten)]
    pub filter: SnapshotFilterArgs,
}

/// The snapshots a command considers: of a host, with paths, with tags.
#[derive(Debug, Clone, Default, Args)]
pub struct SnapshotFilterArgs {
    /// Only snapshots of HOST.
    #[arg(long, value_name = "HOST")]
    pub host: Option<String>,
    /// Only snapshots carrying every tag of T1,T2,… (repeatable: any of the lists).
    #[arg(long = "tag", value_name = "T1,T2,…")]
    pub tags: Vec<String>,
    /// Only snapshots that backed up PATH (repeatable: every PATH).
    #[arg(long = "path", value_name = "PATH")]
    pub paths: Vec<PathBuf>,
}

/// `store find`.
#[derive(Debug, Args)]
pub struct FindArgs {
    /// Glob patterns, matched against each entry's name and its whole path (`*.key`,
    /// `/home/me/.ssh/id_*`); `*` and `?` match `/` too, `**` any directories.
    #[arg(value_name = "PATTERN", required = true)]
    pub patterns: Vec<OsString>,
    /// Search only these snapshots (id prefixes or `latest`; repeatable) [default: every
    /// snapshot the filters accept]
    #[arg(short = 's', long = "snapshot", value_name = "SNAPSHOT")]
    pub snapshots: Vec<String>,
    /// The filters.
    #[command(flatten)]
    pub filter: SnapshotFilterArgs,
    /// Match letters in either case.
    #[arg(short = 'i', long)]
    pub ignore_case: bool,
    /// Only entries modified at or after TIME (`YYYY-MM-DD[ HH:MM[:SS]]`, UTC).
    #[arg(short = 'O', long, value_name = "TIME")]
    pub oldest: Option<String>,
    /// Only entries modified at or before TIME (`YYYY-MM-DD[ HH:MM[:SS]]`, UTC; a date alone
    /// means its end).
    #[arg(short = 'N', long, value_name = "TIME")]
    pub newest: Option<String>,
    /// Print a JSON array: one object per snapshot with matches, each listing them.
    #[arg(long)]
    pub json: bool,
}

/// `store tag`.
#[derive(Debug, Args)]
#[command(group(ArgGroup::new("change").required(true).multiple(true).args(["add", "remove", "set"])))]
pub struct TagArgs {
    /// Add tag T (repeatable; `a,b` adds both).
    #[arg(long, value_name = "T")]
    pub add: Vec<String>,
    /// Remove tag T (repeatable; `a,b` removes both).
    #[arg(long, value_name = "T")]
    pub remove: Vec<String>,
    /// Replace all tags with T (repeatable; `a,b` sets both; `--set ''` removes every tag).
    #[arg(long, value_name = "T", conflicts_with_all = ["add", "remove"])]
    pub set: Vec<String>,
    /// Which snapshots.
    #[command(flatten)]
    pub select: SelectArgs,
}

/// `store rewrite`.
#[derive(Debug, Args)]
#[command(group(ArgGroup::new("what").required(true).multiple(true).args(["excludes", "exclude_files"])))]
pub struct RewriteArgs {
    /// Leave out entries whose name or whole path matches GLOB, with what is below them
    /// (repeatable).
    #[arg(short = 'e', long = "exclude", value_name = "GLOB")]
    pub excludes: Vec<OsString>,
    /// Leave out entries matching the globs in FILE, one per line (`#` comments and blank
    /// lines skipped; repeatable).
    #[arg(long = "exclude-file", value_name = "FILE")]
    pub exclude_files: Vec<PathBuf>,
    /// Remove each original snapshot once its rewritten copy is written (then `prune
    /// --max-unused 0` deletes the data left out from every pack).
    #[arg(long)]
    pub forget: bool,
    /// Print what would be left out; write and remove nothing.
    #[arg(short = 'n', long)]
    pub dry_run: bool,
    /// Which snapshots.
    #[command(flatten)]
    pub select: SelectArgs,
}

/// `store copy`.
#[derive(Debug, Args)]
pub struct CopyArgs {
    /// The repository to copy from (a directory, `s3:…` or `sftp:…`) [env: DEDUP_FROM_REPO]
    #[arg(long, value_name = "REPO")]
    pub from_repo: Option<PathBuf>,
    /// Read the source repository's password from FILE (its first line) [env:
    /// DEDUP_FROM_PASSWORD_FILE]
    #[arg(long, value_name = "FILE")]
    pub from_password_file: Option<PathBuf>,
    /// Run COMMAND with `sh -c` and take its first line of output as the source repository's
    /// password
    #[arg(long, value_name = "COMMAND")]
    pub from_password_command: Option<String>,
    /// Which snapshots of the source.
    #[command(flatten)]
    pub select: SelectArgs,
}

impl SelectArgs {
    /// The library's selection of the snapshots named, or else of those the filters accept.
    pub fn selection(&self) -> Selection {
        self.filter.selection(&self.snapshots)
    }
}

impl SnapshotFilterArgs {
    /// The selection of `snapshots`, or else of those these filters accept.
    pub fn selection(&self, snapshots: &[String]) -> Selection {
        commands::selection_of(snapshots, self.host.as_deref(), &self.paths, &self.tags)
    }
}

/// Each argument's bytes, as the patterns take them.
fn bytes_of(given: &[OsString]) -> Vec<Vec<u8>> {
    given.iter().map(|p| p.as_bytes().to_vec()).collect()
}

impl FindArgs {
    /// What `find` looks for.
    pub fn options(&self) -> Result<FindOptions, ArgsError> {
        Ok(FindOptions {
            patterns: Patterns::new(&bytes_of(&self.patterns), self.ignore_case)?,
            oldest: self.oldest.as_deref().map(|t| parse_time(t, false)).transpose()?,
            newest: self.newest.as_deref().map(|t| parse_time(t, true)).transpose()?,
        })
    }

    /// The snapshots searched.
    pub fn selection(&self) -> Selection {
        self.filter.selection(&self.snapshots)
    }
}

impl TagArgs {
    /// The change of tags asked for.
    pub fn change(&self) -> Result<TagChange, ArgsError> {
        Ok(commands::tag_change(&self.set, &self.add, &self.remove)?)
    }
}

impl RewriteArgs {
    /// What `rewrite` leaves out, and how.
    pub fn options(&self) -> Result<RewriteOptions, ArgsError> {
        let patterns = commands::rewrite_patterns(&bytes_of(&self.excludes), &self.exclude_files)?;
        Ok(RewriteOptions {
            excludes: Patterns::new(&patterns, false)?,
            forget: self.forget,
            dry_run: self.dry_run,
            host: this_host(),
        })
    }
}

impl CopyArgs {
    /// The options that open the source repository: `common`'s, with the source's location
    /// (`--from-repo`, else DEDUP_FROM_REPO) and password sources.
    pub fn source(&self, common: &CommonArgs) -> Result<CommonArgs, ArgsError> {
        let mut source = common.clone();
        source.repo = Some(self.source_location()?);
        source.password_file = self.from_password_file.clone();
        source.password_command = self.from_password_command.clone();
        Ok(source)
    }

    /// The sources of the source repository's password.
    pub fn source_password_sources(&self) -> Sources {
        Sources {
            file: self.from_password_file.clone(),
            command: self.from_password_command.clone(),
        }
    }

    fn source_location(&self) -> Result<PathBuf, ArgsError> {
        if let Some(repo) = &self.from_repo {
            return Ok(repo.clone());
        }
        match std::env::var_os("DEDUP_FROM_REPO") {
            Some(repo) if !repo.is_empty() => Ok(PathBuf::from(repo)),
            _ => Err(ArgsError::NoSourceRepository),
        }
    }
}
