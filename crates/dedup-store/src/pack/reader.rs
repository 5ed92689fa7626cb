//! Reads a pack's trailer, from the whole pack in memory or from a backend with range reads, in
//! either version (docs/store-format.md §7): the trailer's length in clear (version 1), or sealed
//! beside the padding's (version 2).

use super::tail::{PackLayout, LENGTHS_AD, LENGTHS_BOX_LEN, PADDING_AD};
use super::{TAIL_MAGIC, TRAILER_AD};
use crate::backend::Backend;
use crate::blob::BlobKind;
use crate::crypto::{Sealer, SEAL_OVERHEAD};
use crate::error::{Error, Result};
use crate::format::{BlobEntry, DecodeError, Header, HEADER_LEN};

/// A pack's kind and blobs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedPack {
    /// The blob kind.
    pub kind: BlobKind,
    /// The blobs, in order.
    pub entries: Vec<BlobEntry>,
}

/// A pack's header, read.
struct PackHeader<'a> {
    bytes: &'a [u8],
    layout: PackLayout,
    kind: BlobKind,
}

/// Where the trailer and the padding lie: their lengths, which end where the tail begins.
struct Lengths {
    trailer: u64,
    padding: u64,
}

fn parse_header<'a>(sealer: &Sealer, bytes: &'a [u8]) -> Result<PackHeader<'a>, DecodeError> {
    let (header, version) = Header::decode_pack(bytes)?;
    if header.encrypted != sealer.encrypted() {
        return Err(DecodeError::Invalid("encryption flag differs from the repository's".into()));
    }
    let layout =
        PackLayout::of_version(version).ok_or(DecodeError::Version { found: version, known: 2 })?;
    let kind = BlobKind::from_code(header.sub_kind)?;
    Ok(PackHeader { bytes: &bytes[..HEADER_LEN], layout, kind })
}

/// `header` followed by `what`: the associated data of a box of the pack's tail.
fn tail_ad(header: &PackHeader<'_>, what: &[u8]) -> Vec<u8> {
    let mut ad = header.bytes.to_vec();
    ad.extend_from_slice(what);
    ad
}

