//! `dedup sync`'s arguments.

use std::ffi::OsString;
use std::ops::Deref;
use std::path::PathBuf;

use clap::{ArgMatches, Args, FromArgMatches, ValueEnum};

/// `dedup sync ...` read by a parser of `sync`'s own arguments: building the parser of every
/// command costs a run more instructions than a no-op sync of a small tree spends on its own
/// work (docs/benchmarks/journal.md, "Sync start-up and per-file costs"). `None` when the command is
/// not `sync` or its arguments are not accepted as they are (help, a mistake): the whole parser
/// then reads them, and answers as it always does.
pub fn parse_alone(args: impl IntoIterator<Item = OsString>) -> Option<SyncArgs> {
    let mut args = args.into_iter().skip(1).peekable();
    if args.peek()? != "sync" {
        return None;
    }
    let parser = SyncArgs::augment_args(clap::Command::new("sync"));
    let matches = parser.try_get_matches_from(args).ok()?;
    SyncArgs::from_arg_matches(&matches).ok()
}

/// `dedup sync [OPTIONS] SRC DST`: its flags, and its include and exclude rules in the order
/// given, which clap's derived fields do not keep across two options.
#[derive(Debug)]
pub struct SyncArgs {
    /// Every flag.
    pub flags: SyncFlags,
    /// `--include`, `--exclude`, `--include-from` and `--exclude-from`, in command-line order.
    pub filters: Vec<FilterArg>,
}

/// One of the options that make the include and exclude rules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FilterArg {
    /// `--include PATTERN`.
    Include(OsString),
    /// `--exclude PATTERN`.
    Exclude(OsString),
    /// `--include-from FILE`.
    IncludeFrom(PathBuf),
    /// `--exclude-from FILE`.
    ExcludeFrom(PathBuf),
}

impl Deref for SyncArgs {
    type Target = SyncFlags;

    fn deref(&self) -> &SyncFlags {
        &self.flags
    }
}

impl FromArgMatches for SyncArgs {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        let flags = SyncFlags::from_arg_matches(matches)?;
        let filters = in_order(matches, &flags);
        Ok(SyncArgs { flags, filters })
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        self.flags.update_from_arg_matches(matches)?;
        self.filters = in_order(matches, &self.flags);
        Ok(())
    }
}

impl Args for SyncArgs {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        SyncFlags::augment_args(cmd)
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        SyncFlags::augment_args_for_update(cmd)
    }
}

/// The rule options of `flags` by their position on the command line.
fn in_order(matches: &ArgMatches, flags: &SyncFlags) -> Vec<FilterArg> {
    let mut all: Vec<(usize, FilterArg)> = Vec::new();
    let mut add = |id: &str, args: Vec<FilterArg>| {
        let at = matches.indices_of(id).into_iter().flatten();
        all.extend(at.zip(args));
    };
    add("include", flags.include.iter().cloned().map(FilterArg::Include).collect());
    add("exclude", flags.exclude.iter().cloned().map(FilterArg::Exclude).collect());
    add("include_from", flags.include_from.iter().cloned().map(FilterArg::IncludeFrom).collect());
    add("exclude_from", flags.exclude_from.iter().cloned().map(FilterArg::ExcludeFrom).collect());
    all.sort_by_key(|(at, _)| *at);
    all.into_iter().map(|(_, f)| f).collect()
}

/// The flags of `dedup sync [OPTIONS] SRC DST`.
#[derive(Debug, Args)]
#[command(after_help = AFTER_HELP)]
pub struct SyncFlags {
    /// The tree to mirror: its entries are mirrored directly under DST (like `rsync -a SRC/
    /// DST/`, with no trailing-slash rule).
    #[arg(value_name = "SRC")]
    pub src: PathBuf,

    /// The mirror; created if missing.
    #[arg(value_name = "DST")]
    pub dst: PathBuf,

    /// Remove from DST what is not in SRC (after everything else, or first when the copies need
    /// the room; nothing, and nothing renamed away, when any source entry could not be read).
    #[arg(long)]
    pub delete: bool,

    /// Refuse, before changing anything, when more than N entries would be deleted (exit 2).
    #[arg(long, value_name = "N")]
    pub max_delete: Option<u64>,

