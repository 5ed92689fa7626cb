//! `tag`, `rewrite` and `copy`: new snapshots made from those selected, the library's command
//! run and its lines printed. `copy` opens its source with its own password and checks it
//! against what this client remembers of its location, as every repository is.

use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

use anyhow::{bail, Result};
use dedup_store::commands::{self, Patterns, RewriteOptions, Selection};
use dedup_store::text;

use super::args::CommonArgs;
use super::history_args::{CopyArgs, RewriteArgs, SelectArgs, SnapshotFilterArgs, TagArgs};
use super::password::source_password;
use super::report::print;

/// The library's selection of the snapshots named, or else of those `filter` accepts.
pub fn selection_of(snapshots: &[String], filter: &SnapshotFilterArgs) -> Selection {
    commands::selection_of(snapshots, filter.host.as_deref(), &filter.paths, &filter.tags)
}

fn selection(args: &SelectArgs) -> Selection {
    selection_of(&args.snapshots, &args.filter)
}

/// `dedup store tag`.
pub fn tag(common: &CommonArgs, args: TagArgs) -> Result<bool> {
    let change = commands::tag_change(&args.set, &args.add, &args.remove)?;
    let repo = super::open(common)?;
    let selected = commands::select(&repo, &selection(&args.select))?;
    print(&text::unreadable_lines(&selected.unreadable, "left as it is"), common.quiet)?;
    let report = commands::tag(&repo, &selected.snapshots, &change)?;
    print(&text::tag_lines(&report), common.quiet)?;
    Ok(report.complete(&selected.unreadable))
}

/// `dedup store rewrite`.
pub fn rewrite(common: &CommonArgs, args: RewriteArgs) -> Result<bool> {
    let excludes: Vec<Vec<u8>> = args.excludes.iter().map(|p| p.as_bytes().to_vec()).collect();
    let patterns = commands::rewrite_patterns(&excludes, &args.exclude_files)?;
    let options = RewriteOptions {
        excludes: Patterns::new(&patterns, false)?,
        forget: args.forget,
        dry_run: args.dry_run,
        host: super::hostname(),
    };
    let repo = super::open(common)?;
    let selected = commands::select(&repo, &selection(&args.select))?;
    print(&text::unreadable_lines(&selected.unreadable, "left as it is"), common.quiet)?;
    let report = commands::rewrite(&repo, &selected.snapshots, &options)?;
    print(&text::rewrite_lines(&report, &options), common.quiet)?;
    Ok(report.complete(&selected.unreadable))
}

/// `dedup store copy`.
pub fn copy(common: &CommonArgs, args: CopyArgs) -> Result<bool> {
    let mut source = common.clone();
    source.repo = Some(source_location(&args)?);
    source.password_file = args.from_password_file.clone();
    source.password_command = args.from_password_command.clone();
    let (file, command) =
        (args.from_password_file.as_deref(), args.from_password_command.as_deref());
    let from = super::open_with(&source, &|| source_password(file, command))?;
    let to = super::open(common)?;
    commands::check_copy_pair(&from, &to)?;
    let selected = commands::select(&from, &selection(&args.select))?;
    print(&text::unreadable_lines(&selected.unreadable, "not copied"), common.quiet)?;
    let report = commands::copy(&from, &to, &selected.snapshots, &super::hostname())?;
    print(&text::copy_lines(&report), common.quiet)?;
    Ok(report.complete(&selected.unreadable))
}

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
