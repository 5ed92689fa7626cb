//! Arguments of the store commands that look after a repository: `stats`, `forget`, `prune`,
//! `check`, `repair` and `key`, and the options of forget, prune and check they make.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::ArgsError;
use crate::commands::{absolute_bytes, ForgetRequest, ReadData};
use crate::forget::KeepPolicy;
use crate::prune::PruneOptions;
use crate::repo::SnapshotFilter;
use crate::text;

/// `store stats`.
#[derive(Debug, Args)]
pub struct StatsArgs {
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// `store forget`.
#[derive(Debug, Args)]
pub struct ForgetArgs {
    /// Snapshots to remove (id prefixes); not together with --keep-* options.
    #[arg(value_name = "SNAPSHOT")]
    pub snapshots: Vec<String>,
    /// Keep the newest N snapshots.
    #[arg(long, value_name = "N")]
    pub keep_last: Option<u32>,
    /// Keep the newest snapshot of each of the last N hours that have one.
    #[arg(long, value_name = "N")]
    pub keep_hourly: Option<u32>,
    /// … of each of the last N days.
    #[arg(long, value_name = "N")]
    pub keep_daily: Option<u32>,
    /// … of each of the last N weeks.
    #[arg(long, value_name = "N")]
    pub keep_weekly: Option<u32>,
    /// … of each of the last N months.
    #[arg(long, value_name = "N")]
    pub keep_monthly: Option<u32>,
    /// … of each of the last N years.
    #[arg(long, value_name = "N")]
    pub keep_yearly: Option<u32>,
    /// Keep every snapshot younger than the newest by less than DURATION, e.g. `2y5m7d3h`
    /// (y = 365 days, m = 30 days, w, d, h).
    #[arg(long, value_name = "DURATION")]
    pub keep_within: Option<String>,
    /// Keep every snapshot carrying tag T (repeatable).
    #[arg(long = "keep-tag", value_name = "T")]
    pub keep_tags: Vec<String>,
    /// Consider only snapshots of HOST.
    #[arg(long, value_name = "HOST")]
    pub host: Option<String>,
    /// Consider only snapshots that backed up PATH (repeatable: every PATH).
    #[arg(long = "path", value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Allow a policy that keeps nothing (no --keep-* option, or every count 0), or that keeps
    /// no snapshot of a group: every snapshot concerned is removed.
    #[arg(long)]
    pub unsafe_allow_remove_all: bool,
    /// Prune after forgetting.
    #[arg(long)]
    pub prune: bool,
    /// Print what would be removed; remove nothing.
    #[arg(short = 'n', long)]
    pub dry_run: bool,
    /// Prune options, with --prune.
    #[command(flatten)]
    pub prune_options: PruneOptionsArgs,
}

/// The options of `prune`, shared with `forget --prune`.
#[derive(Debug, Args)]
pub struct PruneOptionsArgs {
    /// Tolerate unused data up to PERCENT of what stays; beyond it, repack the emptiest packs
    /// first (as restic's --max-unused).
    #[arg(long, value_name = "PERCENT", default_value = "5")]
    pub max_unused: String,
    /// Copy at most SIZE of used data into new packs (e.g. 2G).
    #[arg(long, value_name = "SIZE")]
    pub max_repack_size: Option<String>,
}

/// `store prune`.
#[derive(Debug, Args)]
pub struct PruneArgs {
    /// What may be repacked.
    #[command(flatten)]
    pub options: PruneOptionsArgs,
    /// Print the plan; change nothing.
    #[arg(short = 'n', long)]
    pub dry_run: bool,
}

/// `store check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Also read every pack and verify every blob.
    #[arg(long)]
    pub read_data: bool,
    /// Read and verify a part of the packs: `N%` (a random N percent), or `K/N` (slice K of N;
    /// slices 1 to N together cover every pack, e.g. one a day).
    #[arg(long, value_name = "N%|K/N", conflicts_with = "read_data")]
    pub read_data_subset: Option<String>,
}

/// `store repair`.
#[derive(Debug, Args)]
pub struct RepairArgs {
    /// What to repair.
    #[command(subcommand)]
    pub what: RepairWhat,
}

/// What `store repair` repairs.
#[derive(Debug, Subcommand)]
pub enum RepairWhat {
    /// Rebuild the index from the trailers of the packs present: blobs of missing packs leave
    /// the index, so the next backup stores them again. A damaged pack is salvaged: the blobs of
    /// it that still authenticate (located by its trailer, by its trailer under a restored
    /// header, or by the old index files) are copied into new packs; it is deleted only when
    /// its blob list is known whole, else left in place, not indexed.
    Index {
        /// Read every pack whole and salvage each that does not match its name (as `check
        /// --read-data` finds them), so that no damaged blob stays indexed.
        #[arg(long)]
        read_data: bool,
    },
    /// Write a copy of each damaged snapshot without its lost files and directories (tagged
    /// `repaired`); the originals stay unless --forget.
    Snapshots {
        /// Remove each damaged original once its copy is written, and each snapshot file that
        /// does not read at all.
        #[arg(long)]
        forget: bool,
    },
}

