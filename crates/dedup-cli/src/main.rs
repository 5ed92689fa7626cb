//! The `dedup` binary: turns arguments into settings, runs the library, renders the result and
//! chooses the exit status. The only place that prints.

mod act;
mod allocator;
mod cache;
mod cli;
mod find;
mod generate;
mod messages;
mod progress;
mod store;
mod sync;

use std::process::ExitCode;

use anyhow::Context;
use clap::Parser;
use dedup_act::Action;

use crate::cli::{Cli, Command};

/// Exit status when the result is complete.
const EXIT_OK: u8 = 0;
/// Exit status when the run finished but some paths could not be handled.
const EXIT_INCOMPLETE: u8 = 1;
/// Exit status for usage errors and failures that leave no result (clap uses 2 as well).
const EXIT_FATAL: u8 = 2;

fn main() -> ExitCode {
    let result = match dedup_sync::args::parse_alone(std::env::args_os()) {
        Some(args) => sync::run(args),
        None => run(Cli::parse()),
    };
    let result = result.and_then(|complete| close_stdout(complete).map(|()| complete));
    match result {
        Ok(complete) => ExitCode::from(if complete { EXIT_OK } else { EXIT_INCOMPLETE }),
        Err(err) if messages::is_broken_pipe(&err) => ExitCode::from(EXIT_OK),
        Err(err) => {
            eprintln!("dedup: error: {err:#}");
            ExitCode::from(EXIT_FATAL)
        }
    }
}

/// Flush standard output and ask its file system what it met, as the last `close` would (NFS,
/// SMB and FUSE report a failed write-back there): `dedup find > report` or `store dump >
/// file` onto such a file system must not exit 0 with the file unwritten (coreutils'
/// `close_stdout`). Standard output stays open. After an incomplete run only the close is
/// asked: a write the command could not make was named by it already.
fn close_stdout(complete: bool) -> anyhow::Result<()> {
    let mut stdout = std::io::stdout().lock();
    let flushed = if complete { std::io::Write::flush(&mut stdout) } else { Ok(()) };
    flushed
        .and_then(|()| {
            dedup_fs::flush(std::os::fd::AsFd::as_fd(&stdout))
                .map_err(dedup_fs::FsError::into_io_error)
        })
        .context("cannot write to standard output")
}

/// Run the command `cli` names; `Ok(false)` when some paths could not be handled.
fn run(cli: Cli) -> anyhow::Result<bool> {
    match cli.command {
        Command::Find(args) => {
            allocator::tune(&allocator::FIND);
            find::run(args)
        }
        Command::Link(args) => act::run(Action::Link, &args.action, &args.select),
        Command::Reflink(args) => act::run(Action::Reflink, &args.action, &args.select),
        Command::Symlink(args) => act::run(Action::Symlink, &args.action, &args.select),
        Command::Remove(args) => act::run(Action::Remove, &args.action, &args.select),
        Command::Move(args) => act::run(args.action.action()?, &args.action.act, &args.select),
        Command::Cache(args) => cache::run(args),
        Command::Store(args) => store::run(args),
        Command::Sync(args) => sync::run(args),
        Command::Completions(args) => generate::completions(args.shell),
        Command::Man(args) => generate::man_pages(&args.dir),
    }
}
