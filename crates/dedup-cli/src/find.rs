//! `dedup find`: settings from arguments, the scan, the report in the chosen format, and the
//! summary line.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result};
use dedup_core::Progress;
use dedup_find::{
    find_run, Analysis, CacheUse, FindOptions, Replication, Run, Selection, WholeRead, PHASES,
};
use dedup_report::{write_csv, write_dir_summary, write_json, write_text, Report, TextStyle};
use dedup_scan::io::{Concurrency, DeviceChoice};
use dedup_scan::WalkOptions;
use indicatif::{HumanBytes, HumanCount};

use crate::args::{FindArgs, Format, SelectArgs};
use crate::messages::{quote_path, Messages};
use crate::progress::Display;

/// Run the finder; `Ok(true)` when the report is complete.
pub fn run(args: FindArgs) -> Result<bool> {
    let options = options(&args)?;
    let roots = if args.paths.is_empty() { vec![PathBuf::from(".")] } else { args.paths.clone() };
    // Open the output first: a typo in -o should fail before a long scan, not after it.
    let mut out: Box<dyn Write> = match &args.output {
        Some(path) => Box::new(BufWriter::new(
            File::create(path).with_context(|| format!("cannot write {}", quote_path(path)))?,
        )),
        None => Box::new(BufWriter::with_capacity(1 << 16, io::stdout().lock())),
    };

    let progress = Arc::new(Progress::new(PHASES));
    let display = Display::start(progress.clone(), args.quiet);
    let messages = Messages { verbose: args.verbose, bar: display.as_ref().map(Display::bar) };
    let started = Instant::now();
    let Run { report, walk_io, read_io, whole_reads, funnel, cache } =
        find_run(&roots, &options, &messages, &progress);
    if let Some(display) = display {
        display.finish();
    }

    if args.verbose {
        let stages: Vec<String> = progress
            .phase_durations()
            .iter()
            .map(|(phase, took)| format!("{} {:.3} s", phase.name, took.as_secs_f64()))
            .collect();
        messages.line(&format!("dedup: stages: {}", stages.join(", ")));
        messages.line(&format!(
            "dedup: files: {} selected, {} share a size, {} left after samples, {} in groups",
            HumanCount(funnel.files),
            HumanCount(funnel.same_size),
            HumanCount(funnel.after_samples),
            HumanCount(funnel.grouped),
        ));
        if let Some(cache) = &cache {
            messages.line(&cache_line(cache));
        }
        for (what, choices) in [("listing", &walk_io), ("reading", &read_io)] {
            for choice in choices {
                messages.line(&format!("dedup: {what}: {}", describe_choice(choice)));
            }
        }
        for choice in &whole_reads {
            messages.line(&format!("dedup: samples: {}", describe_whole_read(choice)));
        }
    }
    write_report(&report, &args, &mut out)?;
    drop(out);
    if !args.quiet {
        eprintln!("{}", summary_line(&report, started.elapsed().as_secs_f64()));
        if let Some(cache) = cache.filter(|c| c.cached_groups > 0) {
            eprintln!(
                "dedup: {} rest on cached digests (--verify compares them byte for byte)",
                count(cache.cached_groups, "group", "groups")
            );
        }
    }
    Ok(report.summary.errors == 0)
}

fn options(args: &FindArgs) -> Result<FindOptions> {
    if args.print0 && args.format != Format::Text {
        anyhow::bail!("--print0 applies to the text format only");
    }
    if args.summary && (args.format == Format::Csv || args.print0) {
        anyhow::bail!("--summary is printed as text or JSON only");
    }
    let mut options = find_options(&args.select)?;
    let replication = if args.unique {
        Replication { over: None, under: Some(2) }
    } else {
        Replication { over: args.rf_over, under: args.rf_under }
    };
    options.analysis = Analysis { dirs: args.dirs, replication, dir_summary: args.summary };
    Ok(options)
}

