//! `dedup store mount`: every snapshot as a read-only FUSE file system, in the foreground until
//! it is unmounted (`fusermount3 -u`) or the program is told to stop (SIGINT, SIGTERM, SIGHUP:
//! it unmounts, then exits 0; a mount in use is detached and served until its users let go,
//! or until a second signal).
//!
//! Mounting reads the index and the snapshot files only; a directory's tree is read when it is
//! first looked in ([`inodes`]), a file's chunks when they are read, with read-ahead
//! ([`chunks`]). The FUSE protocol is spoken by the `fuser` crate without libfuse: as root it
//! mounts `/dev/fuse` itself, as a user through `fusermount3`.

mod attrs;
mod chunks;
mod fs;
mod inodes;
mod names;
mod preflight;
mod top;

use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use anyhow::{Context, Result};
use fuser::{Config, MountOption, SessionUnmounter};
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

use super::args::{CommonArgs, MountArgs};
use attrs::Mounter;
use preflight::FUSERMOUNT;

/// Threads answering the kernel: a read and an `ls` (or two reads) go on at once. More made
/// `ls -l` slower on 2 cores, each request waking more threads (docs/benchmarks/journal.md, "Mounted
/// snapshots"); data is fetched ahead by the reader's own threads anyway.
const FUSE_THREADS: usize = 2;

/// `dedup store mount`.
pub fn run(common: &CommonArgs, args: MountArgs) -> Result<bool> {
    preflight::check(&args.mountpoint)?;
    let mountpoint = args.mountpoint.canonicalize().unwrap_or(args.mountpoint);
    let repo = Arc::new(super::open(common)?);
    let index = Arc::new(repo.load_index()?.index);
    let (snapshots, bad) = repo.snapshots()?;
    for err in &bad {
        eprintln!("dedup: error: {err} (this snapshot is not shown)");
    }
    let count = snapshots.len();
    let inodes = Arc::new(inodes::Inodes::new(Arc::clone(&repo), index, snapshots));
    let mounter = Mounter {
        uid: rustix::process::geteuid().as_raw(),
        gid: rustix::process::getegid().as_raw(),
        time: std::time::SystemTime::now(),
    };
    let fs = fs::SnapshotFs::new(inodes, chunks::ContentReader::new(repo), mounter);

    // Caught from here on: a signal during the mount unmounts as soon as it is made.
    let mut signals = Signals::new([SIGINT, SIGTERM, SIGHUP])
        .context("cannot catch SIGINT and SIGTERM to unmount on them")?;
    let mut config = Config::default();
    config.mount_options = vec![
        MountOption::RO,
        MountOption::NoDev,
        MountOption::NoSuid,
        MountOption::FSName("dedup".into()),
        MountOption::Subtype("dedup".into()),
    ];
    config.n_threads = Some(FUSE_THREADS);
    config.clone_fd = true;
    let shown = mountpoint.display().to_string();
    let mut session = fuser::Session::new(fs, &mountpoint, &config)
        .with_context(|| format!("cannot mount on {shown}"))?;
    let unmounter = session.unmount_callable();
    let stop = signals.handle();
    let unmounting = Arc::new(AtomicBool::new(false));
    let watcher = {
        let mountpoint = mountpoint.clone();
        let unmounting = Arc::clone(&unmounting);
        std::thread::spawn(move || {
            let mut signals = signals.forever();
            if let Some(signal) = signals.next() {
                unmounting.store(true, Ordering::SeqCst);
                unmount(unmounter, &mountpoint, signal);
            }
            // A second signal while a detached mount is still in use: leave it now (its users
            // get errors), as a second Ctrl-C usually means.
            if let Some(signal) = signals.next() {
                eprintln!(
                    "dedup: {}: leaving {} while it is still in use",
                    signal_name(signal),
                    mountpoint.display()
                );
                std::process::exit(1);
            }
        })
    };
    eprintln!(
        "dedup: {count} snapshot{} mounted on {shown}; unmount with `{FUSERMOUNT} -u {shown}` \
         or Ctrl-C",
        if count == 1 { "" } else { "s" }
    );
    let served = session.run();
    stop.close();
    let _ = watcher.join();
    match served {
        // A detached mount ends when its last user lets go; the kernel then closes the
        // connection, which the session's reads may see as aborted rather than gone.
        Err(e)
            if unmounting.load(Ordering::SeqCst)
                && e.raw_os_error() == Some(rustix::io::Errno::CONNABORTED.raw_os_error()) => {}
        served => served.with_context(|| format!("the mount on {shown} failed"))?,
    }
    Ok(true)
}

fn signal_name(signal: i32) -> &'static str {
    match signal {
        SIGINT => "SIGINT",
        SIGTERM => "SIGTERM",
        _ => "SIGHUP",
    }
}

/// Unmounts on `signal`; a mount in use (a shell inside it, a file open) is detached lazily:
/// it leaves the tree now and ends when the last user lets go.
fn unmount(mut unmounter: SessionUnmounter, mountpoint: &Path, signal: i32) {
    eprintln!("dedup: {}: unmounting {}", signal_name(signal), mountpoint.display());
    if unmounter.unmount().is_ok() {
        return;
    }
    let lazy = |program: &str, args: &[&str]| {
        Command::new(program).args(args).arg(mountpoint).status().is_ok_and(|s| s.success())
    };
    if lazy(FUSERMOUNT, &["-u", "-z", "--"]) || lazy("umount", &["-l", "--"]) {
        eprintln!(
            "dedup: {} is in use: detached, it ends once nothing uses it",
            mountpoint.display()
        );
    } else {
        eprintln!("dedup: error: cannot unmount {}", mountpoint.display());
    }
}
