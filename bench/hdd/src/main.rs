//! hdd-model: serves an image file through FUSE, delaying each request as a spinning disk
//! would, so that a loop device on it (`losetup --direct-io=on`) behaves like a disk that seeks.
//! bench/hdd/README.md says how the pieces fit; `hdd-model --help` lists the parameters.

mod account;
mod cache;
mod disk_fs;
mod model;
mod replay;

use std::fs::{File, OpenOptions};
use std::path::PathBuf;
use std::process::ExitCode;

use fuser::{Config, MountOption};

use crate::account::RequestLog;
use crate::disk_fs::DiskFs;
use crate::model::{Disk, Geometry};

const USAGE: &str = "\
usage: hdd-model IMAGE MOUNTPOINT [OPTIONS]
       hdd-model --replay LOG [--marks A B] [OPTIONS]

Serves IMAGE as MOUNTPOINT/disk.img, each read and write delayed by a model of a spinning disk
(one request at a time); MOUNTPOINT/stats holds the model's running totals (each read of it
writes a `# mark N` line to the log). Runs until MOUNTPOINT is unmounted.

--replay serves the requests of a log (between its marks A and B) to a new model, by default
the one the log was written with, and prints the totals: what the same requests would cost
with other OPTIONS.

options (defaults: a 7,200 rpm disk):
  --rpm N              spindle speed [7200]
  --settle-ms MS       shortest seek [0.8]
  --full-stroke-ms MS  longest seek [14.0]
  --stroke-bytes N     bytes a full stroke spans: the disk's capacity; a smaller image is a
                       partition at its start [500000000000]
  --rate-mbs MB        media transfer rate, 10^6 bytes/s [170]
  --cache-mib N        the drive's read cache, MiB (0: none) [16]
  --bus-mbs MB         transfer rate from the cache to the host, 10^6 bytes/s [300]
  --log FILE           one line per request (offset, length, modeled times)
  --no-delay           count requests without delaying them
";

#[derive(Debug)]
struct Args {
    image: PathBuf,
    mountpoint: PathBuf,
    /// The model's parameters as given (name without `--`, value), applied over the defaults
    /// or over a replayed log's.
    model: Vec<(String, String)>,
    log: Option<PathBuf>,
    delay: bool,
    replay: Option<PathBuf>,
    marks: Option<(u64, u64)>,
}

/// The model's parameters (option names without `--`) and their defaults.
const MODEL_OPTIONS: [(&str, &str); 7] = [
    ("rpm", "7200"),
    ("settle-ms", "0.8"),
    ("full-stroke-ms", "14.0"),
    // A 500 GB disk, as the 7,200 rpm laptop drive of fclones' published HDD run: a smaller
    // image is a partition at its start, so seeks within it are short.
    ("stroke-bytes", "500000000000"),
    ("rate-mbs", "170"),
    ("cache-mib", "16"),
    ("bus-mbs", "300"),
];

/// The geometry from the defaults, then `given` (later pairs win).
fn geometry(given: &[(String, String)]) -> Result<Geometry, String> {
    let value = |name: &str| -> String {
        given
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
            .or_else(|| MODEL_OPTIONS.iter().find(|(n, _)| *n == name).map(|(_, d)| d.to_string()))
            .unwrap_or_default()
    };
    let positive = |name: &str| -> Result<f64, String> {
        let text = value(name);
        text.parse::<f64>()
            .ok()
            .filter(|v| v.is_finite() && *v > 0.0)
            .ok_or(format!("--{name}: not a positive number: {text}"))
    };
    let stroke_bytes = value("stroke-bytes");
    let stroke_bytes = stroke_bytes
        .parse::<u64>()
        .ok()
        .filter(|&b| b > 0)
        .ok_or(format!("--stroke-bytes: not a positive integer: {stroke_bytes}"))?;
    let cache_mib = value("cache-mib");
    let cache_mib: u64 =
        cache_mib.parse().map_err(|_| format!("--cache-mib: not a whole number: {cache_mib}"))?;
    let geometry = Geometry {
        rpm: positive("rpm")?,
        settle_s: positive("settle-ms")? / 1e3,
        full_stroke_s: positive("full-stroke-ms")? / 1e3,
        stroke_bytes,
        rate_bps: positive("rate-mbs")? * 1e6,
        cache_bytes: cache_mib << 20,
        bus_bps: positive("bus-mbs")? * 1e6,
    };
    if geometry.settle_s > geometry.full_stroke_s {
        return Err("--settle-ms is longer than --full-stroke-ms".into());
    }
    Ok(geometry)
}

