//! Command-line arguments: what a user can say, with help text that explains it.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::size::parse_size;

/// dedup stops you storing the same bytes twice: it finds duplicate files and acts on them,
/// keeps deduplicated, encrypted snapshots of trees, and mirrors a tree one way.
#[derive(Debug, Parser)]
#[command(name = "dedup", version, max_term_width = 100)]
#[command(
    about = "Store the same bytes only once: find duplicate files and act on them, keep \
deduplicated encrypted snapshots, mirror trees.",
    long_about = None,
    after_help = "Three jobs:\n\
\x20 find duplicates:  dedup find ~/Photos              (then: dedup link|reflink|remove|move ...)\n\
\x20 snapshots:        dedup store -r /srv/backup init; dedup store -r /srv/backup backup ~\n\
\x20 mirror a tree:    dedup sync ~/Photos /mnt/backup/Photos\n\n\
Run `dedup find --help`, `dedup link --help`, `dedup store --help` or `dedup sync --help` for \
each job's options and examples.\n\n\
Exit status: 0 = complete; 1 = finished, but some paths could not be read or changed during \
the run, so the result may be incomplete; 2 = usage or fatal error."
)]
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
    /// Replace duplicates with hard links to the kept file (one inode, one set of metadata).
    #[command(after_help = ACT_AFTER_HELP)]
    Link(ActArgs),
    /// Make duplicates share the kept file's extents (btrfs, XFS): each keeps its own metadata.
    #[command(after_help = ACT_AFTER_HELP)]
    Reflink(ActArgs),
    /// Replace duplicates with symbolic links to the kept file's absolute path.
    #[command(after_help = ACT_AFTER_HELP)]
    Symlink(ActArgs),
    /// Delete duplicates, keeping one file of each group.
    #[command(after_help = ACT_AFTER_HELP)]
    Remove(ActArgs),
    /// Move duplicates under DIR, keeping their path below it.
    #[command(after_help = ACT_AFTER_HELP)]
    Move(MoveArgs),
    /// Inspect or maintain the persistent content cache (see `dedup find --cache`).
    Cache(CacheArgs),
    /// Keep deduplicated, encrypted snapshots of trees in a repository.
    Store(crate::store::args::StoreArgs),
    /// Mirror SRC into DST one way, copying only what changed and renaming what moved.
    Sync(crate::sync_cmd::args::SyncArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    #[command(after_help = COMPLETIONS_AFTER_HELP)]
    Completions(CompletionsArgs),
    /// Write a manual page for every command into DIR (dedup.1, dedup-store-backup.1, ...).
    #[command(
        after_help = "Example:\n  dedup man /usr/local/share/man/man1 && man dedup-store-restore"
    )]
    Man(ManArgs),
}

const COMPLETIONS_AFTER_HELP: &str = "\
Examples:
  dedup completions bash > ~/.local/share/bash-completion/completions/dedup
  dedup completions zsh > ~/.zfunc/_dedup        # with fpath+=~/.zfunc in ~/.zshrc
  dedup completions fish > ~/.config/fish/completions/dedup.fish";

/// `dedup completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to write the script for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// `dedup man`.
#[derive(Debug, Args)]
pub struct ManArgs {
    /// Directory to write the pages into (created if missing).
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
}

/// `dedup cache`.
#[derive(Debug, Args)]
pub struct CacheArgs {
    /// What to do with the cache.
    #[command(subcommand)]
    pub action: CacheAction,

    /// The cache directory [default: from dedup.toml, else $XDG_CACHE_HOME/dedup or
    /// ~/.cache/dedup]
    #[arg(long, value_name = "DIR", global = true)]
    pub cache_dir: Option<PathBuf>,
}

/// What `dedup cache` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Subcommand)]
pub enum CacheAction {
    /// Entries, size on disk, and the hit rate of the last run that used the cache.
    Stats,
    /// Drop entries of files no longer at their recorded path unchanged (deleted, modified, moved).
    Prune,
    /// Remove every entry.
    Clear,
}

