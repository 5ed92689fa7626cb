//! What `dedup find` says on the terminal once the report is written: the summary line, and how
//! many groups rest on cached digests rather than on a comparison of bytes made now.

use dedup_core::text::count;

use crate::Run;

impl Run {
    /// The closing lines of a run that took `seconds`.
    pub fn closing_lines(&self, seconds: f64) -> Vec<String> {
        let mut lines = vec![self.report.summary_line(seconds)];
        if let Some(cache) = self.cache.filter(|c| c.cached_groups > 0) {
            lines.push(format!(
                "dedup: {} rest on cached digests (--verify compares them byte for byte)",
                count(cache.cached_groups, "group", "groups")
            ));
        }
        lines
    }
}
