//! Arguments of `dedup store`: the repository and password options every store command shares,
//! and each command's own.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{ArgAction, Args, Subcommand, ValueEnum};

/// `dedup store`.
#[derive(Debug, Args)]
#[command(after_help = super::help_examples::STORE)]
pub struct StoreArgs {
    /// Shared options.
    #[command(flatten)]
    pub common: CommonArgs,
    /// What to do.
    #[command(subcommand)]
    pub command: StoreCommand,
}

/// Options of every store command.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Repository options")]
pub struct CommonArgs {
    /// The repository [env: DEDUP_REPO]
    #[arg(short = 'r', long = "repo", value_name = "REPO", global = true)]
    pub repo: Option<PathBuf>,
    /// Take the settings the command line leaves out from the profile NAME:
    /// $XDG_CONFIG_HOME/dedup/NAME.toml (else ~/.config/dedup/NAME.toml), else
    /// /etc/dedup/NAME.toml; or from the file NAME when it ends in .toml
    #[arg(short = 'P', long, value_name = "NAME", global = true)]
    pub profile: Option<OsString>,
    /// Read the password from FILE (its first line) [env: DEDUP_PASSWORD_FILE]
    #[arg(long, value_name = "FILE", global = true)]
    pub password_file: Option<PathBuf>,
    /// Run COMMAND with `sh -c` and take its first line of output as the password
    #[arg(long, value_name = "COMMAND", global = true)]
    pub password_command: Option<String>,
    /// Print only errors.
    #[arg(short, long, global = true)]
    pub quiet: bool,
    /// Print more (notes on skipped entries).
    #[arg(short, long, action = ArgAction::Count, global = true)]
    pub verbose: u8,
    /// Object storage: requests in flight at most [default: 8]
    #[arg(long, value_name = "N", global = true)]
    pub connections: Option<usize>,
    /// Object storage: address the bucket as BUCKET.HOST (virtual-host style) instead of HOST/BUCKET
    #[arg(long, global = true)]
    pub s3_virtual_host: bool,
    /// Object storage: keep no local copy of index files and snapshots (under
    /// $XDG_CACHE_HOME/dedup/store/REPO-ID)
    #[arg(long, global = true)]
    pub no_cache: bool,
    /// Accept that the repository at this location is not the one this client used there
    /// before (another id, key or encryption), or that an unencrypted one is opened with a
    /// password given, and remember it from now on
    #[arg(long, global = true)]
    pub accept_repository_change: bool,
    /// Neither read nor keep this client's cached key of the repository (under
    /// $XDG_CACHE_HOME/dedup/keys): the key is derived from the password at every open
    #[arg(long, global = true)]
    pub no_key_cache: bool,
    /// SFTP: accept and record the host key of a server not yet in known_hosts (ssh's
    /// StrictHostKeyChecking=accept-new), whatever ssh_config says
    #[arg(long, global = true)]
    pub accept_new_host_key: bool,
    /// Object storage: use an s3:http:// location off this machine without a warning (requests
    /// and answers travel unencrypted)
    #[arg(long, global = true)]
    pub insecure_http: bool,
}

