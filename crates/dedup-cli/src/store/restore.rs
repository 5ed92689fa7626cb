//! `dedup store restore SNAPSHOT[:PATH] --target DIR`.

use anyhow::{bail, Context, Result};
use dedup_store::format::{Content, Node, NodeKind};
use dedup_store::restore::restore;
use globset::{Glob, GlobSet, GlobSetBuilder};
use indicatif::{HumanBytes, HumanCount};

use super::args::{CommonArgs, RestoreArgs};
use crate::messages::Messages;

fn globs(patterns: &[String]) -> Result<GlobSet> {
    let mut builder = GlobSetBuilder::new();
    for pattern in patterns {
        builder.add(Glob::new(pattern).with_context(|| format!("invalid pattern {pattern:?}"))?);
    }
    Ok(builder.build()?)
}

/// Whether `path` (below the restored node) passes the include and exclude globs. Each glob is
/// matched against the path and its last name; a directory is entered when an include may match
/// below it.
fn wanted(includes: &GlobSet, excludes: &GlobSet, path: &[u8], node: &Node) -> bool {
    let text = String::from_utf8_lossy(path);
    let name = String::from_utf8_lossy(&node.name);
    if excludes.is_match(&*text) || excludes.is_match(&*name) {
        return false;
    }
    includes.is_empty()
        || node.kind == NodeKind::Dir
        || includes.is_match(&*text)
        || includes.is_match(&*name)
}

/// Run `dedup store restore`; `Ok(false)` when some entries could not be restored.
pub fn run(common: &CommonArgs, args: RestoreArgs) -> Result<bool> {
    let repo = super::open(common)?;
    let (spec, path) = match args.snapshot.split_once(':') {
        Some((spec, path)) => (spec, path),
        None => (args.snapshot.as_str(), ""),
    };
    let (id, snapshot) = repo.find_snapshot(spec, &super::filter(&args.filter))?;
    let index = repo.load_index()?.index;
    let node = dedup_store::tree::resolve_with_status(
        &repo,
        &index,
        snapshot.tree,
        snapshot.status_tree,
        path.as_bytes(),
    )?;
    let (includes, excludes) = (globs(&args.includes)?, globs(&args.excludes)?);
    let filter = |p: &[u8], n: &Node| wanted(&includes, &excludes, p, n);
    let messages = Messages { verbose: common.verbose > 0, bar: None };
    let use_filter = !(args.includes.is_empty() && args.excludes.is_empty());
    let summary =
        restore(&repo, &index, &node, &args.target, use_filter.then_some(&filter as _), &messages)?;
    let mut complete = summary.errors == 0;
    if args.verify {
        let bad = verify(&repo, &index, &node, &args.target, &messages)?;
        if bad > 0 {
            complete = false;
        }
    }
    if !common.quiet {
        println!(
            "restored snapshot {} into {}: {} files, {} dirs, {} hard links, {} other entries, {} written{}",
            id.short(8),
            args.target.display(),
            HumanCount(summary.files),
            HumanCount(summary.dirs),
            HumanCount(summary.links),
            HumanCount(summary.others),
            HumanBytes(summary.bytes),
            if complete { String::new() } else { format!("; {} problems", summary.errors) }
        );
    }
    Ok(complete)
}

/// Reads every restored regular file back and compares it with the snapshot; returns how many
/// differ (each reported).
fn verify(
    repo: &dedup_store::repo::Repository,
    index: &dedup_store::index::Index,
    node: &Node,
    target: &std::path::Path,
    messages: &Messages,
) -> Result<u64> {
    let mut bad = 0;
    let mut check_file = |path: std::path::PathBuf, node: &Node| -> Result<()> {
        let Content::Chunks(chunks) = &node.content else { return Ok(()) };
        if !same_content(repo, index, chunks, &path)? {
            bad += 1;
            messages.line(&format!(
                "dedup: error: {}: restored content differs from the snapshot",
                crate::messages::quote_path(&path)
            ));
        }
        Ok(())
    };
    match &node.content {
        Content::Subtree(id) => dedup_store::tree::walk(repo, index, *id, &mut |rel, child| {
            if child.kind == NodeKind::File {
                let path =
                    target.join(<std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(rel));
                if path.exists() {
                    check_file(path, child)
                        .map_err(|e| dedup_store::Error::Invalid(e.to_string()))?;
                }
            }
            Ok(())
        })?,
        Content::Chunks(_) => check_file(
            target.join(<std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(&node.name)),
            node,
        )?,
        Content::None => {}
    }
    if bad > 0 {
        bail!("{bad} restored files differ from the snapshot");
    }
    Ok(bad)
}

/// Whether the file at `path` holds exactly the chunks `chunks`, compared one chunk at a time
/// (memory stays one chunk whatever the file's size).
fn same_content(
    repo: &dedup_store::repo::Repository,
    index: &dedup_store::index::Index,
    chunks: &[dedup_store::Id],
    path: &std::path::Path,
) -> Result<bool> {
    use std::io::Read;
    let Ok(file) = std::fs::File::open(path) else { return Ok(false) };
    let mut file = std::io::BufReader::with_capacity(1 << 20, file);
    let mut found = Vec::new();
    // A run of equal chunks (zeros, above all) is fetched once: on object storage each fetch is
    // a request.
    let mut expected: Option<(dedup_store::Id, Vec<u8>)> = None;
    for chunk in chunks {
        if expected.as_ref().is_none_or(|(id, _)| id != chunk) {
            let bytes = repo.read_blob(index, chunk, dedup_store::blob::BlobKind::Data)?;
            expected = Some((*chunk, bytes));
        }
        let expected = &expected.as_ref().expect("just read").1;
        found.resize(expected.len(), 0);
        if file.read_exact(&mut found).is_err() || found != *expected {
            return Ok(false);
        }
    }
    Ok(file.read(&mut [0u8; 1]).is_ok_and(|n| n == 0))
}
