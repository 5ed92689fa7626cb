//! `dedup store rewrite`: snapshots written again without the entries that match (the
//! library's `rewrite`), with what each left out.

use std::os::unix::ffi::OsStrExt;

use anyhow::Result;
use dedup_store::commands::{self, Patterns, RewriteOptions};

use super::args::CommonArgs;
use super::backup_select::lines_of;
use super::history_args::RewriteArgs;
use super::selection::selection;
use dedup_store::text::quote;

/// The patterns of `--exclude` and of each `--exclude-file`'s lines (trimmed).
fn patterns(args: &RewriteArgs) -> Result<Vec<Vec<u8>>> {
    let mut patterns: Vec<Vec<u8>> = args.excludes.iter().map(|p| p.as_bytes().to_vec()).collect();
    for file in &args.exclude_files {
        for line in lines_of(file)? {
            patterns.push(line.trim_ascii().to_vec());
        }
    }
    Ok(patterns)
}

/// `dedup store rewrite`.
pub fn run(common: &CommonArgs, args: RewriteArgs) -> Result<bool> {
    let options = RewriteOptions {
        excludes: Patterns::new(&patterns(&args)?, false)?,
        forget: args.forget,
        dry_run: args.dry_run,
        host: super::hostname(),
    };
    let repo = super::open(common)?;
    let selected = commands::select(&repo, &selection(&args.select))?;
    for err in &selected.unreadable {
        eprintln!("dedup: error: {err} (left as it is)");
    }
    let report = commands::rewrite(&repo, &selected.snapshots, &options)?;
    let mut kept = 0;
    for done in &report.rewritten {
        if let Some(err) = &done.old_kept {
            kept += 1;
            eprintln!(
                "dedup: error: snapshot {} could not be removed after its rewrite: {err}",
                done.old.short(8)
            );
        }
        if !common.quiet {
            for path in &done.excluded {
                println!("snapshot {}: leaves out {}", done.old.short(8), quote(path));
            }
        }
        match done.new {
            Some(new) if !common.quiet => {
                let gone = if done.forgotten { ", the original removed" } else { "" };
                println!("snapshot {} rewritten as {}{gone}", done.old.short(8), new.short(8));
            }
            _ => {}
        }
    }
    if !common.quiet {
        let verb = if args.dry_run { "would rewrite" } else { "rewrote" };
        println!(
            "{verb} {} snapshot(s); {} held nothing to leave out",
            report.rewritten.len(),
            report.unchanged
        );
        if !args.dry_run && !report.rewritten.is_empty() {
            let next = if args.forget {
                "run `dedup store prune --max-unused 0` to delete the data left out from every pack"
            } else {
                "the originals still hold what was left out: `dedup store forget` them, then \
                 `dedup store prune --max-unused 0`"
            };
            println!("{next}");
        }
    }
    Ok(selected.unreadable.is_empty() && kept == 0)
}
