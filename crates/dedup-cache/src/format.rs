//! The on-disk form of the cache: one file, written whole and renamed into place.
//!
//! ```text
//! header   64 bytes  magic "DEDUPCC\0", version u32, record size u32, record count u64,
//!                    names length u64, last run: lookups u64, hits u64, unix seconds u64, 0 u64
//! records  count × 96 bytes, sorted by (dev, ino), no two alike:
//!                    dev u64, ino u64, size u64, mtime_ns i64, ctime_ns i64,
//!                    name offset u64, name length u32, flags u32, fingerprint u64,
//!                    BLAKE3 digest [u8; 32]
//!          flags: bit 0 the digest is set (else all zero); bit 1 the fingerprint is of the whole
//!          content, bit 2 of head and tail samples (older caches), bit 3 of the head
//!          sample; a sample's length is in bits 8..32 (none: no fingerprint, the field is zero)
//! names    the path each file was last seen at (raw bytes; a hint for `prune`, never a key)
//! checksum XXH3-128 of everything above, 16 bytes
//! ```
//!
//! Integers are little-endian. Anything that does not add up (magic, version, record size,
//! lengths, checksum, order of the keys, name ranges) makes the whole file [`Damaged`].

use std::io::{self, Write};

use dedup_core::{FileId, FileMeta};
use xxhash_rust::xxh3::{xxh3_128, Xxh3};

/// Identifies a dedup cache file.
pub const MAGIC: [u8; 8] = *b"DEDUPCC\0";
/// Format version; a file of another version is set aside and rebuilt.
pub const VERSION: u32 = 2;
const HEADER: usize = 64;
const RECORD: usize = 96;
const CHECKSUM: usize = 16;
/// Flag: the record holds the digest of the whole content.
const FULL_DIGEST: u32 = 1;
/// Flag: the fingerprint is of the whole content.
const WHOLE_FINGERPRINT: u32 = 2;
/// Flag: the fingerprint is of samples; their length is in the bits above `SAMPLE_LEN_SHIFT`.
const SAMPLES_FINGERPRINT: u32 = 4;
/// Flag: the fingerprint is of the head; its length is in the bits above `SAMPLE_LEN_SHIFT`.
const HEAD_FINGERPRINT: u32 = 8;
const SAMPLE_LEN_SHIFT: u32 = 8;
/// Longest sample length a fingerprint can record.
pub const MAX_SAMPLE_LEN: u32 = u32::MAX >> SAMPLE_LEN_SHIFT;

/// A BLAKE3 digest of a file's whole content.
pub type Digest = [u8; 32];

/// What a run learned about one file's content.
///
/// A fingerprint is a hash a scan computes anyway (of a small file's whole content, or of a
/// large file's samples); it can only prove two files of the same size *different*, and only
/// when both were taken the same way. The BLAKE3 digest of the whole content can prove them
/// equal; a scan computes it only for content that had a copy, so a file without one keeps just
/// its fingerprint, which is enough to keep it apart from the others on the next scan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Entry {
    /// How the content was fingerprinted, if it was.
    pub fingerprint: Option<Fingerprint>,
    /// BLAKE3 of the whole content, when known.
    pub digest: Option<Digest>,
}

/// A non-cryptographic hash of part or all of a file's content.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Fingerprint {
    /// What was hashed: fingerprints taken differently cannot be compared.
    pub kind: FingerprintKind,
    /// The hash.
    pub value: u64,
}

/// What a [`Fingerprint`] hashed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FingerprintKind {
    /// XXH3-64 of the whole content.
    Whole,
    /// XXH3-128 (low half) of the first and last `len` bytes (written by older
    /// versions of dedup; still read, and compared only with its own kind).
    Samples {
        /// Bytes read at each end (at most [`MAX_SAMPLE_LEN`]).
        len: u32,
    },
    /// XXH3-64 of the first `len` bytes.
    Head {
        /// Bytes read (at most [`MAX_SAMPLE_LEN`]).
        len: u32,
    },
}

/// One cached file: the metadata that must still hold, and what was learned about its content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// Identity, size and timestamps when the content was read.
    pub meta: FileMeta,
    /// What is known of the content.
    pub entry: Entry,
    /// Offset and length of the file's last known path in the names block.
    pub name: (u64, u32),
}

/// Counters of the run that wrote the file (for `dedup cache stats`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LastRun {
    /// Candidate files looked up in the cache.
    pub lookups: u64,
    /// Of those, files with a valid entry.
    pub hits: u64,
    /// When the run saved the cache, seconds since the Unix epoch (0: never).
    pub unix_secs: u64,
}

/// Why a cache file cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Damaged(pub String);

/// The decoded contents of a cache file.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Contents {
    /// Records sorted by (dev, ino).
    pub records: Vec<Record>,
    /// The names block.
    pub names: Vec<u8>,
    /// Counters of the run that wrote it.
    pub last: LastRun,
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

