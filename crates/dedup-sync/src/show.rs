//! What `dedup sync` shows as it runs: one line per change (`--dry-run`, `-v`, `-i`) on the
//! terminal's standard output, in dedup's words or as rsync's `--itemize-changes` prints it, one
//! JSON line per change in the `--log` file ([`ChangeLog`]), and problems passed on. A log or a
//! standard output that cannot be written is named with the reason, once, and makes the run
//! incomplete (a user who asked for a record of the changes must not take a short one for the
//! whole), but never stops the mirror half way; a closed pipe (`| head`) only ends the lines.

use std::io;
use std::sync::Mutex;

use dedup_core::{Observer, Problem, Terminal};

use crate::change_log::ChangeLog;
use crate::{Change, Events};

/// Shows and logs changes, and passes problems on to the terminal.
pub struct Show<'a> {
    terminal: &'a dyn Terminal,
    print: bool,
    itemize: bool,
    log: Option<ChangeLog>,
    out: Mutex<Output>,
}

/// What became of the change lines on standard output.
#[derive(Default)]
struct Output {
    /// A write failed or the reader went away: nothing more is printed.
    stopped: bool,
    /// A write failed for another reason than a closed pipe (named on the terminal).
    failed: bool,
}

impl<'a> Show<'a> {
    /// Print each change when `print` (as rsync's `--itemize-changes` does with `itemize`) and
    /// append it to `log`.
    pub fn new(
        terminal: &'a dyn Terminal,
        print: bool,
        itemize: bool,
        log: Option<ChangeLog>,
    ) -> Self {
        Show { terminal, print, itemize, log, out: Mutex::default() }
    }

    /// Write out the log; false (the failure already named) when the log or the change lines
    /// could not be written whole.
    pub fn finish(&self) -> bool {
        let log_whole = self.log.as_ref().is_none_or(|log| log.finish(self.terminal));
        let out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        log_whole && !out.failed
    }

    fn print(&self, change: &Change) {
        let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        if out.stopped {
            return;
        }
        let text = if self.itemize { change.itemized() } else { change.line() };
        if let Err(err) = self.terminal.out(&text) {
            out.stopped = true;
            if err.kind() != io::ErrorKind::BrokenPipe {
                out.failed = true;
                let line = format!(
                    "dedup: error: standard output: {err}; the change lines are incomplete"
                );
                self.terminal.line(&line);
            }
        }
    }
}

impl Observer for Show<'_> {
    fn problem(&self, problem: Problem) {
        self.terminal.problem(problem);
    }
}

