//! `dedup store restore SNAPSHOT[:PATH] --target DIR`: one line on stdout per entry of the target
//! replaced or deleted (`replace PATH`, `delete PATH`; `keep PATH` with -v), the same lines for
//! `--dry-run`, problems on stderr, then the summary.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use dedup_core::{Observer, Problem};
use dedup_store::format::Node;
use dedup_store::restore::{
    restore, verify, Change, ChangeKind, Events, Overwrite, Pick, RestoreOptions, RestoreSummary,
    Selection,
};
use indicatif::{HumanBytes, HumanCount};

use super::args::{CommonArgs, OverwriteArg, RestoreArgs};
use crate::messages::{quote_path, Messages};

/// Prints changes on stdout and problems on stderr.
struct Render {
    messages: Messages,
    /// Print nothing but problems.
    quiet: bool,
}

impl Observer for Render {
    fn problem(&self, problem: Problem) {
        self.messages.problem(problem);
    }
}

impl Events for Render {
    fn change(&self, change: &Change) {
        let shown = match change.kind {
            ChangeKind::Keep => self.messages.verbose && !self.quiet,
            _ => !self.quiet,
        };
        if shown {
            println!("{} {}", change.kind.name(), quote_path(&change.path));
        }
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
        messages: Messages { verbose: common.verbose > 0, bar: None },
        quiet: common.quiet,
    };
    raise_open_files_limit();
    let summary = restore(&repo, &node, &args.target, options, &render)?;
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
            .messages
            .line(&format!("dedup: error: --include {pattern}: matches nothing in the snapshot"));
        complete = false;
    }
    if args.verify {
        let found = verify(&repo, &node, &args.target, filter, &render)?;
        if found.bad > 0 {
            render.messages.line(&format!(
                "dedup: error: {} restored files do not hold what the snapshot does",
                found.bad
            ));
            complete = false;
        }
    }
    if !common.quiet {
        println!("{}", summary_line(&id.short(8), &args, &summary));
    }
    Ok(complete)
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