/// The store's commands.
#[derive(Debug, Subcommand)]
pub enum StoreCommand {
    /// Create a repository.
    #[command(after_help = super::help_examples::INIT)]
    Init(InitArgs),
    /// Save a snapshot of PATHs (or of standard input).
    ///
    /// What could not be read whole (a file unreadable, or changed again while read a second
    /// time; a directory that cannot be listed; a PATH that does not exist) is named on stderr
    /// with what the snapshot holds of it, and the snapshot is marked incomplete (exit 1). With
    /// no PATH present, or none readable, no snapshot is written (exit 2).
    #[command(after_help = super::help_examples::BACKUP)]
    Backup(BackupArgs),
    /// List snapshots.
    #[command(after_help = super::help_examples::SNAPSHOTS)]
    Snapshots(SnapshotsArgs),
    /// List the entries of a snapshot, under PATH if given.
    #[command(after_help = super::help_examples::LS)]
    Ls(LsArgs),
    /// Recreate a snapshot, or a path in it, under a target directory.
    #[command(after_help = super::help_examples::RESTORE)]
    Restore(RestoreArgs),
    /// Write one file of a snapshot to standard output (or to a file with -o).
    #[command(after_help = super::help_examples::DUMP)]
    Dump(DumpArgs),
    /// Show what differs between two snapshots.
    #[command(after_help = super::help_examples::DIFF)]
    Diff(DiffArgs),
    /// Show every snapshot as a read-only file system at MOUNTPOINT (FUSE), until unmounted.
    ///
    /// MOUNTPOINT/snapshots/TIME holds each snapshot's tree (TIME in UTC, with the short id
    /// after it when two snapshots share a second; a short id also finds it),
    /// MOUNTPOINT/hosts/HOST/TIME the same by host, MOUNTPOINT/latest links to the newest. Runs
    /// in the foreground until `fusermount3 -u MOUNTPOINT`, Ctrl-C or SIGTERM.
    #[command(after_help = super::help_examples::MOUNT)]
    Mount(MountArgs),
    /// Sizes, dedup and compression ratios, chunks and packs.
    ///
    /// Logical size: the sum, over every snapshot, of the sizes of its regular files as `ls -l`
    /// shows them (holes of sparse files included; a file counted once for each of its names
    /// and in each snapshot that holds it): the bytes restoring every snapshot gives back. Unique
    /// data: the distinct file chunks, uncompressed. Stored data: those chunks compressed and
    /// encrypted. Repository size: every file of the repository (packs, index, snapshots, keys,
    /// config). Dedup ratio = logical size / unique data; compression ratio = unique data /
    /// stored data; total ratio = logical size / repository size.
    #[command(after_help = super::help_examples::STATS)]
    Stats(StatsArgs),
    /// Verify the repository's structure, and with --read-data every byte.
    #[command(after_help = super::help_examples::CHECK)]
    Check(CheckArgs),
    /// Manage the passwords (key slots) that open the repository.
    #[command(after_help = super::help_examples::KEY)]
    Key(KeyArgs),
    /// Remove snapshots: those named, or those a retention policy does not keep.
    ///
    /// Snapshots are grouped by host and paths; in each group, newest first, a snapshot is kept
    /// by --keep-last while any remain, by --keep-hourly … --keep-yearly when it is the newest of
    /// an hour, day, ISO week, month or year (UTC) not yet kept, by --keep-within when it is
    /// younger than the group's newest by less than DURATION, and by --keep-tag. The rules are
    /// applied to the complete snapshots alone; an incomplete one is kept only in addition, when
    /// the rules applied to the whole group keep it. A policy that keeps nothing is refused
    /// unless --unsafe-allow-remove-all. Only snapshot files are removed; `prune` (or --prune)
    /// frees the data.
    #[command(after_help = super::help_examples::FORGET)]
    Forget(ForgetArgs),
    /// Delete data no snapshot needs, repacking mostly-unused packs; safe while backups run.
    #[command(after_help = super::help_examples::PRUNE)]
    Prune(PruneArgs),
    /// Rebuild the index from the packs, or rewrite snapshots without what is lost.
    #[command(after_help = super::help_examples::REPAIR)]
    Repair(RepairArgs),
    /// Find which snapshots hold files or directories whose name or path matches PATTERN.
    ///
    /// Each match is listed under its snapshot with its kind, mode, size and modification time
    /// (UTC). Finding nothing is not an error (exit 0, as restic's `find`); a snapshot or a
    /// directory that could not be searched is named on stderr (exit 1).
    #[command(after_help = super::help_examples::FIND)]
    Find(super::history_args::FindArgs),
    /// Add, remove or set the tags of snapshots.
    ///
    /// A snapshot file is never changed in place: each snapshot whose tags change is written
    /// anew, recording the snapshot it replaces as its original, and the old file is removed
    /// only after the new one is written (an interruption leaves one or both, never neither).
    /// Its id therefore changes.
    #[command(after_help = super::help_examples::TAG)]
    Tag(super::history_args::TagArgs),
    /// Write snapshots again without the files and directories that match (a leaked secret).
    ///
    /// Each snapshot that holds a match gets a copy without it (new trees on the way to it;
    /// time, host and paths kept; its original recorded); the original stays unless --forget.
    /// The data left out leaves the repository with a prune, once no snapshot refers to it:
    /// after `rewrite --forget` and `prune --max-unused 0` its bytes are in no pack.
    #[command(after_help = super::help_examples::REWRITE)]
    Rewrite(super::history_args::RewriteArgs),
    /// Copy snapshots from another repository (--from-repo) into this one.
    ///
    /// Trees are written in this repository's format; a file's chunks are carried over as they
    /// are when both repositories cut files alike, and cut again otherwise. A snapshot already
    /// copied (this repository holds one with the same original) is skipped, so running the
    /// same copy again copies only what is new. The source's password comes from
    /// DEDUP_FROM_PASSWORD, --from-password-file, --from-password-command or a prompt.
    #[command(after_help = super::help_examples::COPY)]
    Copy(super::history_args::CopyArgs),
}