    /// Print the changes a real run would make, one per line; change nothing.
    #[arg(short = 'n', long)]
    pub dry_run: bool,

    /// Compare content, not size and modification time (reads both sides of every file of the
    /// same size).
    #[arg(short = 'c', long)]
    pub checksum: bool,

    /// Leave out entries matching PATTERN, on both sides: rsync's patterns (`*.o` any name,
    /// `/build` only at the top, `cache/` directories only, `a/**/b`). With --include, the first
    /// rule that matches an entry decides; a directory left out is not entered. Excluded entries
    /// of DST are never deleted unless --delete-excluded. Repeatable.
    #[arg(long, value_name = "PATTERN")]
    pub exclude: Vec<OsString>,

    /// Keep entries matching PATTERN even where a later --exclude matches them (the first
    /// matching rule decides, as in rsync): `--include '*/' --include '*.jpg' --exclude '*'`
    /// mirrors the JPEGs alone. Repeatable.
    #[arg(long, value_name = "PATTERN")]
    pub include: Vec<OsString>,

    /// Read exclude patterns from FILE (`-`: standard input), one a line, at this place in the
    /// rules; blank lines and lines starting with `#` or `;` are skipped, `+ PATTERN` is an
    /// include, `!` clears the rules so far.
    #[arg(long, value_name = "FILE")]
    pub exclude_from: Vec<PathBuf>,

    /// Read include patterns from FILE, as --exclude-from reads its (`- PATTERN` is an exclude).
    #[arg(long, value_name = "FILE")]
    pub include_from: Vec<PathBuf>,

    /// Mirror only the paths FILE lists (`-`: standard input), one a line, below SRC, with the
    /// directories leading to them: as rsync, a listed directory is made but not entered unless
    /// listed as `dir/` (its entries too) or with -r (everything below it); --delete removes only
    /// in those directories. A listed path SRC lacks is an error (exit 1).
    #[arg(long, value_name = "FILE")]
    pub files_from: Option<PathBuf>,

    /// With --files-from, mirror listed directories with everything below them (rsync's -r;
    /// without --files-from a sync is always recursive).
    #[arg(short = 'r', long)]
    pub recursive: bool,

    /// Lines of --exclude-from, --include-from and --files-from files end with a NUL byte, not a
    /// newline (as `find -print0` writes them).
    #[arg(short = '0', long)]
    pub from0: bool,

    /// Keep what the run replaces or deletes in DST: each is renamed beside itself with the
    /// suffix (`~`), just before the change, never copied. With --delete, DST names ending with
    /// the suffix are never deleted.
    #[arg(short = 'b', long)]
    pub backup: bool,

    /// Keep what the run replaces or deletes under DIR instead, at its path below DST (a
    /// relative DIR is below DST, as in rsync, and is then left out of the mirror). DIR must be
    /// on DST's file system: a backup is moved, never copied. Implies --backup.
    #[arg(long, value_name = "DIR")]
    pub backup_dir: Option<PathBuf>,

    /// The suffix of each backup's name (default `~`; none with --backup-dir).
    #[arg(long, value_name = "SUFFIX")]
    pub suffix: Option<OsString>,

    /// With --delete, also delete excluded paths from DST.
    #[arg(long, requires = "delete")]
    pub delete_excluded: bool,

    /// Stay on SRC's file system: directories on others are created, not entered.
    #[arg(short = 'x', long = "one-file-system")]
    pub one_file_system: bool,

    /// Clone file content (share extents) where SRC and DST allow: auto clones where it can and
    /// copies elsewhere, always fails where it cannot, never always copies the bytes.
    #[arg(long, value_enum, value_name = "WHEN", default_value = "auto")]
    pub reflink: ReflinkArg,

    /// Files unchanged against DIR's copy (same path below DIR, size, time and metadata)
    /// become hard links to it instead of copies: rsync's snapshot idiom. A relative DIR is
    /// below DST, as in rsync.
    #[arg(long, value_name = "DIR")]
    pub link_dest: Option<PathBuf>,

