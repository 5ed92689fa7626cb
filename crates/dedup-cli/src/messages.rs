//! What the user reads on stderr: one line per problem naming the path and the reason, kept on
//! one line whatever bytes the path holds, and drawn around the progress display.

use std::io::{self, Write};

pub use dedup_core::text::quote_path;
use dedup_core::{Observer, Problem, Terminal};
use indicatif::ProgressBar;

/// Prints problems as they happen.
pub struct Messages {
    /// Show notes (things skipped by design), not only errors and warnings.
    pub verbose: bool,
    /// The progress display to draw around, if one is shown.
    pub bar: Option<ProgressBar>,
}

impl Messages {
    /// Print one line on stderr without tearing the progress display.
    pub fn line(&self, text: &str) {
        match &self.bar {
            Some(bar) => bar.suspend(|| eprintln!("{text}")),
            None => eprintln!("{text}"),
        }
    }
}

impl Observer for Messages {
    fn problem(&self, problem: Problem) {
        if let Some(line) = problem.line(self.verbose) {
            self.line(&line);
        }
    }
}

impl Terminal for Messages {
    fn line(&self, text: &str) {
        Messages::line(self, text);
    }

    fn out(&self, text: &str) -> io::Result<()> {
        let write = || writeln!(io::stdout().lock(), "{text}");
        match &self.bar {
            Some(bar) => bar.suspend(write),
            None => write(),
        }
    }
}

/// True when the error is standard output closing early (`dedup find | head`, `dedup store ls
/// | head`): not a failure.
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    let broken = |e: &io::Error| e.kind() == io::ErrorKind::BrokenPipe;
    err.chain().any(|e| {
        e.downcast_ref::<io::Error>().is_some_and(broken)
            || matches!(e.downcast_ref::<dedup_store::Error>(),
                Some(dedup_store::Error::Io { cause, .. }) if broken(cause))
    })
}

#[cfg(test)]
mod tests {
    use dedup_core::text::{Bytes, Count};
    use indicatif::{HumanBytes, HumanCount};

    /// The libraries' units must read as the progress display's, which still uses indicatif's.
    #[test]
    fn the_libraries_units_read_as_the_progress_display_does() {
        let powers = (0..64).map(|e| 1u64 << e).chain((0..20).map(|e| 10u64.pow(e)));
        for n in powers {
            for v in [n - 1, n, n + n / 2, n + n / 200, n - n / 300] {
                assert_eq!(Bytes(v).to_string(), HumanBytes(v).to_string(), "{v}");
                assert_eq!(Count(v).to_string(), HumanCount(v).to_string(), "{v}");
            }
        }
        assert_eq!(Bytes(u64::MAX).to_string(), HumanBytes(u64::MAX).to_string());
    }
}
