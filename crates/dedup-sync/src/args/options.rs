//! From `dedup sync`'s arguments to [`SyncOptions`]: the include and exclude rules and the
//! `--files-from` list read (standard input for `-`), the backups' suffix, the environment's
//! disk-order switch.

use std::io::Read;
use std::os::unix::ffi::OsStrExt;

use dedup_core::env_setting::SettingError;
use dedup_fs::Reflink;
use dedup_scan::io::Concurrency;

use super::{DedupArg, FilterArg, ReflinkArg, SyncArgs};
use crate::backup::BackupOptions;
use crate::list_files::{ListError, ListReader, RuleSource};
use crate::{DedupMode, DiskOrder, SyncOptions};

/// Arguments that ask for something no run can do, or lists that cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum ArgsError {
    /// `--suffix` without a backup to name.
    #[error("--suffix names the backups' suffix: it needs --backup or --backup-dir")]
    SuffixWithoutBackup,
    /// A rule file or the `--files-from` list cannot be read or parsed.
    #[error(transparent)]
    List(#[from] ListError),
    /// The disk-order environment variable does not parse.
    #[error(transparent)]
    DiskOrder(#[from] SettingError),
}

impl SyncArgs {
    /// The settings these arguments ask for; `stdin` is read for a list named `-`.
    pub fn options(&self, stdin: &mut dyn Read) -> Result<SyncOptions, ArgsError> {
        let backups = self.backup || self.backup_dir.is_some();
        if self.suffix.is_some() && !backups {
            return Err(ArgsError::SuffixWithoutBackup);
        }
        let reader = ListReader::new(stdin);
        let sources: Vec<RuleSource> = self.filters.iter().map(rule_source).collect();
        Ok(SyncOptions {
            delete: self.delete,
            max_delete: self.max_delete,
            allow_empty_source: self.allow_empty_source,
            dry_run: self.dry_run,
            checksum: self.checksum,
            filters: reader.rules(&sources, self.from0)?,
            files_from: match &self.files_from {
                Some(f) => Some(reader.files_from(f, self.from0, self.recursive)?),
                None => None,
            },
            delete_excluded: self.delete_excluded,
            backup: backups.then(|| BackupOptions {
                dir: self.backup_dir.clone(),
                suffix: match &self.suffix {
                    Some(s) => s.as_bytes().to_vec(),
                    None if self.backup_dir.is_some() => Vec::new(),
                    None => b"~".to_vec(),
                },
            }),
            one_file_system: self.one_file_system,
            reflink: match self.reflink {
                ReflinkArg::Auto => Reflink::Auto,
                ReflinkArg::Always => Reflink::Always,
                ReflinkArg::Never => Reflink::Never,
            },
            link_dest: self.link_dest.clone(),
            log: self.log.clone(),
            dedup: self.dedup.map(|d| match d {
                DedupArg::Reflink => DedupMode::Reflink,
                DedupArg::Hardlink => DedupMode::Hardlink,
            }),
            io: match self.io_threads {
                Some(n) => Concurrency::Fixed(usize::from(n)),
                None => Concurrency::default(),
            },
            disk_order: DiskOrder::from_env()?,
            exit_after: false,
        })
    }
}

fn rule_source(arg: &FilterArg) -> RuleSource<'_> {
    match arg {
        FilterArg::Include(p) => RuleSource::Pattern { pattern: p.as_bytes(), include: true },
        FilterArg::Exclude(p) => RuleSource::Pattern { pattern: p.as_bytes(), include: false },
        FilterArg::IncludeFrom(path) => RuleSource::File { path, include: true },
        FilterArg::ExcludeFrom(path) => RuleSource::File { path, include: false },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::args::parse_alone;

    fn options(args: &[&str]) -> Result<SyncOptions, ArgsError> {
        let args = ["dedup", "sync"].iter().chain(args).map(Into::into);
        parse_alone(args).expect("parsed").options(&mut std::io::empty())
    }

    #[test]
    fn a_suffix_needs_a_backup_to_name() {
        assert!(matches!(
            options(&["--suffix", ".old", "a", "b"]),
            Err(ArgsError::SuffixWithoutBackup)
        ));
        let backup = options(&["-b", "a", "b"]).unwrap().backup.unwrap();
        assert_eq!((backup.dir, backup.suffix), (None, b"~".to_vec()));
        let backup = options(&["--backup-dir", "d", "a", "b"]).unwrap().backup.unwrap();
        assert_eq!(backup.suffix, b"");
    }

    #[test]
    fn flags_reach_the_options_they_name() {
        let o =
            options(&["--delete", "--max-delete=4", "-c", "--reflink=never", "--dedup", "a", "b"])
                .unwrap();
        assert!(o.delete && o.checksum && !o.dry_run);
        assert_eq!(o.max_delete, Some(4));
        assert_eq!(o.reflink, Reflink::Never);
        assert_eq!(o.dedup, Some(DedupMode::Reflink));
        assert_eq!(o.filters.len(), 0);
    }
}
