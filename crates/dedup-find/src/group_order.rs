//! The documented order of a report's groups (docs/report-format.md): by size descending, then
//! by their first path. The finder sorts the groups it builds; a report read back is already in
//! this order, so the order lives here and not with the report model.

use std::os::unix::ffi::OsStrExt;

use dedup_report::Group;
use rayon::prelude::*;

/// Sort groups in the documented order: by size descending, then by their first path.
pub(crate) fn sort_groups(groups: &mut [Group]) {
    fn key(g: &Group) -> (std::cmp::Reverse<u64>, Option<&[u8]>) {
        (std::cmp::Reverse(g.size), g.files.first().map(|f| f.path.as_os_str().as_bytes()))
    }
    if groups.len() < crate::PARALLEL_FROM {
        groups.sort_by(|a, b| key(a).cmp(&key(b)));
    } else {
        groups.par_sort_by(|a, b| key(a).cmp(&key(b)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dedup_report::ReportFile;

    #[test]
    fn sorting_is_by_size_then_path() {
        let f =
            |p: &str| ReportFile { path: p.into(), dev: 0, ino: 0, mtime_ns: 0, ctime_ns: None };
        let mut groups = vec![
            Group { size: 1, files: vec![f("z"), f("y")], cached: false },
            Group { size: 5, files: vec![f("b"), f("a")], cached: false },
            Group { size: 1, files: vec![f("c"), f("d")], cached: false },
        ];
        sort_groups(&mut groups);
        let order: Vec<_> = groups.iter().map(|g| (g.size, g.files[0].path.clone())).collect();
        assert_eq!(order, [(5, "b".into()), (1, "c".into()), (1, "z".into())]);
    }

    #[test]
    fn few_and_many_groups_sort_the_same_way() {
        // Fewer than PARALLEL_FROM groups sort on the calling thread, more on rayon's pool.
        for count in [crate::PARALLEL_FROM - 1, crate::PARALLEL_FROM * 3] {
            let mut groups: Vec<Group> = (0..count)
                .map(|i| {
                    // Sizes repeat so that the path decides between many groups; scrambled so
                    // that the input is in no useful order.
                    let scrambled = (i * 7919) % count;
                    let file = ReportFile {
                        path: format!("p{scrambled:05}").into(),
                        dev: 0,
                        ino: 0,
                        mtime_ns: 0,
                        ctime_ns: None,
                    };
                    Group { size: (scrambled % 13) as u64, files: vec![file], cached: false }
                })
                .collect();
            sort_groups(&mut groups);
            let keys: Vec<_> =
                groups.iter().map(|g| (std::cmp::Reverse(g.size), &g.files[0].path)).collect();
            assert!(keys.is_sorted(), "{count} groups out of order");
        }
    }
}
