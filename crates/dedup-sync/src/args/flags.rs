//! The flags of `dedup sync`, their help and the help after them.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Args, ValueEnum};

/// The flags of `dedup sync [OPTIONS] SRC DST`. A flag's first line is its `-h` help; the rest
/// is added by `--help`.
#[derive(Debug, Args)]
#[command(after_help = AFTER_HELP, after_long_help = AFTER_LONG_HELP)]
pub struct SyncFlags {
    /// The tree to mirror: its entries are mirrored directly under DST (like `rsync -a SRC/
    /// DST/`, with no trailing-slash rule).
    #[arg(value_name = "SRC")]
    pub src: PathBuf,

    /// The mirror; created if missing.
    #[arg(value_name = "DST")]
    pub dst: PathBuf,

    /// Remove from DST what is not in SRC.
    ///
    /// After everything else, or first when the copies need the room; nothing is deleted, or
    /// renamed away, when any source entry could not be read.
    #[arg(long, help_heading = DELETING)]
    pub delete: bool,

    /// Refuse, before changing anything, when more than N entries would be deleted (exit 2).
    #[arg(long, value_name = "N", help_heading = DELETING)]
    pub max_delete: Option<u64>,

    /// With --delete, mirror an empty SRC: delete everything in DST.
    ///
    /// Without it, --delete from an empty SRC directory (or one whose every entry is excluded)
    /// into a DST that has entries is refused before any change (exit 2): an empty SRC is most
    /// often a disk that is not mounted. Likewise a directory below SRC that /etc/fstab names
    /// as a mount point, with nothing mounted on it, keeps every deletion back (exit 1).
    #[arg(long, requires = "delete", help_heading = DELETING)]
    pub allow_empty_source: bool,

    /// With --delete, also delete excluded paths from DST.
    #[arg(long, requires = "delete", help_heading = DELETING)]
    pub delete_excluded: bool,

    /// Keep what the run replaces or deletes beside itself, as NAME~.
    ///
    /// Each is renamed (never copied) just before the change, so a crash leaves it at its place
    /// or kept. With --delete, DST names ending with the suffix are never deleted.
    #[arg(short = 'b', long, help_heading = DELETING)]
    pub backup: bool,

    /// Keep what the run replaces or deletes under DIR, at its path below DST.
    ///
    /// A relative DIR is below DST, as in rsync, and is then left out of the mirror. DIR must be
    /// on DST's file system: a backup is moved, never copied. Implies --backup.
    #[arg(long, value_name = "DIR", help_heading = DELETING)]
    pub backup_dir: Option<PathBuf>,

    /// The suffix of each backup's name [default: `~`, none with --backup-dir].
    #[arg(long, value_name = "SUFFIX", help_heading = DELETING)]
    pub suffix: Option<OsString>,

    /// Leave out entries matching PATTERN, on both sides (repeatable).
    ///
    /// rsync's patterns: `*.o` any name, `/build` only at the top, `cache/` directories only,
    /// `a/**/b` at any depth. With --include, the first rule that matches an entry decides; a
    /// directory left out is not entered. Excluded entries of DST are never deleted unless
    /// --delete-excluded.
    #[arg(long, value_name = "PATTERN", help_heading = SELECTING)]
    pub exclude: Vec<OsString>,

    /// Keep entries matching PATTERN though a later --exclude matches them (repeatable).
    ///
    /// The first matching rule decides, as in rsync: `--include '*/' --include '*.jpg'
    /// --exclude '*'` mirrors the JPEGs at any depth and nothing else.
    #[arg(long, value_name = "PATTERN", help_heading = SELECTING)]
    pub include: Vec<OsString>,

    /// Read exclude patterns from FILE (`-`: standard input), one a line.
    ///
    /// They take this option's place among the rules. Blank lines and lines starting with `#`
    /// or `;` are skipped; `+ PATTERN` is an include, `!` clears the rules so far.
    #[arg(long, value_name = "FILE", help_heading = SELECTING)]
    pub exclude_from: Vec<PathBuf>,

    /// Read include patterns from FILE, as --exclude-from reads its (`- PATTERN`: an exclude).
    #[arg(long, value_name = "FILE", help_heading = SELECTING)]
    pub include_from: Vec<PathBuf>,

    /// Mirror only the paths below SRC that FILE lists (`-`: standard input), one a line.
    ///
    /// As rsync: the directories leading to them are made; a listed directory is made but not
    /// entered unless listed as `dir/` (its entries too) or with -r (everything below it);
    /// --delete removes only in those directories. A listed path SRC lacks is an error (exit 1).
    #[arg(long, value_name = "FILE", help_heading = SELECTING)]
    pub files_from: Option<PathBuf>,

    /// With --files-from, mirror listed directories with everything below them.
    ///
    /// rsync's -r; without --files-from a sync is always recursive.
    #[arg(short = 'r', long, help_heading = SELECTING)]
    pub recursive: bool,

    /// Lines of --files-from, --exclude-from and --include-from end with a NUL byte.
    ///
    /// As `find -print0` writes them, instead of a newline.
    #[arg(short = '0', long, help_heading = SELECTING)]
    pub from0: bool,

    /// Stay on SRC's file system: directories on others are created, not entered.
    #[arg(short = 'x', long = "one-file-system", help_heading = SELECTING)]
    pub one_file_system: bool,

