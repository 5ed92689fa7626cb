//! Which files the finder keeps of what the walk finds: size bounds and empty files, on top of
//! the walk's own options (exclusions, depth, file-system boundaries, links).

use dedup_scan::WalkOptions;

/// The user's choice of files.
#[derive(Debug, Clone)]
pub struct Selection {
    /// Smallest size kept, in bytes.
    pub min_size: u64,
    /// Largest size kept, in bytes.
    pub max_size: u64,
    /// Keep empty files (they are never duplicates otherwise).
    pub include_empty: bool,
    /// Where the walk goes.
    pub walk: WalkOptions,
}

impl Default for Selection {
    fn default() -> Self {
        Selection {
            min_size: 0,
            max_size: u64::MAX,
            include_empty: false,
            walk: WalkOptions::default(),
        }
    }
}

impl Selection {
    /// True when a regular file of this size is kept.
    pub fn size_wanted(&self, size: u64) -> bool {
        (size > 0 || self.include_empty) && size >= self.min_size && size <= self.max_size
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_files_only_on_request() {
        let s = Selection::default();
        assert!(!s.size_wanted(0));
        assert!(s.size_wanted(1));
        let s = Selection { include_empty: true, ..Selection::default() };
        assert!(s.size_wanted(0));
    }

    #[test]
    fn size_bounds_are_inclusive() {
        let s = Selection { min_size: 10, max_size: 20, ..Selection::default() };
        assert!(!s.size_wanted(9));
        assert!(s.size_wanted(10));
        assert!(s.size_wanted(20));
        assert!(!s.size_wanted(21));
    }
}
