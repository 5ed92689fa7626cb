//! Read-only commands: `snapshots`, `ls`, `dump`, `diff` — the library's answers, printed.

use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::sync::Arc;

use anyhow::Result;
use dedup_store::args::{CommonArgs, DiffArgs, DumpArgs, LsArgs, SnapshotsArgs};
use dedup_store::commands::{self, DiffEntry, Dumped};
use dedup_store::text::{ls_line, ls_long_line, snapshot_line, snapshot_record};

use super::report::say;

/// `dedup store snapshots`.
pub fn snapshots(common: &CommonArgs, args: SnapshotsArgs) -> Result<bool> {
    let repo = super::open(common)?;
    let list = commands::snapshots(&repo, &args.filter.filter())?;
    for err in &list.unreadable {
        eprintln!("dedup: error: {err}");
    }
    if args.json {
        let json: Vec<_> = list.snapshots.iter().map(|(id, s)| snapshot_record(id, s)).collect();
        say(serde_json::Value::from(json))?;
    } else {
        for (id, s) in &list.snapshots {
            say(snapshot_line(id, s))?;
        }
    }
    Ok(list.unreadable.is_empty())
}

/// Standard output could not be written.
fn stdout_error(e: std::io::Error) -> dedup_store::Error {
    dedup_store::Error::io("standard output", e)
}

/// `dedup store ls`.
pub fn ls(common: &CommonArgs, args: LsArgs) -> Result<bool> {
    let repo = super::open(common)?;
    let asked = args.path.as_deref().map_or(&[][..], |p| p.as_bytes());
    let mut out = std::io::stdout().lock();
    let filter = args.filter.filter();
    commands::ls(&repo, &args.snapshot, &filter, asked, &mut |path, node| {
        if args.long {
            writeln!(out, "{}", ls_long_line(path, node))
        } else if args.null {
            out.write_all(b"/")
                .and_then(|()| out.write_all(path))
                .and_then(|()| out.write_all(b"\0"))
        } else {
            writeln!(out, "{}", ls_line(path))
        }
        .map_err(stdout_error)
    })?;
    Ok(true)
}

/// `dedup store dump`: the file's bytes on stdout, or into `-o FILE` (sparse, renamed into
/// place whole). A file the backup could not read whole is refused.
pub fn dump(common: &CommonArgs, args: DumpArgs) -> Result<bool> {
    let repo = Arc::new(super::open(common)?);
    let snapshot = (args.snapshot.as_str(), &args.filter.filter());
    let mut out = std::io::stdout().lock();
    let output = args.output.as_deref();
    match commands::dump_file(&repo, snapshot, args.file.as_bytes(), output, &mut out)? {
        Dumped::Written => Ok(true),
        Dumped::Refused(why) => {
            eprintln!("dedup: error: {why}");
            Ok(false)
        }
    }
}

/// `dedup store diff`: entries added (+), removed (-) and modified (M).
pub fn diff(common: &CommonArgs, args: DiffArgs) -> Result<bool> {
    let repo = super::open(common)?;
    let filter = args.filter.filter();
    let mut out = std::io::stdout().lock();
    commands::diff(&repo, &args.first, &args.second, &filter, &mut |entry: DiffEntry| {
        writeln!(out, "{}", entry.line()).map_err(stdout_error)
    })?;
    Ok(true)
}
