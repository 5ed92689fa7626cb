//! `dedup store restore SNAPSHOT[:PATH] --target DIR`: one line on stdout per entry of the target
//! replaced or deleted (`replace PATH`, `delete PATH`; `keep PATH` with -v), the same lines for
//! `--dry-run`, problems on stderr, then the summary.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use dedup_core::{Observer, Problem};
use dedup_store::format::Node;
use dedup_store::restore::{
    restore, verify, Change, ChangeKind, Events, Overwrite, Pick, RestoreOptions, RestoreSummary,
    Selection,
};
use indicatif::{HumanBytes, HumanCount};

use super::args::{CommonArgs, OverwriteArg, RestoreArgs};
use super::json_progress::{self, JsonProblems};
use crate::messages::{quote_path, Messages};

/// Prints changes on stdout and problems on stderr (with `--json`, each as a JSON line on stdout
/// too).
struct Render {
    problems: JsonProblems,
    /// Print nothing but problems.
    quiet: bool,
    /// JSON lines instead of text on stdout.
    json: bool,
    /// The counts after the last batch, for the status lines.
    so_far: Mutex<RestoreSummary>,
}

impl Observer for Render {
    fn problem(&self, problem: Problem) {
        if self.json {
            self.problems.problem(problem);
        } else {
            self.problems.messages.problem(problem);
        }
    }
}

impl Events for Render {
    fn change(&self, change: &Change) {
        let shown = match change.kind {
            ChangeKind::Keep => self.problems.messages.verbose && !self.quiet,
            _ => !self.quiet,
        };
        if shown && self.json {
            json_progress::print(&serde_json::json!({
                "message_type": "verbose_status",
                "action": change.kind.name(),
                "item": json_progress::item(&change.path),
            }));
        } else if shown {
            println!("{} {}", change.kind.name(), quote_path(&change.path));
        }
    }

    fn progress(&self, so_far: &RestoreSummary) {
        *self.so_far.lock().unwrap_or_else(PoisonError::into_inner) = *so_far;
    }
}

impl Render {
    /// The `--json` status line, `elapsed` after the start: restic's fields for what is known
    /// without walking the snapshot first (no totals, so no `percent_done`).
    fn status(&self, elapsed: std::time::Duration) -> serde_json::Value {
        let s = *self.so_far.lock().unwrap_or_else(PoisonError::into_inner);
        serde_json::json!({
            "message_type": "status",
            "seconds_elapsed": elapsed.as_secs(),
            "files_restored": s.files,
            "files_skipped": s.kept,
            "bytes_restored": s.bytes,
            "error_count": self.problems.errors.load(Ordering::Relaxed),
        })
    }
}

fn overwrite(arg: OverwriteArg) -> Overwrite {
    match arg {
        OverwriteArg::Always => Overwrite::Always,
        OverwriteArg::IfChanged => Overwrite::IfChanged,
        OverwriteArg::IfNewer => Overwrite::IfNewer,
        OverwriteArg::Never => Overwrite::Never,
    }
}

/// `SNAPSHOT[:PATH]` split at the first `:`; the snapshot part must be text, the path any bytes.
fn split_spec(spec: &OsStr) -> Result<(&str, &[u8])> {
    let bytes = spec.as_bytes();
    let (snapshot, path) = match bytes.iter().position(|&b| b == b':') {
        Some(at) => (&bytes[..at], &bytes[at + 1..]),
        None => (bytes, &[][..]),
    };
    let snapshot = std::str::from_utf8(snapshot).with_context(|| {
        format!("{}: not a snapshot id", quote_path(std::path::Path::new(spec)))
    })?;
    Ok((snapshot, path))
}

/// Lets the restore hold as many files open as the system allows it: each file of a batch is
/// open from its creation to its rename, and each directory of the walk's path.
fn raise_open_files_limit() {
    use rustix::process::{getrlimit, setrlimit, Resource};
    let mut limit = getrlimit(Resource::Nofile);
    if limit.current < limit.maximum {
        limit.current = limit.maximum;
        // Best effort: with the lower limit the restore only runs smaller batches.
        let _ = setrlimit(Resource::Nofile, limit);
    }
}

