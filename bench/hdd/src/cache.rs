//! The drive's read cache: the byte ranges that last passed under the head, up to a capacity,
//! the least recently used dropped first.
//!
//! A drive keeps in its buffer what it read for a request and also what passed under the head
//! while it waited for the first sector (look-behind), so that a later read of those bytes is
//! answered from the buffer without moving anything. Writes go to the platter and drop what
//! the cache held of the bytes they replace.

use std::collections::VecDeque;

#[derive(Debug)]
pub struct Cache {
    capacity: u64,
    /// Disjoint ranges `[start, end)`, least recently used first.
    ranges: VecDeque<(u64, u64)>,
    held: u64,
}

impl Cache {
    pub fn new(capacity: u64) -> Self {
        Cache { capacity, ranges: VecDeque::new(), held: 0 }
    }

    /// Whether `[start, end)` is held whole; if so it becomes the most recently used.
    pub fn hit(&mut self, start: u64, end: u64) -> bool {
        let found = self.ranges.iter().position(|&(s, e)| s <= start && end <= e);
        match found {
            Some(i) => {
                if let Some(range) = self.ranges.remove(i) {
                    self.ranges.push_back(range);
                }
                true
            }
            None => false,
        }
    }

    /// Holds `[start, end)` as the most recently used, merged with the ranges it touches.
    pub fn insert(&mut self, start: u64, end: u64) {
        if start >= end || self.capacity == 0 {
            return;
        }
        let (mut start, mut end) = (start, end);
        let mut i = 0;
        while i < self.ranges.len() {
            let (s, e) = self.ranges[i];
            if s <= end && start <= e {
                start = start.min(s);
                end = end.max(e);
                self.held -= e - s;
                self.ranges.remove(i);
            } else {
                i += 1;
            }
        }
        // A range larger than the whole cache keeps its last part, the most recently read.
        start = start.max(end.saturating_sub(self.capacity));
        self.ranges.push_back((start, end));
        self.held += end - start;
        while self.held > self.capacity {
            let Some((s, e)) = self.ranges.pop_front() else {
                break;
            };
            self.held -= e - s;
        }
    }

    /// Drops whatever the cache holds of `[start, end)`.
    pub fn invalidate(&mut self, start: u64, end: u64) {
        let mut kept = VecDeque::with_capacity(self.ranges.len() + 1);
        for &(s, e) in &self.ranges {
            if e <= start || end <= s {
                kept.push_back((s, e));
                continue;
            }
            self.held -= e - s;
            if s < start {
                kept.push_back((s, start));
                self.held += start - s;
            }
            if end < e {
                kept.push_back((end, e));
                self.held += e - end;
            }
        }
        self.ranges = kept;
    }

    #[cfg(test)]
    fn held(&self) -> u64 {
        self.held
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_range_read_is_a_hit_and_its_neighbours_are_not() {
        let mut cache = Cache::new(1 << 20);
        cache.insert(4096, 8192);
        assert!(cache.hit(4096, 8192));
        assert!(cache.hit(5000, 6000));
        assert!(!cache.hit(0, 4096));
        assert!(!cache.hit(8000, 9000), "a range only partly held is a miss");
    }

    #[test]
    fn touching_ranges_merge() {
        let mut cache = Cache::new(1 << 20);
        cache.insert(0, 4096);
        cache.insert(4096, 8192);
        assert!(cache.hit(1000, 7000));
        assert_eq!(cache.held(), 8192);
    }

    #[test]
    fn the_least_recently_used_goes_first() {
        let mut cache = Cache::new(10_000);
        cache.insert(0, 4000);
        cache.insert(100_000, 104_000);
        assert!(cache.hit(0, 4000)); // now the most recent
        cache.insert(200_000, 204_000); // over capacity: drops 100_000..
        assert!(cache.hit(0, 4000));
        assert!(!cache.hit(100_000, 104_000));
        assert!(cache.hit(200_000, 204_000));
        assert!(cache.held() <= 10_000);
    }

    #[test]
    fn a_range_larger_than_the_cache_keeps_its_end() {
        let mut cache = Cache::new(4096);
        cache.insert(0, 1 << 20);
        assert_eq!(cache.held(), 4096);
        assert!(cache.hit((1 << 20) - 4096, 1 << 20));
        assert!(!cache.hit(0, 4096));
    }

    #[test]
    fn a_write_drops_the_bytes_it_replaces() {
        let mut cache = Cache::new(1 << 20);
        cache.insert(0, 12288);
        cache.invalidate(4096, 8192);
        assert!(cache.hit(0, 4096));
        assert!(cache.hit(8192, 12288));
        assert!(!cache.hit(4096, 8192));
        assert_eq!(cache.held(), 8192);
    }

    #[test]
    fn no_capacity_holds_nothing() {
        let mut cache = Cache::new(0);
        cache.insert(0, 4096);
        assert!(!cache.hit(0, 4096));
    }
}
