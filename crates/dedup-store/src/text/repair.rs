//! What `repair index` and `repair snapshots` say: each damaged, unread or salvaged pack with
//! what became of it, each snapshot rewritten or left alone, and the totals.

use super::Line;
use crate::commands::{IndexRepair, SnapshotsRepair};

/// The lines of `repair index`.
pub fn index_repair_lines(outcome: &IndexRepair) -> Vec<Line> {
    let mut lines = Vec::new();
    for damaged in &outcome.packs_damaged {
        lines.push(Line::Problem(format!("{damaged} (left in place, not indexed)")));
    }
    for unread in &outcome.packs_unread {
        lines.push(Line::Problem(format!(
            "{unread} (left in place; what the old index said it holds stays indexed: run \
             `dedup store repair index` again once it reads)"
        )));
    }
    for pack in &outcome.packs_salvaged {
        let fate = if pack.deleted {
            "the pack is deleted"
        } else {
            "the pack is left in place, not indexed: no trailer or index file proves which blobs \
             it holds, so blobs of it may still be found"
        };
        lines.push(Line::Problem(format!(
            "{}: damaged: {}: {} blob(s) copied into new packs, {} already in other packs, {} \
             lost (they do not authenticate); {fate}",
            pack.name, pack.damage, pack.blobs_saved, pack.blobs_elsewhere, pack.blobs_lost
        )));
    }
    if outcome.packs_salvaged.iter().any(|p| p.blobs_lost > 0) {
        lines.push(Line::Info(
            "some blobs are lost: `dedup store repair snapshots` writes snapshots without the \
             files that held them, and the next backup stores them again"
                .into(),
        ));
    }
    lines.push(Line::Info(format!(
        "indexed {} pack(s) from their trailers, replacing {} index file(s)",
        outcome.packs_indexed, outcome.index_files_replaced
    )));
    lines
}

/// Whether `repair index` left the repository whole: every pack read, indexed or salvaged
/// without loss.
pub fn index_repair_whole(outcome: &IndexRepair) -> bool {
    let salvaged = outcome.packs_salvaged.iter().all(|p| p.blobs_lost == 0 && p.deleted);
    outcome.packs_damaged.is_empty() && outcome.packs_unread.is_empty() && salvaged
}

/// The lines of `repair snapshots` (`forget`: unreadable snapshots were removed).
pub fn snapshots_repair_lines(outcome: &SnapshotsRepair, forget: bool) -> Vec<Line> {
    let mut lines = Vec::new();
    let fate = if forget { "removed" } else { "kept" };
    for fix in &outcome.rewritten {
        lines.push(Line::Answer(format!(
            "snapshot {}: repaired copy {} written (original {fate}); left out:",
            fix.old.short(8),
            fix.new.short(8)
        )));
        lines.extend(fix.dropped.iter().map(|line| Line::Answer(format!("  {line}"))));
    }
    for (id, why) in &outcome.unreadable {
        lines.push(if forget {
            Line::Answer(format!("snapshot {}: does not read ({why}); removed", id.short(8)))
        } else {
            Line::Problem(format!(
                "snapshot {}: does not read ({why}); nothing in it can be recovered: --forget \
                 removes it",
                id.short(8)
            ))
        });
    }
    for (id, why) in &outcome.left_alone {
        lines.push(Line::Problem(format!(
            "snapshot {}: could not be read ({why}); left alone",
            id.short(8)
        )));
    }
    let nothing = outcome.rewritten.is_empty() && outcome.unreadable.is_empty();
    if nothing && outcome.left_alone.is_empty() {
        lines.push(Line::Info("no snapshot needs repair".into()));
    }
    lines
}

/// Whether `repair snapshots` left nothing unrepaired.
pub fn snapshots_repair_whole(outcome: &SnapshotsRepair, forget: bool) -> bool {
    (forget || outcome.unreadable.is_empty()) && outcome.left_alone.is_empty()
}
