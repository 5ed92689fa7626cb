//! Where the blobs of a damaged pack lie, and whether that list is known to be whole: from the
//! pack's own trailer; from its trailer opened under the header `dedup` writes, when only the
//! header is damaged (the trailer's associated data binds the header, so one flipped header byte
//! hides every blob, though each blob box, bound to nothing of the pack, is intact); or from
//! what an index file said the pack held (a writer lists a pack whole, from its trailer), taken
//! as whole only when those entries lie box after box from the end of the header and the pack
//! is no longer than they and their trailer would make it: a list that lacked a blob would
//! leave a gap, or a pack longer than it accounts for.

use crate::blob::BlobKind;
use crate::crypto::Sealer;
use crate::format::{BlobEntry, Header, Magic, HEADER_LEN};
use crate::pack::{padded_len, parse_pack, unpadded_len, PackLayout, PADDING_AD, TRAILER_AD};

/// The blobs of a damaged pack, as far as they can be located.
#[derive(Debug)]
pub(super) struct Located {
    /// Their kind.
    pub kind: BlobKind,
    /// Where each lies.
    pub entries: Vec<BlobEntry>,
    /// Whether these are known to be every blob of the pack: only then may the pack go once
    /// those that open are stored elsewhere.
    pub whole: bool,
    /// What differs from the header `dedup` writes, when restoring it opened the trailer.
    pub header_damage: Option<String>,
}

/// The names of the header's bytes (docs/store-format.md §2).
const HEADER_FIELDS: [&str; HEADER_LEN] =
    ["magic", "magic", "magic", "magic", "version", "flags", "sub-kind", "reserved"];

/// `found` against `expected`, byte by byte: `header byte 7 (reserved) is 0x01, not 0x00`.
fn header_differences(found: &[u8], expected: &[u8; HEADER_LEN]) -> String {
    let differing: Vec<String> = (0..HEADER_LEN)
        .filter(|&i| found.get(i) != Some(&expected[i]))
        .map(|i| {
            let byte = found.get(i).map_or("missing".into(), |b| format!("0x{b:02x}"));
            format!("header byte {i} ({}) is {byte}, not 0x{:02x}", HEADER_FIELDS[i], expected[i])
        })
        .collect();
    differing.join(", ")
}

/// Whether `entries` are every blob of the pack `bytes`, of which the tail or the end may be
/// lost: they lie box after box from the end of the header, and either the pack is no longer
/// than those boxes, a trailer listing them and the tail of either pack version would make it,
/// or (a padded pack, format version 4, whose length alone cannot tell whether a blob follows
/// the last one listed) a box that the writer puts right after such a trailer still opens where
/// it would lie: the trailer box itself, or the padding box that ends where the tail begins.
fn cover_the_body(sealer: &Sealer, entries: &[BlobEntry], bytes: &[u8]) -> bool {
    let mut sorted: Vec<&BlobEntry> = entries.iter().collect();
    sorted.sort_by_key(|e| e.offset);
    let mut next = HEADER_LEN as u64;
    for entry in sorted {
        if u64::from(entry.offset) != next {
            return false;
        }
        next += u64::from(entry.stored_len);
    }
    let body_len = next as usize;
    let longest = [PackLayout::Plain, PackLayout::Padded]
        .map(|layout| unpadded_len(layout, body_len, entries.len()))
        .into_iter()
        .max()
        .unwrap_or(0);
    if bytes.len() as u64 <= longest {
        return true;
    }
    a_padded_tail_opens_after(sealer, bytes, body_len, entries.len())
}

