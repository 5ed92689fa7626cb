//! What both mounts (the snapshots read-only, a volume writable) share in the binary: their
//! problems printed as they come, and the signals that unmount them.

use std::thread::JoinHandle;

use dedup_mount::{MountEvents, MountProblem, Unmounted, Unmounter};
use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

use crate::messages::quote_path;

/// Prints what the mount meets while it serves.
pub(super) struct Render;

impl MountEvents for Render {
    fn problem(&self, problem: MountProblem) {
        eprintln!("dedup: error: {problem}");
    }
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