/// Scan settings from the selection options (shared with the actions).
pub fn find_options(args: &SelectArgs) -> Result<FindOptions> {
    let mut walk = WalkOptions::default().with_excludes(&args.exclude)?;
    walk.max_depth = args.max_depth;
    walk.one_file_system = args.one_file_system;
    walk.follow_links = args.follow_links;
    let selection = Selection {
        min_size: args.min_size.unwrap_or(0),
        max_size: args.max_size.unwrap_or(u64::MAX),
        include_empty: args.include_empty,
        walk,
    };
    if selection.min_size > selection.max_size {
        anyhow::bail!("--min-size is larger than --max-size: no file could match");
    }
    let concurrency = match args.io_threads {
        Some(n) => Concurrency::Fixed(usize::from(n)),
        None => Concurrency::default(),
    };
    Ok(FindOptions {
        selection,
        hardlinks: args.hardlinks,
        concurrency,
        tuning: crate::tuning::from_env()?,
        analysis: Analysis::default(),
        cache: crate::config::cache_options(args)?,
    })
}

/// For `-v`: what the cache did.
pub fn cache_line(cache: &CacheUse) -> String {
    format!(
        "dedup: cache: {} of {} candidate files had a valid entry, {} needed no read; {} rest on \
         cached digests; {} after the run",
        HumanCount(cache.hits),
        HumanCount(cache.lookups),
        HumanCount(cache.unread),
        count(cache.cached_groups, "group", "groups"),
        count(cache.entries, "entry", "entries"),
    )
}

fn write_report(report: &Report, args: &FindArgs, out: &mut dyn Write) -> Result<()> {
    let written = match args.format {
        Format::Text if args.summary => write_dir_summary(report, out),
        Format::Text if args.print0 => write_text(report, TextStyle::Nul, out),
        Format::Text => write_text(report, TextStyle::Lines, out),
        Format::Json => write_json(report, out),
        Format::Csv => write_csv(report, out),
    };
    match &args.output {
        Some(path) => written.with_context(|| format!("cannot write {}", quote_path(path))),
        None => written.context("cannot write to standard output"),
    }
}

fn summary_line(report: &Report, seconds: f64) -> String {
    let s = &report.summary;
    let errors = match s.errors {
        0 => String::from("no errors"),
        n => format!("{}: the report may be incomplete", count(n, "error", "errors")),
    };
    let dirs = match &report.dirs {
        Some(dirs) => format!(
            ", {}",
            count(dirs.len() as u64, "duplicated directory", "duplicated directories")
        ),
        None => String::new(),
    };
    format!(
        "dedup: {} scanned in {seconds:.2} s: {} of duplicates, {} ({} redundant){dirs}; {errors}",
        count(s.files_scanned, "file", "files"),
        count(s.groups, "group", "groups"),
        count(s.redundant_files, "redundant file", "redundant files"),
        HumanBytes(s.redundant_bytes),
    )
}

fn count(n: u64, one: &str, many: &str) -> String {
    format!("{} {}", HumanCount(n), if n == 1 { one } else { many })
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
        .map(|(l, sum, n)| format!("{l}: {}/s", HumanBytes((sum / f64::from(*n)) as u64)))
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
            HumanBytes(request)
        ),
        Some(request) => {
            format!("; full reads around the page cache, {} a request", HumanBytes(request))
        }
        None => String::new(),
    };
    let order =
        if choice.physical_order { "; candidates read in the order of the disk" } else { "" };
    format!(
        "{}: a head read every {:.2} ms; same-size files up to {} read whole{direct}{order}",
        device_name(choice.dev),
        choice.per_read.as_secs_f64() * 1000.0,
        HumanBytes(choice.up_to),
    )
}

fn device_name(dev: u64) -> String {
    format!("device {}:{}", rustix::fs::major(dev), rustix::fs::minor(dev))
}

/// True when the error is standard output closing early (`dedup find | head`, `dedup store ls
/// | head`): not a failure.
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    let broken = |e: &io::Error| e.kind() == io::ErrorKind::BrokenPipe;
    err.chain().any(|e| {
        e.downcast_ref::<io::Error>().is_some_and(broken)
            || matches!(e.downcast_ref::<dedup_store::Error>(),
                Some(dedup_store::Error::Io { cause, .. }) if broken(cause))
    })
}
