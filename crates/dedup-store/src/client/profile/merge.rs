//! A profile put under the command line: what the command line gives wins, what it leaves out
//! the profile fills in. Lists that select (excludes, tags) add to the profile's; a backup's
//! PATHs and a forget's rules replace the profile's whole. The repository of a profile is taken
//! before DEDUP_REPO (a profile's retention policy must not meet another repository), while
//! DEDUP_PASSWORD and DEDUP_PASSWORD_FILE still come before its password source, as they come
//! before the command line's.
//!
//! The caller lends its settings field by field (the `…Fields` structs of references), so that
//! these rules hold whatever shape its own argument types have.

use std::ffi::OsString;
use std::path::PathBuf;

use super::{AbsolutePath, BackupSection, CheckSection, ForgetSection, RepositorySection};
use crate::client::password;

/// The command line's settings of where the repository is and how it is opened.
#[allow(missing_docs)]
pub struct RepositoryFields<'a> {
    pub repository: &'a mut Option<PathBuf>,
    pub password_file: &'a mut Option<PathBuf>,
    pub password_command: &'a mut Option<String>,
    pub connections: &'a mut Option<usize>,
    pub s3_virtual_host: &'a mut bool,
    pub no_cache: &'a mut bool,
    pub no_key_cache: &'a mut bool,
    pub insecure_http: &'a mut bool,
}

/// The command line's settings of `backup`.
#[allow(missing_docs)]
pub struct BackupFields<'a> {
    pub paths: &'a mut Vec<PathBuf>,
    pub files_from: &'a mut Vec<PathBuf>,
    /// Whether `--stdin` is given (then no PATH is taken from the profile).
    pub stdin: bool,
    pub host: &'a mut Option<String>,
    pub tags: &'a mut Vec<String>,
    pub excludes: &'a mut Vec<String>,
    pub iexcludes: &'a mut Vec<String>,
    pub exclude_files: &'a mut Vec<PathBuf>,
    pub exclude_if_present: &'a mut Vec<OsString>,
    pub exclude_caches: &'a mut bool,
    pub one_file_system: &'a mut bool,
    pub exclude_larger_than: &'a mut Option<u64>,
}

/// The command line's settings of `forget`.
#[allow(missing_docs)]
pub struct ForgetFields<'a> {
    /// Whether snapshots are named (then no rule is taken from the profile).
    pub snapshots_named: bool,
    pub keep_last: &'a mut Option<u32>,
    pub keep_hourly: &'a mut Option<u32>,
    pub keep_daily: &'a mut Option<u32>,
    pub keep_weekly: &'a mut Option<u32>,
    pub keep_monthly: &'a mut Option<u32>,
    pub keep_yearly: &'a mut Option<u32>,
    pub keep_within: &'a mut Option<String>,
    pub keep_tags: &'a mut Vec<String>,
    pub prune: &'a mut bool,
}

/// The command line's settings of `check`.
#[allow(missing_docs)]
pub struct CheckFields<'a> {
    pub read_data: &'a mut bool,
    pub read_data_subset: &'a mut Option<String>,
}

impl RepositorySection {
    /// Fills in what the command line leaves out.
    pub fn merge_into(self, cli: RepositoryFields<'_>) {
        if cli.repository.is_none() {
            *cli.repository = self.repository.map(|location| location.0);
        }
        let password_given = cli.password_file.is_some()
            || cli.password_command.is_some()
            || std::env::var_os(password::PASSWORD_VAR).is_some()
            || std::env::var_os(password::PASSWORD_FILE_VAR).is_some();
        if !password_given {
            *cli.password_file = self.password_file.map(|path| path.0);
            *cli.password_command = self.password_command;
        }
        *cli.connections = cli.connections.or(self.connections);
        *cli.s3_virtual_host |= self.s3_virtual_host.unwrap_or(false);
        *cli.no_cache |= self.no_cache.unwrap_or(false);
        *cli.no_key_cache |= self.no_key_cache.unwrap_or(false);
        *cli.insecure_http |= self.insecure_http.unwrap_or(false);
    }
}