    /// Compare content, not size and modification time.
    ///
    /// Reads both sides of every file of the same size.
    #[arg(short = 'c', long, help_heading = COPYING)]
    pub checksum: bool,

    /// Clone file content (share extents) where SRC and DST allow.
    ///
    /// auto clones where it can and copies elsewhere, always fails where it cannot, never always
    /// copies the bytes.
    #[arg(long, value_enum, value_name = "WHEN", default_value = "auto", help_heading = COPYING)]
    pub reflink: ReflinkArg,

    /// Hard-link files unchanged against DIR's copy instead of copying them.
    ///
    /// Same path below DIR, size, time and metadata: rsync's snapshot idiom. A relative DIR is
    /// below DST, as in rsync, and is then left out of the mirror (never deleted).
    #[arg(long, value_name = "DIR", help_heading = COPYING)]
    pub link_dest: Option<PathBuf>,

    /// Make files of identical content in DST share storage.
    ///
    /// Clones of one copy (reflink, where the file system can), or hard links with
    /// --dedup=hardlink (only between files whose metadata is the same). Looks at the sizes of
    /// which this run wrote a file; a dry run does not.
    #[arg(long, value_enum, value_name = "HOW", num_args = 0..=1, require_equals = true,
          default_missing_value = "reflink", help_heading = COPYING)]
    pub dedup: Option<DedupArg>,

    /// Operations in flight per device [default: measured]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=1024),
          help_heading = COPYING)]
    pub io_threads: Option<u16>,

    /// Print the changes a real run would make, one per line; change nothing.
    #[arg(short = 'n', long)]
    pub dry_run: bool,

    /// Print every change (on stdout) and notes.
    #[arg(short, long)]
    pub verbose: bool,

    /// Print every change as rsync's --itemize-changes does (`>f.st...... a/b`).
    ///
    /// `YXcstpoguax PATH`: `>f.st...... a/b` content written, size and time changed;
    /// `.f...p..... c` mode only; `cd+++++++++ d/` a new directory; `*deleting   e`. With -n,
    /// what a real run would print.
    #[arg(short = 'i', long)]
    pub itemize_changes: bool,

    /// Write one JSON line per change to FILE.
    ///
    /// A FILE inside DST is left out of the mirror (never deleted).
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,

    /// Print only errors: no summary, no progress.
    #[arg(short, long)]
    pub quiet: bool,
}

/// Help headings of `dedup sync`'s options.
const DELETING: &str = "Deleting and keeping";
const SELECTING: &str = "Selecting what to mirror";
const COPYING: &str = "Copying";

/// Shown after the options of `dedup sync -h`.
const AFTER_HELP: &str = "\
Examples:
  dedup sync ~/Photos /mnt/backup/Photos               copy what changed (DST made if missing)
  dedup sync -n --delete ~/Photos /mnt/backup/Photos   show what a mirror run would change
  dedup sync --delete --exclude '*.tmp' --exclude /build src/ /srv/www
  dedup sync --delete --backup-dir ../replaced ~/Documents /mnt/docs

See `dedup sync --help` for the rules, more examples and the exit status.";

/// Shown after the options of `dedup sync --help`.
const AFTER_LONG_HELP: &str = "\
DST becomes a mirror of SRC's contents: SRC's entries go directly under DST, as with `rsync -a \
SRC/ DST/`. Only what changed is written; a file or directory that moved in SRC is renamed in DST \
(with --delete) instead of copied again. Every file is written under a temporary name and renamed \
into place, so a run killed at any point leaves each path old or new.

Patterns (--exclude, --include) are rsync's: `*` stays within a name, `**` crosses `/`, a leading \
`/` anchors at the top of the transfer, a trailing `/` matches directories only; the first rule \
that matches an entry decides, and a directory left out is not entered.

Exit status: 0 = everything read and made right; 1 = finished, but something could not be read \
or made right (each named on stderr; nothing in DST under an unread part is deleted or moved); \
2 = usage error, unusable SRC or DST, or refused (--max-delete), with nothing changed.

Examples:
  dedup sync ~/Photos /mnt/backup/Photos               copy what changed (DST made if missing)
  dedup sync -n --delete ~/Photos /mnt/backup/Photos   show what a mirror run would change
  dedup sync -ni --delete ~/Photos /mnt/backup/Photos  the same, as rsync -i prints it
  dedup sync --delete --exclude '*.tmp' --exclude /build src/ /srv/www
  dedup sync --include '*/' --include '*.jpg' --exclude '*' ~/Pictures /mnt/jpegs
  dedup sync --delete --backup-dir ../replaced-$(date +%F) ~/Documents /mnt/docs
  dedup sync --link-dest ../2024-06-01 ~ /backup/2024-06-02   unchanged files hard-linked
  find . -name '*.pdf' -print0 | dedup sync -0 --files-from - . /mnt/pdfs";

/// `--reflink`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReflinkArg {
    /// Clone where possible, copy elsewhere.
    Auto,
    /// Clone or fail.
    Always,
    /// Always copy the bytes.
    Never,
}

/// `--dedup`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DedupArg {
    /// Clones of one copy.
    Reflink,
    /// Hard links to one copy.
    Hardlink,
}
