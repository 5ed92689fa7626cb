//! `dedup store …`: argument handling, the glue that opens the repository through the store's
//! client (a password prompt, warnings printed), and one module per group of commands. Library
//! errors become messages here; the exit status is main's.

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
mod profile_apply;
mod report;
mod restore;
mod upkeep;

use std::path::PathBuf;

use anyhow::Result;
use dedup_store::client::password::{Password, PasswordError};
use dedup_store::client::{self, OpenRequest, Reach, Warning};
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
    Ok(client::open::location(common.repo.as_deref())?)
}

/// How the repository's storage is reached.
fn reach(common: &CommonArgs) -> Reach {
    Reach {
        connections: common.connections,
        s3_virtual_host: common.s3_virtual_host,
        accept_new_host_key: common.accept_new_host_key,
        insecure_http: common.insecure_http,
    }
}

/// Prints a warning of the store's client.
fn warn(warning: Warning) {
    for line in warning.lines() {
        eprintln!("dedup: warning: {line}");
    }
}

/// Opens the repository, asking for the password where one is needed, and checks it against
/// what this client remembers of its location (dedup_store::client::open).
fn open(common: &CommonArgs) -> Result<Repository> {
    let sources = password::sources(common);
    open_with(common, &|| sources.password(&password::prompt))
}

/// [`open`], with the password taken from `password` where one is needed (the source
/// repository of `copy` has sources of its own).
fn open_with(
    common: &CommonArgs,
    password: &dyn Fn() -> Result<Password, PasswordError>,
) -> Result<Repository> {
    let location = location(common)?;
    let tell = |warning: Warning| match warning {
        Warning::KeyOrigin(line) if common.verbose > 0 => eprintln!("dedup: {line}"),
        Warning::KeyOrigin(_) => {}
        warning => warn(warning),
    };
    Ok(client::open(&OpenRequest {
        location: &location,
        reach: reach(common),
        no_cache: common.no_cache,
        no_key_cache: common.no_key_cache,
        accept_change: common.accept_repository_change,
        password_given: password::sources(common).given(),
        password,
        warn: &tell,
    })?)
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

/// The user's name, for snapshots (dedup_store::client::user_name).
fn username() -> String {
    client::user_name::current()
}
