//! What `dedup find -v` adds after the scan (dedup-find words it): how each stage's concurrency
//! and read sizes were chosen per device, and what the cache did.

use dedup_core::Progress;
use dedup_find::Run;

use crate::messages::Messages;

/// Print the `-v` lines: each stage's time, how many files each stage left, what the cache
/// did, and each device's choices.
pub fn show(messages: &Messages, progress: &Progress, run: &Run) {
    for line in dedup_find::verbose_lines(progress, run) {
        messages.line(&format!("dedup: {line}"));
    }
}
