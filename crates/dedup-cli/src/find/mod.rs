//! `dedup find`: the scan (settings from dedup-find's arguments), the report in the chosen
//! format, and the closing lines (dedup-find and dedup-report word them).

use std::fs::File;
use std::io::{self, BufWriter};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result};
use dedup_core::Progress;
use dedup_find::args::FindArgs;
use dedup_find::{find_run, verbose_lines, FindOptions, Run, PHASES};
use dedup_fs::FsError;

use crate::messages::{quote_path, Messages};
use crate::progress::Display;

/// Run the finder; `Ok(true)` when the report is complete.
pub fn run(args: FindArgs) -> Result<bool> {
    let (options, format) = args.options()?;
    let roots = args.roots();
    // Open the output first: a typo in -o should fail before a long scan, not after it.
    let mut output = match &args.output {
        Some(path) => Some((
            path,
            BufWriter::new(
                File::create(path).with_context(|| format!("cannot write {}", quote_path(path)))?,
            ),
        )),
        None => None,
    };

    let started = Instant::now();
    let run = scan(&roots, &options, (args.quiet, args.verbose), args.verbose);
    match &mut output {
        Some((path, file)) => format
            .write(&run.report, file)
            // A file system that reports a failed write-back only at `close` (NFS, SMB, FUSE)
            // is asked before the report is called written.
            .and_then(|()| dedup_fs::flush(file.get_ref()).map_err(FsError::into_io_error))
            .with_context(|| format!("cannot write {}", quote_path(path)))?,
        None => format
            .write(&run.report, &mut BufWriter::with_capacity(1 << 16, io::stdout().lock()))
            .context("cannot write to standard output")?,
    }
    drop(output);
    if !args.quiet {
        run.closing_lines(started.elapsed().as_secs_f64()).iter().for_each(|l| eprintln!("{l}"));
    }
    Ok(run.report.summary.errors == 0)
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
