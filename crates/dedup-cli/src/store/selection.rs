//! The snapshot selection of `find`, `tag`, `rewrite` and `copy`, from its options.

use dedup_store::commands::Selection;
use dedup_store::repo::SnapshotFilter;

use super::history_args::{SelectArgs, SnapshotFilterArgs};

/// Tag options as lists: `--tag a,b --tag c` is [[a, b], [c]].
fn tag_lists(tags: &[String]) -> Vec<Vec<String>> {
    tags.iter().map(|list| split_commas(std::slice::from_ref(list))).collect()
}

/// Every value of repeatable options that each may hold a comma-separated list, empty items
/// left out.
pub fn split_commas(values: &[String]) -> Vec<String> {
    values.iter().flat_map(|v| v.split(',')).filter(|t| !t.is_empty()).map(str::to_string).collect()
}

/// The library's selection for these options.
pub fn selection(args: &SelectArgs) -> Selection {
    selection_of(&args.snapshots, &args.filter)
}

/// The library's selection of the snapshots named, or else of those `filter` accepts.
pub fn selection_of(snapshots: &[String], filter: &SnapshotFilterArgs) -> Selection {
    Selection {
        snapshots: snapshots.to_vec(),
        filter: SnapshotFilter {
            host: filter.host.clone(),
            paths: filter.paths.iter().map(|p| super::absolute_bytes(p)).collect(),
        },
        tags: tag_lists(&filter.tags),
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
}
