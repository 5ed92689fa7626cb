//! `dedup store …`: the arguments (dedup_store::args, with the profile under them) dispatched,
//! the glue that opens the repository through the store's client (a password prompt, warnings
//! printed), and one module per group of commands. Library errors become messages here; the
//! exit status is main's.

mod backup;
mod browse;
mod find;
mod history;
mod init;
mod json_progress;
mod key;
mod mount;
mod mount_signals;
mod mount_volume;
mod password;
mod report;
mod restore;
mod upkeep;

use anyhow::Result;
use dedup_store::args::{CommonArgs, StoreArgs, StoreCommand};
use dedup_store::client::password::{Password, PasswordError};
use dedup_store::client::{self, OpenRequest, Warning};
use dedup_store::repo::Repository;

/// Run `dedup store`; `Ok(true)` when complete.
pub fn run(args: StoreArgs) -> Result<bool> {
    let args = args.with_profile()?;
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

/// Prints a warning of the store's client.
fn warn(warning: Warning) {
    for line in warning.lines() {
        eprintln!("dedup: warning: {line}");
    }
}

/// Opens the repository, asking for the password where one is needed, and checks it against
/// what this client remembers of its location (dedup_store::client::open).
fn open(common: &CommonArgs) -> Result<Repository> {
    let sources = common.password_sources();
    open_with(common, &|| sources.password(&password::prompt))
}

/// [`open`] for the commands that judge what the repository holds (`check`, `repair`): past the
/// local metadata cache, whatever `--no-cache` says. A cached copy proves only that it is the
/// object as it was when fetched; an index file, snapshot or tree pack damaged or lost on the
/// storage since then would still read from it, and `check` would report no errors about a
/// repository whose restore then fails (restic's `check` likewise ignores its cache).
fn open_uncached(common: &CommonArgs) -> Result<Repository> {
    open(&CommonArgs { no_cache: true, ..common.clone() })
}

/// [`open`], with the password taken from `password` where one is needed (the source
/// repository of `copy` has sources of its own).
fn open_with(
    common: &CommonArgs,
    password: &dyn Fn() -> Result<Password, PasswordError>,
) -> Result<Repository> {
    let location = common.location()?;
    let tell = |warning: Warning| match warning {
        Warning::KeyOrigin(line) if common.verbose > 0 => eprintln!("dedup: {line}"),
        Warning::KeyOrigin(_) => {}
        warning => warn(warning),
    };
    Ok(client::open(&OpenRequest {
        location: &location,
        reach: common.reach(),
        no_cache: common.no_cache,
        no_key_cache: common.no_key_cache,
        accept_change: common.accept_repository_change,
        password_given: common.password_sources().given(),
        password,
        warn: &tell,
    })?)
}

/// The program recorded in what the store writes.
fn program() -> String {
    format!("dedup {}", env!("CARGO_PKG_VERSION"))
}