/// The geometry as `name=value` pairs, in the options' names: the log's `# model` line.
fn describe(g: &Geometry) -> String {
    format!(
        "rpm={} settle-ms={} full-stroke-ms={} stroke-bytes={} rate-mbs={} cache-mib={} bus-mbs={}",
        g.rpm,
        g.settle_s * 1e3,
        g.full_stroke_s * 1e3,
        g.stroke_bytes,
        g.rate_bps / 1e6,
        g.cache_bytes >> 20,
        g.bus_bps / 1e6
    )
}

fn parse_args(mut words: impl Iterator<Item = String>) -> Result<Args, String> {
    let mut positional = Vec::new();
    let mut args = Args {
        image: PathBuf::new(),
        mountpoint: PathBuf::new(),
        model: Vec::new(),
        log: None,
        delay: true,
        replay: None,
        marks: None,
    };
    while let Some(word) = words.next() {
        let mut value = |name: &str| words.next().ok_or(format!("{name} needs a value"));
        let option = word.strip_prefix("--").unwrap_or("");
        match word.as_str() {
            "--help" | "-h" => return Err(String::new()),
            "--log" => args.log = Some(PathBuf::from(value(&word)?)),
            "--no-delay" => args.delay = false,
            "--replay" => args.replay = Some(PathBuf::from(value(&word)?)),
            "--marks" => {
                let bad = |text: String| format!("--marks: not a mark number: {text}");
                let from = value(&word)?;
                let to = value(&word)?;
                args.marks = Some((
                    from.parse().map_err(|_| bad(from.clone()))?,
                    to.parse().map_err(|_| bad(to.clone()))?,
                ));
            }
            _ if !option.is_empty() && MODEL_OPTIONS.iter().any(|(n, _)| *n == option) => {
                let v = value(&word)?;
                args.model.push((option.to_string(), v));
            }
            _ if word.starts_with('-') => return Err(format!("unknown option {word}")),
            _ => positional.push(PathBuf::from(word)),
        }
    }
    // Refused now rather than after mounting.
    geometry(&args.model)?;
    if args.replay.is_some() {
        if !positional.is_empty() {
            return Err("--replay takes no IMAGE or MOUNTPOINT".into());
        }
        return Ok(args);
    }
    if args.marks.is_some() {
        return Err("--marks goes with --replay".into());
    }
    let [image, mountpoint]: [PathBuf; 2] =
        positional.try_into().map_err(|_| "expected IMAGE and MOUNTPOINT".to_string())?;
    args.image = image;
    args.mountpoint = mountpoint;
    Ok(args)
}

fn run_replay(args: &Args, log: &std::path::Path) -> Result<(), String> {
    let mut given = replay::logged_parameters(log)?;
    given.extend(args.model.iter().cloned());
    let geometry = geometry(&given)?;
    let totals = replay::replay(log, geometry, args.marks)?;
    print!("# model {}\n{}", describe(&geometry), totals.render());
    Ok(())
}

