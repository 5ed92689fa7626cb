//! `dedup store find`: the library's search of the snapshots selected, its matches written as
//! they come (dedup-store's `text::FindWriter` words them).

use std::os::unix::ffi::OsStrExt;

use anyhow::Result;
use dedup_store::commands::{self, FindOptions, Found, Patterns};
use dedup_store::text::{parse_time, FindWriter};

use super::args::CommonArgs;
use super::history_args::FindArgs;

/// `dedup store find`.
pub fn run(common: &CommonArgs, args: FindArgs) -> Result<bool> {
    let patterns: Vec<Vec<u8>> = args.patterns.iter().map(|p| p.as_bytes().to_vec()).collect();
    let options = FindOptions {
        patterns: Patterns::new(&patterns, args.ignore_case)?,
        oldest: args.oldest.as_deref().map(|t| parse_time(t, false)).transpose()?,
        newest: args.newest.as_deref().map(|t| parse_time(t, true)).transpose()?,
    };
    let repo = super::open(common)?;
    let selected =
        commands::select(&repo, &super::history::selection_of(&args.snapshots, &args.filter))?;
    for err in &selected.unreadable {
        eprintln!("dedup: error: {err}");
    }
    let mut out = FindWriter::new(std::io::stdout().lock(), args.json);
    let report = commands::find(&repo, &selected.snapshots, &options, &mut |found: Found<'_>| {
        out.found(&found).map_err(|e| dedup_store::Error::io("standard output", e))
    })?;
    out.finish()?;
    for problem in &report.problems {
        eprintln!("dedup: error: {problem}");
    }
    Ok(report.complete(&selected.unreadable))
}
