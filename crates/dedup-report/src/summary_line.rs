//! The line `dedup find` ends with on stderr: how many files were scanned and in what time, the
//! groups, redundant files and bytes found, and whether errors may have left files out. The
//! binary prints it; this crate only formats.

use dedup_core::text::{count, Bytes};

use crate::model::Report;

impl Report {
    /// The summary line of a scan that took `seconds`.
    pub fn summary_line(&self, seconds: f64) -> String {
        let s = &self.summary;
        let errors = match s.errors {
            0 => String::from("no errors"),
            n => format!("{}: the report may be incomplete", count(n, "error", "errors")),
        };
        let dirs = match &self.dirs {
            Some(dirs) => format!(
                ", {}",
                count(dirs.len() as u64, "duplicated directory", "duplicated directories")
            ),
            None => String::new(),
        };
        format!(
            "dedup: {} scanned in {seconds:.2} s: {} of duplicates, {} ({} redundant){dirs}; \
             {errors}",
            count(s.files_scanned, "file", "files"),
            count(s.groups, "group", "groups"),
            count(s.redundant_files, "redundant file", "redundant files"),
            Bytes(s.redundant_bytes),
        )
    }
}

#[cfg(test)]
mod tests {
    use crate::model::{DirGroup, DirKind, Report, Summary};

    fn report(summary: Summary, dirs: Option<usize>) -> Report {
        Report {
            version: crate::REPORT_VERSION,
            tool: String::from("dedup test"),
            roots: Vec::new(),
            groups: Vec::new(),
            summary,
            dirs: dirs.map(|n| {
                let dir =
                    DirGroup { kind: DirKind::Identical, file_count: 0, size: 0, dirs: Vec::new() };
                vec![dir; n]
            }),
            unique: None,
            dir_summary: None,
        }
    }

    #[test]
    fn the_summary_line_counts_in_words_that_agree_and_warns_of_errors() {
        let one = Summary { files_scanned: 1, groups: 1, redundant_files: 1, ..Summary::default() };
        assert_eq!(
            report(one, None).summary_line(0.5),
            "dedup: 1 file scanned in 0.50 s: 1 group of duplicates, 1 redundant file (0 B \
             redundant); no errors"
        );
        let many = Summary {
            files_scanned: 12_345,
            groups: 2,
            redundant_files: 3,
            redundant_bytes: 1536,
            errors: 2,
        };
        assert_eq!(
            report(many, Some(1)).summary_line(1.0),
            "dedup: 12,345 files scanned in 1.00 s: 2 groups of duplicates, 3 redundant files \
             (1.50 KiB redundant), 1 duplicated directory; 2 errors: the report may be incomplete"
        );
    }
}
