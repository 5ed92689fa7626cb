//! `dedup find`: settings from arguments, the scan, the report in the chosen format, and the
//! closing lines (dedup-find and dedup-report word them).

pub mod args;

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result};
use dedup_cache::settings::{scan_cache_dir, CacheFlags};
use dedup_core::Progress;
use dedup_find::{find_run, verbose_lines, Analysis, CacheOptions, FindOptions, Replication};
use dedup_find::{Run, Selection, Tuning, PHASES};
use dedup_report::{ReportFormat, TextStyle};
use dedup_scan::io::Concurrency;
use dedup_scan::WalkOptions;

use self::args::{FindArgs, Format, SelectArgs};
use crate::messages::{quote_path, Messages};
use crate::progress::Display;

/// Run the finder; `Ok(true)` when the report is complete.
pub fn run(args: FindArgs) -> Result<bool> {
    let (options, format) = options(&args)?;
    let roots = if args.paths.is_empty() { vec![PathBuf::from(".")] } else { args.paths.clone() };
    // Open the output first: a typo in -o should fail before a long scan, not after it.
    let mut out: Box<dyn Write> = match &args.output {
        Some(path) => Box::new(BufWriter::new(
            File::create(path).with_context(|| format!("cannot write {}", quote_path(path)))?,
        )),
        None => Box::new(BufWriter::with_capacity(1 << 16, io::stdout().lock())),
    };

    let started = Instant::now();
    let run = scan(&roots, &options, (args.quiet, args.verbose), args.verbose);
    let written = format.write(&run.report, &mut out);
    match &args.output {
        Some(path) => written.with_context(|| format!("cannot write {}", quote_path(path)))?,
        None => written.context("cannot write to standard output")?,
    }
    drop(out);
    if !args.quiet {
        run.closing_lines(started.elapsed().as_secs_f64()).iter().for_each(|l| eprintln!("{l}"));
    }
    Ok(run.report.summary.errors == 0)
}

fn options(args: &FindArgs) -> Result<(FindOptions, ReportFormat)> {
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
    let format = match args.format {
        Format::Text if args.summary => ReportFormat::DirSummary,
        Format::Text if args.print0 => ReportFormat::Text(TextStyle::Nul),
        Format::Text => ReportFormat::Text(TextStyle::Lines),
        Format::Json => ReportFormat::Json,
        Format::Csv => ReportFormat::Csv,
    };
    Ok((options, format))
}

/// Scan `roots` under the progress display (unless `quiet`), problems on stderr (notes too when
/// `verbose`); then, with `how_it_went`, find's `-v` lines.
pub fn scan(
    roots: &[PathBuf],
    options: &FindOptions,
    (quiet, verbose): (bool, bool),
    how_it_went: bool,
) -> Run {
    let progress = Arc::new(Progress::new(PHASES));
    let display = Display::start(progress.clone(), quiet);
    let messages = Messages { verbose, bar: display.as_ref().map(Display::bar) };
    let run = find_run(roots, options, &messages, &progress);
    if let Some(display) = display {
        display.finish();
    }
    if how_it_went {
        for line in verbose_lines(&progress, &run) {
            messages.line(&format!("dedup: {line}"));
        }
    }
    run
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
    let cache_flags =
        CacheFlags { cache: args.cache, no_cache: args.no_cache, dir: args.cache_dir.clone() };
    Ok(FindOptions {
        selection,
        hardlinks: args.hardlinks,
        concurrency,
        tuning: Tuning::from_env()?,
        analysis: Analysis::default(),
        cache: scan_cache_dir(&cache_flags)?.map(|dir| CacheOptions { dir, verify: args.verify }),
    })
}
