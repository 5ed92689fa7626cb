//! `dedup store mount`: the snapshot file system of dedup-mount, mounted in the foreground until
//! it is unmounted (`fusermount3 -u`) or the program is told to stop (SIGINT, SIGTERM, SIGHUP:
//! it unmounts, then exits 0; a mount in use is detached and served until its users let go, or
//! until a second signal, which leaves at once). Here: the signals and every message.

use std::sync::Arc;

use anyhow::{Context, Result};
use dedup_mount::preflight::{self, FUSERMOUNT};
use dedup_mount::{Session, SessionOptions};
use dedup_store::args::{CommonArgs, MountArgs};
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

use super::mount_signals::{watch, Render};
use crate::messages::quote_path;

/// `dedup store mount` of the snapshots (read-only).
pub fn run(common: &CommonArgs, args: MountArgs) -> Result<bool> {
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
