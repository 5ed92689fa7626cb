//! What `tag`, `rewrite` and `copy` say: each snapshot changed, what was left as it was, and
//! the snapshots that could not be read or removed.

use super::{quote, Line};
use crate::commands::{CopyReport, RewriteOptions, RewriteReport, TagReport};
use crate::error::Error;

/// The snapshot files that could not be read, each with what became of it (`left as it is`).
pub fn unreadable_lines(unreadable: &[Error], fate: &str) -> Vec<Line> {
    unreadable.iter().map(|err| Line::Problem(format!("error: {err} ({fate})"))).collect()
}

/// What `tag` did: old files that could not be removed, each snapshot retagged, the count.
pub fn tag_lines(report: &TagReport) -> Vec<Line> {
    let mut lines: Vec<Line> = report
        .changed
        .iter()
        .filter_map(|done| {
            let err = done.old_kept.as_ref()?;
            Some(Line::Problem(format!(
                "error: snapshot {} (retagged as {}) could not be removed: {err}; run the same \
                 tag again to remove it",
                done.old.short(8),
                done.new.short(8)
            )))
        })
        .collect();
    for done in &report.changed {
        let tags: Vec<String> = done.tags.iter().map(|t| quote(t.as_bytes())).collect();
        lines.push(Line::Info(format!(
            "snapshot {} is now {} [{}]",
            done.old.short(8),
            done.new.short(8),
            tags.join(",")
        )));
    }
    lines.push(Line::Info(format!(
        "tags changed on {} snapshot(s); {} already as asked",
        report.changed.len(),
        report.unchanged
    )));
    lines
}

/// What `rewrite` did with `options`: for each snapshot what it left out and what it became,
/// then the count and what to run next.
pub fn rewrite_lines(report: &RewriteReport, options: &RewriteOptions) -> Vec<Line> {
    let mut lines = Vec::new();
    for done in &report.rewritten {
        let old = done.old.short(8);
        if let Some(err) = &done.old_kept {
            lines.push(Line::Problem(format!(
                "error: snapshot {old} could not be removed after its rewrite: {err}"
            )));
        }
        for path in &done.excluded {
            lines.push(Line::Info(format!("snapshot {old}: leaves out {}", quote(path))));
        }
        if let Some(new) = done.new {
            let gone = if done.forgotten { ", the original removed" } else { "" };
            lines.push(Line::Info(format!("snapshot {old} rewritten as {}{gone}", new.short(8))));
        }
    }
    let verb = if options.dry_run { "would rewrite" } else { "rewrote" };
    lines.push(Line::Info(format!(
        "{verb} {} snapshot(s); {} held nothing to leave out",
        report.rewritten.len(),
        report.unchanged
    )));
    if !options.dry_run && !report.rewritten.is_empty() {
        let next = if options.forget {
            "run `dedup store prune --max-unused 0` to delete the data left out from every pack"
        } else {
            "the originals still hold what was left out: `dedup store forget` them, then \
             `dedup store prune --max-unused 0`"
        };
        lines.push(Line::Info(next.to_string()));
    }
    lines
}

/// What `copy` did: each snapshot found already copied, each copied, and the count.
pub fn copy_lines(report: &CopyReport) -> Vec<Line> {
    let mut lines: Vec<Line> = report
        .skipped
        .iter()
        .map(|s| {
            let (source, copy) = (s.source.short(8), s.copy.short(8));
            Line::Info(format!("snapshot {source} is already copied as {copy}"))
        })
        .collect();
    for copied in &report.copied {
        let (source, copy) = (copied.source.short(8), copied.copy.short(8));
        lines.push(Line::Info(format!("snapshot {source} copied as {copy}")));
    }
    let how = if report.rechunked {
        "files cut again with this repository's chunker"
    } else {
        "chunks carried over as they are"
    };
    lines.push(Line::Info(format!(
        "copied {} snapshot(s), {} already there; {how}; {} bytes added",
        report.copied.len(),
        report.skipped.len(),
        report.bytes_added
    )));
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::{Copied, Retagged, Rewritten};
    use crate::id::Id;

    fn kept_error() -> Error {
        Error::Invalid("refused".into())
    }

    #[test]
    fn tag_names_each_snapshot_retagged_and_the_old_file_it_could_not_remove() {
        let report = TagReport {
            changed: vec![Retagged {
                old: Id([1; 32]),
                new: Id([2; 32]),
                tags: vec!["a\nb".into(), "c".into()],
                old_kept: Some(kept_error()),
            }],
            unchanged: 4,
        };
        let lines = tag_lines(&report);
        assert!(matches!(&lines[0], Line::Problem(p) if p.starts_with("error: snapshot 01010101 \
            (retagged as 02020202) could not be removed: refused;")));
        assert_eq!(lines[1], Line::Info("snapshot 01010101 is now 02020202 [\"a\\nb\",c]".into()));
        assert_eq!(
            lines[2],
            Line::Info("tags changed on 1 snapshot(s); 4 already as asked".into())
        );
    }

    #[test]
    fn rewrite_says_what_was_left_out_and_what_to_run_next() {
        let report = RewriteReport {
            rewritten: vec![Rewritten {
                old: Id([1; 32]),
                new: Some(Id([2; 32])),
                excluded: vec![b"/x".to_vec()],
                forgotten: true,
                old_kept: None,
            }],
            unchanged: 0,
        };
        let options = RewriteOptions {
            excludes: crate::commands::Patterns::new(&[], false).unwrap(),
            forget: true,
            dry_run: false,
            host: String::new(),
        };
        let lines = rewrite_lines(&report, &options);
        assert_eq!(lines[0], Line::Info("snapshot 01010101: leaves out /x".into()));
        assert_eq!(
            lines[1],
            Line::Info("snapshot 01010101 rewritten as 02020202, the original removed".into())
        );
        assert!(matches!(&lines[3], Line::Info(l) if l.starts_with("run `dedup store prune")));
        let dry = RewriteOptions { dry_run: true, ..options };
        assert_eq!(rewrite_lines(&report, &dry).len(), 3);
    }

    #[test]
    fn copy_says_how_the_chunks_came_over() {
        let pair = Copied { source: Id([1; 32]), copy: Id([2; 32]) };
        let report = CopyReport {
            copied: vec![pair.clone()],
            skipped: vec![pair],
            rechunked: false,
            bytes_added: 7,
        };
        let lines = copy_lines(&report);
        assert_eq!(lines[0], Line::Info("snapshot 01010101 is already copied as 02020202".into()));
        assert_eq!(
            lines[2],
            Line::Info(
                "copied 1 snapshot(s), 1 already there; chunks carried over as they are; 7 \
                 bytes added"
                    .into()
            )
        );
    }
}
