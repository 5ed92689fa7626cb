//! A problem as the person running dedup reads it on standard error: one line naming the path
//! and the reason, kept on one line whatever bytes the path holds.

use crate::text::quote_path;
use crate::{Problem, Severity};

impl Problem {
    /// `dedup: error: PATH: REASON`; `None` for a note unless `verbose` asks for notes.
    pub fn line(&self, verbose: bool) -> Option<String> {
        let label = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note if verbose => "note",
            Severity::Note => return None,
        };
        Some(format!("dedup: {label}: {}: {}", quote_path(&self.path), self.kind))
    }
}

#[cfg(test)]
mod tests {
    use crate::{Problem, ProblemKind};

    #[test]
    fn notes_only_when_asked_and_paths_on_one_line() {
        let note = Problem::note("a/b", ProblemKind::Loop);
        assert_eq!(note.line(false), None);
        assert_eq!(note.line(true).unwrap(), "dedup: note: a/b: directory loop; not entered again");
        let error = Problem::error("x\ny", ProblemKind::Changed);
        assert_eq!(
            error.line(false).unwrap(),
            "dedup: error: \"x\\ny\": file changed while it was being read; left out"
        );
        let warning = Problem::warning("w", ProblemKind::Cache("busy".into()));
        assert_eq!(warning.line(false).unwrap(), "dedup: warning: w: busy");
    }
}
