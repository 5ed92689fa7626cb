//! `dedup store …`: argument handling, opening the repository with a password, and one module
//! per group of commands. Library errors become messages here; the exit status is main's.

pub mod args;
mod backup;
mod browse;
mod find;
mod help_examples;
mod history;
pub mod history_args;
mod init;
mod json_progress;
mod key;
mod mount;
mod mount_signals;
mod mount_volume;
mod password;
mod profile;
mod profile_apply;
mod report;
mod restore;
mod trust;
mod upkeep;
mod user_name;

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use dedup_store::backend::{open_backend, Backend, S3Options};
use dedup_store::repo::{Repository, SnapshotFilter};

use self::args::{CommonArgs, FilterArgs, StoreArgs, StoreCommand};

/// Run `dedup store`; `Ok(true)` when complete.
pub fn run(args: StoreArgs) -> Result<bool> {
    let args = profile_apply::apply(args)?;
    let common = &args.common;
    crate::allocator::tune(&crate::allocator::STORE);
    match args.command {
        StoreCommand::Init(a) => init::run(common, a),
        StoreCommand::Backup(a) => backup::run(common, a),
        StoreCommand::Snapshots(a) => browse::snapshots(common, a),
        StoreCommand::Ls(a) => browse::ls(common, a),
        StoreCommand::Restore(a) => restore::run(common, a),
        StoreCommand::Dump(a) => browse::dump(common, a),
        StoreCommand::Diff(a) => browse::diff(common, a),
        StoreCommand::Mount(a) if a.writable.is_some() => mount_volume::run(common, a),
        StoreCommand::Mount(a) => mount::run(common, a),
        StoreCommand::Stats(a) => report::stats(common, a),
        StoreCommand::Check(a) => report::check(common, a),
        StoreCommand::Key(a) => key::run(common, a),
        StoreCommand::Forget(a) => upkeep::forget(common, a),
        StoreCommand::Prune(a) => upkeep::prune(common, a),
        StoreCommand::Repair(a) => upkeep::repair(common, a),
        StoreCommand::Find(a) => find::run(common, a),
        StoreCommand::Tag(a) => history::tag(common, a),
        StoreCommand::Rewrite(a) => history::rewrite(common, a),
        StoreCommand::Copy(a) => history::copy(common, a),
    }
}

/// The repository location from `-r` or DEDUP_REPO.
fn location(common: &CommonArgs) -> Result<PathBuf> {
    if let Some(repo) = &common.repo {
        return Ok(repo.clone());
    }
    match std::env::var_os("DEDUP_REPO") {
        Some(repo) if !repo.is_empty() => Ok(PathBuf::from(repo)),
        _ => bail!("no repository given: use -r/--repo REPO or set DEDUP_REPO"),
    }
}

/// The storage behind the repository location (a directory, or `s3:…`).
fn backend(common: &CommonArgs, location: &std::path::Path) -> Result<Arc<dyn Backend>> {
    let options = S3Options {
        connections: common.connections.unwrap_or(8).max(1),
        virtual_host: common.s3_virtual_host,
        accept_new_host_key: common.accept_new_host_key,
        ..S3Options::default()
    };
    open_backend(location, &options)
        .with_context(|| format!("cannot use the repository location {}", location.display()))
}

/// Opens the repository, asking for the password where one is needed, and checks it against
/// what this client remembers of its location (trust.rs).
fn open(common: &CommonArgs) -> Result<Repository> {
    trust::open(common)
}

/// The library's snapshot filter from `--host` and `--path` (made absolute).
fn filter(args: &FilterArgs) -> SnapshotFilter {
    SnapshotFilter {
        host: args.host.clone(),
        paths: args.paths.iter().map(|p| absolute_bytes(p)).collect(),
    }
}

/// `path` made absolute (not resolved), as backup records it.
fn absolute_bytes(path: &std::path::Path) -> Vec<u8> {
    std::path::absolute(path)
        .unwrap_or_else(|_| path.to_path_buf())
        .into_os_string()
        .into_encoded_bytes()
}

/// This machine's host name.
fn hostname() -> String {
    dedup_store::repo::this_host()
}

/// The user's name, for key labels and snapshots: the name of the effective user id (see
/// `user_name`), else `uid<N>` (which `snapshots --json` shows as the number).
fn username() -> String {
    let uid = rustix::process::geteuid().as_raw();
    user_name::of_uid(uid).unwrap_or_else(|| format!("uid{uid}"))
}

/// A time in ns since the epoch as `YYYY-MM-DD HH:MM:SS` UTC (dedup-store's words, tested there).
fn show_time(ns: i64) -> String {
    dedup_store::text::show_time(ns)
}