fn run(args: Args) -> Result<(), String> {
    if let Some(log) = &args.replay {
        return run_replay(&args, log);
    }
    let image = OpenOptions::new()
        .read(true)
        .write(true)
        .open(&args.image)
        .map_err(|e| format!("cannot open {}: {e}", args.image.display()))?;
    let image_len =
        image.metadata().map_err(|e| format!("cannot stat {}: {e}", args.image.display()))?.len();
    let geometry = geometry(&args.model)?;
    if image_len > geometry.stroke_bytes {
        return Err(format!(
            "{} ({image_len} bytes) is larger than the modeled disk (--stroke-bytes {})",
            args.image.display(),
            geometry.stroke_bytes
        ));
    }
    let log = match &args.log {
        Some(path) => Some(
            File::create(path)
                .and_then(|file| RequestLog::create(file, &describe(&geometry)))
                .map_err(|e| format!("cannot create {}: {e}", path.display()))?,
        ),
        None => None,
    };
    let fs = DiskFs::new(image, Disk::new(geometry), log, args.delay)
        .map_err(|e| format!("cannot stat {}: {e}", args.image.display()))?;
    set_fine_timer_slack();
    let mut config = Config::default();
    config.mount_options = vec![
        MountOption::FSName("hdd-model".into()),
        MountOption::Subtype("hdd-model".into()),
        MountOption::NoDev,
        MountOption::NoSuid,
        MountOption::NoExec,
    ];
    eprintln!(
        "hdd-model: {} on {}: {} (track {:.0} bytes){}",
        args.image.display(),
        args.mountpoint.display(),
        describe(&geometry),
        geometry.track_bytes(),
        if args.delay { "" } else { " (not delaying)" },
    );
    fuser::mount(fs, &args.mountpoint, &config)
        .map_err(|e| format!("cannot serve {}: {e}", args.mountpoint.display()))
}

/// Sleeps end within microseconds of their deadline rather than the default 50 µs slack.
fn set_fine_timer_slack() {
    // SAFETY: PR_SET_TIMERSLACK takes one integer argument and touches no memory of ours.
    let done = unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
    if done != 0 {
        eprintln!("hdd-model: cannot set the timer slack; sleeps may overrun by ~50 µs");
    }
}

fn main() -> ExitCode {
    let args = match parse_args(std::env::args().skip(1)) {
        Ok(args) => args,
        Err(message) if message.is_empty() => {
            print!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(message) => {
            eprintln!("hdd-model: {message}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("hdd-model: {message}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(words: &[&str]) -> Result<Args, String> {
        parse_args(words.iter().map(|w| w.to_string()))
    }

    #[test]
    fn defaults_model_a_500_gb_7200_rpm_disk() {
        let args = parse(&["img", "mnt"]).unwrap();
        assert!(args.delay);
        assert_eq!(args.mountpoint, PathBuf::from("mnt"));
        let g = geometry(&args.model).unwrap();
        assert_eq!((g.rpm, g.stroke_bytes, g.cache_bytes), (7200.0, 500_000_000_000, 16 << 20));
    }

    #[test]
    fn options_override_the_defaults_and_a_replayed_log() {
        let args = parse(&["--replay", "log", "--rpm", "5400", "--marks", "3", "4"]).unwrap();
        assert_eq!(args.marks, Some((3, 4)));
        let mut given = vec![("rpm".to_string(), "10000".to_string())];
        given.extend(args.model.iter().cloned());
        given.push(("stroke-bytes".to_string(), "77".to_string()));
        assert_eq!(geometry(&given).unwrap().rpm, 5400.0);
        let logged = describe(&geometry(&given).unwrap());
        assert!(logged.contains("rpm=5400 ") && logged.contains("stroke-bytes=77 "), "{logged}");
    }

    #[test]
    fn bad_arguments_are_refused_with_a_reason() {
        assert!(parse(&["img"]).unwrap_err().contains("IMAGE and MOUNTPOINT"));
        assert!(parse(&["img", "mnt", "--rpm", "fast"]).unwrap_err().contains("--rpm"));
        assert!(parse(&["img", "mnt", "--rpm"]).unwrap_err().contains("needs a value"));
        assert!(parse(&["img", "mnt", "--bogus"]).unwrap_err().contains("--bogus"));
        let err = parse(&["img", "mnt", "--settle-ms", "20"]).unwrap_err();
        assert!(err.contains("--full-stroke-ms"), "{err}");
        assert!(parse(&["img", "mnt", "--marks", "1", "2"]).unwrap_err().contains("--replay"));
        assert!(parse(&["--replay", "l", "img"]).unwrap_err().contains("no IMAGE"));
    }
}
