//! `dedup store mount --writable NAME MOUNTPOINT`: a volume of dedup-mount served read-write in
//! the foreground until it is unmounted or the program is told to stop (as the snapshot mount:
//! the first signal unmounts), committed at an interval, at fsync and, last, at unmount. Here:
//! the options, the signals and every message.

use std::time::Duration;

use anyhow::{Context, Result};
use dedup_mount::preflight::{self, FUSERMOUNT};
use dedup_mount::volume::{self, VolumeOptions};
use dedup_mount::{Session, SessionOptions};
use dedup_store::args::{CommonArgs, MountArgs};
use dedup_store::client::user_name;
use dedup_store::repo::this_host;
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

use super::mount_signals::{watch, Render};
use crate::messages::quote_path;

/// `dedup store mount --writable NAME`.
pub fn run(common: &CommonArgs, args: MountArgs) -> Result<bool> {
    let name = args.writable.clone().unwrap_or_default();
    let mountpoint = preflight::check(&args.mountpoint)?;
    let location = common.location()?;
    let space = (!dedup_store::backend::is_remote(&location)).then_some(location);
    let repo = std::sync::Arc::new(super::open(common)?);
    let options = VolumeOptions {
        name: name.clone(),
        host: args.host.clone().unwrap_or_else(this_host),
        user: user_name::current(),
        tags: args.tags.clone(),
        program: super::program(),
        commit_interval: Duration::from_secs(args.commit_interval.max(1)),
        space,
    };
    let owner = (rustix::process::geteuid().as_raw(), rustix::process::getegid().as_raw());
    let interval = options.commit_interval;
    let volume = volume::open(repo, options, owner, Box::new(Render))
        .with_context(|| format!("cannot open volume {name:?}"))?;
    let signals = Signals::new([SIGINT, SIGTERM, SIGHUP])
        .context("cannot catch SIGINT and SIGTERM to unmount on them")?;
    let stop = signals.handle();
    let mut session =
        Session::mount(volume.filesystem(), &mountpoint, &SessionOptions::writable())?;
    let watcher = watch(signals, session.unmounter());
    let timer = volume.commit_every(interval);
    let shown = quote_path(&mountpoint);
    eprintln!(
        "dedup: volume {name:?} mounted writable on {shown}; unmount with `{FUSERMOUNT} -u \
         {shown}` or Ctrl-C"
    );
    let served = session.run();
    stop.close();
    let _ = watcher.join();
    drop(timer);
    // The last commit: what was written before the unmount.
    let committed = volume.commit();
    served?;
    committed.with_context(|| format!("volume {name:?}: the last commit failed"))?;
    if let Some(id) = volume.last_commit() {
        eprintln!("dedup: volume {name:?} unmounted; last commit {}", &id.to_hex()[..8]);
    }
    Ok(true)
}
