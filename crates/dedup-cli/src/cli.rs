//! The command line's top level: the list of commands, each pointing at its job's arguments (in
//! the job's crate, `dedup_find::args`, …; the store's in `store/args/`), and the two that
//! generate files from it.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use dedup_act::args::{ActArgs, MoveArgs};
use dedup_cache::args::CacheArgs;
use dedup_find::args::FindArgs;
use dedup_sync::args::SyncArgs;

use crate::act::ActionArgs;

/// dedup stops you storing the same bytes twice: it finds duplicate files and acts on them,
/// keeps deduplicated, encrypted snapshots of trees, and mirrors a tree one way.
#[derive(Debug, Parser)]
#[command(name = "dedup", version, max_term_width = 100)]
#[command(
    about = "Store the same bytes only once: find duplicate files and act on them, keep \
deduplicated encrypted snapshots, mirror trees.",
    long_about = None,
    after_help = "Three jobs, an example of each:\n\
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
    #[command(after_help = dedup_find::args::AFTER_HELP)]
    Find(FindArgs),
    /// Replace duplicates with hard links to the kept file (one inode, one set of metadata).
    #[command(after_help = dedup_act::args::AFTER_HELP)]
    Link(ActionArgs<ActArgs>),
    /// Make duplicates share the kept file's extents (btrfs, XFS): each keeps its own metadata.
    #[command(after_help = dedup_act::args::AFTER_HELP)]
    Reflink(ActionArgs<ActArgs>),
    /// Replace duplicates with symbolic links to the kept file's absolute path.
    #[command(after_help = dedup_act::args::AFTER_HELP)]
    Symlink(ActionArgs<ActArgs>),
    /// Delete duplicates, keeping one file of each group.
    #[command(after_help = dedup_act::args::AFTER_HELP)]
    Remove(ActionArgs<ActArgs>),
    /// Move duplicates under DIR, keeping their path below it.
    #[command(after_help = dedup_act::args::AFTER_HELP)]
    Move(ActionArgs<MoveArgs>),
    /// Inspect or maintain the persistent content cache (see `dedup find --cache`).
    #[command(after_help = dedup_cache::args::AFTER_HELP)]
    Cache(CacheArgs),
    /// Keep deduplicated, encrypted snapshots of trees in a repository.
    Store(dedup_store::args::StoreArgs),
    /// Mirror SRC into DST one way, copying only what changed and renaming what moved.
    Sync(SyncArgs),
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