/// Run `dedup store restore`; `Ok(false)` when some entries could not be restored.
pub fn run(common: &CommonArgs, args: RestoreArgs) -> Result<bool> {
    let repo = Arc::new(super::open(common)?);
    let (spec, path) = split_spec(&args.snapshot)?;
    let (id, node) =
        dedup_store::commands::restore_node(&repo, spec, &super::filter(&args.filter), path)?;
    let selection = Selection::new(&args.includes, &args.excludes)?;
    let pick = |rel: &[u8], node: &Node, within: bool| selection.pick(rel, node, within);
    let filter =
        selection.active().then_some(&pick as &(dyn Fn(&[u8], &Node, bool) -> Pick + Sync));
    let options = RestoreOptions {
        overwrite: overwrite(args.overwrite),
        delete: args.delete,
        dry_run: args.dry_run,
        filter,
    };
    let render = Render {
        problems: JsonProblems::new(Messages { verbose: common.verbose > 0, bar: None }, "restore"),
        quiet: common.quiet,
        json: args.json,
        so_far: Mutex::new(RestoreSummary::default()),
    };
    raise_open_files_limit();
    let started = Instant::now();
    let json_status = if args.json { json_progress::status_interval() } else { None };
    let finished = AtomicBool::new(false);
    let summary = std::thread::scope(|scope| {
        if let Some(interval) = json_status {
            let (finished, render) = (&finished, &render);
            scope.spawn(move || json_progress::tick(interval, finished, |t| render.status(t)));
        }
        let summary = restore(&repo, &node, &args.target, options, &render);
        finished.store(true, Ordering::Relaxed);
        summary
    })?;
    let mut complete = summary.errors == 0;
    let unmatched: Vec<String> =
        selection.unmatched().iter().map(|p| quote_path(std::path::Path::new(p))).collect();
    if selection.nothing_matched() {
        bail!(
            "nothing in the snapshot matches --include {}; nothing was restored",
            unmatched.join(", ")
        );
    }
    for pattern in unmatched {
        render
            .problems
            .messages
            .line(&format!("dedup: error: --include {pattern}: matches nothing in the snapshot"));
        complete = false;
    }
    if args.verify {
        let found = verify(&repo, &node, &args.target, filter, &render)?;
        if found.bad > 0 {
            render.problems.messages.line(&format!(
                "dedup: error: {} restored files do not hold what the snapshot does",
                found.bad
            ));
            complete = false;
        }
    }
    if args.json {
        json_progress::print(&json_summary(&id.to_hex(), &args, &summary, started.elapsed()));
    } else if !common.quiet {
        println!("{}", summary_line(&id.short(8), &args, &summary));
    }
    Ok(complete)
}

/// The `--json` summary: restic's fields, then dedup's own.
fn json_summary(
    id: &str,
    args: &RestoreArgs,
    s: &RestoreSummary,
    elapsed: std::time::Duration,
) -> serde_json::Value {
    serde_json::json!({
        "message_type": "summary",
        "seconds_elapsed": elapsed.as_secs(),
        "files_restored": s.files,
        "files_skipped": s.kept,
        "bytes_restored": s.bytes,
        "snapshot_id": id,
        "dry_run": args.dry_run,
        "dirs": s.dirs,
        "links": s.links,
        "others": s.others,
        "replaced": s.replaced,
        "deleted": s.deleted,
        "errors": s.errors,
    })
}

/// The last line: what was restored, replaced, deleted and kept.
fn summary_line(id: &str, args: &RestoreArgs, s: &RestoreSummary) -> String {
    let mut line = format!(
        "{} snapshot {id} into {}: {} files, {} dirs, {} hard links, {} other entries",
        if args.dry_run { "dry run: would restore" } else { "restored" },
        quote_path(&args.target),
        HumanCount(s.files),
        HumanCount(s.dirs),
        HumanCount(s.links),
        HumanCount(s.others),
    );
    if !args.dry_run {
        line.push_str(&format!(", {} written", HumanBytes(s.bytes)));
    }
    if s.replaced > 0 {
        line.push_str(&format!("; {} replaced", HumanCount(s.replaced)));
    }
    if s.deleted > 0 {
        line.push_str(&format!("; {} deleted", HumanCount(s.deleted)));
    }
    if s.kept > 0 {
        line.push_str(&format!(
            "; {} existing entries kept (--overwrite {} keeps them; -v names them)",
            HumanCount(s.kept),
            overwrite(args.overwrite).name()
        ));
    }
    if s.errors > 0 {
        line.push_str(&format!("; {} problems", s.errors));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spec_splits_at_its_first_colon_and_keeps_the_path_bytes() {
        let spec = OsStr::from_bytes(b"latest:/a:b/\xff");
        assert_eq!(split_spec(spec).unwrap(), ("latest", &b"/a:b/\xff"[..]));
        assert_eq!(split_spec(OsStr::new("abcd")).unwrap(), ("abcd", &b""[..]));
        assert!(split_spec(OsStr::from_bytes(b"\xff:/a")).is_err());
    }
}