const ACT_AFTER_HELP: &str = "\
Each group of identical files keeps one file (chosen by --keep, --prefer and --reference) and \
acts on the others. Just before each change the file is checked again: same device, inode, size, \
mtime and ctime as when scanned, not a symlink, and still equal to the kept file byte for byte; \
otherwise it is skipped with the reason. Replacements are made under a temporary name in the same \
directory and renamed over the duplicate, so every path always names a complete file. Files under \
a --reference directory are never changed.

Output: one line per change on stdout (the same lines with --dry-run, which changes nothing); \
skipped files and a summary on stderr.

Exit status: 0 = every planned change was made (or nothing to do); 1 = finished, but some files \
were skipped (changed since the scan, permission denied, other file system...) or could not be \
scanned: each is named on stderr; 2 = usage or fatal error (bad report, missing reference...): \
nothing was changed.

Examples:
  dedup link ~/Photos                            hard-link duplicate photos
  dedup remove --reference ~/Archive ~/Downloads   delete from Downloads what Archive has
  dedup find --format json -o r.json ~ && dedup remove --dry-run --from r.json";

/// How to choose the file to keep.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum KeepArg {
    /// Oldest modification time.
    Oldest,
    /// Newest modification time.
    Newest,
    /// Fewest directory levels below its PATH.
    Shallowest,
    /// Most directory levels below its PATH.
    Deepest,
    /// Under the earliest PATH argument.
    FirstRoot,
    /// Matching the earliest --prefer GLOB.
    PathPriority,
}

/// Options of the actions.
#[derive(Debug, Args)]
pub struct ActArgs {
    /// Files and directories to scan, recursively [default: . unless --from]
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,

    /// Act on a saved JSON report of `dedup find --format json` instead of scanning (- for stdin).
    #[arg(long, value_name = "REPORT", conflicts_with = "paths", help_heading = "Plan")]
    pub from: Option<PathBuf>,

    /// Rules choosing the file to keep, in priority order (comma-separated or repeated); ties
    /// go to the first path in report order (PATH order, then name).
    #[arg(long, value_enum, value_delimiter = ',', value_name = "RULE", help_heading = "Plan")]
    pub keep: Vec<KeepArg>,

    /// Prefer keeping files whose path matches GLOB (repeatable; earlier globs win).
    #[arg(long, value_name = "GLOB", help_heading = "Plan")]
    pub prefer: Vec<String>,

    /// Never change files under DIR, and keep one of them whenever a group has one (repeatable;
    /// DIR is scanned too). Groups that lie wholly in reference directories are left alone.
    #[arg(long, value_name = "DIR", help_heading = "Plan")]
    pub reference: Vec<PathBuf>,

    /// Only act on duplicates under another PATH than the kept file.
    #[arg(long, help_heading = "Plan")]
    pub isolate: bool,

    /// Also act on whole duplicated directories (as `dedup find --dirs` reports them): each of
    /// their files is checked and acted on against its copy in the kept directory; `remove`
    /// and `move` then remove the directories they emptied.
    #[arg(long, conflicts_with = "script", help_heading = "Plan")]
    pub dirs: bool,

    /// Check everything and print what would be done, but change nothing.
    #[arg(short = 'n', long, help_heading = "Output")]
    pub dry_run: bool,

    /// Print the plan as a shell script that re-checks each file before changing it; change nothing.
    #[arg(long, conflicts_with = "dry_run", help_heading = "Output")]
    pub script: bool,

    /// Append a JSON line to FILE for every change made and every file skipped.
    #[arg(long, value_name = "FILE", help_heading = "Output")]
    pub log: Option<PathBuf>,

    /// No summary, no progress display, no line per change (problems are still shown).
    #[arg(short, long, help_heading = "Output")]
    pub quiet: bool,

    /// Also show notes and the settings chosen.
    #[arg(short, long, help_heading = "Output")]
    pub verbose: bool,

    /// Which files take part, and how the tree is read (when scanning).
    #[command(flatten)]
    pub select: SelectArgs,
}

/// Options of `dedup move`.
#[derive(Debug, Args)]
pub struct MoveArgs {
    /// Directory that receives the duplicates (created if missing; same file system).
    #[arg(long, value_name = "DIR", required = true)]
    pub to: PathBuf,

    /// Everything else, as for the other actions.
    #[command(flatten)]
    pub act: ActArgs,
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
