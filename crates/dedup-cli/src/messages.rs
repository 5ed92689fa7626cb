//! What the user reads on stderr: one line per problem naming the path and the reason, kept on
//! one line whatever bytes the path holds, and drawn around the progress display.

use std::fmt::Write as _;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use dedup_core::{Observer, Problem, Severity};
use indicatif::{HumanCount, ProgressBar};

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
        let label = match problem.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note if self.verbose => "note",
            Severity::Note => return,
        };
        self.line(&format!("dedup: {label}: {}: {}", quote_path(&problem.path), problem.kind));
    }
}

/// A path as it can be shown on one line: printable UTF-8 as it is, anything else in quotes
/// with escapes (`\n`, `\xff`), so names with newlines or odd bytes cannot forge extra lines.
pub fn quote_path(path: &Path) -> String {
    let bytes = path.as_os_str().as_bytes();
    match std::str::from_utf8(bytes) {
        Ok(text) if !text.chars().any(|c| c.is_control() || c == '"') => text.to_owned(),
        _ => {
            let mut out = String::from("\"");
            for chunk in bytes.utf8_chunks() {
                for c in chunk.valid().chars() {
                    match c {
                        '"' => out.push_str("\\\""),
                        '\\' => out.push_str("\\\\"),
                        c if c.is_control() => out.extend(c.escape_default()),
                        c => out.push(c),
                    }
                }
                for b in chunk.invalid() {
                    let _ = write!(out, "\\x{b:02x}");
                }
            }
            out.push('"');
            out
        }
    }
}

/// `n` and the noun that fits it: "1 file", "2,048 files".
pub fn count(n: u64, one: &str, many: &str) -> String {
    format!("{} {}", HumanCount(n), if n == 1 { one } else { many })
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
    use super::quote_path;
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    use std::path::Path;

    fn q(bytes: &[u8]) -> String {
        quote_path(Path::new(OsStr::from_bytes(bytes)))
    }

    #[test]
    fn plain_paths_are_shown_as_they_are() {
        assert_eq!(q(b"photos/2024 summer/a.jpg"), "photos/2024 summer/a.jpg");
        assert_eq!(q("é`*".as_bytes()), "é`*");
    }

    #[test]
    fn odd_bytes_are_escaped_on_one_line() {
        assert_eq!(q(b"a\nb"), "\"a\\nb\"");
        assert_eq!(q(b"x\xffy"), "\"x\\xffy\"");
        assert_eq!(q(b"say \"hi\""), "\"say \\\"hi\\\"\"");
    }
}
