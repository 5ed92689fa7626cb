//! `dedup store copy`: snapshots of another repository (`--from-repo`) copied into this one
//! (the library's `copy`); the source is opened with its own password and checked against what
//! this client remembers of its location, as every repository is.

use std::path::PathBuf;

use anyhow::{bail, Result};
use dedup_store::commands;

use super::args::CommonArgs;
use super::history_args::CopyArgs;
use super::password::source_password;
use super::selection::selection;

/// The source repository's location: `--from-repo`, else DEDUP_FROM_REPO.
fn source_location(args: &CopyArgs) -> Result<PathBuf> {
    if let Some(repo) = &args.from_repo {
        return Ok(repo.clone());
    }
    match std::env::var_os("DEDUP_FROM_REPO") {
        Some(repo) if !repo.is_empty() => Ok(PathBuf::from(repo)),
        _ => bail!("no repository to copy from: use --from-repo REPO or set DEDUP_FROM_REPO"),
    }
}

/// `dedup store copy`.
pub fn run(common: &CommonArgs, args: CopyArgs) -> Result<bool> {
    let mut source = common.clone();
    source.repo = Some(source_location(&args)?);
    source.password_file = args.from_password_file.clone();
    source.password_command = args.from_password_command.clone();
    let (file, command) =
        (args.from_password_file.as_deref(), args.from_password_command.as_deref());
    let from = super::open_with(&source, &|| source_password(file, command))?;
    let to = super::open(common)?;
    if from.config().id == to.config().id {
        bail!("the source and the destination are the same repository");
    }
    let selected = commands::select(&from, &selection(&args.select))?;
    for err in &selected.unreadable {
        eprintln!("dedup: error: {err} (not copied)");
    }
    let report = commands::copy(&from, &to, &selected.snapshots, &super::hostname())?;
    if !common.quiet {
        for skipped in &report.skipped {
            println!(
                "snapshot {} is already copied as {}",
                skipped.source.short(8),
                skipped.copy.short(8)
            );
        }
        for copied in &report.copied {
            println!("snapshot {} copied as {}", copied.source.short(8), copied.copy.short(8));
        }
        let how = if report.rechunked {
            "files cut again with this repository's chunker"
        } else {
            "chunks carried over as they are"
        };
        println!(
            "copied {} snapshot(s), {} already there; {how}; {} bytes added",
            report.copied.len(),
            report.skipped.len(),
            report.bytes_added
        );
    }
    Ok(selected.unreadable.is_empty())
}
