//! `dedup find`'s arguments, and the selection options the actions share with it.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use crate::size::parse_size;

pub const AFTER_HELP: &str = "\
Files are duplicates when their contents are identical byte for byte: the last stage compares \
the bytes themselves, never only a hash. Paths that are hard links of one file are that one file, \
listed together, and not duplicates of each other (unless -H). Symlinks below the paths are \
neither followed nor reported (unless -L); special files (FIFOs, sockets, devices) are never \
opened; hidden files are scanned and no ignore files are honoured.

Output: by default each group's paths one per line with an empty line after every group, as \
fdupes prints them; groups by size, largest first. A summary and, on a terminal, a progress line \
go to stderr.

Exit status: 0 = complete report; 1 = finished, but some paths could not be read or changed \
while being read, so the report may be incomplete (each one is named on stderr); 2 = usage or \
fatal error.

Examples:
  dedup find ~/Photos                      list duplicate photos
  dedup find --min-size 1M /srv /backup    only files of 1 MiB or more, across two trees
  dedup find --format json -o report.json ~   save a report to review";

/// Report formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Paths one per line, an empty line after each group (fdupes-compatible).
    Text,
    /// The JSON report (docs/report-format.md), lossless for any path bytes.
    Json,
    /// One row per path: group,size,path,dev,ino,mtime_ns.
    Csv,
}

/// Options of `dedup find`.
#[derive(Debug, Args)]
pub struct FindArgs {
    /// Files and directories to scan, recursively [default: .]
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,

    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text, help_heading = "Output")]
    pub format: Format,

    /// Separate paths with NUL instead of newlines (text format), for `xargs -0`.
    #[arg(short = '0', long, help_heading = "Output")]
    pub print0: bool,

    /// Write the report to FILE instead of standard output.
    #[arg(short, long, value_name = "FILE", help_heading = "Output")]
    pub output: Option<PathBuf>,

    /// No summary and no progress display (errors are still shown).
    #[arg(short, long, help_heading = "Output")]
    pub quiet: bool,

    /// Also show what was skipped by design (symlink loops) and the settings chosen.
    #[arg(short, long, help_heading = "Output")]
    pub verbose: bool,

    /// Report directories whose whole contents are duplicated as one entry (outermost only),
    /// and directories all of whose files exist under another one; their files are then not
    /// listed again among the groups. Empty directories are never duplicates.
    #[arg(long, help_heading = "Questions")]
    pub dirs: bool,

    /// List the files that have no duplicate, instead of the groups (same as --rf-under 2).
    #[arg(long, conflicts_with_all = ["rf_over", "rf_under"], help_heading = "Questions")]
    pub unique: bool,

    /// List only files with more than N copies (hard links count once unless -H).
    #[arg(long, value_name = "N", help_heading = "Questions")]
    pub rf_over: Option<u64>,

    /// List only files with fewer than N copies, files without any duplicate included (e.g.
    /// --rf-under 3: files with no backup or only one).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..), help_heading = "Questions")]
    pub rf_under: Option<u64>,

    /// Print, per top-level directory under each PATH, the duplicated bytes in it and which
    /// other directories hold the copies, most reclaimable first (instead of the groups; the
    /// JSON report carries both).
    #[arg(long, help_heading = "Questions")]
    pub summary: bool,

    /// Which files take part, and how the tree is read.
    #[command(flatten)]
    pub select: SelectArgs,
}

/// Selection options shared by `find` and the actions.
#[derive(Debug, Args)]
pub struct SelectArgs {
    /// Skip files smaller than SIZE (bytes; K, M, G, T suffixes are powers of 1024).
    #[arg(long, value_name = "SIZE", value_parser = parse_size, help_heading = "Selection")]
    pub min_size: Option<u64>,

    /// Skip files larger than SIZE.
    #[arg(long, value_name = "SIZE", value_parser = parse_size, help_heading = "Selection")]
    pub max_size: Option<u64>,

    /// Skip files and directories whose name or path below the root matches GLOB (repeatable).
    #[arg(long, value_name = "GLOB", help_heading = "Selection")]
    pub exclude: Vec<String>,

    /// Descend at most N levels below each path (0: only the paths themselves).
    #[arg(long, value_name = "N", help_heading = "Selection")]
    pub max_depth: Option<u32>,

    /// Stay on the file system of each path; do not enter mount points.
    #[arg(short = 'x', long, help_heading = "Selection")]
    pub one_file_system: bool,

    /// Follow symbolic links below the paths (loops are detected).
    #[arg(short = 'L', long, help_heading = "Selection")]
    pub follow_links: bool,

    /// Treat empty files as duplicates of each other.
    #[arg(long, help_heading = "Selection")]
    pub include_empty: bool,

    /// Treat hard links of one file as duplicates of each other (as jdupes -H).
    #[arg(short = 'H', long, help_heading = "Selection")]
    pub hardlinks: bool,

    /// Read N files (and list N directories) at once on each device, instead of choosing by
    /// measurement [default: measured per device, from 2 (4 for listing) up to 64; -v shows the
    /// choice]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=1024), help_heading = "Performance")]
    pub io_threads: Option<u16>,

    /// Use the persistent content cache: files unchanged since a previous run (same device,
    /// inode, size, mtime and ctime) are grouped by their cached BLAKE3 digests, or told apart by
    /// their cached fingerprints, without being read again, and what this run reads is stored.
    /// On by default when dedup.toml says so.
    #[arg(long, conflicts_with = "no_cache", help_heading = "Cache")]
    pub cache: bool,

    /// Do not use the cache, whatever dedup.toml says.
    #[arg(long, help_heading = "Cache")]
    pub no_cache: bool,

    /// Keep the cache in DIR (implies --cache) [default: from dedup.toml, else
    /// $XDG_CACHE_HOME/dedup or ~/.cache/dedup]
    #[arg(long, value_name = "DIR", conflicts_with = "no_cache", help_heading = "Cache")]
    pub cache_dir: Option<PathBuf>,

    /// Read and compare byte for byte even files whose cached digests match (the cache is
    /// still refreshed).
    #[arg(long, help_heading = "Cache")]
    pub verify: bool,
}
