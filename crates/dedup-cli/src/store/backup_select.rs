//! restic's backup selection options turned into what the backup takes: the paths, the globs
//! of the walk's one exclusion matcher, and the selection by size and by what a directory holds.

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use dedup_store::backup::Selection;

use super::args::BackupArgs;

/// The roots to back up: the PATH arguments, then each `--files-from` file's lines (blank lines
/// and `#` comments skipped, as restic does; names are taken as bytes, so any name works).
pub fn paths(args: &BackupArgs) -> Result<Vec<PathBuf>> {
    let mut paths = args.paths.clone();
    for file in &args.files_from {
        for line in lines_of(file)? {
            paths.push(PathBuf::from(OsString::from_vec(line)));
        }
    }
    Ok(paths)
}

/// The exclusion globs: `--exclude`, each `--exclude-file`'s lines (trimmed), and `--iexclude` made
/// case-insensitive.
pub fn excludes(args: &BackupArgs) -> Result<Vec<String>> {
    let mut globs = args.excludes.clone();
    for file in &args.exclude_files {
        for line in lines_of(file)? {
            let line = String::from_utf8(line)
                .map_err(|_| anyhow::anyhow!("{}: a pattern is not valid UTF-8", file.display()))?;
            // restic trims a pattern line: a trailing space typed by mistake matches nothing.
            globs.push(line.trim().to_owned());
        }
    }
    globs.extend(args.iexcludes.iter().map(|glob| case_insensitive(glob)));
    Ok(globs)
}

/// What restic's backup leaves out besides the globs: by size and by what a directory holds.
pub fn selection(args: &BackupArgs) -> Selection {
    Selection {
        larger_than: args.exclude_larger_than,
        if_present: args.exclude_if_present.iter().map(|name| name.clone().into_vec()).collect(),
        caches: args.exclude_caches,
    }
}

/// The file's lines that are neither blank nor a `#` comment, without their line ends.
pub(super) fn lines_of(file: &Path) -> Result<Vec<Vec<u8>>> {
    let text = std::fs::read(file).with_context(|| format!("cannot read {}", file.display()))?;
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
}
