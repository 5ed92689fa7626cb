//! `dedup find`: settings from arguments, the scan, the report in the chosen format, and the
//! summary line.

pub mod args;
mod verbose;

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result};
use dedup_core::Progress;
use dedup_find::{find_run, Analysis, FindOptions, Replication, Run, Selection, PHASES};
use dedup_report::{write_csv, write_dir_summary, write_json, write_text, Report, TextStyle};
use dedup_scan::io::Concurrency;
use dedup_scan::WalkOptions;

use self::args::{FindArgs, Format, SelectArgs};
use crate::messages::{count, quote_path, Messages};
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
    let run = find_run(&roots, &options, &messages, &progress);
    if let Some(display) = display {
        display.finish();
    }
    if args.verbose {
        verbose::show(&messages, &progress, &run);
    }
    let Run { report, cache, .. } = run;
    write_report(&report, &args, &mut out)?;
    drop(out);
    if !args.quiet {
        eprintln!("{}", report.summary_line(started.elapsed().as_secs_f64()));
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
