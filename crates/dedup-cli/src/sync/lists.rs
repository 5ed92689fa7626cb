//! The lists `dedup sync` reads from files named on its command line: the include and exclude
//! rules of `--include-from`/`--exclude-from`, merged with `--include`/`--exclude` in the order
//! given. `-` names standard input, which can be read once.

use std::cell::Cell;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use anyhow::{bail, Context, Result};
use dedup_sync::filter::{push, FilterRule, RuleLine};

use super::args::FilterArg;

/// Reads the files of one command line, standard input at most once.
#[derive(Default)]
pub struct Reader {
    stdin_taken: Cell<Option<&'static str>>,
}

impl Reader {
    /// The whole of `path` (`-`: standard input), for the option `option`.
    pub fn read(&self, option: &'static str, path: &Path) -> Result<Vec<u8>> {
        let mut text = Vec::new();
        if path.as_os_str() == "-" {
            if let Some(first) = self.stdin_taken.replace(Some(option)) {
                bail!("{option} -: standard input is already read for {first}");
            }
            std::io::stdin().lock().read_to_end(&mut text).context("reading standard input")?;
        } else {
            text = std::fs::read(path).with_context(|| format!("{option} {}", path.display()))?;
        }
        Ok(text)
    }
}

/// The rules of `args`, in order, files read.
pub fn rules(args: &[FilterArg], nul: bool, reader: &Reader) -> Result<Vec<FilterRule>> {
    let mut rules = Vec::new();
    for arg in args {
        match arg {
            FilterArg::Include(p) => push(&mut rules, RuleLine::from_arg(p.as_bytes(), true)),
            FilterArg::Exclude(p) => push(&mut rules, RuleLine::from_arg(p.as_bytes(), false)),
            FilterArg::IncludeFrom(f) | FilterArg::ExcludeFrom(f) => {
                let include = matches!(arg, FilterArg::IncludeFrom(_));
                let option = if include { "--include-from" } else { "--exclude-from" };
                let text = reader.read(option, f)?;
                for line in RuleLine::from_file(&text, include, nul) {
                    push(&mut rules, line);
                }
            }
        }
    }
    Ok(rules)
}