impl BackupSection {
    /// Fills in what the command line leaves out, and puts the profile's selection first.
    pub fn merge_into(self, cli: BackupFields<'_>) {
        if cli.paths.is_empty() && cli.files_from.is_empty() && !cli.stdin {
            *cli.paths = paths(self.sources);
            *cli.files_from = paths(self.files_from);
        }
        *cli.host = cli.host.take().or(self.host);
        prepend(cli.tags, self.tags);
        prepend(cli.excludes, self.exclude);
        prepend(cli.iexcludes, self.iexclude);
        prepend(cli.exclude_files, paths(self.exclude_file));
        prepend(
            cli.exclude_if_present,
            self.exclude_if_present.into_iter().map(OsString::from).collect(),
        );
        *cli.exclude_caches |= self.exclude_caches.unwrap_or(false);
        *cli.one_file_system |= self.one_file_system.unwrap_or(false);
        *cli.exclude_larger_than =
            cli.exclude_larger_than.or(self.exclude_larger_than.map(|s| s.0));
    }
}

impl ForgetSection {
    /// The profile's rules, unless the command line gives any.
    pub fn merge_into(self, cli: ForgetFields<'_>) {
        let rule_given = cli.snapshots_named
            || cli.keep_last.is_some()
            || cli.keep_hourly.is_some()
            || cli.keep_daily.is_some()
            || cli.keep_weekly.is_some()
            || cli.keep_monthly.is_some()
            || cli.keep_yearly.is_some()
            || cli.keep_within.is_some()
            || !cli.keep_tags.is_empty();
        if !rule_given {
            *cli.keep_last = self.keep_last;
            *cli.keep_hourly = self.keep_hourly;
            *cli.keep_daily = self.keep_daily;
            *cli.keep_weekly = self.keep_weekly;
            *cli.keep_monthly = self.keep_monthly;
            *cli.keep_yearly = self.keep_yearly;
            *cli.keep_within = self.keep_within.map(|within| within.0);
            *cli.keep_tags = self.keep_tag;
        }
        *cli.prune |= self.prune.unwrap_or(false);
    }
}

impl CheckSection {
    /// The profile's amount of data to read, unless the command line says.
    pub fn merge_into(self, cli: CheckFields<'_>) {
        if !*cli.read_data && cli.read_data_subset.is_none() {
            *cli.read_data = self.read_data.unwrap_or(false);
            *cli.read_data_subset = self.read_data_subset;
        }
    }
}

fn paths(list: Vec<AbsolutePath>) -> Vec<PathBuf> {
    list.into_iter().map(|path| path.0).collect()
}

/// The profile's items, then the command line's.
fn prepend<T>(list: &mut Vec<T>, mut first: Vec<T>) {
    first.append(list);
    *list = first;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::profile::parse;

    #[test]
    fn the_command_line_wins_and_selections_add_up() {
        let profile = parse(
            "[backup]\nsources = [\"/home\"]\nexclude = [\"*.tmp\"]\nhost = \"profile\"\n\
             [forget]\nkeep-last = 3\nprune = true\n[check]\nread-data = true\n",
        )
        .unwrap();
        let (mut paths, mut files_from) = (vec![PathBuf::from("/etc")], Vec::new());
        let (mut host, mut tags, mut excludes) = (None, Vec::new(), vec!["*.o".to_owned()]);
        let (mut iexcludes, mut exclude_files, mut present) = (Vec::new(), Vec::new(), Vec::new());
        let (mut caches, mut one_fs, mut larger) = (false, false, None);
        profile.backup.merge_into(BackupFields {
            paths: &mut paths,
            files_from: &mut files_from,
            stdin: false,
            host: &mut host,
            tags: &mut tags,
            excludes: &mut excludes,
            iexcludes: &mut iexcludes,
            exclude_files: &mut exclude_files,
            exclude_if_present: &mut present,
            exclude_caches: &mut caches,
            one_file_system: &mut one_fs,
            exclude_larger_than: &mut larger,
        });
        assert_eq!(paths, [PathBuf::from("/etc")]);
        assert_eq!(excludes, ["*.tmp", "*.o"]);
        assert_eq!(host.as_deref(), Some("profile"));
        let mut keep = [None; 6];
        let [a, b, c, d, e, f] = &mut keep;
        let (mut within, mut keep_tags, mut prune) = (None, Vec::new(), false);
        profile.forget.merge_into(ForgetFields {
            snapshots_named: false,
            keep_last: a,
            keep_hourly: b,
            keep_daily: c,
            keep_weekly: d,
            keep_monthly: e,
            keep_yearly: f,
            keep_within: &mut within,
            keep_tags: &mut keep_tags,
            prune: &mut prune,
        });
        assert_eq!((keep[0], prune), (Some(3), true));
        let (mut read_data, mut subset) = (false, Some("1/5".to_owned()));
        profile
            .check
            .merge_into(CheckFields { read_data: &mut read_data, read_data_subset: &mut subset });
        assert!(!read_data && subset.is_some());
    }
}