impl Events for Show<'_> {
    fn change(&self, change: &Change) {
        if self.print {
            self.print(change);
        }
        if let Some(log) = &self.log {
            log.append(change, self.terminal);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;
    use std::path::PathBuf;

    use super::*;
    use crate::item::Item;
    use crate::ChangeKind;

    /// Keeps what it is given; standard output fails with `fail` from the `fail_from`th line on.
    struct Kept {
        out: Mutex<Vec<String>>,
        err: Mutex<Vec<String>>,
        fail: Option<io::ErrorKind>,
        fail_from: usize,
        writes: Mutex<Cell<usize>>,
    }

    impl Kept {
        fn new(fail: Option<io::ErrorKind>, fail_from: usize) -> Kept {
            Kept {
                out: Mutex::default(),
                err: Mutex::default(),
                fail,
                fail_from,
                writes: Mutex::default(),
            }
        }
    }

    impl Observer for Kept {
        fn problem(&self, problem: Problem) {
            self.err.lock().unwrap().push(problem.line(true).unwrap());
        }
    }

    impl Terminal for Kept {
        fn line(&self, text: &str) {
            self.err.lock().unwrap().push(text.to_owned());
        }

        fn out(&self, text: &str) -> io::Result<()> {
            let writes = self.writes.lock().unwrap();
            writes.set(writes.get() + 1);
            match self.fail {
                Some(kind) if writes.get() > self.fail_from => Err(io::Error::from(kind)),
                _ => {
                    self.out.lock().unwrap().push(text.to_owned());
                    Ok(())
                }
            }
        }
    }

    fn copy(path: &str) -> Change {
        Change::new(ChangeKind::Copy, PathBuf::from(path), None, Item::default())
    }

    #[test]
    fn changes_are_printed_only_when_asked() {
        let kept = Kept::new(None, 0);
        let quiet = Show::new(&kept, false, false, None);
        quiet.change(&copy("a"));
        assert!(quiet.finish());
        let shown = Show::new(&kept, true, false, None);
        shown.change(&copy("a"));
        assert!(shown.finish());
        assert_eq!(*kept.out.lock().unwrap(), [copy("a").line()]);
        let itemized = Show::new(&kept, true, true, None);
        itemized.change(&copy("b"));
        assert_eq!(kept.out.lock().unwrap()[1], copy("b").itemized());
        assert!(kept.err.lock().unwrap().is_empty());
    }

    #[test]
    fn a_closed_pipe_ends_the_lines_quietly_and_another_failure_is_named_once() {
        let closed = Kept::new(Some(io::ErrorKind::BrokenPipe), 1);
        let show = Show::new(&closed, true, false, None);
        (0..3).for_each(|i| show.change(&copy(&i.to_string())));
        assert!(show.finish(), "a reader that went away leaves the run complete");
        assert_eq!(closed.out.lock().unwrap().len(), 1);
        assert!(closed.err.lock().unwrap().is_empty());

        let full = Kept::new(Some(io::ErrorKind::StorageFull), 0);
        let show = Show::new(&full, true, false, None);
        (0..3).for_each(|i| show.change(&copy(&i.to_string())));
        assert!(!show.finish(), "lines that could not be written make the run incomplete");
        let err = full.err.lock().unwrap();
        assert_eq!(err.len(), 1, "{err:?}");
        assert!(err[0].starts_with("dedup: error: standard output: "), "{}", err[0]);
        assert!(err[0].ends_with("; the change lines are incomplete"), "{}", err[0]);
    }

    #[test]
    fn the_log_holds_a_json_line_per_change_and_problems_pass_through() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log");
        let kept = Kept::new(None, 0);
        let show = Show::new(&kept, false, false, Some(ChangeLog::create(&path).unwrap()));
        show.change(&copy("a"));
        let renamed = Change::new(
            ChangeKind::Rename,
            PathBuf::from("n"),
            Some(PathBuf::from("o")),
            Item::default(),
        );
        show.change(&renamed);
        show.problem(Problem::warning("p", dedup_core::ProblemKind::Loop));
        assert!(show.finish());
        let log = std::fs::read_to_string(&path).unwrap();
        assert_eq!(
            log,
            "{\"change\":\"copy\",\"path\":{\"text\":\"a\"},\"bytes\":0}\n\
             {\"change\":\"rename\",\"path\":{\"text\":\"n\"},\"from\":{\"text\":\"o\"},\"bytes\":0}\n"
        );
        assert_eq!(
            *kept.err.lock().unwrap(),
            ["dedup: warning: p: directory loop; not entered again"]
        );
    }

    #[test]
    fn a_log_that_cannot_be_written_is_named_once_and_incomplete() {
        let kept = Kept::new(None, 0);
        let log = ChangeLog::create(std::path::Path::new("/dev/full")).unwrap();
        let show = Show::new(&kept, false, false, Some(log));
        show.change(&copy("a"));
        assert!(!show.finish());
        assert!(!show.finish(), "still incomplete when asked again");
        let err = kept.err.lock().unwrap();
        assert_eq!(err.len(), 1, "{err:?}");
        assert!(err[0].starts_with("dedup: error: /dev/full: "), "{}", err[0]);
        assert!(err[0].ends_with("; the log is incomplete"), "{}", err[0]);
    }
}
