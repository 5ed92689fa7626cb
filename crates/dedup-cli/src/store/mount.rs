//! `dedup store mount`: the snapshot file system of dedup-mount, mounted in the foreground until
//! it is unmounted (`fusermount3 -u`) or the program is told to stop (SIGINT, SIGTERM, SIGHUP:
//! it unmounts, then exits 0; a mount in use is detached and served until its users let go, or
//! until a second signal, which leaves at once). Here: the signals and every message.

use std::sync::Arc;
use std::thread::JoinHandle;

use anyhow::{Context, Result};
use dedup_mount::preflight::{self, FUSERMOUNT};
use dedup_mount::{MountEvents, MountProblem, Session, SessionOptions, Unmounted, Unmounter};
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

use super::args::{CommonArgs, MountArgs};
use crate::messages::quote_path;

/// Prints what the mount meets while it serves.
pub(super) struct Render;

impl MountEvents for Render {
    fn problem(&self, problem: MountProblem) {
        eprintln!("dedup: error: {problem}");
    }
}

/// `dedup store mount`.
pub fn run(common: &CommonArgs, args: MountArgs) -> Result<bool> {
    if args.writable.is_some() {
        return super::mount_volume::run(common, args);
    }
    let mountpoint = preflight::check(&args.mountpoint)?;
    let repo = Arc::new(super::open(common)?);
    let opened = dedup_mount::snapshots::open(repo, Box::new(Render))?;
    for err in &opened.unreadable {
        eprintln!("dedup: error: {err} (this snapshot is not shown)");
    }
    // Caught from here on: a signal during the mount unmounts as soon as it is made.
    let signals = Signals::new([SIGINT, SIGTERM, SIGHUP])
        .context("cannot catch SIGINT and SIGTERM to unmount on them")?;
    let stop = signals.handle();
    let mut session = Session::mount(opened.fs, &mountpoint, &SessionOptions::read_only())?;
    let watcher = watch(signals, session.unmounter());
    let shown = quote_path(&mountpoint);
    let count = opened.shown;
    eprintln!(
        "dedup: {count} snapshot{} mounted on {shown}; unmount with `{FUSERMOUNT} -u {shown}` \
         or Ctrl-C",
        if count == 1 { "" } else { "s" }
    );
    let served = session.run();
    stop.close();
    let _ = watcher.join();
    served?;
    Ok(true)
}

/// A thread that unmounts on the first signal and leaves on the second (a detached mount still
/// in use: its users get errors, as a second Ctrl-C usually means).
pub(super) fn watch(mut signals: Signals, mut unmounter: Unmounter) -> JoinHandle<()> {
    std::thread::spawn(move || {
        let shown = quote_path(unmounter.mountpoint());
        let mut signals = signals.forever();
        if let Some(signal) = signals.next() {
            eprintln!("dedup: {}: unmounting {shown}", signal_name(signal));
            match unmounter.unmount() {
                Unmounted::Now => {}
                Unmounted::Detached => {
                    eprintln!("dedup: {shown} is in use: detached, it ends once nothing uses it")
                }
                Unmounted::Failed => eprintln!("dedup: error: cannot unmount {shown}"),
            }
        }
        if let Some(signal) = signals.next() {
            eprintln!("dedup: {}: leaving {shown} while it is still in use", signal_name(signal));
            std::process::exit(1);
        }
    })
}

fn signal_name(signal: i32) -> &'static str {
    match signal {
        SIGINT => "SIGINT",
        SIGTERM => "SIGTERM",
        _ => "SIGHUP",
    }
}
