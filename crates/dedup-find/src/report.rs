//! The report: what a scan found, in the form every output format and every action uses
//! (shared/DESIGN.md, "Report contract"; docs/report-format.md).

use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// Version of the JSON report format; changes only when an existing field changes meaning.
pub const REPORT_VERSION: u32 = 1;

/// A report that cannot be read back.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// Not JSON, truncated, or not shaped like a report.
    #[error("not a valid dedup report: {0}")]
    Malformed(#[from] serde_json::Error),
    /// Written by a version of dedup whose format this one does not understand.
    #[error("report format version {found} is not supported (this dedup reads version {REPORT_VERSION})")]
    Version {
        /// The version found in the report.
        found: u32,
    },
}

/// Result of a scan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Report {
    /// Format version ([`REPORT_VERSION`]).
    pub version: u32,
    /// `dedup <version>` of the writer.
    pub tool: String,
    /// Path arguments, as given.
    #[serde(with = "crate::report_path::list")]
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
    #[serde(with = "crate::report_path")]
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
    #[serde(with = "crate::report_path")]
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
    #[serde(with = "crate::report_path")]
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
    #[serde(with = "crate::report_path")]
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

impl Report {
    /// Read a JSON report, checking its version.
    pub fn from_json(reader: impl Read) -> Result<Report, ReportError> {
        let value: serde_json::Value = serde_json::from_reader(reader)?;
        let found = value.get("version").and_then(|v| v.as_u64()).unwrap_or(0);
        if found != u64::from(REPORT_VERSION) {
            return Err(ReportError::Version { found: found.min(u64::from(u32::MAX)) as u32 });
        }
        Ok(serde_json::from_value(value)?)
    }

    /// Put groups in the documented order: by size descending, then by their first path.
    pub(crate) fn sort_groups(&mut self) {
        sort_groups(&mut self.groups);
    }
}

/// Sort groups in the documented order: by size descending, then by their first path.
pub(crate) fn sort_groups(groups: &mut [Group]) {
    fn key(g: &Group) -> (std::cmp::Reverse<u64>, Option<&[u8]>) {
        (std::cmp::Reverse(g.size), g.files.first().map(|f| f.path.as_os_str().as_bytes()))
    }
    if groups.len() < crate::PARALLEL_FROM {
        groups.sort_by(|a, b| key(a).cmp(&key(b)));
    } else {
        groups.par_sort_by(|a, b| key(a).cmp(&key(b)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Report {
        Report {
            version: REPORT_VERSION,
            tool: "dedup test".into(),
            roots: vec![PathBuf::from("r")],
            groups: vec![Group {
                size: 3,
                files: vec![
                    ReportFile {
                        path: "r/a".into(),
                        dev: 1,
                        ino: 2,
                        mtime_ns: 3,
                        ctime_ns: Some(7),
                    },
                    ReportFile { path: "r/b".into(), dev: 1, ino: 4, mtime_ns: 5, ctime_ns: None },
                ],
                cached: false,
            }],
            summary: Summary {
                files_scanned: 2,
                groups: 1,
                redundant_files: 1,
                redundant_bytes: 3,
                errors: 0,
            },
            dirs: None,
            unique: None,
            dir_summary: None,
        }
    }

    #[test]
    fn json_round_trip() {
        let r = sample();
        let json = serde_json::to_vec(&r).unwrap();
        assert_eq!(Report::from_json(&json[..]).unwrap(), r);
    }

    #[test]
    fn reports_without_ctime_still_load() {
        let mut v = serde_json::to_value(sample()).unwrap();
        v["groups"][0]["files"][0].as_object_mut().unwrap().remove("ctime_ns");
        let r = Report::from_json(v.to_string().as_bytes()).unwrap();
        assert_eq!(r.groups[0].files[0].ctime_ns, None);
    }

    #[test]
    fn other_versions_are_refused() {
        let mut v = serde_json::to_value(sample()).unwrap();
        v["version"] = 2.into();
        let err = Report::from_json(v.to_string().as_bytes()).unwrap_err();
        assert!(matches!(err, ReportError::Version { found: 2 }), "{err}");
    }

    #[test]
    fn truncated_reports_are_refused() {
        let json = serde_json::to_string(&sample()).unwrap();
        assert!(Report::from_json(&json.as_bytes()[..json.len() / 2]).is_err());
    }

    #[test]
    fn sorting_is_by_size_then_path() {
        let f =
            |p: &str| ReportFile { path: p.into(), dev: 0, ino: 0, mtime_ns: 0, ctime_ns: None };
        let mut r = sample();
        r.groups = vec![
            Group { size: 1, files: vec![f("z"), f("y")], cached: false },
            Group { size: 5, files: vec![f("b"), f("a")], cached: false },
            Group { size: 1, files: vec![f("c"), f("d")], cached: false },
        ];
        r.sort_groups();
        let order: Vec<_> = r.groups.iter().map(|g| (g.size, g.files[0].path.clone())).collect();
        assert_eq!(order, [(5, "b".into()), (1, "c".into()), (1, "z".into())]);
    }

    #[test]
    fn few_and_many_groups_sort_the_same_way() {
        // Fewer than PARALLEL_FROM groups sort on the calling thread, more on rayon's pool.
        for count in [crate::PARALLEL_FROM - 1, crate::PARALLEL_FROM * 3] {
            let mut groups: Vec<Group> = (0..count)
                .map(|i| {
                    // Sizes repeat so that the path decides between many groups; scrambled so
                    // that the input is in no useful order.
                    let scrambled = (i * 7919) % count;
                    let file = ReportFile {
                        path: format!("p{scrambled:05}").into(),
                        dev: 0,
                        ino: 0,
                        mtime_ns: 0,
                        ctime_ns: None,
                    };
                    Group { size: (scrambled % 13) as u64, files: vec![file], cached: false }
                })
                .collect();
            sort_groups(&mut groups);
            let keys: Vec<_> =
                groups.iter().map(|g| (std::cmp::Reverse(g.size), &g.files[0].path)).collect();
            assert!(keys.is_sorted(), "{count} groups out of order");
        }
    }
}
