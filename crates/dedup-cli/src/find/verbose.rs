//! What `dedup find -v` adds after the scan: how each stage's concurrency and read sizes were
//! chosen per device, and what the cache did, so a user can see why a run took the time it did.

use dedup_core::text::{Bytes, Count};
use dedup_core::Progress;
use dedup_find::{CacheUse, Run, WholeRead};
use dedup_scan::io::DeviceChoice;

use crate::messages::{count, Messages};

/// Print the `-v` lines: each stage's time, how many files each stage left, what the cache
/// did, and each device's choices.
pub fn show(messages: &Messages, progress: &Progress, run: &Run) {
    let stages: Vec<String> = progress
        .phase_durations()
        .iter()
        .map(|(phase, took)| format!("{} {:.3} s", phase.name, took.as_secs_f64()))
        .collect();
    messages.line(&format!("dedup: stages: {}", stages.join(", ")));
    messages.line(&format!(
        "dedup: files: {} selected, {} share a size, {} left after samples, {} in groups",
        Count(run.funnel.files),
        Count(run.funnel.same_size),
        Count(run.funnel.after_samples),
        Count(run.funnel.grouped),
    ));
    if let Some(cache) = &run.cache {
        messages.line(&cache_line(cache));
    }
    for (what, choices) in [("listing", &run.walk_io), ("reading", &run.read_io)] {
        for choice in choices {
            messages.line(&format!("dedup: {what}: {}", describe_choice(choice)));
        }
    }
    for choice in &run.whole_reads {
        messages.line(&format!("dedup: samples: {}", describe_whole_read(choice)));
    }
}

/// For `-v`: what the cache did.
fn cache_line(cache: &CacheUse) -> String {
    format!(
        "dedup: cache: {} of {} candidate files had a valid entry, {} needed no read; {} rest on \
         cached digests; {} after the run",
        Count(cache.hits),
        Count(cache.lookups),
        Count(cache.unread),
        count(cache.cached_groups, "group", "groups"),
        count(cache.entries, "entry", "entries"),
    )
}

/// One line on what the scheduler chose for a device and the measurements behind it: the mean
/// throughput measured at each level tried.
fn describe_choice(choice: &DeviceChoice) -> String {
    let dev = device_name(choice.dev);
    let mut levels: Vec<(usize, f64, u32)> = Vec::new();
    for s in &choice.history {
        match levels.iter_mut().find(|(l, _, _)| *l == s.level) {
            Some((_, sum, n)) => {
                *sum += s.rate;
                *n += 1;
            }
            None => levels.push((s.level, s.rate, 1)),
        }
    }
    levels.sort_by_key(|(l, _, _)| *l);
    let trail: Vec<String> = levels
        .iter()
        .map(|(l, sum, n)| format!("{l}: {}/s", Bytes((sum / f64::from(*n)) as u64)))
        .collect();
    let why = match (choice.measured, trail.is_empty()) {
        (_, true) => String::from("too little work to measure, or fixed by --io-threads"),
        (true, false) => format!("chosen by measurement ({})", trail.join(", ")),
        (false, false) => format!("still climbing when the stage ended ({})", trail.join(", ")),
    };
    let from = match choice.carried_over {
        Some(level) => format!("; started at {level}, the level listing reached"),
        None => String::new(),
    };
    format!("{dev}: {} at once, {why}{from}", choice.level)
}

/// One line on how large a file a device reads whole instead of sampling it, whether it reads
/// around the page cache, and why.
fn describe_whole_read(choice: &WholeRead) -> String {
    let direct = match choice.direct {
        Some(request) if choice.direct_refused => format!(
            "; full reads through the page cache (direct reads of {} a request got no huge pages)",
            Bytes(request)
        ),
        Some(request) => {
            format!("; full reads around the page cache, {} a request", Bytes(request))
        }
        None => String::new(),
    };
    let order =
        if choice.physical_order { "; candidates read in the order of the disk" } else { "" };
    format!(
        "{}: a head read every {:.2} ms; same-size files up to {} read whole{direct}{order}",
        device_name(choice.dev),
        choice.per_read.as_secs_f64() * 1000.0,
        Bytes(choice.up_to),
    )
}

fn device_name(dev: u64) -> String {
    format!("device {}:{}", rustix::fs::major(dev), rustix::fs::minor(dev))
}
