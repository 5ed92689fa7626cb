//! What `dedup cache stats` says: entries, size on disk, and the last run's hit rate. The
//! binary prints the lines.

use dedup_core::text::{Bytes, Count};

use crate::Stats;

impl Stats {
    /// The figures, one per line, after the line naming the cache (`shown`, the directory).
    pub fn lines(&self, shown: &str) -> Vec<String> {
        let mut lines = vec![
            format!("cache: {shown}"),
            format!("entries: {}", Count(self.entries)),
            format!("size on disk: {} ({} bytes)", Bytes(self.bytes_on_disk), self.bytes_on_disk),
        ];
        if self.entries > 0 {
            let per_entry = self.bytes_on_disk as f64 / self.entries as f64;
            lines.push(format!("bytes per entry: {per_entry:.1}"));
        }
        let last = &self.last;
        lines.push(match last.lookups {
            0 => "last run: no candidate files looked up".to_string(),
            n => format!(
                "last run: {} of {} candidate files had a valid entry ({:.1} % hit rate)",
                Count(last.hits),
                Count(n),
                100.0 * last.hits as f64 / n as f64
            ),
        });
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::LastRun;

    #[test]
    fn an_empty_cache_has_no_per_entry_figure_and_no_hit_rate() {
        let lines = Stats::default().lines("/c");
        assert_eq!(lines.len(), 4, "{lines:?}");
        assert_eq!(lines[3], "last run: no candidate files looked up");
        let used = Stats {
            entries: 4,
            bytes_on_disk: 1000,
            last: LastRun { lookups: 8, hits: 2, unix_secs: 0 },
        };
        let lines = used.lines("/c");
        assert_eq!(lines[3], "bytes per entry: 250.0");
        assert!(lines[4].ends_with("(25.0 % hit rate)"), "{lines:?}");
    }
}
