//! Command-line arguments: what a user can say, with help text that explains it.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::size::parse_size;

/// dedup stops you storing the same bytes twice: it finds files whose contents are identical,
/// byte for byte, fast on any tree and any disk.
#[derive(Debug, Parser)]
#[command(name = "dedup", version, about, long_about = None, max_term_width = 100)]
#[command(after_help = "Run `dedup find --help` for the options of the finder.\n\n\
Exit status: 0 = complete; 1 = finished, but some paths could not be read or changed during \
the run, so the result may be incomplete; 2 = usage or fatal error.")]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// List groups of identical files under the given paths.
    #[command(after_help = FIND_AFTER_HELP)]
    Find(FindArgs),
}

const FIND_AFTER_HELP: &str = "\
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

    /// Walk and read with N threads at once.
    #[arg(long, value_name = "N", default_value_t = 8, help_heading = "Performance")]
    pub io_threads: usize,
}
