//! Replays a request log through a disk model, possibly with other parameters: what the same
//! requests, in the same order, would have cost on another disk. A command's requests do not
//! depend on the disk's speed (one thread's, at least), so this answers "what if the seeks were
//! shorter" without running the command again.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;

use crate::account::{Served, Totals};
use crate::model::{Disk, Geometry, Op};

/// The model parameters a log was written with: its `# model name=value ...` line.
pub fn logged_parameters(path: &Path) -> Result<Vec<(String, String)>, String> {
    let file = File::open(path).map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    for line in BufReader::new(file).lines().take(10) {
        let line = line.map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        if let Some(rest) = line.strip_prefix("# model ") {
            return Ok(rest
                .split_whitespace()
                .filter_map(|pair| pair.split_once('='))
                .map(|(name, value)| (name.to_string(), value.to_string()))
                .collect());
        }
    }
    Err(format!("{}: no `# model` line: not an hdd-model log", path.display()))
}

/// The requests of `path` between `# mark from` and `# mark to` (the whole log without marks),
/// served by a new disk of `geometry`.
pub fn replay(
    path: &Path,
    geometry: Geometry,
    marks: Option<(u64, u64)>,
) -> Result<Totals, String> {
    let file = File::open(path).map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    let mut disk = Disk::new(geometry);
    let mut totals = Totals::default();
    let mut inside = marks.is_none();
    for (number, line) in BufReader::new(file).lines().enumerate() {
        let line = line.map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        if let Some(mark) = line.strip_prefix("# mark ") {
            let mark: u64 = mark.trim().parse().unwrap_or(0);
            if let Some((from, to)) = marks {
                if mark == from {
                    inside = true;
                } else if mark == to {
                    return Ok(totals);
                }
            }
            continue;
        }
        if line.starts_with('#') || !inside {
            continue;
        }
        let bad = || format!("{}:{}: not a request line: {line}", path.display(), number + 1);
        let fields: Vec<&str> = line.split_whitespace().collect();
        let (op, offset, len) = match fields.get(1..4) {
            Some(&[op, offset, len]) => (op, offset, len),
            _ => return Err(bad()),
        };
        let op = match op {
            "R" => Op::Read,
            "W" => Op::Write,
            _ => return Err(bad()),
        };
        let offset: u64 = offset.parse().map_err(|_| bad())?;
        let len: u64 = len.parse().map_err(|_| bad())?;
        let cost = disk.serve(op, offset, len);
        totals.add(&Served { op, offset, len, cost, start_s: 0.0, queued_s: 0.0, late_s: 0.0 });
    }
    match marks {
        Some((_, to)) => Err(format!("{}: no `# mark {to}`", path.display())),
        None => Ok(totals),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn geometry() -> Geometry {
        Geometry {
            rpm: 7200.0,
            settle_s: 0.001,
            full_stroke_s: 0.015,
            stroke_bytes: 1 << 32,
            rate_bps: 170e6,
            cache_bytes: 0,
            bus_bps: 300e6,
        }
    }

    fn log(text: &str) -> std::path::PathBuf {
        let path = std::env::temp_dir().join(format!(
            "hdd-model-replay-{}-{}",
            std::process::id(),
            text.len()
        ));
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn replays_the_requests_between_two_marks() {
        let path = log("# start_us op offset len\n# model rpm=7200 stroke_bytes=4294967296\n\
                        1 R 0 4096 0 0 0 0 0 0\n# mark 1\n2 R 3000000000 4096 0 0 0 0 0 0\n\
                        3 W 3000004096 4096 0 0 0 0 0 0\n# mark 2\n4 R 0 4096 0 0 0 0 0 0\n");
        let totals = replay(&path, geometry(), Some((1, 2))).unwrap();
        assert_eq!((totals.reads, totals.writes, totals.seeks), (1, 1, 1));
        let whole = replay(&path, geometry(), None).unwrap();
        assert_eq!((whole.reads, whole.writes), (3, 1));
        assert_eq!(
            logged_parameters(&path).unwrap()[1],
            ("stroke_bytes".to_string(), "4294967296".to_string())
        );
        assert!(replay(&path, geometry(), Some((1, 3))).unwrap_err().contains("mark 3"));
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn a_damaged_line_is_named() {
        let path = log("# model rpm=7200\n1 R zero 4096\n");
        let err = replay(&path, geometry(), None).unwrap_err();
        assert!(err.contains(":2: not a request line"), "{err}");
        std::fs::remove_file(&path).unwrap();
    }
}
