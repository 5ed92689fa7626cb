//! The progress line on stderr: drawn only on a terminal, from a timer thread that reads the
//! scan's counters ten times a second, so the scan itself never waits for drawing.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use dedup_core::{Progress, ProgressSnapshot, Stage};
use indicatif::{HumanBytes, HumanCount, ProgressBar, ProgressDrawTarget, ProgressStyle};

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
                    bar.set_message(describe(&progress.snapshot()));
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

fn describe(s: &ProgressSnapshot) -> String {
    let found = format!("{} files, {}", HumanCount(s.files_found), HumanBytes(s.bytes_found));
    match s.stage {
        Stage::Walking => format!("scanning: {found}"),
        Stage::Grouping => format!("grouping {found}"),
        Stage::Sampling => format!(
            "sampling candidates: {}/{} ({} read)",
            HumanCount(s.stage_done),
            HumanCount(s.stage_total),
            HumanBytes(s.bytes_read)
        ),
        Stage::Comparing => format!(
            "comparing contents: {}/{} files ({} read)",
            HumanCount(s.stage_done),
            HumanCount(s.stage_total),
            HumanBytes(s.bytes_read)
        ),
        Stage::Done => String::from("writing report"),
    }
}
