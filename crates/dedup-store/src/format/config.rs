//! The repository config's plaintext: format version, repository id, chunker, pack size and
//! compression, fixed at init. The format version written follows from what the repository
//! needs: 2 with the flat FastCDC chunker (kind 3, which a version-1 reader would not know), 3
//! with trees of version 2 and status trees (which a version-2 reader would not know), 4 with
//! padded packs and the FastCDC chunker whose cuts a PRF places (kind 4).

use super::wire::{Reader, Writer};
use super::{DecodeError, FORMAT_VERSION};

/// The format version of repositories whose config needs nothing newer.
const FIRST_VERSION: u8 = 1;
use crate::id::Id;

/// Smallest and largest pack size accepted at init.
pub const PACK_SIZE_RANGE: (u32, u32) = (1 << 20, 1 << 30);
/// Largest chunk accepted.
pub const MAX_CHUNK: u32 = 64 << 20;

/// The chunker and its sizes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChunkerParams {
    /// Keyed FastCDC whose cut points a PRF places (kind 4, format version 4), min < avg < max:
    /// the default.
    FastCdcPrf {
        /// Smallest chunk (except a stream's last).
        min: u32,
        /// Mean chunk, about (before the few cut at max).
        avg: u32,
        /// Largest.
        max: u32,
    },
    /// Keyed FastCDC, flat (one threshold past min; kind 3, format version 2), min < avg < max.
    FastCdc {
        /// Smallest chunk (except a stream's last).
        min: u32,
        /// Mean chunk (before the few cut at max).
        avg: u32,
        /// Largest.
        max: u32,
    },
    /// Keyed FastCDC normalised at level 2 (kind 1, format version 1), min < avg < max, avg a
    /// power of two: repositories created before the flat kind.
    FastCdcNormalised {
        /// Smallest chunk (except a stream's last).
        min: u32,
        /// Sets the masks, a power of two (the mean chunk is about 1.2 avg at min = avg / 2).
        avg: u32,
        /// Largest.
        max: u32,
    },
    /// Fixed-size blocks.
    Fixed {
        /// The block size.
        size: u32,
    },
}

impl Default for ChunkerParams {
    /// FastCDC with PRF-placed cuts, 512 KiB / 1 MiB / 8 MiB (the sizes of the flat kind:
    /// docs/benchmarks/journal.md, "Chunker resynchronisation").
    fn default() -> Self {
        ChunkerParams::FastCdcPrf { min: 512 << 10, avg: 1 << 20, max: 8 << 20 }
    }
}

impl ChunkerParams {
    /// Checks the sizes against the format's rules.
    pub fn validate(&self) -> Result<(), String> {
        match *self {
            ChunkerParams::FastCdc { min, avg, max }
            | ChunkerParams::FastCdcPrf { min, avg, max } => {
                if !(64 <= min && min < avg && avg < max && max <= MAX_CHUNK) {
                    return Err(format!(
                        "chunk sizes {min}/{avg}/{max}: need 64 <= min < avg < max <= {MAX_CHUNK}"
                    ));
                }
            }
            ChunkerParams::FastCdcNormalised { min, avg, max } => {
                if !(64 <= min
                    && min < avg
                    && avg < max
                    && max <= MAX_CHUNK
                    && avg.is_power_of_two())
                {
                    return Err(format!(
                        "chunk sizes {min}/{avg}/{max}: need 64 <= min < avg < max <= {MAX_CHUNK}, avg a power of two"
                    ));
                }
            }
            ChunkerParams::Fixed { size } => {
                if !(1..=MAX_CHUNK).contains(&size) {
                    return Err(format!("fixed chunk size {size}: need 1..={MAX_CHUNK}"));
                }
            }
        }
        Ok(())
    }

    /// The repository format version that can record this chunker.
    pub fn format_version(&self) -> u8 {
        match self {
            ChunkerParams::FastCdcPrf { .. } => PADDED_PACKS_VERSION,
            ChunkerParams::FastCdc { .. } => 2,
            ChunkerParams::FastCdcNormalised { .. } | ChunkerParams::Fixed { .. } => FIRST_VERSION,
        }
    }

    /// The largest chunk the chunker produces.
    pub fn max_chunk(&self) -> u32 {
        match *self {
            ChunkerParams::FastCdc { max, .. }
            | ChunkerParams::FastCdcPrf { max, .. }
            | ChunkerParams::FastCdcNormalised { max, .. } => max,
            ChunkerParams::Fixed { size } => size,
        }
    }
}

/// How blobs are compressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompressionMode {
    /// Never.
    Off,
    /// zstd level 3, kept only where it shrinks the blob.
    Auto,
    /// zstd at this level (1..=22), kept only where it shrinks the blob.
    Level(i32),
}