/// Encode `contents` (records must be sorted by key, without repeats).
pub fn encode(contents: &Contents) -> Vec<u8> {
    let len = HEADER + contents.records.len() * RECORD + contents.names.len() + CHECKSUM;
    let mut out = Vec::with_capacity(len);
    write_encoded(contents, &mut out).expect("writing to a Vec cannot fail");
    out
}

/// Records are encoded into a block of about this size, hashed and written, and the block is
/// reused: the whole file is never built in memory (a cache of a large tree runs to tens of
/// megabytes, and a buffer that size costs a page fault per page besides the copy).
const BLOCK: usize = 1 << 20;

/// Write `contents` in the file's form to `out`, as [`encode`] would build it.
pub fn write_encoded(contents: &Contents, out: &mut impl Write) -> io::Result<()> {
    let mut sum = Xxh3::new();
    let mut emit = |bytes: &[u8], out: &mut dyn Write| {
        sum.update(bytes);
        out.write_all(bytes)
    };
    let mut block = Vec::with_capacity(BLOCK + RECORD);
    block.extend_from_slice(&MAGIC);
    block.extend_from_slice(&VERSION.to_le_bytes());
    block.extend_from_slice(&(RECORD as u32).to_le_bytes());
    let last = contents.last;
    for v in [
        contents.records.len() as u64,
        contents.names.len() as u64,
        last.lookups,
        last.hits,
        last.unix_secs,
        0,
    ] {
        block.extend_from_slice(&v.to_le_bytes());
    }
    for r in &contents.records {
        encode_record(r, &mut block);
        if block.len() >= BLOCK {
            emit(&block, out)?;
            block.clear();
        }
    }
    emit(&block, out)?;
    emit(&contents.names, out)?;
    out.write_all(&sum.digest128().to_le_bytes())
}

fn encode_record(r: &Record, out: &mut Vec<u8>) {
    let m = &r.meta;
    for v in [m.id.dev, m.id.ino, m.size, m.mtime_ns as u64, m.ctime_ns as u64, r.name.0] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out.extend_from_slice(&r.name.1.to_le_bytes());
    let flags = if r.entry.digest.is_some() { FULL_DIGEST } else { 0 };
    // A sample length the field cannot hold is not stored at all, never stored rounded.
    let (kind, value) = match r.entry.fingerprint {
        Some(Fingerprint { kind: FingerprintKind::Whole, value }) => (WHOLE_FINGERPRINT, value),
        Some(Fingerprint { kind: FingerprintKind::Samples { len }, value })
            if (1..=MAX_SAMPLE_LEN).contains(&len) =>
        {
            (SAMPLES_FINGERPRINT | len << SAMPLE_LEN_SHIFT, value)
        }
        Some(Fingerprint { kind: FingerprintKind::Head { len }, value })
            if (1..=MAX_SAMPLE_LEN).contains(&len) =>
        {
            (HEAD_FINGERPRINT | len << SAMPLE_LEN_SHIFT, value)
        }
        _ => (0, 0),
    };
    out.extend_from_slice(&(flags | kind).to_le_bytes());
    out.extend_from_slice(&value.to_le_bytes());
    out.extend_from_slice(&r.entry.digest.unwrap_or_default());
}

/// Decode a whole cache file read into `bytes`, checking everything that can be checked. Its
/// names block becomes the contents' names in place: copying it out would cost every rescan a
/// fresh buffer as large as the names, faulted in page by page.
pub fn decode(mut bytes: Vec<u8>) -> Result<Contents, Damaged> {
    let (records, last, names_at) = decode_records(&bytes)?;
    bytes.truncate(bytes.len() - CHECKSUM);
    bytes.drain(..names_at);
    bytes.shrink_to_fit();
    Ok(Contents { records, names: bytes, last })
}