/// `store key`.
#[derive(Debug, Args)]
pub struct KeyArgs {
    /// What to do.
    #[command(subcommand)]
    pub action: KeyAction,
}

/// What `store key` does. A new password comes from DEDUP_NEW_PASSWORD,
/// --new-password-file, or a prompt.
#[derive(Debug, Subcommand)]
pub enum KeyAction {
    /// List the key slots.
    List,
    /// Add a key slot with a new password.
    Add(NewPasswordArgs),
    /// Remove the key slot ID (not the one in use).
    Remove {
        /// A prefix of the key's id.
        id: String,
    },
    /// Change the password of the key in use.
    Passwd(NewPasswordArgs),
}

/// Where a new password comes from.
#[derive(Debug, Args)]
pub struct NewPasswordArgs {
    /// Read the new password from FILE [env: DEDUP_NEW_PASSWORD]
    #[arg(long, value_name = "FILE")]
    pub new_password_file: Option<PathBuf>,
}

impl ForgetArgs {
    /// What `forget` is asked to remove, and by which policy.
    pub fn request(&self) -> Result<ForgetRequest, ArgsError> {
        let policy = KeepPolicy {
            last: self.keep_last,
            hourly: self.keep_hourly,
            daily: self.keep_daily,
            weekly: self.keep_weekly,
            monthly: self.keep_monthly,
            yearly: self.keep_yearly,
            within_ns: self.keep_within.as_deref().map(parse_duration).transpose()?,
            tags: self.keep_tags.clone(),
        };
        Ok(ForgetRequest {
            snapshots: self.snapshots.clone(),
            policy,
            filter: SnapshotFilter {
                host: self.host.clone(),
                paths: self.paths.iter().map(|p| absolute_bytes(p)).collect(),
            },
            remove_all: self.unsafe_allow_remove_all,
            dry_run: self.dry_run,
        })
    }
}

/// `2y5m7d3h` in nanoseconds (y = 365 days, m = 30 days, w = 7 days), as `--keep-within` and a
/// profile's `keep-within` take it.
fn parse_duration(text: &str) -> Result<i64, ArgsError> {
    text::parse_keep_within(text)
        .map_err(|reason| ArgsError::KeepWithin { text: text.to_owned(), reason })
}

impl PruneOptionsArgs {
    /// What prune may repack.
    pub fn options(&self) -> Result<PruneOptions, ArgsError> {
        let max_unused = text::parse_max_unused(&self.max_unused)?;
        let max_repack_bytes = self
            .max_repack_size
            .as_deref()
            .map(|s| {
                dedup_core::size::parse_size(s)
                    .map_err(|reason| ArgsError::MaxRepackSize { text: s.to_owned(), reason })
            })
            .transpose()?;
        Ok(PruneOptions { max_unused, max_repack_bytes })
    }
}

impl CheckArgs {
    /// How much data `check` reads.
    pub fn read_data(&self) -> Result<ReadData, ArgsError> {
        Ok(ReadData::from_options(self.read_data_subset.as_deref(), self.read_data)?)
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::{ForgetArgs, PruneArgs};

    #[derive(Debug, Parser)]
    struct Forget {
        #[command(flatten)]
        args: ForgetArgs,
    }

    #[derive(Debug, Parser)]
    struct Prune {
        #[command(flatten)]
        args: PruneArgs,
    }

    #[test]
    fn keep_within_becomes_nanoseconds_or_names_the_option() {
        let day = 24 * 3600 * 1_000_000_000_i64;
        let ok = Forget::parse_from(["t", "--keep-within", "1w2d"]).args.request().unwrap();
        assert_eq!(ok.policy.within_ns, Some(9 * day));
        let bad = Forget::parse_from(["t", "--keep-within", "3x"]).args.request().unwrap_err();
        assert!(bad.to_string().starts_with("--keep-within 3x: "), "{bad}");
    }

    #[test]
    fn prune_sizes_and_shares_are_read_or_named() {
        let ok = Prune::parse_from(["t", "--max-unused", "0", "--max-repack-size", "2k"]);
        let options = ok.args.options.options().unwrap();
        assert_eq!((options.max_unused, options.max_repack_bytes), (0.0, Some(2048)));
        let bad = Prune::parse_from(["t", "--max-repack-size", "lots"]).args.options.options();
        let bad = bad.unwrap_err().to_string();
        assert!(bad.starts_with("--max-repack-size lots: "), "{bad}");
    }
}