/// The decoded config.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// Random id of the repository.
    pub id: Id,
    /// Creation time, ns since the epoch.
    pub created: i64,
    /// The chunker.
    pub chunker: ChunkerParams,
    /// Target pack size in bytes.
    pub pack_size: u32,
    /// Compression.
    pub compression: CompressionMode,
    /// The repository's format version (docs/store-format.md §13): at least what the chunker
    /// needs; 3 and 4 write trees of version 2 with status trees, 1 and 2 trees of version 1; 4
    /// writes packs of version 2 (padded), the others packs of version 1.
    pub version: u8,
}

/// The format version whose trees are of version 2, with status trees.
pub const STATUS_TREES_VERSION: u8 = 3;

/// The format version whose packs are padded, their trailer's length sealed (pack version 2),
/// and which knows chunker kind 4.
pub const PADDED_PACKS_VERSION: u8 = 4;

impl Config {
    /// The repository's format version (docs/store-format.md §13).
    pub fn format_version(&self) -> u8 {
        self.version
    }

    /// Whether trees are written as trees of version 2 with status trees (format version 3),
    /// rather than trees of version 1.
    pub fn status_trees(&self) -> bool {
        self.version >= STATUS_TREES_VERSION
    }

    /// Whether packs are written padded, their trailer's length sealed (format version 4:
    /// pack version 2, docs/store-format.md §7), rather than as pack version 1.
    pub fn padded_packs(&self) -> bool {
        self.version >= PADDED_PACKS_VERSION
    }

