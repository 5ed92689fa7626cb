//! `stats` and `check`, and the printing of any store command's lines: the answer and what was
//! done on stdout, problems on stderr, and what `--quiet` leaves out. A stdout that cannot be
//! written (a full disk, a closed pipe) is an error returned, never a panic.

use std::fmt::Display;
use std::io::{self, Write};

use anyhow::{Context, Result};
use dedup_store::args::{CheckArgs, CommonArgs, StatsArgs};
use dedup_store::text::Line;

/// Prints `lines` where each goes; with `quiet`, only the answer and the problems.
pub fn print<'a>(lines: impl IntoIterator<Item = &'a Line>, quiet: bool) -> Result<()> {
    for line in lines {
        match line {
            Line::Answer(text) => say(text)?,
            Line::Info(text) if !quiet => say(text)?,
            Line::Problem(text) => eprintln!("dedup: {text}"),
            Line::Warning(text) if !quiet => eprintln!("dedup: {text}"),
            Line::Info(_) | Line::Warning(_) => {}
        }
    }
    Ok(())
}

/// Writes one line on stdout.
pub fn say(text: impl Display) -> Result<()> {
    writeln!(io::stdout().lock(), "{text}").context("cannot write to standard output")
}

/// `dedup store stats`: what the snapshots hold, what the repository stores, and the ratios
/// between (the terms are defined in the help of `StoreCommand::Stats`).
pub fn stats(common: &CommonArgs, args: StatsArgs) -> Result<bool> {
    let repo = super::open(common)?;
    let s = dedup_store::commands::stats(&repo)?;
    if args.json {
        say(s.record())?;
        return Ok(true);
    }
    for line in s.lines() {
        say(line)?;
    }
    Ok(true)
}

/// `dedup store check`: findings on stderr, a summary on stdout; `Ok(false)` when damaged.
pub fn check(common: &CommonArgs, args: CheckArgs) -> Result<bool> {
    let repo = super::open_uncached(common)?;
    let read = args.read_data()?;
    let report = dedup_store::commands::check(&repo, read)?;
    print(&report.lines(read), common.quiet)?;
    Ok(report.errors.is_empty())
}