/// `store init`.
#[derive(Debug, Args)]
pub struct InitArgs {
    /// The chunker: `fastcdc` (default: FastCDC whose cut points a keyed PRF places, 512 KiB /
    /// 1 MiB / 8 MiB, AVG about the mean chunk; format version 4, and with --format-version 2 or
    /// 3 the flat rule), `fastcdc:MIN/AVG/MAX`, `fastcdc-flat[:MIN/AVG/MAX]` (cut where the
    /// keyed hash says: format version 2 or later), `fastcdc-normalised[:MIN/AVG/MAX]`
    /// (normalised level 2, AVG a power of two: what format version 1 cuts, readable by older
    /// dedup with --format-version 1), or `fixed:SIZE` (disk images).
    #[arg(long, value_name = "CHUNKER", default_value = "fastcdc")]
    pub chunker: String,
    /// Compression of blobs: auto (zstd 3 where it shrinks), off, or a zstd level 1-22.
    #[arg(long, value_name = "auto|off|N", default_value = "auto")]
    pub compression: String,
    /// Target size of packs.
    #[arg(long, value_name = "SIZE", default_value = "16MiB")]
    pub pack_size: String,
    /// The repository format version (docs/store-format.md §13): 4 (the default) pads packs
    /// and cuts chunks where a keyed PRF says, so that the storage learns neither file nor chunk
    /// sizes; 3 stores trees that identical directories share; 2 or 1 keep the trees older dedup
    /// reads and writes (1 only with fastcdc-normalised or fixed, which format version 1 cuts
    /// with). Each older version is what older dedup reads and writes.
    #[arg(long, value_name = "N")]
    pub format_version: Option<u8>,
    /// Store data unencrypted (checksummed only): anyone who can read the repository reads it.
    #[arg(long)]
    pub insecure_no_encryption: bool,
    /// argon2id memory cost in KiB of the first key.
    #[arg(long, value_name = "KIB", default_value_t = 65536, hide = true)]
    pub kdf_memory_kib: u32,
    /// argon2id iterations of the first key.
    #[arg(long, value_name = "N", default_value_t = 3, hide = true)]
    pub kdf_iterations: u32,
    /// argon2id lanes of the first key (computed in parallel).
    #[arg(long, value_name = "N", default_value_t = 4, hide = true)]
    pub kdf_lanes: u32,
}