/// The lengths a pack's tail (its last [`PackLayout::tail_len`] bytes) gives, checked against
/// the pack's `size`.
fn parse_tail(
    sealer: &Sealer,
    header: &PackHeader<'_>,
    tail: &[u8],
    size: u64,
) -> Result<Lengths, DecodeError> {
    let layout = header.layout;
    if tail.len() != layout.tail_len() || !tail.ends_with(TAIL_MAGIC) {
        return Err(DecodeError::Magic { expected: "pack (tail)" });
    }
    let u32_at = |bytes: &[u8], at: usize| {
        u64::from(u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes")))
    };
    let lengths = match layout {
        PackLayout::Plain => Lengths { trailer: u32_at(tail, 0), padding: 0 },
        PackLayout::Padded => {
            let sealed = &tail[..LENGTHS_BOX_LEN];
            let plain = sealer
                .open(&tail_ad(header, LENGTHS_AD), sealed)
                .map_err(|e| DecodeError::Invalid(format!("pack lengths: {e}")))?;
            if plain.len() != 8 {
                return Err(DecodeError::Invalid("pack lengths: not 8 bytes".into()));
            }
            Lengths { trailer: u32_at(&plain, 0), padding: u32_at(&plain, 4) }
        }
    };
    let boxed = |len: u64| len >= SEAL_OVERHEAD as u64;
    let fixed = (HEADER_LEN + layout.tail_len()) as u64;
    if !boxed(lengths.trailer)
        || !(lengths.padding == 0 || boxed(lengths.padding))
        || lengths.trailer + lengths.padding + fixed > size
        || size > u64::from(u32::MAX)
    {
        return Err(DecodeError::Invalid(format!(
            "trailer of {} and padding of {} bytes do not fit the pack",
            lengths.trailer, lengths.padding
        )));
    }
    Ok(lengths)
}

fn parse_trailer(
    sealer: &Sealer,
    header: &PackHeader<'_>,
    trailer: &[u8],
    body_end: u64,
) -> Result<ParsedPack, DecodeError> {
    let plain = sealer
        .open(&tail_ad(header, TRAILER_AD), trailer)
        .map_err(|e| DecodeError::Invalid(format!("trailer: {e}")))?;
    let entries = BlobEntry::decode_trailer(&plain, HEADER_LEN as u32, body_end as u32)?;
    Ok(ParsedPack { kind: header.kind, entries })
}

/// The trailer of a whole pack held in memory; its padding box, if any, is checked too.
pub fn parse_pack(sealer: &Sealer, pack: &[u8]) -> Result<ParsedPack, DecodeError> {
    let size = pack.len() as u64;
    let header = parse_header(sealer, pack)?;
    let tail_len = header.layout.tail_len();
    if pack.len() < HEADER_LEN + tail_len {
        return Err(DecodeError::Truncated);
    }
    let lengths = parse_tail(sealer, &header, &pack[pack.len() - tail_len..], size)?;
    let padding_end = pack.len() - tail_len;
    let trailer_end = padding_end - lengths.padding as usize;
    let body_end = trailer_end - lengths.trailer as usize;
    if lengths.padding > 0 {
        let padding = sealer
            .open(&tail_ad(&header, PADDING_AD), &pack[trailer_end..padding_end])
            .map_err(|e| DecodeError::Invalid(format!("padding: {e}")))?;
        if padding.iter().any(|&b| b != 0) {
            return Err(DecodeError::Invalid("padding: not all zero".into()));
        }
    }
    parse_trailer(sealer, &header, &pack[body_end..trailer_end], body_end as u64)
}

/// The trailer of the pack `name` of `size` bytes, read with three range requests (the padding
/// is not read: it holds nothing).
pub fn read_trailer(
    backend: &dyn Backend,
    sealer: &Sealer,
    name: &str,
    size: u64,
) -> Result<ParsedPack> {
    if size < (HEADER_LEN + PackLayout::Plain.tail_len()) as u64 {
        return Err(Error::damaged(name, DecodeError::Truncated));
    }
    let io = |e| Error::io(name, e);
    let damaged = |e| Error::damaged(name, e);
    let header_bytes = backend.get_range(name, 0, HEADER_LEN as u64).map_err(io)?;
    let header = parse_header(sealer, &header_bytes).map_err(damaged)?;
    let tail_len = header.layout.tail_len() as u64;
    if size < HEADER_LEN as u64 + tail_len {
        return Err(damaged(DecodeError::Truncated));
    }
    let tail = backend.get_range(name, size - tail_len, tail_len).map_err(io)?;
    let lengths = parse_tail(sealer, &header, &tail, size).map_err(damaged)?;
    let trailer_end = size - tail_len - lengths.padding;
    let body_end = trailer_end - lengths.trailer;
    let trailer = backend.get_range(name, body_end, lengths.trailer).map_err(io)?;
    parse_trailer(sealer, &header, &trailer, body_end).map_err(damaged)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::blob::{blob_id, seal};
    use crate::format::CompressionMode;
    use crate::pack::{padded_len, PackWriter};

    fn pack_of(
        sealer: &Sealer,
        layout: PackLayout,
        blobs: &[Vec<u8>],
    ) -> crate::pack::FinishedPack {
        let mut writer =
            PackWriter::with_layout(BlobKind::Data, sealer.encrypted(), layout, Vec::new());
        for blob in blobs {
            writer.add(&seal(
                sealer,
                blob_id(&[1; 32], blob),
                BlobKind::Data,
                blob,
                CompressionMode::Auto,
            ));
        }
        writer.finish(sealer)
    }

    fn layout_of(padded: bool) -> PackLayout {
        if padded {
            PackLayout::Padded
        } else {
            PackLayout::Plain
        }
    }

    proptest! {
        #[test]
        fn pack_trailer_lists_every_blob(blobs in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..300), 0..6), encrypted in any::<bool>(), padded in any::<bool>()) {
            let sealer = Sealer::new([2; 32], encrypted);
            let pack = pack_of(&sealer, layout_of(padded), &blobs);
            let parsed = parse_pack(&sealer, &pack.bytes).unwrap();
            prop_assert_eq!(parsed.kind, BlobKind::Data);
            prop_assert_eq!(&parsed.entries, &pack.entries);
            for (entry, blob) in parsed.entries.iter().zip(&blobs) {
                let sealed = &pack.bytes[entry.offset as usize..(entry.offset + entry.stored_len) as usize];
                prop_assert_eq!(&crate::blob::open(&sealer, &[1; 32], BlobKind::Data, entry, sealed).unwrap(), blob);
            }
            // Version 2 pads in an encrypted repository, to a bucket; no other pack is padded.
            let body: usize = pack.entries.iter().map(|e| e.stored_len as usize).sum::<usize>() + HEADER_LEN;
            let unpadded = (body + 5 + 45 * blobs.len() + 40 + layout_of(padded).tail_len()) as u64;
            let want = if padded && encrypted { padded_len(unpadded) } else { unpadded };
            prop_assert_eq!(pack.bytes.len() as u64, want);
        }

        #[test]
        fn damaged_pack_never_panics(at in any::<usize>(), byte in 1u8.., cut in any::<usize>(), padded in any::<bool>()) {
            let sealer = Sealer::new([2; 32], true);
            let pack = pack_of(&sealer, layout_of(padded), &[b"abc".to_vec(), vec![7; 500]]);
            let mut bytes = pack.bytes;
            let body_end = pack.entries.last().map_or(HEADER_LEN, |e| (e.offset + e.stored_len) as usize);
            // Flips land in the tail often enough: half of them in its last 100 bytes.
            let at = if at % 2 == 0 { at % bytes.len() } else { bytes.len() - 1 - at % 100 };
            bytes[at] ^= byte;
            // A blob's own box is checked when the blob is read; everything else now.
            let in_a_blob = (HEADER_LEN..body_end).contains(&at);
            prop_assert!(in_a_blob || parse_pack(&sealer, &bytes).is_err(), "a flipped byte at {} went unseen", at);
            bytes.truncate(cut % (bytes.len() + 1));
            let _ = parse_pack(&sealer, &bytes);
        }
    }

    #[test]
    fn range_reads_give_the_same_trailer() {
        let dir = tempfile::tempdir().unwrap();
        let backend = crate::backend::LocalBackend::new(dir.path());
        for layout in [PackLayout::Plain, PackLayout::Padded] {
            for encrypted in [true, false] {
                let sealer = Sealer::new([2; 32], encrypted);
                let pack = pack_of(&sealer, layout, &[b"one".to_vec(), b"two".to_vec()]);
                let name = format!("data/{layout:?}-{encrypted}");
                backend.put(&name, &pack.bytes).unwrap();
                let size = pack.bytes.len() as u64;
                let parsed = read_trailer(&backend, &sealer, &name, size).unwrap();
                assert_eq!(parsed.entries, pack.entries);
            }
        }
    }

    #[test]
    fn a_padded_pack_hides_how_many_blobs_it_holds_and_their_size() {
        let sealer = Sealer::new([2; 32], true);
        let one = pack_of(&sealer, PackLayout::Padded, &[vec![1; 100]]);
        let many = pack_of(&sealer, PackLayout::Padded, &vec![vec![2; 1000]; 20]);
        assert_eq!(one.bytes.len(), many.bytes.len());
        assert_eq!(one.bytes.len() as u64, crate::pack::MIN_PADDED_PACK);
        // The last bytes before the magic are a sealed box, the same length whatever it holds.
        let plain = pack_of(&sealer, PackLayout::Plain, &[vec![1; 100]]).bytes;
        let trailer_len =
            u32::from_le_bytes(plain[plain.len() - 8..plain.len() - 4].try_into().unwrap());
        assert_eq!(trailer_len as usize, 5 + 45 + 40, "version 1 shows the trailer's length");
    }

    #[test]
    fn padding_that_does_not_open_or_is_not_zero_is_refused() {
        let sealer = Sealer::new([2; 32], true);
        let pack = pack_of(&sealer, PackLayout::Padded, &[vec![1; 100]]);
        let mut bytes = pack.bytes.clone();
        // The padding box ends where the lengths box (48 bytes) and the magic begin.
        let padding_end = bytes.len() - 52;
        bytes[padding_end - 20] ^= 1;
        let said = parse_pack(&sealer, &bytes).unwrap_err().to_string();
        assert!(said.contains("padding"), "{said}");
        // A pack whose lengths box does not open says so.
        let mut bytes = pack.bytes.clone();
        bytes[padding_end + 30] ^= 1;
        let said = parse_pack(&sealer, &bytes).unwrap_err().to_string();
        assert!(said.contains("pack lengths"), "{said}");
        // Non-zero padding under a valid box: sealed by a writer that broke the rule.
        let mut forged = pack.bytes[..HEADER_LEN].to_vec();
        let entry = pack.entries[0];
        forged.extend_from_slice(
            &pack.bytes[entry.offset as usize..(entry.offset + entry.stored_len) as usize],
        );
        let header: [u8; 8] = forged[..8].try_into().unwrap();
        let mut ad = header.to_vec();
        ad.extend_from_slice(TRAILER_AD);
        let trailer = sealer.seal(&ad, &BlobEntry::encode_trailer(&pack.entries));
        forged.extend_from_slice(&trailer);
        let mut ad = header.to_vec();
        ad.extend_from_slice(PADDING_AD);
        let padding = sealer.seal(&ad, &[0, 0, 1, 0]);
        forged.extend_from_slice(&padding);
        let mut ad = header.to_vec();
        ad.extend_from_slice(LENGTHS_AD);
        let mut lengths = (trailer.len() as u32).to_le_bytes().to_vec();
        lengths.extend_from_slice(&(padding.len() as u32).to_le_bytes());
        forged.extend_from_slice(&sealer.seal(&ad, &lengths));
        forged.extend_from_slice(TAIL_MAGIC);
        let said = parse_pack(&sealer, &forged).unwrap_err().to_string();
        assert!(said.contains("not all zero"), "{said}");
    }
}
