//! Walk trees through the engine's visitor and print every entry with its metadata: the starting
//! point for a job that consumes the walk (the store, sync).
//!
//! ```sh
//! cargo run -p dedup-scan --example walk -- /etc
//! ```

use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::sync::Mutex;

use dedup_core::{Observer, Problem};
use dedup_scan::io::{Concurrency, IoScheduler};
use dedup_scan::{walk, Detail, Entry, Listing, RootVisit, Visitor, WalkOptions};

/// Prints each directory's entries as they arrive (from several threads: one lock per line
/// group), and a line when a directory and everything below it are done.
struct Printer {
    out: Mutex<()>,
}

fn line(path: &[u8], e: &Entry) -> String {
    let name = String::from_utf8_lossy(path);
    let Some(m) = e.meta else { return format!("{:<8} {name}", e.kind.name()) };
    let mut s = format!(
        "{:<8} {:04o} {}:{} size={} blocks={} nlink={} ino={} rdev={} mtime_ns={} {name}",
        e.kind.name(),
        m.mode,
        m.uid,
        m.gid,
        m.size,
        m.blocks,
        m.nlink,
        m.ino,
        m.rdev,
        m.mtime_ns,
    );
    if let Some(target) = &e.target {
        s.push_str(" -> ");
        s.push_str(&String::from_utf8_lossy(target));
    }
    for x in &e.xattrs {
        s.push_str(&format!(" [{}={} bytes]", String::from_utf8_lossy(&x.name), x.value.len()));
    }
    s
}

impl Visitor for Printer {
    type Dir = PathBuf;

    fn root(&self, root: &RootVisit<'_>) -> Option<PathBuf> {
        let entry = root.entry?;
        println!("{}", line(root.path.as_os_str().as_bytes(), entry));
        Some(root.path.to_path_buf())
    }

    fn dir(&self, dir: &PathBuf, listing: &Listing<'_>) -> Vec<(usize, PathBuf)> {
        let _one_at_a_time = self.out.lock().unwrap();
        let mut subdirs = Vec::new();
        for (i, e) in listing.entries.iter().enumerate() {
            let path = dir.join(std::ffi::OsStr::from_bytes(&e.name));
            println!("{}", line(path.as_os_str().as_bytes(), e));
            if e.kind == dedup_scan::EntryKind::Dir {
                subdirs.push((i, path));
            }
        }
        subdirs
    }

    fn leave(&self, dir: PathBuf) {
        let _one_at_a_time = self.out.lock().unwrap();
        println!("done     {}", dir.display());
    }
}

struct Warn;

impl Observer for Warn {
    fn problem(&self, problem: Problem) {
        eprintln!("{}: {}", problem.path.display(), problem.kind);
    }
}

fn main() {
    let roots: Vec<PathBuf> = std::env::args_os().skip(1).map(PathBuf::from).collect();
    let mut options = WalkOptions::default();
    options.detail = Detail::Everything;
    options.xattrs = true;
    let io = IoScheduler::new(Concurrency::default());
    walk(&roots, &options, &io, &Warn, &Printer { out: Mutex::new(()) });
}
