//! `dedup store init`'s work: its settings read from their text (chunker, compression, pack
//! size, key derivation, format version), the repository made, and remembered by this client.

use std::path::Path;

use dedup_core::size::parse_size;

use super::open::{backend, remember_new, warn_of_plain_http, OpenError, Reach};
use super::password::{Password, PasswordError};
use super::warning::Warning;
use crate::format::{ChunkerParams, CompressionMode, KdfParams, FORMAT_VERSION};
use crate::repo::{InitOptions, Repository};

/// Lets the test suite make keys that cost nothing to open; set only by tests.
const WEAK_KDF_FOR_TESTS: &str = "DEDUP_TEST_ALLOW_WEAK_KDF";

/// What the caller asks of [`init`], as the command line writes it.
pub struct InitRequest<'a> {
    /// Where.
    pub location: &'a Path,
    /// How its storage is reached.
    pub reach: Reach,
    /// `--chunker`.
    pub chunker: &'a str,
    /// `--compression`.
    pub compression: &'a str,
    /// `--pack-size`.
    pub pack_size: &'a str,
    /// `--format-version` (the newest when not given).
    pub format_version: Option<u8>,
    /// The argon2 parameters of the key (hidden `--kdf-*` options).
    pub kdf: KdfParams,
    /// `--insecure-no-encryption`.
    pub no_encryption: bool,
    /// The password of the new key, asked for unless there is no encryption.
    pub new_password: &'a dyn Fn() -> Result<Password, PasswordError>,
    /// The label of the key (`user@host`).
    pub label: String,
    /// Told each warning as it is met.
    pub warn: &'a dyn Fn(Warning),
}

/// A repository made.
pub struct Created {
    /// The repository.
    pub repository: Repository,
    /// What to tell the user: `created encrypted repository 1a2b… at LOCATION`.
    pub line: String,
}

