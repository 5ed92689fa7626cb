//! An fsx-style exerciser on a volume: ten thousand random operations (writes at any
//! offset, reads, truncates that shrink and grow, punched holes, zeroed ranges, writes through a
//! shared mmap, fsyncs, reopens with O_APPEND) on two files of the mount, each checked against a
//! plain model in memory; the files are compared whole now and then, and after an unmount and a
//! mount again; the repository then checks clean. `DEDUP_FSX_OPS` sets the count (a soak run in
//! bench/fs runs many more).

use crate::volume_helpers::{assert_checks_clean, fuse_available, volume_place, Volume};

use std::fs::{self, File, OpenOptions};
use std::io::{Seek, SeekFrom, Write};
use std::os::fd::AsFd;
use std::os::unix::fs::FileExt;
use std::path::Path;

use crate::common::mirror::Rng;

/// The largest offset an operation reaches: files stay within a few chunks of the test
/// repository's chunker (16K/64K/256K), so that overwrites split and re-cut chunks often.
const SPAN: u64 = 1 << 20;

struct Subject {
    path: std::path::PathBuf,
    file: File,
    model: Vec<u8>,
}

impl Subject {
    fn open(path: &Path, append: bool) -> File {
        OpenOptions::new().read(true).write(!append).append(append).create(true).open(path).unwrap()
    }

    fn check_whole(&self, what: &str) {
        let found = fs::read(&self.path).unwrap();
        if found != self.model {
            let at = found.iter().zip(&self.model).position(|(a, b)| a != b);
            panic!(
                "{what}: {} holds {} bytes, the model {}; first difference at {at:?}",
                self.path.display(),
                found.len(),
                self.model.len()
            );
        }
    }
}

fn bytes(rng: &mut Rng, len: usize) -> Vec<u8> {
    // Runs of a repeated byte and random stretches: some chunks repeat, most do not.
    let mut out = Vec::with_capacity(len);
    while out.len() < len {
        let run = (1 + rng.below(4096) as usize).min(len - out.len());
        if rng.chance(30) {
            out.extend(std::iter::repeat_n(rng.below(256) as u8, run));
        } else {
            out.extend((0..run).map(|_| rng.below(256) as u8));
        }
    }
    out
}

/// Writes `data` at `offset` of `path` through a shared mapping (made by Python's mmap, as the
/// tests use no unsafe code), flushed with msync.
fn mmap_write(path: &Path, offset: u64, data: &[u8]) {
    const SCRIPT: &str = "import mmap, os, sys\n\
        path, off = sys.argv[1], int(sys.argv[2])\n\
        data = sys.stdin.buffer.read()\n\
        start = off // mmap.ALLOCATIONGRANULARITY * mmap.ALLOCATIONGRANULARITY\n\
        fd = os.open(path, os.O_RDWR)\n\
        m = mmap.mmap(fd, off + len(data) - start, offset=start)\n\
        m[off - start:] = data\n\
        m.flush()\n\
        m.close()\n";
    let mut child = std::process::Command::new("python3")
        .args(["-c", SCRIPT])
        .arg(path)
        .arg(offset.to_string())
        .stdin(std::process::Stdio::piped())
        .spawn()
        .expect("python3 runs");
    child.stdin.take().unwrap().write_all(data).unwrap();
    assert!(child.wait().unwrap().success(), "the mmap write failed");
}

