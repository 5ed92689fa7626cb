//! restic's backup options turned into what the backup takes: the roots (the paths given and
//! each `--files-from` file's), the globs of the walk's one exclusion matcher (`--exclude`,
//! `--exclude-file`, `--iexclude`), and the parent snapshot.

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::{Path, PathBuf};

use crate::backup::{BackupOptions, Selection};
use crate::error::{Error, Result};
use crate::repo::Repository;

/// What `dedup store backup` was asked to do.
pub struct BackupRequest<'a> {
    /// The PATH arguments.
    pub paths: &'a [PathBuf],
    /// Files that list more roots, one a line.
    pub files_from: &'a [PathBuf],
    /// The host recorded.
    pub host: String,
    /// The user recorded.
    pub user: String,
    /// The tags recorded.
    pub tags: Vec<String>,
    /// Globs of entries to leave out.
    pub excludes: &'a [String],
    /// Files that list more such globs, one a line.
    pub exclude_files: &'a [PathBuf],
    /// Globs of entries to leave out, letters matching in either case.
    pub iexcludes: &'a [String],
    /// What is left out by size and by what a directory holds.
    pub selection: Selection,
    /// Stay on the file system of each root.
    pub one_file_system: bool,
    /// Read and cut everything, write nothing.
    pub dry_run: bool,
    /// The data comes from standard input (no parent unless one is named).
    pub stdin: bool,
    /// The parent snapshot named, if one is.
    pub parent: Option<&'a str>,
    /// The program recorded.
    pub program: String,
    /// Back up a PATH that is an empty directory even where the parent snapshot holds entries.
    pub allow_empty_source: bool,
}

/// The backup's options for `request`, its parent chosen in `repo`.
pub fn backup_options(repo: &Repository, request: BackupRequest<'_>) -> Result<BackupOptions> {
    let roots = roots(request.paths, request.files_from)?;
    let excludes = excludes(request.excludes, request.exclude_files, request.iexcludes)?;
    let paths: Vec<Vec<u8>> = roots.iter().map(|p| absolute_bytes(p)).collect();
    let parent = super::choose_parent(repo, request.parent, &request.host, &paths, request.stdin)?;
    if !request.allow_empty_source && !request.stdin {
        super::backup_empty::refuse_empty_roots(repo, &roots, &paths, parent.as_ref())?;
    }
    Ok(BackupOptions {
        paths: roots,
        host: request.host,
        user: request.user,
        tags: request.tags,
        excludes,
        selection: request.selection,
        one_file_system: request.one_file_system,
        dry_run: request.dry_run,
        parent,
        program: request.program,
    })
}

/// `path` made absolute (not resolved), as backup records it.
pub fn absolute_bytes(path: &Path) -> Vec<u8> {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf()).into_os_string().into_vec()
}

/// The roots to back up: `paths`, then each of `files_from`'s lines (blank lines and `#`
/// comments skipped, as restic does; names are taken as bytes, so any name works).
fn roots(paths: &[PathBuf], files_from: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut roots = paths.to_vec();
    for file in files_from {
        for line in list_file_lines(file)? {
            roots.push(PathBuf::from(OsString::from_vec(line)));
        }
    }
    Ok(roots)
}

/// The exclusion globs: `globs`, each of `files`' lines (trimmed), and `iglobs` made
/// case-insensitive.
fn excludes(globs: &[String], files: &[PathBuf], iglobs: &[String]) -> Result<Vec<String>> {
    let mut all = globs.to_vec();
    for file in files {
        for line in list_file_lines(file)? {
            let line = String::from_utf8(line).map_err(|_| {
                Error::Invalid(format!("{}: a pattern is not valid UTF-8", file.display()))
            })?;
            // restic trims a pattern line: a trailing space typed by mistake matches nothing.
            all.push(line.trim().to_owned());
        }
    }
    all.extend(iglobs.iter().map(|glob| case_insensitive(glob)));
    Ok(all)
}

/// The lines of a list file (`--files-from`, `--exclude-file`) that are neither blank nor a
/// `#` comment, without their line ends.
pub fn list_file_lines(file: &Path) -> Result<Vec<Vec<u8>>> {
    let text =
        std::fs::read(file).map_err(|e| Error::io(format!("cannot read {}", file.display()), e))?;
    Ok(text
        .split(|&b| b == b'\n')
        .map(|line| line.strip_suffix(b"\r").unwrap_or(line))
        .filter(|line| !line.iter().all(u8::is_ascii_whitespace) && !line.starts_with(b"#"))
        .map(<[u8]>::to_vec)
        .collect())
}

/// The glob with each letter outside a `[...]` class matching either case (`a` becomes `[aA]`);
/// an escaped character and a class are kept as written.
fn case_insensitive(glob: &str) -> String {
    let mut out = String::with_capacity(glob.len() * 2);
    let mut chars = glob.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                out.push(c);
                out.extend(chars.next());
            }
            '[' => {
                out.push(c);
                // A `]` right after the opening (or after `!`) is a member, not the end.
                let mut first = true;
                for member in chars.by_ref() {
                    out.push(member);
                    if member == ']' && !first {
                        break;
                    }
                    first = first && (member == '!' || member == '^');
                    first = first && member != ']';
                }
            }
            _ => {
                let (lower, upper) = (single(c.to_lowercase()), single(c.to_uppercase()));
                match (lower, upper) {
                    (Some(l), Some(u)) if l != u => {
                        out.push('[');
                        out.push(l);
                        out.push(u);
                        out.push(']');
                    }
                    _ => out.push(c),
                }
            }
        }
    }
    out
}

fn single(mut chars: impl Iterator<Item = char>) -> Option<char> {
    let c = chars.next()?;
    chars.next().is_none().then_some(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn letters_match_either_case_classes_and_escapes_kept() {
        assert_eq!(case_insensitive("*.Jpg"), "*.[jJ][pP][gG]");
        assert_eq!(case_insensitive("[ab]x"), "[ab][xX]");
        assert_eq!(case_insensitive("[]a]"), "[]a]");
        assert_eq!(case_insensitive("\\*1"), "\\*1");
    }

    #[test]
    fn a_list_file_keeps_names_as_bytes_and_skips_blanks_and_comments() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("list");
        std::fs::write(&file, b"/a\r\n\n  \n# note\n/b\xff\n").unwrap();
        assert_eq!(list_file_lines(&file).unwrap(), [b"/a".to_vec(), b"/b\xff".to_vec()]);
        let missing = list_file_lines(&dir.path().join("none")).unwrap_err().to_string();
        assert!(missing.starts_with("cannot read "), "{missing}");
    }
}