/// The records and counters of a cache file, and where its names block starts.
fn decode_records(bytes: &[u8]) -> Result<(Vec<Record>, LastRun, usize), Damaged> {
    let bad = |why: &str| Err(Damaged(why.to_owned()));
    if bytes.len() < HEADER + CHECKSUM {
        return bad("truncated (shorter than its header)");
    }
    if bytes[..8] != MAGIC {
        return bad("not a dedup cache file (bad magic)");
    }
    let version = u32_at(bytes, 8);
    if version != VERSION {
        return Err(Damaged(format!("format version {version}, expected {VERSION}")));
    }
    if u32_at(bytes, 12) as usize != RECORD {
        return bad("unexpected record size");
    }
    let (count, names_len) = (u64_at(bytes, 16), u64_at(bytes, 24));
    let expected =
        (count as u128) * RECORD as u128 + names_len as u128 + (HEADER + CHECKSUM) as u128;
    if expected != bytes.len() as u128 {
        return bad("length does not match its header (truncated or extended)");
    }
    let (body, sum) = bytes.split_at(bytes.len() - CHECKSUM);
    if xxh3_128(body).to_le_bytes() != sum {
        return bad("checksum mismatch");
    }
    let last = LastRun {
        lookups: u64_at(bytes, 32),
        hits: u64_at(bytes, 40),
        unix_secs: u64_at(bytes, 48),
    };
    let names_at = HEADER + count as usize * RECORD;
    let names = &body[names_at..];
    let mut records = Vec::with_capacity(count as usize);
    for raw in body[HEADER..names_at].chunks_exact(RECORD) {
        let meta = FileMeta {
            id: FileId { dev: u64_at(raw, 0), ino: u64_at(raw, 8) },
            size: u64_at(raw, 16),
            mtime_ns: u64_at(raw, 24) as i64,
            ctime_ns: u64_at(raw, 32) as i64,
        };
        let name = (u64_at(raw, 40), u32_at(raw, 48));
        if name.0.checked_add(u64::from(name.1)).is_none_or(|end| end > names.len() as u64) {
            return bad("a record names bytes outside the names block");
        }
        let Some(entry) = entry_of(u32_at(raw, 52), u64_at(raw, 56), &raw[64..96]) else {
            return bad("unknown record flags");
        };
        if records.last().is_some_and(|prev: &Record| prev.meta.id >= meta.id) {
            return bad("records out of order");
        }
        records.push(Record { meta, entry, name });
    }
    Ok((records, last, names_at))
}

/// The entry a record's flags, fingerprint and digest fields describe, if they make sense.
fn entry_of(flags: u32, value: u64, digest: &[u8]) -> Option<Entry> {
    let digest: Digest = digest.try_into().ok()?;
    let digest = match flags & FULL_DIGEST {
        0 if digest == [0; 32] => None,
        0 => return None,
        _ => Some(digest),
    };
    let len = flags >> SAMPLE_LEN_SHIFT;
    let kind = match flags & !FULL_DIGEST {
        0 if value == 0 => None,
        WHOLE_FINGERPRINT => Some(FingerprintKind::Whole),
        f if len > 0 && f == SAMPLES_FINGERPRINT | len << SAMPLE_LEN_SHIFT => {
            Some(FingerprintKind::Samples { len })
        }
        f if len > 0 && f == HEAD_FINGERPRINT | len << SAMPLE_LEN_SHIFT => {
            Some(FingerprintKind::Head { len })
        }
        _ => return None,
    };
    Some(Entry { fingerprint: kind.map(|kind| Fingerprint { kind, value }), digest })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Contents {
        let rec = |ino, name| Record {
            meta: FileMeta { id: FileId { dev: 7, ino }, size: 10, mtime_ns: -5, ctime_ns: 9 },
            entry: Entry {
                fingerprint: match ino {
                    1 => Some(Fingerprint { kind: FingerprintKind::Whole, value: 3 }),
                    2 => {
                        Some(Fingerprint { kind: FingerprintKind::Samples { len: 4096 }, value: 6 })
                    }
                    3 => Some(Fingerprint { kind: FingerprintKind::Head { len: 4096 }, value: 8 }),
                    _ => None,
                },
                digest: (ino != 2).then_some([ino as u8; 32]),
            },
            name,
        };
        Contents {
            records: vec![rec(1, (0, 3)), rec(2, (3, 2)), rec(3, (5, 0)), rec(5, (5, 0))],
            names: b"a\nbc\xff".to_vec(),
            last: LastRun { lookups: 4, hits: 3, unix_secs: 99 },
        }
    }

    #[test]
    fn round_trip() {
        let c = sample();
        assert_eq!(decode(encode(&c)).unwrap(), c);
        let empty = Contents::default();
        assert_eq!(decode(encode(&empty)).unwrap(), empty);
    }

    #[test]
    fn a_file_of_many_blocks_round_trips() {
        // More records than one encoding block holds: the checksum runs across the blocks.
        let one = sample().records[0].clone();
        let records: Vec<Record> = (1..=3 * BLOCK as u64 / RECORD as u64)
            .map(|ino| Record { meta: FileMeta { id: FileId { dev: 7, ino }, ..one.meta }, ..one })
            .collect();
        let c = Contents { records, names: b"abc".to_vec(), last: LastRun::default() };
        let bytes = encode(&c);
        assert!(bytes.len() > 3 * BLOCK);
        assert_eq!(decode(bytes).unwrap(), c);
    }

    #[test]
    fn every_single_byte_flip_and_every_truncation_is_detected() {
        let bytes = encode(&sample());
        for i in 0..bytes.len() {
            let mut b = bytes.clone();
            b[i] ^= 0x10;
            assert!(decode(b.clone()).is_err(), "flip at {i}");
            assert!(decode(bytes[..i].to_vec()).is_err(), "truncated to {i}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(decode(longer).is_err());
    }

    #[test]
    fn other_version_is_refused() {
        let mut b = encode(&sample());
        b[8] = 1;
        assert!(decode(b).unwrap_err().0.contains("version 1"));
    }
}
