//! Arguments of `dedup store init` and `dedup store backup`, and the backup request they make.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::Args;

use crate::backup::Selection;
use crate::client::user_name;
use crate::commands::BackupRequest;
use crate::format::KdfParams;
use crate::repo::this_host;

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
    #[arg(long, value_name = "SIZE", value_parser = dedup_core::size::parse_size)]
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
    /// Back up a PATH that is an empty directory although the parent snapshot holds entries
    /// there (without it such a backup is refused: it is most often an unmounted disk); so
    /// too an empty directory below PATH that /etc/fstab names as a mount point, with nothing
    /// mounted on it.
    #[arg(long)]
    pub allow_empty_source: bool,
}

impl InitArgs {
    /// The argon2id parameters of the first key.
    pub fn kdf(&self) -> KdfParams {
        KdfParams {
            memory_kib: self.kdf_memory_kib,
            iterations: self.kdf_iterations,
            lanes: self.kdf_lanes,
        }
    }
}

impl BackupArgs {
    /// The backup these arguments ask for, recorded as made by `program` (host and user this
    /// machine's unless given); `commands::backup_options` turns it into the backup's options.
    pub fn request(&self, program: String) -> BackupRequest<'_> {
        BackupRequest {
            paths: &self.paths,
            files_from: &self.files_from,
            host: self.host.clone().unwrap_or_else(this_host),
            user: user_name::current(),
            tags: self.tags.clone(),
            excludes: &self.excludes,
            exclude_files: &self.exclude_files,
            iexcludes: &self.iexcludes,
            selection: Selection {
                larger_than: self.exclude_larger_than,
                if_present: self
                    .exclude_if_present
                    .iter()
                    .map(|n| n.as_encoded_bytes().to_vec())
                    .collect(),
                caches: self.exclude_caches,
            },
            one_file_system: self.one_file_system,
            dry_run: self.dry_run,
            stdin: self.stdin,
            parent: self.parent.as_deref(),
            program,
            allow_empty_source: self.allow_empty_source,
        }
    }
}
