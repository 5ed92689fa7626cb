//! Shell completions and manual pages, generated from the same clap definitions that parse the
//! command line, so that neither can drift from what the binary accepts.

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};
use clap::CommandFactory;

use crate::cli::Cli;

/// Write the completion script for `shell` to stdout.
pub fn completions(shell: clap_complete::Shell) -> Result<bool> {
    // Generated into memory first: clap_complete panics on a failed write (a closed pipe).
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "dedup", &mut script);
    let mut out = std::io::stdout().lock();
    out.write_all(&script)
        .and_then(|()| out.flush())
        .context("cannot write the completion script")?;
    Ok(true)
}

/// Write one manual page per command (`dedup.1`, `dedup-store.1`, `dedup-store-backup.1`, …)
/// into `dir`, creating it if needed.
pub fn man_pages(dir: &Path) -> Result<bool> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    clap_mangen::generate_to(Cli::command(), dir)
        .with_context(|| format!("cannot write the manual pages into {}", dir.display()))?;
    Ok(true)
}
