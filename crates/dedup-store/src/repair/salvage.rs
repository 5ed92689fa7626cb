//! Salvage of a damaged pack: which of its blobs still open, located by its own trailer or, when
//! the trailer is lost too (a truncated pack), by what an index file said the pack held.

use crate::blob::{self, BlobKind};
use crate::crypto::Sealer;
use crate::format::BlobEntry;
use crate::id::Id;

/// The blobs of a damaged pack sorted into those that open (with their plaintext) and those lost.
#[derive(Debug, Default)]
pub(super) struct Salvage {
    /// Each blob that opens and verifies against its id, with its plaintext.
    pub saved: Vec<(Id, Vec<u8>)>,
    /// Each blob that does not (damaged, or beyond the end of a truncated pack).
    pub lost: Vec<Id>,
}

/// Opens each of `entries` (blobs of `kind`) in the pack `bytes`, whatever else is wrong with it.
pub(super) fn salvage(
    sealer: &Sealer,
    id_key: &[u8; 32],
    kind: BlobKind,
    entries: &[BlobEntry],
    bytes: &[u8],
) -> Salvage {
    let mut out = Salvage::default();
    for entry in entries {
        let start = entry.offset as usize;
        let sealed =
            start.checked_add(entry.stored_len as usize).and_then(|end| bytes.get(start..end));
        match sealed.map(|sealed| blob::open(sealer, id_key, kind, entry, sealed)) {
            Some(Ok(plain)) => out.saved.push((entry.id, plain)),
            _ => out.lost.push(entry.id),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blob::{blob_id, seal};
    use crate::format::CompressionMode;
    use crate::pack::{parse_pack, PackWriter};

    const ID_KEY: [u8; 32] = [7; 32];

    fn pack(sealer: &Sealer, blobs: &[Vec<u8>]) -> (Vec<u8>, Vec<BlobEntry>) {
        let mut writer = PackWriter::new(BlobKind::Data, sealer.encrypted());
        for blob in blobs {
            let id = blob_id(&ID_KEY, blob);
            writer.add(&seal(sealer, id, BlobKind::Data, blob, CompressionMode::Off));
        }
        let finished = writer.finish(sealer);
        (finished.bytes, finished.entries)
    }

    #[test]
    fn a_flipped_blob_is_lost_and_the_others_are_saved() {
        let sealer = Sealer::new([3; 32], true);
        let blobs: Vec<Vec<u8>> = (0..4u8).map(|i| vec![i; 1000]).collect();
        let (mut bytes, entries) = pack(&sealer, &blobs);
        let second = &entries[1];
        bytes[(second.offset + second.stored_len / 2) as usize] ^= 1;
        // The trailer still reads: the entries come from the pack itself.
        let parsed = parse_pack(&sealer, &bytes).unwrap();
        let out = salvage(&sealer, &ID_KEY, BlobKind::Data, &parsed.entries, &bytes);
        assert_eq!(out.lost, vec![second.id]);
        let saved: Vec<&Vec<u8>> = out.saved.iter().map(|(_, plain)| plain).collect();
        assert_eq!(saved, vec![&blobs[0], &blobs[2], &blobs[3]]);
    }

    #[test]
    fn a_truncated_pack_keeps_the_blobs_before_the_cut() {
        let sealer = Sealer::new([3; 32], false);
        let blobs: Vec<Vec<u8>> = (0..4u8).map(|i| vec![i; 1000]).collect();
        let (bytes, entries) = pack(&sealer, &blobs);
        let cut = (entries[2].offset + 10) as usize;
        assert!(parse_pack(&sealer, &bytes[..cut]).is_err());
        // The entries an index file listed locate what is left.
        let out = salvage(&sealer, &ID_KEY, BlobKind::Data, &entries, &bytes[..cut]);
        assert_eq!(out.saved.len(), 2);
        assert_eq!(out.lost, vec![entries[2].id, entries[3].id]);
        // Entries that lie about their place lose only themselves.
        let mut wild = entries.clone();
        wild[0].offset = u32::MAX;
        let out = salvage(&sealer, &ID_KEY, BlobKind::Data, &wild, &bytes);
        assert_eq!((out.saved.len(), out.lost.len()), (3, 1));
    }
}