#[test]
fn random_operations_on_a_volume_match_a_model() {
    let test = "random_operations_on_a_volume_match_a_model";
    if !fuse_available(test) {
        return;
    }
    let ops: usize =
        std::env::var("DEDUP_FSX_OPS").ok().and_then(|n| n.parse().ok()).unwrap_or(10_000);
    let (_tmp, repo, point) = volume_place();
    let volume = Volume::start(&repo, "fsx", &point, &["--commit-interval", "2"]);
    let mut subjects: Vec<Subject> = ["a", "b"]
        .iter()
        .map(|name| {
            let path = volume.path(name);
            Subject { file: Subject::open(&path, false), path, model: Vec::new() }
        })
        .collect();
    let mut rng = Rng(0x5eed_f5f5);
    let mut log: Vec<String> = Vec::new();
    for step in 0..ops {
        let s = &mut subjects[rng.pick(2)];
        let offset = rng.below(SPAN);
        let most = if rng.chance(80) { 8192 } else { 200_000 };
        let len = 1 + rng.below(most) as usize;
        let op = rng.below(100);
        let entry = format!("{step}: op {op} at {offset} len {len} on {}", s.path.display());
        log.push(entry);
        if log.len() > 12 {
            log.remove(0);
        }
        let context = || log.join("\n");
        match op {
            0..=39 => {
                let data = bytes(&mut rng, len);
                s.file.write_all_at(&data, offset).unwrap();
                let end = offset as usize + len;
                if s.model.len() < end {
                    s.model.resize(end, 0);
                }
                s.model[offset as usize..end].copy_from_slice(&data);
            }
            40..=64 => {
                let mut buf = vec![0; len];
                let n = s.file.read_at(&mut buf, offset).unwrap();
                let want = &s.model[(offset as usize).min(s.model.len())..];
                let want = &want[..want.len().min(len)];
                assert!(&buf[..n] == want, "a read differs from the model after\n{}", context());
            }
            65..=72 => {
                s.file.set_len(offset).unwrap();
                s.model.resize(offset as usize, 0);
            }
            73..=79 => {
                use rustix::fs::FallocateFlags as F;
                let flags =
                    if rng.chance(50) { F::PUNCH_HOLE | F::KEEP_SIZE } else { F::ZERO_RANGE };
                rustix::fs::fallocate(s.file.as_fd(), flags, offset, len as u64).unwrap();
                let end = if flags.contains(F::KEEP_SIZE) {
                    (offset as usize + len).min(s.model.len())
                } else {
                    if s.model.len() < offset as usize + len {
                        s.model.resize(offset as usize + len, 0);
                    }
                    offset as usize + len
                };
                if (offset as usize) < end {
                    s.model[offset as usize..end].fill(0);
                }
            }
            80..=83 if rng.chance(25) => {
                let len = len.min(16_384);
                let end = offset as usize + len;
                if s.model.len() < end {
                    s.file.set_len(end as u64).unwrap();
                    s.model.resize(end, 0);
                }
                let data = bytes(&mut rng, len);
                mmap_write(&s.path, offset, &data);
                s.model[offset as usize..end].copy_from_slice(&data);
            }
            84 => s.file.sync_all().unwrap(),
            80..=89 => {
                let mut buf = vec![0; 4096];
                let n = s.file.read_at(&mut buf, offset).unwrap();
                let want = &s.model[(offset as usize).min(s.model.len())..];
                assert!(buf[..n] == want[..want.len().min(4096)], "{}", context());
            }
            90..=94 => {
                // Reopened for appending: every write goes to the end, whatever the position.
                let mut appending = Subject::open(&s.path, true);
                appending.seek(SeekFrom::Start(0)).unwrap();
                let data = bytes(&mut rng, len.min(30_000));
                appending.write_all(&data).unwrap();
                s.model.extend_from_slice(&data);
                drop(appending);
            }
            _ => {
                s.file = Subject::open(&s.path, false);
            }
        }
        if step % 1000 == 999 {
            for s in &subjects {
                s.check_whole(&format!("after step {step}"));
            }
        }
    }
    for s in &subjects {
        s.check_whole("at the end");
    }
    let models: Vec<Vec<u8>> = subjects.drain(..).map(|s| s.model).collect();
    volume.unmount_ok();
    let volume = Volume::start(&repo, "fsx", &point, &["--commit-interval", "3600"]);
    for (name, model) in ["a", "b"].iter().zip(&models) {
        assert!(&fs::read(volume.path(name)).unwrap() == model, "{name} differs after a remount");
    }
    volume.unmount_ok();
    assert_checks_clean(&repo);
}