    /// The plaintext.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Writer::default();
        out.u8(self.format_version());
        out.id(&self.id);
        out.i64(self.created);
        match self.chunker {
            ChunkerParams::FastCdcPrf { min, avg, max } => {
                out.u8(4);
                out.u32(min);
                out.u32(avg);
                out.u32(max);
            }
            ChunkerParams::FastCdc { min, avg, max } => {
                out.u8(3);
                out.u32(min);
                out.u32(avg);
                out.u32(max);
            }
            ChunkerParams::FastCdcNormalised { min, avg, max } => {
                out.u8(1);
                out.u32(min);
                out.u32(avg);
                out.u32(max);
            }
            ChunkerParams::Fixed { size } => {
                out.u8(2);
                for _ in 0..3 {
                    out.u32(size);
                }
            }
        }
        out.u32(self.pack_size);
        let (mode, level) = match self.compression {
            CompressionMode::Off => (0, 0),
            CompressionMode::Auto => (1, 0),
            CompressionMode::Level(level) => (2, level),
        };
        out.u8(mode);
        out.i32(level);
        out.buf
    }

    /// Decodes and validates the plaintext.
    pub fn decode(bytes: &[u8]) -> Result<Config, DecodeError> {
        let mut input = Reader::new(bytes);
        let version = input.version_in(FIRST_VERSION..=FORMAT_VERSION)?;
        let id = input.id()?;
        let created = input.i64()?;
        let kind = input.u8()?;
        let (a, b, c) = (input.u32()?, input.u32()?, input.u32()?);
        let chunker = match kind {
            1 => ChunkerParams::FastCdcNormalised { min: a, avg: b, max: c },
            2 if a == b && b == c => ChunkerParams::Fixed { size: a },
            3 => ChunkerParams::FastCdc { min: a, avg: b, max: c },
            4 => ChunkerParams::FastCdcPrf { min: a, avg: b, max: c },
            _ => return Err(DecodeError::invalid(format!("unknown chunker {kind}"))),
        };
        // Kind 3 from version 2 on, kind 4 from version 4: a repository cuts with the kind it
        // was created with for ever, and an older version never names a newer kind.
        if chunker.format_version() > version {
            return Err(DecodeError::invalid(format!(
                "chunker kind {kind} in a format version {version} config"
            )));
        }
        chunker.validate().map_err(DecodeError::Invalid)?;
        let pack_size = input.u32()?;
        if !(PACK_SIZE_RANGE.0..=PACK_SIZE_RANGE.1).contains(&pack_size) {
            return Err(DecodeError::invalid(format!("pack size {pack_size} out of range")));
        }
        let mode = input.u8()?;
        let level = input.i32()?;
        let compression = match (mode, level) {
            (0, _) => CompressionMode::Off,
            (1, _) => CompressionMode::Auto,
            (2, 1..=22) => CompressionMode::Level(level),
            _ => return Err(DecodeError::invalid(format!("unknown compression {mode}/{level}"))),
        };
        input.finish()?;
        Ok(Config { id, created, chunker, pack_size, compression, version })
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn config_strategy() -> impl Strategy<Value = Config> {
        (
            any::<[u8; 32]>(),
            any::<i64>(),
            0u8..4,
            7u32..20,
            1u32..1 << 20,
            PACK_SIZE_RANGE.0..PACK_SIZE_RANGE.1,
            (0i32..23, 1u8..=FORMAT_VERSION),
        )
            .prop_map(|(id, created, kind, bits, size, pack_size, (level, version))| {
                let chunker = match kind {
                    0 => ChunkerParams::FastCdc {
                        min: 1 << (bits - 1),
                        avg: (1 << bits) + size % (1 << bits),
                        max: 1 << (bits + 2),
                    },
                    1 => ChunkerParams::FastCdcNormalised {
                        min: 1 << (bits - 1),
                        avg: 1 << bits,
                        max: 1 << (bits + 2),
                    },
                    2 => ChunkerParams::FastCdcPrf {
                        min: 1 << (bits - 1),
                        avg: (1 << bits) + size % (1 << bits),
                        max: 1 << (bits + 2),
                    },
                    _ => ChunkerParams::Fixed { size },
                };
                Config {
                    id: Id(id),
                    created,
                    chunker,
                    pack_size,
                    compression: match level {
                        0 => CompressionMode::Off,
                        22 => CompressionMode::Auto,
                        n => CompressionMode::Level(n),
                    },
                    // At least what the chunker needs (kind 3: version 2, kind 4: version 4).
                    version: version.max(chunker.format_version()),
                }
            })
    }

    proptest! {
        #[test]
        fn config_round_trips(config in config_strategy()) {
            prop_assert_eq!(Config::decode(&config.encode()), Ok(config));
        }

        #[test]
        fn mutated_config_never_panics(config in config_strategy(), at in any::<usize>(), byte in 1u8.., cut in any::<usize>()) {
            crate::format::damaged_input(&config.encode(), at, byte, cut, Config::decode);
        }
    }

    #[test]
    fn chunk_sizes_out_of_order_are_refused() {
        assert!(ChunkerParams::FastCdc { min: 4096, avg: 2048, max: 8192 }.validate().is_err());
        assert!(ChunkerParams::FastCdc { min: 1024, avg: 3000, max: 8192 }.validate().is_ok());
        let normalised = |min, avg, max| ChunkerParams::FastCdcNormalised { min, avg, max };
        assert!(normalised(4096, 2048, 8192).validate().is_err());
        assert!(normalised(1024, 3000, 8192).validate().is_err());
        assert!(ChunkerParams::default().validate().is_ok());
    }

    fn config(chunker: ChunkerParams) -> Config {
        Config {
            id: Id([7; 32]),
            created: 1,
            chunker,
            pack_size: 16 << 20,
            compression: CompressionMode::Auto,
            version: chunker.format_version(),
        }
    }

    #[test]
    fn the_prf_chunker_is_the_default_and_makes_a_version_4_repository() {
        assert!(matches!(ChunkerParams::default(), ChunkerParams::FastCdcPrf { .. }));
        let bytes = config(ChunkerParams::default()).encode();
        assert_eq!((bytes[0], bytes[41]), (4, 4), "version 4, chunker kind 4");
        let flat = ChunkerParams::FastCdc { min: 512 << 10, avg: 1 << 20, max: 8 << 20 };
        let bytes = config(flat).encode();
        assert_eq!((bytes[0], bytes[41]), (2, 3), "version 2, chunker kind 3");
        let bytes = config(ChunkerParams::FastCdcNormalised { min: 1, avg: 2, max: 4 }).encode();
        assert_eq!((bytes[0], bytes[41]), (1, 1), "a version-1 config stays version 1");
        assert_eq!(config(ChunkerParams::Fixed { size: 9 }).encode()[0], 1);
    }

    #[test]
    fn a_kind_in_the_wrong_version_is_refused() {
        let flat = ChunkerParams::FastCdc { min: 512 << 10, avg: 1 << 20, max: 8 << 20 };
        let mut bytes = config(flat).encode();
        bytes[0] = 1;
        assert!(Config::decode(&bytes).is_err(), "kind 3 needs version 2");
        for older in 1..=3 {
            let mut bytes = config(ChunkerParams::default()).encode();
            bytes[0] = older;
            assert!(Config::decode(&bytes).is_err(), "kind 4 needs version 4, not {older}");
        }
        let mut bytes = config(ChunkerParams::Fixed { size: 9 }).encode();
        bytes[0] = 2;
        let fixed_in_2 = Config::decode(&bytes).expect("version 2 may hold any kind");
        assert_eq!(fixed_in_2.encode()[0], 2, "and stays version 2 when written again");
        let mut bytes = config(ChunkerParams::default()).encode();
        bytes[0] = 5;
        assert!(matches!(Config::decode(&bytes), Err(DecodeError::Version { found: 5, .. })));
    }

    #[test]
    fn status_trees_make_a_version_3_repository_whatever_the_chunker() {
        let flat = ChunkerParams::FastCdc { min: 512 << 10, avg: 1 << 20, max: 8 << 20 };
        for chunker in [flat, ChunkerParams::Fixed { size: 9 }] {
            let with = Config { version: 3, ..config(chunker) };
            let bytes = with.encode();
            assert_eq!(bytes[0], 3);
            assert_eq!(Config::decode(&bytes), Ok(with));
        }
        // A program that knows only version 2 checks the version byte against 1..=2 first.
        let bytes = Config { version: 3, ..config(flat) }.encode();
        let mut reader = super::super::wire::Reader::new(&bytes);
        assert_eq!(
            reader.version_in(FIRST_VERSION..=2),
            Err(DecodeError::Version { found: 3, known: 2 })
        );
    }
}
