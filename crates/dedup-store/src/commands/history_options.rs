//! The options of the commands that work on snapshots already written (`find`, `tag`,
//! `rewrite`, `copy`) read into what those commands take, and whether a run of each did all it
//! was asked.

use std::path::PathBuf;

use super::backup_options::{absolute_bytes, list_file_lines};
use super::copy::CopyReport;
use super::rewrite::RewriteReport;
use super::selection::Selection;
use super::tag::{TagChange, TagReport};
use crate::error::{Error, Result};
use crate::repo::{Repository, SnapshotFilter};
use dedup_core::text::quote_path;

/// Every value of repeatable options that each may hold a comma-separated list, empty items
/// left out.
pub fn split_commas(values: &[String]) -> Vec<String> {
    values.iter().flat_map(|v| v.split(',')).filter(|t| !t.is_empty()).map(str::to_string).collect()
}

/// Tag options as lists: `--tag a,b --tag c` is [[a, b], [c]].
fn tag_lists(tags: &[String]) -> Vec<Vec<String>> {
    tags.iter().map(|list| split_commas(std::slice::from_ref(list))).collect()
}

/// The selection of the `snapshots` named, or else of those that `host`, `paths` (made
/// absolute) and `tags` (`--tag` values) accept.
pub fn selection_of(
    snapshots: &[String],
    host: Option<&str>,
    paths: &[PathBuf],
    tags: &[String],
) -> Selection {
    Selection {
        snapshots: snapshots.to_vec(),
        filter: SnapshotFilter {
            host: host.map(str::to_string),
            paths: paths.iter().map(|p| absolute_bytes(p)).collect(),
        },
        tags: tag_lists(tags),
    }
}

/// The change of `--set`, `--add` and `--remove` (each value a comma-separated list); a tag
/// added that holds a control character is refused.
pub fn tag_change(set: &[String], add: &[String], remove: &[String]) -> Result<TagChange> {
    let change = TagChange {
        // `--set ''` is a set of no tags, not no `--set`.
        set: (!set.is_empty()).then(|| split_commas(set)),
        add: split_commas(add),
        remove: split_commas(remove),
    };
    let added = change.add.iter().chain(change.set.iter().flatten());
    if let Some(bad) = added.into_iter().find(|t| t.chars().any(char::is_control)) {
        return Err(Error::Invalid(format!(
            "tag {}: holds a control character",
            quote_path(std::path::Path::new(bad))
        )));
    }
    Ok(change)
}

/// The patterns of `--exclude` and of each `--exclude-file`'s lines (trimmed).
pub fn rewrite_patterns(excludes: &[Vec<u8>], files: &[PathBuf]) -> Result<Vec<Vec<u8>>> {
    let mut patterns = excludes.to_vec();
    for file in files {
        for line in list_file_lines(file)? {
            patterns.push(line.trim_ascii().to_vec());
        }
    }
    Ok(patterns)
}

/// Refuses a copy from a repository into itself.
pub fn check_copy_pair(from: &Repository, to: &Repository) -> Result<()> {
    if from.config().id == to.config().id {
        return Err(Error::Invalid(
            "the source and the destination are the same repository".to_string(),
        ));
    }
    Ok(())
}

impl TagReport {
    /// Whether every snapshot selected was read and every retagged one's old file removed.
    pub fn complete(&self, unreadable: &[Error]) -> bool {
        unreadable.is_empty() && self.changed.iter().all(|done| done.old_kept.is_none())
    }
}

impl RewriteReport {
    /// Whether every snapshot selected was read and every rewritten one's old file removed.
    pub fn complete(&self, unreadable: &[Error]) -> bool {
        unreadable.is_empty() && self.rewritten.iter().all(|done| done.old_kept.is_none())
    }
}

impl CopyReport {
    /// Whether every snapshot selected was read.
    pub fn complete(&self, unreadable: &[Error]) -> bool {
        unreadable.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commas_split_lists_and_empty_items_go() {
        let given = ["a,b".to_string(), String::new(), "c,".to_string()];
        assert_eq!(split_commas(&given), ["a", "b", "c"]);
        assert_eq!(tag_lists(&["a,b".into(), "c".into()]), [vec!["a", "b"], vec!["c"]]);
    }

    #[test]
    fn an_empty_set_is_a_set_of_no_tags_and_control_characters_are_refused() {
        let change = tag_change(&[String::new()], &["a".into()], &[]).unwrap();
        assert_eq!(change.set, Some(Vec::new()));
        let bad = tag_change(&[], &["x\ny".into()], &[]).unwrap_err().to_string();
        assert_eq!(bad, "tag \"x\\ny\": holds a control character");
    }
}