    /// Files of identical content in DST share storage: clones of one copy (reflink, where the
    /// file system can), or hard links with --dedup=hardlink (only between files whose metadata
    /// is the same). Looks at the sizes of which this run wrote a file; a dry run does not.
    #[arg(long, value_enum, value_name = "HOW", num_args = 0..=1, require_equals = true,
          default_missing_value = "reflink")]
    pub dedup: Option<DedupArg>,

    /// Write one JSON line per change to FILE.
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,

    /// Print only errors: no summary, no progress.
    #[arg(short, long)]
    pub quiet: bool,

    /// Print every change (on stdout) and notes.
    #[arg(short, long)]
    pub verbose: bool,

    /// Print every change (on stdout) as rsync's --itemize-changes does, `YXcstpoguax PATH`:
    /// `>f.st...... a/b` content written, size and time changed; `.f...p..... c` mode only;
    /// `cd+++++++++ d/` a new directory; `*deleting   e`. With -n, what a real run would print.
    #[arg(short = 'i', long)]
    pub itemize_changes: bool,

    /// Operations in flight per device [default: measured]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub io_threads: Option<u16>,
}

/// Shown after the options of `dedup sync --help`.
const AFTER_HELP: &str = "\
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
  dedup sync ~/Photos /mnt/backup/Photos          copy what changed (DST created if missing)
  dedup sync -n --delete ~/Photos /mnt/backup/Photos   list what a mirror run would change
  dedup sync --delete --exclude '*.tmp' --exclude /build src/ /srv/www
  dedup sync --include '*/' --include '*.jpg' --exclude '*' ~/Pictures /mnt/jpegs
  dedup sync --link-dest ../2024-06-01 ~ /backup/2024-06-02   unchanged files hard-linked
  dedup sync --delete --backup-dir ../replaced-$(date +%F) ~/Documents /mnt/docs
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::args::{Cli, Command};
    use clap::Parser;

    fn both(args: &[&str]) -> (Option<String>, Option<String>) {
        let args: Vec<OsString> = args.iter().map(OsString::from).collect();
        let alone = parse_alone(args.clone()).map(|a| format!("{a:?}"));
        let whole = match Cli::try_parse_from(args) {
            Ok(Cli { command: Command::Sync(a) }) => Some(format!("{a:?}")),
            _ => None,
        };
        (alone, whole)
    }

    #[test]
    fn the_sync_parser_alone_reads_what_the_whole_one_reads() {
        for args in [
            &["dedup", "sync", "a", "b"][..],
            &["dedup", "sync", "-q", "--delete", "--max-delete", "3", "a", "b"],
            &["dedup", "sync", "-nc", "--exclude", "*.o", "--exclude=x", "--", "-a", "b"],
            &["dedup", "sync", "--dedup", "a", "b", "--reflink", "never", "--io-threads=2"],
            &["dedup", "sync", "--dedup=hardlink", "--link-dest", "l", "-x", "-v", "a", "b"],
            &["dedup", "sync", "--include=*/", "--exclude-from", "f", "--exclude", "*", "a", "b"],
        ] {
            let (alone, whole) = both(args);
            assert!(alone.is_some(), "{args:?}");
            assert_eq!(alone, whole, "{args:?}");
        }
    }

    #[test]
    fn include_and_exclude_rules_keep_the_order_they_were_given_in() {
        let args = ["dedup", "sync", "--exclude", "x", "--include=*/", "-0", "--exclude-from", "f"];
        let args: Vec<OsString> =
            args.iter().chain(&["--include", "y", "a", "b"]).map(OsString::from).collect();
        let alone = parse_alone(args).unwrap();
        assert_eq!(
            alone.filters,
            [
                FilterArg::Exclude("x".into()),
                FilterArg::Include("*/".into()),
                FilterArg::ExcludeFrom("f".into()),
                FilterArg::Include("y".into()),
            ]
        );
    }

    #[test]
    fn anything_else_is_left_to_the_whole_parser() {
        for args in [
            &["dedup", "sync", "--help"][..],
            &["dedup", "sync", "-h"],
            &["dedup", "sync", "-V"],
            &["dedup", "sync", "a"],
            &["dedup", "sync", "--io-threads", "0", "a", "b"],
            &["dedup", "sync", "--delete-excluded", "a", "b"],
            &["dedup", "find", "a"],
            &["dedup", "--version"],
            &["dedup"],
        ] {
            let args: Vec<OsString> = args.iter().map(OsString::from).collect();
            assert!(parse_alone(args.clone()).is_none(), "{args:?}");
        }
    }
}
