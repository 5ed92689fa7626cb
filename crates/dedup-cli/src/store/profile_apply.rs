//! A profile merged under the command line: what the command line gives wins, what it leaves
//! out the profile fills in. Lists that select (excludes, tags) add to the profile's; a backup's
//! PATHs and a forget's rules replace the profile's whole. The repository of a profile is taken
//! before DEDUP_REPO (a profile's retention policy must not meet another repository), while
//! DEDUP_PASSWORD and DEDUP_PASSWORD_FILE still come before its password source, as they come
//! before the command line's.

use std::ffi::OsString;

use anyhow::{bail, Result};

use super::args::{BackupArgs, CheckArgs, CommonArgs, ForgetArgs, StoreArgs, StoreCommand};
use super::profile::{
    self, BackupSection, CheckSection, ForgetSection, Profile, RepositorySection,
};

/// Applies the profile `-P` names, if any, to `args`; then makes sure a backup has something to
/// back up.
pub fn apply(mut args: StoreArgs) -> Result<StoreArgs> {
    if let Some(name) = args.common.profile.clone() {
        let (profile, _path) = profile::load(&name)?;
        merge(&mut args, profile);
    }
    if let StoreCommand::Backup(backup) = &args.command {
        if backup.paths.is_empty() && backup.files_from.is_empty() && !backup.stdin {
            bail!(
                "nothing to back up: give PATHs, --files-from FILE, --stdin, or a profile (-P \
                 NAME) with [backup] sources"
            );
        }
    }
    Ok(args)
}

fn merge(args: &mut StoreArgs, profile: Profile) {
    repository(&mut args.common, profile.repository);
    match &mut args.command {
        StoreCommand::Backup(backup_args) => backup(backup_args, profile.backup),
        StoreCommand::Forget(forget_args) => forget(forget_args, profile.forget),
        StoreCommand::Check(check_args) => check(check_args, profile.check),
        _ => {}
    }
}

fn repository(common: &mut CommonArgs, profile: RepositorySection) {
    if common.repo.is_none() {
        common.repo = profile.repository.map(|location| location.0);
    }
    let password_given = common.password_file.is_some()
        || common.password_command.is_some()
        || std::env::var_os("DEDUP_PASSWORD").is_some()
        || std::env::var_os("DEDUP_PASSWORD_FILE").is_some();
    if !password_given {
        common.password_file = profile.password_file.map(|path| path.0);
        common.password_command = profile.password_command;
    }
    common.connections = common.connections.or(profile.connections);
    common.s3_virtual_host |= profile.s3_virtual_host.unwrap_or(false);
    common.no_cache |= profile.no_cache.unwrap_or(false);
    common.insecure_http |= profile.insecure_http.unwrap_or(false);
}

fn backup(args: &mut BackupArgs, profile: BackupSection) {
    if args.paths.is_empty() && args.files_from.is_empty() && !args.stdin {
        args.paths = profile.sources.into_iter().map(|path| path.0).collect();
        args.files_from = profile.files_from.into_iter().map(|path| path.0).collect();
    }
    args.host = args.host.take().or(profile.host);
    prepend(&mut args.tags, profile.tags);
    prepend(&mut args.excludes, profile.exclude);
    prepend(&mut args.iexcludes, profile.iexclude);
    prepend(&mut args.exclude_files, profile.exclude_file.into_iter().map(|path| path.0).collect());
    prepend(
        &mut args.exclude_if_present,
        profile.exclude_if_present.into_iter().map(OsString::from).collect(),
    );
    args.exclude_caches |= profile.exclude_caches.unwrap_or(false);
    args.one_file_system |= profile.one_file_system.unwrap_or(false);
    args.exclude_larger_than =
        args.exclude_larger_than.or(profile.exclude_larger_than.map(|s| s.0));
}

fn forget(args: &mut ForgetArgs, profile: ForgetSection) {
    let rule_given = !args.snapshots.is_empty()
        || args.keep_last.is_some()
        || args.keep_hourly.is_some()
        || args.keep_daily.is_some()
        || args.keep_weekly.is_some()
        || args.keep_monthly.is_some()
        || args.keep_yearly.is_some()
        || args.keep_within.is_some()
        || !args.keep_tags.is_empty();
    if !rule_given {
        args.keep_last = profile.keep_last;
        args.keep_hourly = profile.keep_hourly;
        args.keep_daily = profile.keep_daily;
        args.keep_weekly = profile.keep_weekly;
        args.keep_monthly = profile.keep_monthly;
        args.keep_yearly = profile.keep_yearly;
        args.keep_within = profile.keep_within.map(|within| within.0);
        args.keep_tags = profile.keep_tag;
    }
    args.prune |= profile.prune.unwrap_or(false);
}

fn check(args: &mut CheckArgs, profile: CheckSection) {
    if !args.read_data && args.read_data_subset.is_none() {
        args.read_data = profile.read_data.unwrap_or(false);
        args.read_data_subset = profile.read_data_subset;
    }
}

/// The profile's items, then the command line's.
fn prepend<T>(list: &mut Vec<T>, mut first: Vec<T>) {
    first.append(list);
    *list = first;
}
