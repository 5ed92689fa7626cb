//! What `dedup find -v` adds after the scan, as lines: each stage's time, how many files each
//! stage left, what the cache did, and how each device's concurrency and read sizes were chosen,
//! so a user can see why a run took the time it did. The binary prints them.

use dedup_core::text::{count, Bytes, Count};
use dedup_core::Progress;
use dedup_scan::io::device_name;

use crate::{CacheUse, Run, WholeRead};

/// The `-v` lines of a finished run whose stages `progress` timed.
pub fn verbose_lines(progress: &Progress, run: &Run) -> Vec<String> {
    let stages: Vec<String> = progress
        .phase_durations()
        .iter()
        .map(|(phase, took)| format!("{} {:.3} s", phase.name, took.as_secs_f64()))
        .collect();
    let mut lines = vec![
        format!("stages: {}", stages.join(", ")),
        format!(
            "files: {} selected, {} share a size, {} left after samples, {} in groups",
            Count(run.funnel.files),
            Count(run.funnel.same_size),
            Count(run.funnel.after_samples),
            Count(run.funnel.grouped),
        ),
    ];
    lines.extend(run.cache.as_ref().map(CacheUse::line));
    for (what, choices) in [("listing", &run.walk_io), ("reading", &run.read_io)] {
        lines.extend(choices.iter().map(|choice| format!("{what}: {}", choice.line())));
    }
    lines.extend(run.whole_reads.iter().map(|choice| format!("samples: {}", choice.line())));
    lines
}

impl CacheUse {
    /// What the cache did.
    pub fn line(&self) -> String {
        format!(
            "cache: {} of {} candidate files had a valid entry, {} needed no read; {} rest on \
             cached digests; {} after the run",
            Count(self.hits),
            Count(self.lookups),
            Count(self.unread),
            count(self.cached_groups, "group", "groups"),
            count(self.entries, "entry", "entries"),
        )
    }
}

impl WholeRead {
    /// How large a file the device reads whole instead of sampling it, whether it reads around
    /// the page cache, and why.
    pub fn line(&self) -> String {
        let direct = match self.direct {
            Some(request) if self.direct_refused => format!(
                "; full reads through the page cache (direct reads of {} a request got no huge \
                 pages)",
                Bytes(request)
            ),
            Some(request) => {
                format!("; full reads around the page cache, {} a request", Bytes(request))
            }
            None => String::new(),
        };
        let order =
            if self.physical_order { "; candidates read in the order of the disk" } else { "" };
        format!(
            "{}: a head read every {:.2} ms; same-size files up to {} read whole{direct}{order}",
            device_name(self.dev),
            self.per_read.as_secs_f64() * 1000.0,
            Bytes(self.up_to),
        )
    }
}
