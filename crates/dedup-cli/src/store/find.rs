//! `dedup store find`: the library's search of the snapshots selected, its matches written as
//! they come (dedup-store's `text::FindWriter` words them).

use anyhow::Result;
use dedup_store::args::{CommonArgs, FindArgs};
use dedup_store::commands::{self, Found};
use dedup_store::text::FindWriter;

/// `dedup store find`.
pub fn run(common: &CommonArgs, args: FindArgs) -> Result<bool> {
    let options = args.options()?;
    let repo = super::open(common)?;
    let selected = commands::select(&repo, &args.selection())?;
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