/// `store backup`.
#[derive(Debug, Args)]
pub struct BackupArgs {
    /// Files and directories to back up [default: the profile's sources]
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Also back up the paths listed in FILE, one per line (`#` comments and blank lines
    /// skipped; repeatable).
    #[arg(long = "files-from", value_name = "FILE", conflicts_with = "stdin")]
    pub files_from: Vec<PathBuf>,
    /// Host name to record [default: this machine's]
    #[arg(long, value_name = "HOST")]
    pub host: Option<String>,
    /// Tag the snapshot (repeatable).
    #[arg(long = "tag", value_name = "TAG")]
    pub tags: Vec<String>,
    /// Leave out paths matching GLOB (repeatable).
    #[arg(long = "exclude", value_name = "GLOB")]
    pub excludes: Vec<String>,
    /// Leave out paths matching the globs in FILE, one per line (`#` comments and blank lines
    /// skipped; repeatable).
    #[arg(long = "exclude-file", value_name = "FILE")]
    pub exclude_files: Vec<PathBuf>,
    /// Like --exclude, ignoring the case of letters (repeatable).
    #[arg(long = "iexclude", value_name = "GLOB")]
    pub iexcludes: Vec<String>,
    /// Leave out the contents of directories holding a valid CACHEDIR.TAG, except the tag.
    #[arg(long)]
    pub exclude_caches: bool,
    /// Leave out the contents of directories holding an entry NAME, except NAME (repeatable).
    #[arg(long = "exclude-if-present", value_name = "NAME")]
    pub exclude_if_present: Vec<OsString>,
    /// Leave out files larger than SIZE (bytes, or with a k, M, G or T suffix: powers of 1024).
    #[arg(long, value_name = "SIZE", value_parser = crate::size::parse_size)]
    pub exclude_larger_than: Option<u64>,
    /// Stay on the file system of each PATH.
    #[arg(short = 'x', long)]
    pub one_file_system: bool,
    /// Read and count everything, write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Back up standard input as one file.
    #[arg(long, conflicts_with = "paths", requires = "stdin_filename")]
    pub stdin: bool,
    /// The file name standard input is stored under.
    #[arg(long, value_name = "NAME")]
    pub stdin_filename: Option<String>,
    /// Print JSON lines (status while running, an error line per entry not read whole, a
    /// summary), as restic does.
    #[arg(long)]
    pub json: bool,
    /// Compare with this snapshot instead of the newest of the same host and paths; `latest`
    /// is the newest of the host (--host), whatever its paths.
    #[arg(long, value_name = "SNAPSHOT")]
    pub parent: Option<String>,
}

/// Which snapshots `latest` chooses among (an id prefix is never filtered).
#[derive(Debug, Clone, Default, Args)]
pub struct FilterArgs {
    /// `latest` is the newest snapshot of HOST.
    #[arg(long, value_name = "HOST")]
    pub host: Option<String>,
    /// `latest` is the newest snapshot that backed up PATH (repeatable: every PATH).
    #[arg(long = "path", value_name = "PATH")]
    pub paths: Vec<PathBuf>,
}

/// `store snapshots`.
#[derive(Debug, Args)]
pub struct SnapshotsArgs {
    /// Print a JSON array.
    #[arg(long)]
    pub json: bool,
    /// List only snapshots of HOST (--host) that backed up every PATH (--path).
    #[command(flatten)]
    pub filter: FilterArgs,
}

/// `store ls`.
#[derive(Debug, Args)]
pub struct LsArgs {
    /// A snapshot id prefix or `latest`.
    pub snapshot: String,
    /// A path in the snapshot (any bytes).
    pub path: Option<OsString>,
    /// Show kind, mode, owner, size and time; a file the backup could not read whole ends
    /// with " (incomplete)".
    #[arg(short, long)]
    pub long: bool,
    /// Which snapshots `latest` chooses among.
    #[command(flatten)]
    pub filter: FilterArgs,
}

/// `store restore`.
#[derive(Debug, Args)]
pub struct RestoreArgs {
    /// SNAPSHOT or SNAPSHOT:PATH (PATH any bytes).
    #[arg(value_name = "SNAPSHOT[:PATH]")]
    pub snapshot: OsString,
    /// Where to restore (made if missing; a symlink here is followed, none below it).
    #[arg(long, value_name = "DIR")]
    pub target: PathBuf,
    /// Restore only entries matching GLOB (repeatable), with what is below them. A GLOB with a
    /// `/` is a path below the restored one (`/home/me/docs` as `ls` shows it), one without is
    /// a name at any depth; `*` stays within a name, `**` crosses directories.
    #[arg(long = "include", value_name = "GLOB")]
    pub includes: Vec<OsString>,
    /// Leave out entries matching GLOB (repeatable), with what is below them.
    #[arg(long = "exclude", value_name = "GLOB")]
    pub excludes: Vec<OsString>,
    /// What happens to an entry of the target where the snapshot has one of the same name:
    /// never replaced (the default), replaced always, if it changed (size or mtime differ), or
    /// if the snapshot's is newer. A directory of the target is only replaced with --delete.
    #[arg(long, value_enum, value_name = "WHEN", default_value_t = OverwriteArg::Never)]
    pub overwrite: OverwriteArg,
    /// Remove what the target holds that the snapshot does not, in every directory restored,
    /// and let the snapshot's entries replace directories of the target (with --overwrite).
    #[arg(long)]
    pub delete: bool,
    /// Print the replacements and deletions a restore would make; change nothing.
    #[arg(short = 'n', long, conflicts_with = "verify")]
    pub dry_run: bool,
    /// Read the restored files back and compare them with the snapshot.
    #[arg(long)]
    pub verify: bool,
    /// Print JSON lines (status while running, an error line per entry not restored, a
    /// summary), as restic does.
    #[arg(long)]
    pub json: bool,
    /// Which snapshots `latest` chooses among.
    #[command(flatten)]
    pub filter: FilterArgs,
}

/// `restore --overwrite` (restic's values).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OverwriteArg {
    /// Replace every entry of the target the snapshot has.
    Always,
    /// Replace an entry unless it looks the same (a file of the same size and mtime).
    IfChanged,
    /// Replace an entry when the snapshot's mtime is later.
    IfNewer,
    /// Keep every entry the target has; restore only what it lacks.
    Never,
}

