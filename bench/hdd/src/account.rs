//! Where the modeled disk's time went: running totals (read through the mount's `stats` file)
//! and, optionally, one log line per request.

use std::fmt::Write as _;
use std::fs::File;
use std::io::{self, BufWriter, Write};

use crate::model::{Cost, Op};

/// One served request, as the log and the totals see it.
#[derive(Clone, Copy, Debug)]
pub struct Served {
    pub op: Op,
    pub offset: u64,
    pub len: u64,
    pub cost: Cost,
    /// When the disk started on it, seconds since the model started.
    pub start_s: f64,
    /// How long it waited for the requests before it.
    pub queued_s: f64,
    /// How much later than modeled the reply went out (the host's scheduling).
    pub late_s: f64,
}

/// Running totals since the model started.
#[derive(Debug, Default)]
pub struct Totals {
    pub reads: u64,
    pub writes: u64,
    pub read_bytes: u64,
    pub written_bytes: u64,
    /// Requests that needed a head movement.
    pub seeks: u64,
    /// Reads answered from the drive's cache.
    pub cache_hits: u64,
    pub seek_s: f64,
    pub rotation_s: f64,
    pub transfer_s: f64,
    pub queued_s: f64,
    pub late_s: f64,
}

impl Totals {
    pub fn add(&mut self, served: &Served) {
        match served.op {
            Op::Read => {
                self.reads += 1;
                self.read_bytes += served.len;
            }
            Op::Write => {
                self.writes += 1;
                self.written_bytes += served.len;
            }
        }
        if served.cost.seek_s > 0.0 {
            self.seeks += 1;
        }
        if served.cost.cached {
            self.cache_hits += 1;
        }
        self.seek_s += served.cost.seek_s;
        self.rotation_s += served.cost.rotation_s;
        self.transfer_s += served.cost.transfer_s;
        self.queued_s += served.queued_s;
        self.late_s += served.late_s;
    }

    /// `name value` lines, times in seconds: what reading the `stats` file returns.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let busy = self.seek_s + self.rotation_s + self.transfer_s;
        for (name, value) in [
            ("reads", self.reads.to_string()),
            ("writes", self.writes.to_string()),
            ("read_bytes", self.read_bytes.to_string()),
            ("written_bytes", self.written_bytes.to_string()),
            ("seeks", self.seeks.to_string()),
            ("cache_hits", self.cache_hits.to_string()),
            ("seek_s", format!("{:.6}", self.seek_s)),
            ("rotation_s", format!("{:.6}", self.rotation_s)),
            ("transfer_s", format!("{:.6}", self.transfer_s)),
            ("busy_s", format!("{busy:.6}")),
            ("queued_s", format!("{:.6}", self.queued_s)),
            ("late_s", format!("{:.6}", self.late_s)),
        ] {
            let _ = writeln!(out, "{name} {value}");
        }
        out
    }
}

/// The per-request log: one line a request, times in microseconds.
pub struct RequestLog {
    out: BufWriter<File>,
}

impl RequestLog {
    /// The columns, written once at the top.
    pub const HEADER: &'static str =
        "# start_us op offset len seek_us rotation_us transfer_us queued_us late_us cached";

    /// Starts a log: the column names, then `# model ...`, the parameters a replay starts from.
    pub fn create(file: File, model: &str) -> io::Result<Self> {
        let mut out = BufWriter::with_capacity(1 << 20, file);
        writeln!(out, "{}", Self::HEADER)?;
        writeln!(out, "# model {model}")?;
        Ok(RequestLog { out })
    }

    /// A `# mark N` line: the totals were read here (hdd.sh run reads them before and after a
    /// command, so a replay can pick out one command's requests).
    pub fn mark(&mut self, mark: u64) -> io::Result<()> {
        writeln!(self.out, "# mark {mark}")?;
        self.out.flush()
    }

    pub fn record(&mut self, s: &Served) -> io::Result<()> {
        let us = |seconds: f64| seconds * 1e6;
        writeln!(
            self.out,
            "{:.0} {} {} {} {:.1} {:.1} {:.1} {:.1} {:.1} {}",
            us(s.start_s),
            match s.op {
                Op::Read => 'R',
                Op::Write => 'W',
            },
            s.offset,
            s.len,
            us(s.cost.seek_s),
            us(s.cost.rotation_s),
            us(s.cost.transfer_s),
            us(s.queued_s),
            us(s.late_s),
            u8::from(s.cost.cached),
        )
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn served(op: Op, len: u64, seek_s: f64) -> Served {
        Served {
            op,
            offset: 8192,
            len,
            cost: Cost { seek_s, rotation_s: 0.004, transfer_s: 0.001, cached: false },
            start_s: 1.5,
            queued_s: 0.0,
            late_s: 0.0001,
        }
    }

    #[test]
    fn totals_count_reads_writes_and_seeks_apart() {
        let mut totals = Totals::default();
        totals.add(&served(Op::Read, 4096, 0.008));
        totals.add(&served(Op::Read, 4096, 0.0));
        totals.add(&served(Op::Write, 512, 0.002));
        let text = totals.render();
        assert!(text.contains("reads 2\n"), "{text}");
        assert!(text.contains("writes 1\n"), "{text}");
        assert!(text.contains("read_bytes 8192\n"), "{text}");
        assert!(text.contains("seeks 2\n"), "{text}");
        assert!(text.contains("seek_s 0.010000\n"), "{text}");
        assert!(text.contains("busy_s 0.025000\n"), "{text}");
    }

    #[test]
    fn the_log_has_a_header_and_a_line_a_request() {
        let path = std::env::temp_dir().join(format!("hdd-model-log-{}", std::process::id()));
        let mut log = RequestLog::create(File::create(&path).unwrap(), "rpm=7200").unwrap();
        log.record(&served(Op::Write, 512, 0.002)).unwrap();
        log.mark(1).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], RequestLog::HEADER);
        assert_eq!(lines[1], "# model rpm=7200");
        assert_eq!(lines[2], "1500000 W 8192 512 2000.0 4000.0 1000.0 0.0 100.0 0");
        assert_eq!(lines[3], "# mark 1");
    }
}