/// Why no repository was made.
#[derive(Debug, thiserror::Error)]
pub enum InitError {
    /// A setting that does not read or is refused.
    #[error("{0}")]
    Setting(String),
    /// A size beyond 4 GiB.
    #[error("{text}: too large")]
    TooLarge {
        /// The size as written.
        text: String,
        /// The conversion's complaint.
        source: std::num::TryFromIntError,
    },
    /// The location.
    #[error(transparent)]
    Location(#[from] OpenError),
    /// The password.
    #[error(transparent)]
    Password(#[from] PasswordError),
    /// The repository could not be made.
    #[error(transparent)]
    Create(#[from] crate::Error),
}

fn setting(message: impl Into<String>) -> InitError {
    InitError::Setting(message.into())
}

/// Makes a repository at `request.location`.
pub fn init(request: &InitRequest<'_>) -> Result<Created, InitError> {
    let mut chunker = parse_chunker(request.chunker)?;
    // `fastcdc` in an older format version is the flat rule, the newest FastCDC it knows.
    if let (Some(1..=3), ChunkerParams::FastCdcPrf { min, avg, max }) =
        (request.format_version, chunker)
    {
        chunker = ChunkerParams::FastCdc { min, avg, max };
    }
    let format_version = match request.format_version {
        None => FORMAT_VERSION,
        Some(asked @ 1..=FORMAT_VERSION) if asked >= chunker.format_version() => asked,
        Some(asked @ 1..=FORMAT_VERSION) => {
            return Err(setting(format!(
                "--format-version {asked}: the chunker {} needs format version {}",
                request.chunker,
                chunker.format_version()
            )))
        }
        Some(other) => {
            return Err(setting(format!(
                "--format-version {other}: expected 1 to {FORMAT_VERSION}"
            )))
        }
    };
    let kdf = checked_kdf(request.kdf)?;
    warn_of_plain_http(request.location, request.reach, request.warn);
    let password = match request.no_encryption {
        true => None,
        false => Some((request.new_password)()?.to_vec()),
    };
    let options = InitOptions {
        password,
        chunker,
        pack_size: size32(request.pack_size)?,
        compression: parse_compression(request.compression)?,
        kdf,
        label: request.label.clone(),
        format_version,
    };
    let repo = Repository::init(backend(request.location, request.reach)?, options)?;
    remember_new(&repo, request.warn);
    let kind = if repo.encrypted() { "encrypted" } else { "UNENCRYPTED" };
    let line = format!(
        "created {kind} repository {} at {}",
        repo.config().id.short(10),
        request.location.display()
    );
    Ok(Created { repository: repo, line })
}

fn size32(text: &str) -> Result<u32, InitError> {
    let size = parse_size(text).map_err(setting)?;
    u32::try_from(size).map_err(|source| InitError::TooLarge { text: text.to_owned(), source })
}

/// Parses `fastcdc[:MIN/AVG/MAX]`, `fastcdc-flat[:MIN/AVG/MAX]`,
/// `fastcdc-normalised[:MIN/AVG/MAX]` or `fixed:SIZE`.
pub fn parse_chunker(text: &str) -> Result<ChunkerParams, InitError> {
    let (kind, sizes) = match text.split_once(':') {
        Some((kind, sizes)) => (kind, Some(sizes)),
        None => (text, None),
    };
    let triple = |name: &str| -> Result<Option<(u32, u32, u32)>, InitError> {
        let Some(sizes) = sizes else { return Ok(None) };
        let parts: Vec<&str> = sizes.split('/').collect();
        let [min, avg, max] = parts.as_slice() else {
            return Err(setting(format!("--chunker {name}:MIN/AVG/MAX, e.g. {name}:512K/1M/8M")));
        };
        Ok(Some((size32(min)?, size32(avg)?, size32(max)?)))
    };
    let default_triple = (512 << 10, 1 << 20, 8 << 20);
    let params = match (kind, sizes) {
        ("fixed", Some(size)) => ChunkerParams::Fixed { size: size32(size)? },
        ("fastcdc", _) => match triple("fastcdc")? {
            Some((min, avg, max)) => ChunkerParams::FastCdcPrf { min, avg, max },
            None => ChunkerParams::default(),
        },
        ("fastcdc-flat", _) => {
            let (min, avg, max) = triple("fastcdc-flat")?.unwrap_or(default_triple);
            ChunkerParams::FastCdc { min, avg, max }
        }
        ("fastcdc-normalised", _) => {
            let (min, avg, max) = triple("fastcdc-normalised")?.unwrap_or(default_triple);
            ChunkerParams::FastCdcNormalised { min, avg, max }
        }
        _ => {
            return Err(setting(format!(
                "--chunker {text}: expected fastcdc[:MIN/AVG/MAX], fastcdc-flat[:MIN/AVG/MAX], \
                 fastcdc-normalised[:MIN/AVG/MAX] or fixed:SIZE"
            )))
        }
    };
    params.validate().map_err(setting)?;
    Ok(params)
}

/// Parses `auto`, `off` or a zstd level.
pub fn parse_compression(text: &str) -> Result<CompressionMode, InitError> {
    Ok(match text {
        "auto" => CompressionMode::Auto,
        "off" => CompressionMode::Off,
        level => match level.parse::<i32>() {
            Ok(n @ 1..=22) => CompressionMode::Level(n),
            _ => {
                return Err(setting(format!(
                    "--compression {text}: expected auto, off or a zstd level 1-22"
                )))
            }
        },
    })
}

/// The argon2 parameters of the hidden `--kdf-*` options: within the caps every reader keeps,
/// and outside tests not below the floor (docs/store-format.md §4).
fn checked_kdf(params: KdfParams) -> Result<KdfParams, InitError> {
    if let Some(why) = params.out_of_bounds() {
        return Err(setting(format!("--kdf-*: refused: {why}")));
    }
    if std::env::var_os(WEAK_KDF_FOR_TESTS).is_none_or(|v| v != "1") {
        if let Some(why) = params.below_floor() {
            return Err(setting(format!("--kdf-*: refused: {why}")));
        }
    }
    Ok(params)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunker_and_compression_settings_parse() {
        assert_eq!(parse_chunker("fixed:4M").unwrap(), ChunkerParams::Fixed { size: 4 << 20 });
        assert_eq!(
            parse_chunker("fastcdc:64K/256K/1M").unwrap(),
            ChunkerParams::FastCdcPrf { min: 64 << 10, avg: 256 << 10, max: 1 << 20 }
        );
        assert_eq!(
            parse_chunker("fastcdc-flat:64K/256K/1M").unwrap(),
            ChunkerParams::FastCdc { min: 64 << 10, avg: 256 << 10, max: 1 << 20 }
        );
        assert_eq!(
            parse_chunker("fastcdc-flat").unwrap(),
            ChunkerParams::FastCdc { min: 512 << 10, avg: 1 << 20, max: 8 << 20 }
        );
        assert!(parse_chunker("fastcdc:1M/1M/1M").is_err());
        assert_eq!(
            parse_chunker("fastcdc-normalised").unwrap(),
            ChunkerParams::FastCdcNormalised { min: 512 << 10, avg: 1 << 20, max: 8 << 20 }
        );
        assert_eq!(
            parse_chunker("fastcdc-normalised:64K/256K/1M").unwrap(),
            ChunkerParams::FastCdcNormalised { min: 64 << 10, avg: 256 << 10, max: 1 << 20 }
        );
        assert!(parse_chunker("fastcdc-normalised:64K/300K/1M").is_err());
        assert!(parse_chunker("fixed").is_err());
        assert!(parse_chunker("rabin").is_err());
        assert_eq!(parse_compression("7").unwrap(), CompressionMode::Level(7));
        assert!(parse_compression("99").is_err());
    }
}
