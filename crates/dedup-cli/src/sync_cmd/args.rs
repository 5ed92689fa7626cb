//! `dedup sync`'s arguments.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Args, FromArgMatches, ValueEnum};

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

/// `dedup sync [OPTIONS] SRC DST`.
#[derive(Debug, Args)]
pub struct SyncArgs {
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

    /// Leave out paths matching GLOB (matched against the name and the path below SRC or DST;
    /// as in rsync, `/GLOB` is anchored at the root and `GLOB/` matches directories only;
    /// repeatable). Excluded paths in DST are never deleted unless --delete-excluded.
    #[arg(long, value_name = "GLOB")]
    pub exclude: Vec<String>,

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

    /// Operations in flight per device [default: measured]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub io_threads: Option<u16>,
}

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
        ] {
            let (alone, whole) = both(args);
            assert!(alone.is_some(), "{args:?}");
            assert_eq!(alone, whole, "{args:?}");
        }
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
