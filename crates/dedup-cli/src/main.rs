//! The `dedup` binary: turns arguments into settings, runs the library, renders the result and
//! chooses the exit status. The only place that prints.

mod act;
mod cache;
mod cli;
mod config;
mod find;
mod generate;
mod messages;
mod progress;
mod size;
mod store;
mod sync;
mod tuning;

use std::process::ExitCode;

use clap::Parser;

use crate::cli::{Cli, Command};

/// Exit status when the result is complete.
const EXIT_OK: u8 = 0;
/// Exit status when the run finished but some paths could not be handled.
const EXIT_INCOMPLETE: u8 = 1;
/// Exit status for usage errors and failures that leave no result (clap uses 2 as well).
const EXIT_FATAL: u8 = 2;

fn main() -> ExitCode {
    let result = match sync::args::parse_alone(std::env::args_os()) {
        Some(args) => sync::run(args),
        None => run(Cli::parse()),
    };
    match result {
        Ok(complete) => ExitCode::from(if complete { EXIT_OK } else { EXIT_INCOMPLETE }),
        Err(err) if messages::is_broken_pipe(&err) => ExitCode::from(EXIT_OK),
        Err(err) => {
            eprintln!("dedup: error: {err:#}");
            ExitCode::from(EXIT_FATAL)
        }
    }
}

/// Run the command `cli` names; `Ok(false)` when some paths could not be handled.
fn run(cli: Cli) -> anyhow::Result<bool> {
    match cli.command {
        Command::Find(args) => {
            tune_allocator_for_find();
            find::run(args)
        }
        Command::Link(args) => act::run(act::Kind::Link, args, None),
        Command::Reflink(args) => act::run(act::Kind::Reflink, args, None),
        Command::Symlink(args) => act::run(act::Kind::Symlink, args, None),
        Command::Remove(args) => act::run(act::Kind::Remove, args, None),
        Command::Move(args) => act::run(act::Kind::Move, args.act, Some(args.to)),
        Command::Cache(args) => cache::run(args),
        Command::Store(args) => store::run(args),
        Command::Sync(args) => sync::run(args),
        Command::Completions(args) => generate::completions(args.shell),
        Command::Man(args) => generate::man_pages(&args.dir),
    }
}

/// Caps glibc's malloc arenas at one per core and fixes its mmap threshold (glibc only). The
/// finder starts and ends its walk and read threads stage by stage, and glibc gives up to eight
/// arenas per core to threads that allocate at once; each arena keeps what its threads freed, so
/// on a hundred thousand small files a quarter of the peak RSS sat in arenas of threads long
/// gone. glibc also raises its mmap threshold each time a large block is freed, after which
/// blocks of that size stay resident in the arenas once freed; fixed, every block from
/// 256 KiB up is returned when freed. The exact stage's large read buffers are
/// pooled (dedup_scan::read::pool), so they are not mapped again for every chunk.
/// docs/BENCHMARKS.md has the figures (find, peak RSS).
#[allow(unsafe_code)]
fn tune_allocator_for_find() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        /// Blocks from this size up are mapped on their own and unmapped when freed.
        const OWN_MAPPING_FROM: libc::c_int = 256 << 10;
        let cores = std::thread::available_parallelism().map_or(2, usize::from).clamp(2, 64);
        // SAFETY: mallopt only changes a tunable of the allocator, before any thread starts.
        unsafe {
            libc::mallopt(libc::M_ARENA_MAX, cores as libc::c_int);
            libc::mallopt(libc::M_MMAP_THRESHOLD, OWN_MAPPING_FROM);
        }
    }
}
