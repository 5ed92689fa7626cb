//! `dedup store tag`: tags added, removed or set on snapshots, each changed one rewritten with
//! its original recorded (the library's `tag`).

use anyhow::{bail, Result};
use dedup_store::commands::{self, TagChange};

use super::args::CommonArgs;
use super::history_args::TagArgs;
use super::selection::{selection, split_commas};
use dedup_store::text::quote;

/// `dedup store tag`.
pub fn run(common: &CommonArgs, args: TagArgs) -> Result<bool> {
    let change = TagChange {
        // `--set ''` is a set of no tags, not no `--set`.
        set: (!args.set.is_empty()).then(|| split_commas(&args.set)),
        add: split_commas(&args.add),
        remove: split_commas(&args.remove),
    };
    if let Some(bad) = change
        .add
        .iter()
        .chain(change.set.iter().flatten())
        .find(|t| t.chars().any(char::is_control))
    {
        bail!("tag {}: holds a control character", quote(bad.as_bytes()));
    }
    let repo = super::open(common)?;
    let selected = commands::select(&repo, &selection(&args.select))?;
    for err in &selected.unreadable {
        eprintln!("dedup: error: {err} (left as it is)");
    }
    let report = commands::tag(&repo, &selected.snapshots, &change)?;
    let mut kept = 0;
    for done in &report.changed {
        if let Some(err) = &done.old_kept {
            kept += 1;
            eprintln!(
                "dedup: error: snapshot {} (retagged as {}) could not be removed: {err}; run \
                 the same tag again to remove it",
                done.old.short(8),
                done.new.short(8)
            );
        }
    }
    if !common.quiet {
        for done in &report.changed {
            let tags: Vec<String> = done.tags.iter().map(|t| quote(t.as_bytes())).collect();
            println!(
                "snapshot {} is now {} [{}]",
                done.old.short(8),
                done.new.short(8),
                tags.join(",")
            );
        }
        println!(
            "tags changed on {} snapshot(s); {} already as asked",
            report.changed.len(),
            report.unchanged
        );
    }
    Ok(selected.unreadable.is_empty() && kept == 0)
}
