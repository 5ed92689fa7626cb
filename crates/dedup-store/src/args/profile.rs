//! The profile `-P` names, put under the command line: `client::profile` finds, vets and
//! parses it and holds the precedence rules; this maps the command line's arguments onto them.

use crate::client::profile::{self, BackupFields, CheckFields, ForgetFields, RepositoryFields};

use super::{ArgsError, StoreArgs, StoreCommand};

impl StoreArgs {
    /// These arguments with the profile `-P` names, if any, under them; refused when a backup
    /// is left with nothing to back up.
    pub fn with_profile(self) -> Result<StoreArgs, ArgsError> {
        apply(self)
    }
}

fn apply(mut args: StoreArgs) -> Result<StoreArgs, ArgsError> {
    if let Some(name) = args.common.profile.clone() {
        let (profile, _path) = profile::load(&name)?;
        let c = &mut args.common;
        profile.repository.merge_into(RepositoryFields {
            repository: &mut c.repo,
            password_file: &mut c.password_file,
            password_command: &mut c.password_command,
            connections: &mut c.connections,
            s3_virtual_host: &mut c.s3_virtual_host,
            no_cache: &mut c.no_cache,
            no_key_cache: &mut c.no_key_cache,
            insecure_http: &mut c.insecure_http,
        });
        match &mut args.command {
            StoreCommand::Backup(a) => profile.backup.merge_into(BackupFields {
                paths: &mut a.paths,
                files_from: &mut a.files_from,
                stdin: a.stdin,
                host: &mut a.host,
                tags: &mut a.tags,
                excludes: &mut a.excludes,
                iexcludes: &mut a.iexcludes,
                exclude_files: &mut a.exclude_files,
                exclude_if_present: &mut a.exclude_if_present,
                exclude_caches: &mut a.exclude_caches,
                one_file_system: &mut a.one_file_system,
                exclude_larger_than: &mut a.exclude_larger_than,
            }),
            StoreCommand::Forget(a) => profile.forget.merge_into(ForgetFields {
                snapshots_named: !a.snapshots.is_empty(),
                keep_last: &mut a.keep_last,
                keep_hourly: &mut a.keep_hourly,
                keep_daily: &mut a.keep_daily,
                keep_weekly: &mut a.keep_weekly,
                keep_monthly: &mut a.keep_monthly,
                keep_yearly: &mut a.keep_yearly,
                keep_within: &mut a.keep_within,
                keep_tags: &mut a.keep_tags,
                prune: &mut a.prune,
            }),
            StoreCommand::Check(a) => profile.check.merge_into(CheckFields {
                read_data: &mut a.read_data,
                read_data_subset: &mut a.read_data_subset,
            }),
            _ => {}
        }
    }
    if let StoreCommand::Backup(backup) = &args.command {
        if backup.paths.is_empty() && backup.files_from.is_empty() && !backup.stdin {
            return Err(ArgsError::NothingToBackUp);
        }
    }
    Ok(args)
}
