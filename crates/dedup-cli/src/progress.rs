//! The progress line on stderr: drawn only on a terminal, from a timer thread that reads the
//! job's counters ten times a second, so the job itself never waits for drawing. It draws the
//! line dedup-core words for whatever phases the job declared (`dedup_core::Phase`).

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use dedup_core::Progress;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A running progress display; stops when [`Display::finish`] is called.
pub struct Display {
    bar: ProgressBar,
    stop: Arc<AtomicBool>,
    ticker: Option<JoinHandle<()>>,
}

impl Display {
    /// Start drawing `progress` if stderr is a terminal and the user did not ask for quiet.
    pub fn start(progress: Arc<Progress>, quiet: bool) -> Option<Display> {
        if quiet || !std::io::stderr().is_terminal() {
            return None;
        }
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr_with_hz(10));
        bar.set_style(ProgressStyle::with_template("{spinner} {msg}").expect("valid template"));
        let stop = Arc::new(AtomicBool::new(false));
        let ticker = {
            let (bar, stop) = (bar.clone(), stop.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let snapshot = progress.snapshot();
                    bar.set_message(snapshot.line(progress.phases()));
                    bar.tick();
                    std::thread::sleep(Duration::from_millis(100));
                }
            })
        };
        Some(Display { bar, stop, ticker: Some(ticker) })
    }

    /// The bar, so messages can be printed around it.
    pub fn bar(&self) -> ProgressBar {
        self.bar.clone()
    }

    /// Stop and erase the display.
    pub fn finish(mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.ticker.take() {
            let _ = t.join();
        }
        self.bar.finish_and_clear();
    }
}

#[cfg(test)]
mod tests {
    use dedup_core::ProgressSnapshot;
    use dedup_find::PHASES;

    #[test]
    fn the_finder_phases_read_as_they_always_did() {
        let s = ProgressSnapshot {
            phase: 0,
            files_found: 12_345,
            bytes_found: 3 << 20,
            phase_total: 4_000,
            phase_done: 1_234,
            bytes_read: 1536,
        };
        let lines: Vec<String> = PHASES.iter().map(|phase| phase.line(&s)).collect();
        assert_eq!(
            lines,
            [
                "scanning: 12,345 files, 3.00 MiB",
                "grouping 12,345 files, 3.00 MiB",
                "sampling candidates: 1,234/4,000 (1.50 KiB read)",
                "comparing contents: 1,234/4,000 files (1.50 KiB read)",
                "writing report",
            ]
        );
        assert_eq!(s.line(&[]), "");
    }
}
