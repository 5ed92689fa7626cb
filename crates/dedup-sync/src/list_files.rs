//! The lists `dedup sync` reads from files named on its command line: the include and exclude
//! rules of `--include-from`/`--exclude-from`, merged with `--include`/`--exclude` in the order
//! given, and the paths of `--files-from`. `-` names standard input, which can be read once.

use std::cell::{Cell, RefCell};
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use crate::files_from::FilesFromOptions;
use crate::filter::{entries, push, FilterRule, RuleLine};

/// One of the options that make the include and exclude rules, as given.
#[derive(Debug, Clone, Copy)]
pub enum RuleSource<'a> {
    /// `--include PATTERN` (`include`) or `--exclude PATTERN`.
    Pattern {
        /// The argument.
        pattern: &'a [u8],
        /// Given to `--include`.
        include: bool,
    },
    /// `--include-from FILE` (`include`) or `--exclude-from FILE`.
    File {
        /// The file (`-`: standard input).
        path: &'a Path,
        /// Given to `--include-from`.
        include: bool,
    },
}

/// A list that could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ListError {
    /// A second option names `-`.
    #[error("{option} -: standard input is already read for {first}")]
    StdinTwice {
        /// The option that named it again.
        option: &'static str,
        /// The option that read it.
        first: &'static str,
    },
    /// Standard input could not be read.
    #[error("reading standard input")]
    Stdin(#[source] io::Error),
    /// A file could not be read.
    #[error("{option} {}", path.display())]
    File {
        /// The option that named it.
        option: &'static str,
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        cause: io::Error,
    },
}

/// Reads the files of one command line, standard input at most once.
pub struct ListReader<'a> {
    stdin: RefCell<&'a mut dyn Read>,
    stdin_taken: Cell<Option<&'static str>>,
}

impl<'a> ListReader<'a> {
    /// A reader for which `-` is `stdin`.
    pub fn new(stdin: &'a mut dyn Read) -> Self {
        ListReader { stdin: RefCell::new(stdin), stdin_taken: Cell::new(None) }
    }

    /// The whole of `path` (`-`: standard input), for the option `option`.
    pub fn read(&self, option: &'static str, path: &Path) -> Result<Vec<u8>, ListError> {
        let mut text = Vec::new();
        if path.as_os_str() == "-" {
            if let Some(first) = self.stdin_taken.replace(Some(option)) {
                return Err(ListError::StdinTwice { option, first });
            }
            self.stdin.borrow_mut().read_to_end(&mut text).map_err(ListError::Stdin)?;
        } else {
            text = std::fs::read(path).map_err(|cause| ListError::File {
                option,
                path: path.to_owned(),
                cause,
            })?;
        }
        Ok(text)
    }

    /// The rules of `sources`, in order, files read (`nul`: their lines end at NUL bytes).
    pub fn rules(&self, sources: &[RuleSource], nul: bool) -> Result<Vec<FilterRule>, ListError> {
        let mut rules = Vec::new();
        for source in sources {
            match *source {
                RuleSource::Pattern { pattern, include } => {
                    push(&mut rules, RuleLine::from_arg(pattern, include));
                }
                RuleSource::File { path, include } => {
                    let option = if include { "--include-from" } else { "--exclude-from" };
                    let text = self.read(option, path)?;
                    for line in RuleLine::from_file(&text, include, nul) {
                        push(&mut rules, line);
                    }
                }
            }
        }
        Ok(rules)
    }

    /// The paths of `--files-from FILE` (`nul`: NUL-separated; `recursive`: `-r`).
    pub fn files_from(
        &self,
        path: &Path,
        nul: bool,
        recursive: bool,
    ) -> Result<FilesFromOptions, ListError> {
        let text = self.read("--files-from", path)?;
        Ok(FilesFromOptions { paths: entries(&text, nul).map(<[u8]>::to_vec).collect(), recursive })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_keep_the_command_line_order_and_stdin_is_read_once() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("rules");
        std::fs::write(&file, "# comment\n+ *.jpg\n*.tmp\n").unwrap();
        let mut stdin: &[u8] = b"a\nb\n";
        let reader = ListReader::new(&mut stdin);
        let sources = [
            RuleSource::Pattern { pattern: b"x", include: true },
            RuleSource::File { path: &file, include: false },
        ];
        let rules = reader.rules(&sources, false).unwrap();
        let seen: Vec<(bool, &[u8])> =
            rules.iter().map(|r| (r.include, r.pattern.as_slice())).collect();
        assert_eq!(seen, [(true, &b"x"[..]), (true, b"*.jpg"), (false, b"*.tmp")]);
        let listed = reader.files_from(Path::new("-"), false, true).unwrap();
        assert_eq!(listed.paths, [b"a".to_vec(), b"b".to_vec()]);
        let again =
            reader.rules(&[RuleSource::File { path: Path::new("-"), include: true }], false);
        assert_eq!(
            again.unwrap_err().to_string(),
            "--include-from -: standard input is already read for --files-from"
        );
        let missing = reader.files_from(&dir.path().join("none"), false, false).unwrap_err();
        assert!(missing.to_string().starts_with("--files-from "), "{missing}");
    }
}
