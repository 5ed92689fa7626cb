//! hdd-model: serves an image file through FUSE, delaying each request as a spinning disk
//! would, so that a loop device on it (`losetup --direct-io=on`) behaves like a disk that seeks.
//! bench/hdd/README.md says how the pieces fit; `hdd-model --help` lists the parameters.

mod account;
mod disk_fs;
mod model;

use std::fs::{File, OpenOptions};
use std::path::PathBuf;
use std::process::ExitCode;

use fuser::{Config, MountOption};

use crate::account::RequestLog;
use crate::disk_fs::DiskFs;
use crate::model::{Disk, Geometry};

const USAGE: &str = "\
usage: hdd-model IMAGE MOUNTPOINT [OPTIONS]

Serves IMAGE as MOUNTPOINT/disk.img, each read and write delayed by a model of a spinning disk
(one request at a time); MOUNTPOINT/stats holds the model's running totals. Runs until
MOUNTPOINT is unmounted.

options (defaults: a 7,200 rpm disk):
  --rpm N              spindle speed [7200]
  --settle-ms MS       shortest seek [1.0]
  --full-stroke-ms MS  longest seek [15.0]
  --stroke-bytes N     bytes a full stroke spans [the image's size]
  --rate-mbs MB        media transfer rate, 10^6 bytes/s [170]
  --log FILE           one line per request (offset, length, modeled times)
  --no-delay           count requests without delaying them
";

#[derive(Debug)]
struct Args {
    image: PathBuf,
    mountpoint: PathBuf,
    rpm: f64,
    settle_ms: f64,
    full_stroke_ms: f64,
    stroke_bytes: Option<u64>,
    rate_mbs: f64,
    log: Option<PathBuf>,
    delay: bool,
}

fn parse_args(mut words: impl Iterator<Item = String>) -> Result<Args, String> {
    let mut positional = Vec::new();
    let mut args = Args {
        image: PathBuf::new(),
        mountpoint: PathBuf::new(),
        rpm: 7200.0,
        settle_ms: 1.0,
        full_stroke_ms: 15.0,
        stroke_bytes: None,
        rate_mbs: 170.0,
        log: None,
        delay: true,
    };
    while let Some(word) = words.next() {
        let mut value = |name: &str| words.next().ok_or(format!("{name} needs a value"));
        let number = |name: &str, text: String| {
            text.parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && *v > 0.0)
                .ok_or(format!("{name}: not a positive number: {text}"))
        };
        match word.as_str() {
            "--help" | "-h" => return Err(String::new()),
            "--rpm" => args.rpm = number(&word, value(&word)?)?,
            "--settle-ms" => args.settle_ms = number(&word, value(&word)?)?,
            "--full-stroke-ms" => args.full_stroke_ms = number(&word, value(&word)?)?,
            "--rate-mbs" => args.rate_mbs = number(&word, value(&word)?)?,
            "--stroke-bytes" => {
                let text = value(&word)?;
                let bytes = text
                    .parse::<u64>()
                    .ok()
                    .filter(|&b| b > 0)
                    .ok_or(format!("--stroke-bytes: not a positive integer: {text}"))?;
                args.stroke_bytes = Some(bytes);
            }
            "--log" => args.log = Some(PathBuf::from(value(&word)?)),
            "--no-delay" => args.delay = false,
            _ if word.starts_with('-') => return Err(format!("unknown option {word}")),
            _ => positional.push(PathBuf::from(word)),
        }
    }
    if args.settle_ms > args.full_stroke_ms {
        return Err("--settle-ms is longer than --full-stroke-ms".into());
    }
    let [image, mountpoint]: [PathBuf; 2] =
        positional.try_into().map_err(|_| "expected IMAGE and MOUNTPOINT".to_string())?;
    args.image = image;
    args.mountpoint = mountpoint;
    Ok(args)
}

fn run(args: Args) -> Result<(), String> {
    let image = OpenOptions::new()
        .read(true)
        .write(true)
        .open(&args.image)
        .map_err(|e| format!("cannot open {}: {e}", args.image.display()))?;
    let image_len =
        image.metadata().map_err(|e| format!("cannot stat {}: {e}", args.image.display()))?.len();
    let geometry = Geometry {
        rpm: args.rpm,
        settle_s: args.settle_ms / 1e3,
        full_stroke_s: args.full_stroke_ms / 1e3,
        stroke_bytes: args.stroke_bytes.unwrap_or(image_len).max(1),
        rate_bps: args.rate_mbs * 1e6,
    };
    let log = match &args.log {
        Some(path) => Some(
            File::create(path)
                .and_then(RequestLog::create)
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
        "hdd-model: {} on {}: {:.0} rpm, seek {:.2}-{:.2} ms over {} bytes, {:.0} MB/s, track {:.0} bytes{}",
        args.image.display(),
        args.mountpoint.display(),
        geometry.rpm,
        geometry.settle_s * 1e3,
        geometry.full_stroke_s * 1e3,
        geometry.stroke_bytes,
        geometry.rate_bps / 1e6,
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
    match parse_args(std::env::args().skip(1)).and_then(run) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) if message.is_empty() => {
            print!("{USAGE}");
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("hdd-model: {message}\n\n{USAGE}");
            ExitCode::from(2)
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
    fn defaults_model_a_7200_rpm_disk() {
        let args = parse(&["img", "mnt"]).unwrap();
        assert_eq!(args.rpm, 7200.0);
        assert_eq!(args.stroke_bytes, None);
        assert!(args.delay);
        assert_eq!(args.mountpoint, PathBuf::from("mnt"));
    }

    #[test]
    fn bad_arguments_are_refused_with_a_reason() {
        assert!(parse(&["img"]).unwrap_err().contains("IMAGE and MOUNTPOINT"));
        assert!(parse(&["img", "mnt", "--rpm", "fast"]).unwrap_err().contains("--rpm"));
        assert!(parse(&["img", "mnt", "--rpm"]).unwrap_err().contains("needs a value"));
        assert!(parse(&["img", "mnt", "--bogus"]).unwrap_err().contains("--bogus"));
        let err = parse(&["img", "mnt", "--settle-ms", "20"]).unwrap_err();
        assert!(err.contains("--full-stroke-ms"), "{err}");
    }
}
