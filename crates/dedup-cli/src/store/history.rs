//! `tag`, `rewrite` and `copy`: new snapshots made from those selected, the library's command
//! run and its lines printed. `copy` opens its source with its own password and checks it
//! against what this client remembers of its location, as every repository is.

use anyhow::Result;
use dedup_store::args::{CommonArgs, CopyArgs, RewriteArgs, TagArgs};
use dedup_store::commands;
use dedup_store::repo::this_host;
use dedup_store::text;

use super::password::prompt;
use super::report::print;

/// `dedup store tag`.
pub fn tag(common: &CommonArgs, args: TagArgs) -> Result<bool> {
    let change = args.change()?;
    let repo = super::open(common)?;
    let selected = commands::select(&repo, &args.select.selection())?;
    print(&text::unreadable_lines(&selected.unreadable, "left as it is"), common.quiet)?;
    let report = commands::tag(&repo, &selected.snapshots, &change)?;
    print(&text::tag_lines(&report), common.quiet)?;
    Ok(report.complete(&selected.unreadable))
}

/// `dedup store rewrite`.
pub fn rewrite(common: &CommonArgs, args: RewriteArgs) -> Result<bool> {
    let options = args.options()?;
    let repo = super::open(common)?;
    let selected = commands::select(&repo, &args.select.selection())?;
    print(&text::unreadable_lines(&selected.unreadable, "left as it is"), common.quiet)?;
    let report = commands::rewrite(&repo, &selected.snapshots, &options)?;
    print(&text::rewrite_lines(&report, &options), common.quiet)?;
    Ok(report.complete(&selected.unreadable))
}

/// `dedup store copy`.
pub fn copy(common: &CommonArgs, args: CopyArgs) -> Result<bool> {
    let source = args.source(common)?;
    let sources = args.source_password_sources();
    let from = super::open_with(&source, &|| sources.source_password(&prompt))?;
    let to = super::open(common)?;
    commands::check_copy_pair(&from, &to)?;
    let selected = commands::select(&from, &args.select.selection())?;
    print(&text::unreadable_lines(&selected.unreadable, "not copied"), common.quiet)?;
    let report = commands::copy(&from, &to, &selected.snapshots, &this_host())?;
    print(&text::copy_lines(&report), common.quiet)?;
    Ok(report.complete(&selected.unreadable))
}