/// `store dump`.
#[derive(Debug, Args)]
pub struct DumpArgs {
    /// A snapshot id prefix or `latest`.
    pub snapshot: String,
    /// The file's path in the snapshot (any bytes).
    pub file: OsString,
    /// Write it to FILE instead of standard output: sparse where its content has zero blocks,
    /// written under a temporary name beside FILE and renamed over it whole (a symlink at FILE
    /// is replaced, not followed).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Which snapshots `latest` chooses among.
    #[command(flatten)]
    pub filter: FilterArgs,
}

/// `store mount`.
#[derive(Debug, Args)]
pub struct MountArgs {
    /// An empty directory to mount the snapshots (or the volume) on.
    #[arg(value_name = "MOUNTPOINT")]
    pub mountpoint: PathBuf,
    /// Mount the volume NAME read-write (created empty on its first mount): a file system that
    /// deduplicates as it is written, committed as a snapshot of the volume at an interval, at
    /// fsync/syncfs and at unmount. One writable mount of a volume at a time.
    #[arg(long, value_name = "NAME")]
    pub writable: Option<String>,
    /// With --writable: seconds between commits while something changed.
    #[arg(long, value_name = "SECONDS", default_value_t = 10, requires = "writable")]
    pub commit_interval: u64,
    /// With --writable: host name recorded in the commits [default: this machine's]
    #[arg(long, value_name = "HOST", requires = "writable")]
    pub host: Option<String>,
    /// With --writable: tag the commits (repeatable; `volume:NAME` is always added).
    #[arg(long = "tag", value_name = "TAG", requires = "writable")]
    pub tags: Vec<String>,
}

/// `store diff`.
#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The older snapshot.
    pub first: String,
    /// The newer snapshot.
    pub second: String,
    /// Which snapshots `latest` chooses among.
    #[command(flatten)]
    pub filter: FilterArgs,
}

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
