//! `dedup find`'s arguments (under the `clap` feature), the selection options the actions share
//! with it, and how they become [`FindOptions`] and a report format.

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use dedup_cache::settings::{scan_cache_dir, CacheFlags, SettingsError};
use dedup_core::env_setting::SettingError;
use dedup_core::size::parse_size;
use dedup_report::{ReportFormat, TextStyle};
use dedup_scan::io::Concurrency;
use dedup_scan::{WalkOptions, WalkOptionsError};

use crate::{Analysis, CacheOptions, FindOptions, Replication, Selection, Tuning};

/// Arguments that ask for something no run can do.
#[derive(Debug, thiserror::Error)]
pub enum ArgsError {
    /// `--print0` with another format than text.
    #[error("--print0 applies to the text format only")]
    Print0NotText,
    /// `--summary` with CSV or `--print0`.
    #[error("--summary is printed as text or JSON only")]
    SummaryFormat,
    /// `--min-size` above `--max-size`.
    #[error("--min-size is larger than --max-size: no file could match")]
    SizeRange,
    /// An `--exclude` glob that does not parse.
    #[error(transparent)]
    Exclude(#[from] WalkOptionsError),
    /// A tuning environment variable that does not parse.
    #[error(transparent)]
    Tuning(#[from] SettingError),
    /// The cache settings (dedup.toml, the cache directory) cannot be read.
    #[error(transparent)]
    Cache(#[from] SettingsError),
}

/// The help after `dedup find`'s options: what a duplicate is, the output, the exit status.
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

impl FindArgs {
    /// The paths to scan: those given, else the current directory.
    pub fn roots(&self) -> Vec<PathBuf> {
        if self.paths.is_empty() {
            vec![PathBuf::from(".")]
        } else {
            self.paths.clone()
        }
    }

    /// The scan's settings and the report's format.
    pub fn options(&self) -> Result<(FindOptions, ReportFormat), ArgsError> {
        if self.print0 && self.format != Format::Text {
            return Err(ArgsError::Print0NotText);
        }
        if self.summary && (self.format == Format::Csv || self.print0) {
            return Err(ArgsError::SummaryFormat);
        }
        let mut options = self.select.options()?;
        let replication = if self.unique {
            Replication { over: None, under: Some(2) }
        } else {
            Replication { over: self.rf_over, under: self.rf_under }
        };
        options.analysis = Analysis { dirs: self.dirs, replication, dir_summary: self.summary };
        let format = match self.format {
            Format::Text if self.summary => ReportFormat::DirSummary,
            Format::Text if self.print0 => ReportFormat::Text(TextStyle::Nul),
            Format::Text => ReportFormat::Text(TextStyle::Lines),
            Format::Json => ReportFormat::Json,
            Format::Csv => ReportFormat::Csv,
        };
        Ok((options, format))
    }
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

impl SelectArgs {
    /// The scan's settings for this selection (no analysis after the groups).
    pub fn options(&self) -> Result<FindOptions, ArgsError> {
        let mut walk = WalkOptions::default().with_excludes(&self.exclude)?;
        walk.max_depth = self.max_depth;
        walk.one_file_system = self.one_file_system;
        walk.follow_links = self.follow_links;
        let selection = Selection {
            min_size: self.min_size.unwrap_or(0),
            max_size: self.max_size.unwrap_or(u64::MAX),
            include_empty: self.include_empty,
            walk,
        };
        if selection.min_size > selection.max_size {
            return Err(ArgsError::SizeRange);
        }
        let concurrency = match self.io_threads {
            Some(n) => Concurrency::Fixed(usize::from(n)),
            None => Concurrency::default(),
        };
        let cache_flags =
            CacheFlags { cache: self.cache, no_cache: self.no_cache, dir: self.cache_dir.clone() };
        Ok(FindOptions {
            selection,
            hardlinks: self.hardlinks,
            concurrency,
            tuning: Tuning::from_env()?,
            analysis: Analysis::default(),
            cache: scan_cache_dir(&cache_flags)?
                .map(|dir| CacheOptions { dir, verify: self.verify }),
        })
    }
}

#[cfg(test)]
mod tests {
    use clap::FromArgMatches;

    use super::*;

    fn find(args: &[&str]) -> Result<(FindOptions, ReportFormat), ArgsError> {
        let command = FindArgs::augment_args(clap::Command::new("find"));
        let args = ["find", "--no-cache"].iter().chain(args);
        let matches = command.try_get_matches_from(args).expect("parsed");
        FindArgs::from_arg_matches(&matches).expect("parsed").options()
    }

    #[test]
    fn formats_that_cannot_carry_what_was_asked_for_are_refused() {
        assert!(matches!(find(&["-0", "--format", "json"]), Err(ArgsError::Print0NotText)));
        assert!(matches!(find(&["--summary", "--format=csv"]), Err(ArgsError::SummaryFormat)));
        assert!(matches!(find(&["--summary", "-0"]), Err(ArgsError::SummaryFormat)));
        assert!(matches!(find(&["--min-size=2K", "--max-size=1K"]), Err(ArgsError::SizeRange)));
        assert!(matches!(find(&["--exclude", "a[", "x"]), Err(ArgsError::Exclude(_))));
    }

    #[test]
    fn questions_and_formats_reach_the_options() {
        let (options, format) = find(&["--unique", "-0", "--min-size=1K", "-H"]).unwrap();
        assert_eq!(options.analysis.replication, Replication { over: None, under: Some(2) });
        assert!(matches!(format, ReportFormat::Text(TextStyle::Nul)));
        assert_eq!(options.selection.min_size, 1024);
        assert!(options.hardlinks && options.cache.is_none());
        let (options, format) = find(&["--summary", "--dirs"]).unwrap();
        assert!(options.analysis.dirs && options.analysis.dir_summary);
        assert!(matches!(format, ReportFormat::DirSummary));
    }
}