/// Whether the padded pack `bytes` has a trailer box of `count` entries right after its first
/// `body_len` bytes: that box opens there, or the padding box opens between the end of such a
/// box and the tail (its place fixes where the trailer ends, so the trailer lists `count`
/// blobs and no blob lies after `body_len`).
fn a_padded_tail_opens_after(sealer: &Sealer, bytes: &[u8], body_len: usize, count: usize) -> bool {
    let layout = PackLayout::Padded;
    let unpadded = unpadded_len(layout, body_len, count);
    if bytes.len() as u64 != padded_len(unpadded) || bytes.len() < HEADER_LEN {
        return false;
    }
    let trailer_end = unpadded as usize - layout.tail_len();
    let tail_start = bytes.len() - layout.tail_len();
    let header = &bytes[..HEADER_LEN];
    let opens = |ad_suffix: &[u8], sealed: &[u8]| {
        let mut ad = header.to_vec();
        ad.extend_from_slice(ad_suffix);
        sealer.open(&ad, sealed).is_ok()
    };
    opens(TRAILER_AD, &bytes[body_len..trailer_end])
        || opens(PADDING_AD, &bytes[trailer_end..tail_start])
}

/// Locates the blobs of the damaged pack `bytes`; `indexed` is what the old index files said it
/// held, if any. `None` when nothing says where they are.
pub(super) fn locate(
    sealer: &Sealer,
    bytes: &mut [u8],
    indexed: Option<(BlobKind, Vec<BlobEntry>)>,
) -> Option<Located> {
    if let Ok(parsed) = parse_pack(sealer, bytes) {
        let (kind, entries) = (parsed.kind, parsed.entries);
        return Some(Located { kind, entries, whole: true, header_damage: None });
    }
    if bytes.len() >= HEADER_LEN {
        let found: [u8; HEADER_LEN] = bytes[..HEADER_LEN].try_into().expect("the header's length");
        // Every version byte: a version this program does not read is refused before any
        // decryption, so only the pack versions it knows cost a try.
        let kinds = [BlobKind::Data, BlobKind::Tree];
        for (version, kind) in (1..=u8::MAX).flat_map(|v| kinds.map(|k| (v, k))) {
            let mut expected =
                Header { magic: Magic::Pack, encrypted: sealer.encrypted(), sub_kind: kind.code() }
                    .encode();
            expected[4] = version;
            if expected == found {
                continue;
            }
            bytes[..HEADER_LEN].copy_from_slice(&expected);
            let parsed = parse_pack(sealer, bytes);
            bytes[..HEADER_LEN].copy_from_slice(&found);
            if let Ok(parsed) = parsed {
                return Some(Located {
                    kind,
                    entries: parsed.entries,
                    whole: true,
                    header_damage: Some(header_differences(&found, &expected)),
                });
            }
        }
    }
    let (kind, entries) = indexed?;
    let whole = cover_the_body(sealer, &entries, bytes);
    Some(Located { kind, entries, whole, header_damage: None })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blob::{blob_id, seal};
    use crate::format::CompressionMode;
    use crate::pack::PackWriter;

    fn pack(sealer: &Sealer, kind: BlobKind, count: u8) -> (Vec<u8>, Vec<BlobEntry>) {
        let mut writer = PackWriter::new(kind, sealer.encrypted());
        for i in 0..count {
            let blob = vec![i; 300];
            writer.add(&seal(sealer, blob_id(&[7; 32], &blob), kind, &blob, CompressionMode::Off));
        }
        let finished = writer.finish(sealer);
        (finished.bytes, finished.entries)
    }

    #[test]
    fn any_header_byte_flipped_still_locates_every_blob_and_names_the_byte() {
        for encrypted in [true, false] {
            let sealer = Sealer::new([3; 32], encrypted);
            for kind in [BlobKind::Data, BlobKind::Tree] {
                let (good, entries) = pack(&sealer, kind, 3);
                for at in 0..HEADER_LEN {
                    let mut damaged = good.clone();
                    damaged[at] ^= 0x01;
                    let mut bytes = damaged.clone();
                    let located = locate(&sealer, &mut bytes, None).expect("located");
                    assert_eq!((located.kind, &located.entries), (kind, &entries));
                    assert!(located.whole);
                    let damage = located.header_damage.unwrap();
                    assert!(damage.starts_with(&format!("header byte {at} (")), "{damage}");
                    assert_eq!(bytes, damaged, "the pack's bytes are given back as they were");
                }
            }
        }
        let sealer = Sealer::new([3; 32], true);
        let (mut bytes, _) = pack(&sealer, BlobKind::Data, 1);
        bytes[7] = 1;
        let damage = locate(&sealer, &mut bytes, None).unwrap().header_damage.unwrap();
        assert_eq!(damage, "header byte 7 (reserved) is 0x01, not 0x00");
    }

    #[test]
    fn without_a_trailer_index_entries_locate_the_blobs_whole_only_when_they_cover_the_body() {
        let sealer = Sealer::new([3; 32], true);
        let (mut bytes, entries) = pack(&sealer, BlobKind::Data, 3);
        // The trailer box damaged: only an index file says where the blobs are.
        let trailer_at = bytes.len() - PackLayout::Plain.tail_len() - 10;
        bytes[trailer_at] ^= 1;
        assert!(locate(&sealer, &mut bytes, None).is_none(), "nothing says where they are");
        let located = locate(&sealer, &mut bytes, Some((BlobKind::Data, entries.clone()))).unwrap();
        assert!(located.whole);
        // An index file that lists only some of them proves nothing about the rest.
        for partial in [&entries[..2], &entries[1..], &[entries[0], entries[2]]] {
            let partial = Some((BlobKind::Data, partial.to_vec()));
            assert!(!locate(&sealer, &mut bytes, partial).unwrap().whole);
        }
        // A pack cut short (its tail and the end of its blobs lost) is still accounted for.
        let cut = (entries[2].offset + 10) as usize;
        let located =
            locate(&sealer, &mut bytes[..cut], Some((BlobKind::Data, entries.clone()))).unwrap();
        assert!(located.whole);
        // Its tail damaged in place, the same.
        let mut tail_damaged = bytes.clone();
        let last = tail_damaged.len() - 1;
        tail_damaged[last] ^= 1;
        let located = locate(&sealer, &mut tail_damaged, Some((BlobKind::Data, entries))).unwrap();
        assert!(located.whole);
    }

    #[test]
    fn a_padded_pack_is_whole_from_index_entries_only_when_its_trailer_or_padding_opens_in_place() {
        let sealer = Sealer::new([3; 32], true);
        let mut writer =
            PackWriter::with_layout(BlobKind::Data, true, PackLayout::Padded, Vec::new());
        for i in 0..3u8 {
            let blob = vec![i; 300];
            let id = blob_id(&[7; 32], &blob);
            writer.add(&seal(&sealer, id, BlobKind::Data, &blob, CompressionMode::Off));
        }
        let finished = writer.finish(&sealer);
        let (bytes, entries) = (finished.bytes, finished.entries);
        assert!(bytes.len() as u64 >= crate::pack::MIN_PADDED_PACK, "padded");
        let end = entries.iter().map(|e| (e.offset + e.stored_len) as usize).max().unwrap();
        let last = bytes.len() - 1;
        let padding_at = bytes.len() - PackLayout::Padded.tail_len() - 100;
        let damaged = |at: &[usize]| {
            let mut damaged = bytes.clone();
            at.iter().for_each(|&i| damaged[i] ^= 1);
            damaged
        };
        // The trailer (or the padding) damaged with the tail: the other box, opening where it
        // lies, proves that the trailer lists the index's entries and nothing follows them.
        for at in [[end, last], [padding_at, last]] {
            let mut damaged = damaged(&at);
            let listed = Some((BlobKind::Data, entries.clone()));
            assert!(locate(&sealer, &mut damaged, listed).unwrap().whole, "damaged at {at:?}");
            let partial = Some((BlobKind::Data, entries[..2].to_vec()));
            assert!(!locate(&sealer, &mut damaged, partial).unwrap().whole);
        }
        // Both damaged: the index cannot prove that no blob follows the last it lists.
        let mut both = damaged(&[end, padding_at, last]);
        for listed in [&entries[..], &entries[..2]] {
            let located =
                locate(&sealer, &mut both, Some((BlobKind::Data, listed.to_vec()))).unwrap();
            assert!(!located.whole, "a padded pack's length says nothing of its blobs");
        }
        // Cut short, the same.
        let mut cut = bytes[..bytes.len() - 10].to_vec();
        let listed = Some((BlobKind::Data, entries.clone()));
        assert!(!locate(&sealer, &mut cut, listed).unwrap().whole);
    }
}
