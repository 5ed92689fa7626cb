//! The report: what a scan found, in the form every output format and every action uses
//! (shared/DESIGN.md, "Report contract"; docs/report-format.md).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// Version of the JSON report format; changes only when an existing field changes meaning.
pub const REPORT_VERSION: u32 = 1;

/// Result of a scan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Report {
    /// Format version ([`REPORT_VERSION`]).
    pub version: u32,
    /// `dedup <version>` of the writer.
    pub tool: String,
    /// Path arguments, as given.
    #[serde(with = "crate::json_path::list")]
    pub roots: Vec<PathBuf>,
    /// Groups of identical files, largest size first.
    pub groups: Vec<Group>,
    /// Totals.
    pub summary: Summary,
    /// Duplicated directories (`--dirs`); absent unless asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dirs: Option<Vec<DirGroup>>,
    /// Files with fewer copies than asked (`--unique`, `--rf-under`), each inode as a group of
    /// its paths; absent unless asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unique: Option<Vec<Group>>,
    /// Where the duplicated bytes are, per top-level directory (`--summary`); absent unless
    /// asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dir_summary: Option<Vec<DirSummary>>,
}

/// How the directories of a [`DirGroup`] relate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DirKind {
    /// Same names, same structure, same file contents.
    Identical,
    /// Every file of the first directory also exists (same bytes) under the second, arranged
    /// differently.
    Contained,
}

/// Directories whose files are duplicated as a whole.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DirGroup {
    /// How they relate.
    pub kind: DirKind,
    /// Files in the first directory (regular-file paths, all levels).
    pub file_count: u64,
    /// Bytes of those files.
    pub size: u64,
    /// The directories. For `Identical`, every one; for `Contained`, the contained directory
    /// first, then the one holding the copies. In every entry `files[i]` has the same content.
    pub dirs: Vec<DirCopy>,
}

/// One directory of a [`DirGroup`] and its files, in an order aligned across the group.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DirCopy {
    /// The directory's path.
    #[serde(with = "crate::json_path")]
    pub path: PathBuf,
    /// Its files (for `Identical`: in path order below the directory; for the second entry of
    /// `Contained`: the copy of each file of the first entry).
    pub files: Vec<ReportFile>,
}

/// Duplicated bytes in one top-level directory (a directory directly below a root argument, or
/// the root itself for the files lying directly in it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DirSummary {
    /// The directory.
    #[serde(with = "crate::json_path")]
    pub path: PathBuf,
    /// Files (inodes) in it that have an identical copy anywhere.
    pub duplicated_files: u64,
    /// Their bytes.
    pub duplicated_bytes: u64,
    /// Bytes freed by keeping one copy of each duplicated file, the others being outside this
    /// directory when any are: each group's files here, all of them when the group has a file
    /// elsewhere, all but one otherwise.
    pub reclaimable_bytes: u64,
    /// Of those, bytes duplicated within this directory only.
    pub internal_bytes: u64,
    /// Other top-level directories holding copies of files here, most bytes first.
    pub shared_with: Vec<SharedWith>,
}

/// Bytes of one directory's files that also exist in another.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SharedWith {
    /// The other top-level directory.
    #[serde(with = "crate::json_path")]
    pub path: PathBuf,
    /// Bytes of files here with a copy there.
    pub bytes: u64,
}

/// Files with identical content.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Group {
    /// Size of each file in bytes.
    pub size: u64,
    /// Every path of every file in the group (hard links give one file several paths).
    pub files: Vec<ReportFile>,
    /// True when some of its files were grouped by digests from the persistent cache instead
    /// of being read and compared in this run (absent from JSON when false).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cached: bool,
}

/// One path of a file in a group.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReportFile {
    /// The path (root as given, joined with the path below it).
    #[serde(with = "crate::json_path")]
    pub path: PathBuf,
    /// Device number at scan time.
    pub dev: u64,
    /// Inode number at scan time.
    pub ino: u64,
    /// Modification time at scan time, in nanoseconds since the epoch.
    pub mtime_ns: i64,
    /// Status-change time at scan time, in nanoseconds since the epoch. Absent in reports of
    /// dedup 0.1.0 before actions existed; the actions then take it from a fresh `stat`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ctime_ns: Option<i64>,
}

/// Totals of a scan.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    /// Regular-file paths considered after selection.
    pub files_scanned: u64,
    /// Number of groups.
    pub groups: u64,
    /// Files that could go: in each group, every file but one (hard-linked paths count once
    /// unless hard links are treated as duplicates).
    pub redundant_files: u64,
    /// Bytes those files occupy.
    pub redundant_bytes: u64,
    /// Problems that may have left files out of the report.
    pub errors: u64,
}
