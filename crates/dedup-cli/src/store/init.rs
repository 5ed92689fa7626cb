//! `dedup store init`.

use anyhow::{bail, Context, Result};
use dedup_store::format::{ChunkerParams, CompressionMode, KdfParams, FORMAT_VERSION};
use dedup_store::repo::{InitOptions, Repository};

use super::args::{CommonArgs, InitArgs};
use super::password::new_password;
use crate::size::parse_size;

fn size32(text: &str) -> Result<u32> {
    let size = parse_size(text).map_err(anyhow::Error::msg)?;
    u32::try_from(size).with_context(|| format!("{text}: too large"))
}

/// Parses `fastcdc[:MIN/AVG/MAX]`, `fastcdc-flat[:MIN/AVG/MAX]`,
/// `fastcdc-normalised[:MIN/AVG/MAX]` or `fixed:SIZE`.
pub fn parse_chunker(text: &str) -> Result<ChunkerParams> {
    let (kind, sizes) = match text.split_once(':') {
        Some((kind, sizes)) => (kind, Some(sizes)),
        None => (text, None),
    };
    let triple = |name: &str| -> Result<Option<(u32, u32, u32)>> {
        let Some(sizes) = sizes else { return Ok(None) };
        let parts: Vec<&str> = sizes.split('/').collect();
        let [min, avg, max] = parts.as_slice() else {
            bail!("--chunker {name}:MIN/AVG/MAX, e.g. {name}:512K/1M/8M")
        };
        Ok(Some((size32(min)?, size32(avg)?, size32(max)?)))
    };
    let params = match (kind, sizes) {
        ("fixed", Some(size)) => ChunkerParams::Fixed { size: size32(size)? },
        ("fastcdc", _) => match triple("fastcdc")? {
            Some((min, avg, max)) => ChunkerParams::FastCdcPrf { min, avg, max },
            None => ChunkerParams::default(),
        },
        ("fastcdc-flat", _) => {
            let (min, avg, max) = triple("fastcdc-flat")?.unwrap_or((512 << 10, 1 << 20, 8 << 20));
            ChunkerParams::FastCdc { min, avg, max }
        }
        ("fastcdc-normalised", _) => {
            let (min, avg, max) = triple("fastcdc-normalised")?.unwrap_or((512 << 10, 1 << 20, 8 << 20));
            ChunkerParams::FastCdcNormalised { min, avg, max }
        }
        _ => bail!(
            "--chunker {text}: expected fastcdc[:MIN/AVG/MAX], fastcdc-flat[:MIN/AVG/MAX], fastcdc-normalised[:MIN/AVG/MAX] or fixed:SIZE"
        ),
    };
    params.validate().map_err(anyhow::Error::msg)?;
    Ok(params)
}

/// Parses `auto`, `off` or a zstd level.
pub fn parse_compression(text: &str) -> Result<CompressionMode> {
    Ok(match text {
        "auto" => CompressionMode::Auto,
        "off" => CompressionMode::Off,
        level => match level.parse::<i32>() {
            Ok(n @ 1..=22) => CompressionMode::Level(n),
            _ => bail!("--compression {text}: expected auto, off or a zstd level 1-22"),
        },
    })
}

/// Lets the test suite make keys that cost nothing to open; set only by tests.
const WEAK_KDF_FOR_TESTS: &str = "DEDUP_TEST_ALLOW_WEAK_KDF";

/// The argon2 parameters of the hidden `--kdf-*` options: within the caps every reader keeps,
/// and outside tests not below the floor (docs/store-format.md §4).
fn kdf_params(args: &InitArgs) -> Result<KdfParams> {
    let params = KdfParams {
        memory_kib: args.kdf_memory_kib,
        iterations: args.kdf_iterations,
        lanes: args.kdf_lanes,
    };
    if let Some(why) = params.out_of_bounds() {
        bail!("--kdf-*: refused: {why}");
    }
    if std::env::var_os(WEAK_KDF_FOR_TESTS).is_none_or(|v| v != "1") {
        if let Some(why) = params.below_floor() {
            bail!("--kdf-*: refused: {why}");
        }
    }
    Ok(params)
}

/// Run `dedup store init`.
pub fn run(common: &CommonArgs, args: InitArgs) -> Result<bool> {
    let location = super::location(common)?;
    let mut chunker = parse_chunker(&args.chunker)?;
    // `fastcdc` in an older format version is the flat rule, the newest FastCDC it knows.
    if let (Some(1..=3), ChunkerParams::FastCdcPrf { min, avg, max }) =
        (args.format_version, chunker)
    {
        chunker = ChunkerParams::FastCdc { min, avg, max };
    }
    let format_version = match args.format_version {
        None => FORMAT_VERSION,
        Some(asked @ 1..=FORMAT_VERSION) if asked >= chunker.format_version() => asked,
        Some(asked @ 1..=FORMAT_VERSION) => bail!(
            "--format-version {asked}: the chunker {} needs format version {}",
            args.chunker,
            chunker.format_version()
        ),
        Some(other) => bail!("--format-version {other}: expected 1 to {FORMAT_VERSION}"),
    };
    let kdf = kdf_params(&args)?;
    super::trust::warn_of_plain_http(common, &location);
    let options = InitOptions {
        password: if args.insecure_no_encryption {
            None
        } else {
            Some(new_password(Some(common), None)?.to_vec())
        },
        chunker,
        pack_size: size32(&args.pack_size)?,
        compression: parse_compression(&args.compression)?,
        kdf,
        label: format!("{}@{}", super::username(), super::hostname()),
        format_version,
    };
    let repo = Repository::init(super::backend(common, &location)?, options)?;
    super::trust::remember_new(&repo);
    if !common.quiet {
        let kind = if repo.encrypted() { "encrypted" } else { "UNENCRYPTED" };
        println!(
            "created {kind} repository {} at {}",
            repo.config().id.short(10),
            location.display()
        );
    }
    Ok(true)
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
