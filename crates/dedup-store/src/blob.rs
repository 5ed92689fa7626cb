//! Blobs (docs/store-format.md §6): their kind, their keyed id, and their sealed form with the
//! associated data that binds id, kind, compression and length.

use crate::compress;
use crate::crypto::{OpenError, Sealer, NONCE_LEN, TAG_LEN};
pub use crate::format::BlobKind;
use crate::format::{BlobEntry, Compression, CompressionMode};
use crate::id::Id;

/// The id of a blob: BLAKE3 keyed with the id key over the plaintext.
pub fn blob_id(id_key: &[u8; 32], plaintext: &[u8]) -> Id {
    Id(*blake3::keyed_hash(id_key, plaintext).as_bytes())
}

/// The associated data of a blob's box.
fn associated_data(id: &Id, kind: BlobKind, compression: Compression, raw_len: u32) -> [u8; 38] {
    let mut ad = [0u8; 38];
    ad[..32].copy_from_slice(&id.0);
    ad[32] = kind.code();
    ad[33] = compression.code();
    ad[34..].copy_from_slice(&raw_len.to_le_bytes());
    ad
}

/// A blob compressed and sealed, ready for a pack.
#[derive(Debug, Clone)]
pub struct SealedBlob {
    /// Its id.
    pub id: Id,
    /// Its kind.
    pub kind: BlobKind,
    /// Its compression.
    pub compression: Compression,
    /// Plaintext length.
    pub raw_len: u32,
    /// The sealed box.
    pub sealed: Vec<u8>,
}

/// Compresses (where it shrinks) and seals `plaintext`, whose id is `id`.
pub fn seal(
    sealer: &Sealer,
    id: Id,
    kind: BlobKind,
    plaintext: &[u8],
    mode: CompressionMode,
) -> SealedBlob {
    let raw_len = u32::try_from(plaintext.len())
        .expect("blobs are below 4 GiB: chunks by the config, trees by their count");
    // The payload is compressed (or copied) straight into the box, after room for its nonce.
    let mut sealed = Vec::with_capacity(NONCE_LEN + compress::bound(plaintext.len()) + TAG_LEN);
    sealed.extend_from_slice(&[0u8; NONCE_LEN]);
    let compression = if compress::compress_into(plaintext, mode, &mut sealed) {
        Compression::Zstd
    } else {
        sealed.extend_from_slice(plaintext);
        Compression::None
    };
    sealer.seal_in_place(&associated_data(&id, kind, compression, raw_len), &mut sealed, 0);
    SealedBlob { id, kind, compression, raw_len, sealed }
}

/// Why a stored blob cannot be read back.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BlobError {
    /// The box does not verify.
    #[error("{0}")]
    Open(#[from] OpenError),
    /// The payload does not decompress to the recorded length.
    #[error("does not decompress: {0}")]
    Decompress(String),
    /// The plaintext hashes to another id.
    #[error("content does not match its id")]
    IdMismatch,
}

/// Opens, decompresses and verifies the blob at `entry` whose sealed box is `sealed`.
pub fn open(
    sealer: &Sealer,
    id_key: &[u8; 32],
    kind: BlobKind,
    entry: &BlobEntry,
    sealed: &[u8],
) -> Result<Vec<u8>, BlobError> {
    let ad = associated_data(&entry.id, kind, entry.compression, entry.raw_len);
    let payload = sealer.open(&ad, sealed)?;
    plaintext_of(id_key, entry, payload)
}

/// Opens, decompresses and verifies the blob at `entry` whose sealed box was read into `sealed`
/// of its own: the same checks as [`open`], the box opened in that buffer rather than in a copy
/// (a stored chunk read back is opened once per read of it).
pub fn open_owned(
    sealer: &Sealer,
    id_key: &[u8; 32],
    kind: BlobKind,
    entry: &BlobEntry,
    sealed: Vec<u8>,
) -> Result<Vec<u8>, BlobError> {
    let ad = associated_data(&entry.id, kind, entry.compression, entry.raw_len);
    let payload = sealer.open_owned(&ad, sealed)?;
    plaintext_of(id_key, entry, payload)
}

/// The plaintext of the opened `payload` of the blob at `entry`, decompressed and verified
/// against its length and id.
fn plaintext_of(
    id_key: &[u8; 32],
    entry: &BlobEntry,
    payload: Vec<u8>,
) -> Result<Vec<u8>, BlobError> {
    let plaintext = match entry.compression {
        Compression::None => payload,
        Compression::Zstd => {
            compress::decompress(&payload, entry.raw_len as usize).map_err(BlobError::Decompress)?
        }
    };
    if plaintext.len() != entry.raw_len as usize {
        return Err(BlobError::Decompress(format!(
            "{} bytes, expected {}",
            plaintext.len(),
            entry.raw_len
        )));
    }
    if blob_id(id_key, &plaintext) != entry.id {
        return Err(BlobError::IdMismatch);
    }
    Ok(plaintext)
}

/// Verifies the stored blob at `entry` whose sealed box is `sealed`, for copying the box as it
/// is (prune's repacking). In an encrypted repository the box's tag alone proves it: its
/// associated data binds the id, kind, compression and length, so a box that authenticates is,
/// bit for bit, the one a holder of the data key sealed for this entry, and decrypting,
/// decompressing and hashing it again would prove nothing more about the bytes copied. An
/// unencrypted repository's blob is opened and its id checked, as a reader does.
pub fn verify_stored(
    sealer: &Sealer,
    id_key: &[u8; 32],
    kind: BlobKind,
    entry: &BlobEntry,
    sealed: &[u8],
) -> Result<(), BlobError> {
    if sealer.encrypted() {
        let ad = associated_data(&entry.id, kind, entry.compression, entry.raw_len);
        return Ok(sealer.verify(&ad, sealed)?);
    }
    open(sealer, id_key, kind, entry, sealed).map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Text that compresses, sealed as a data blob with `key` as its id key, and its entry.
    fn sealed_text(sealer: &Sealer, key: &[u8; 32]) -> (Vec<u8>, SealedBlob, BlobEntry) {
        let text = b"some text some text some text some text some text".repeat(20);
        let id = blob_id(key, &text);
        let blob = seal(sealer, id, BlobKind::Data, &text, CompressionMode::Auto);
        let entry = BlobEntry {
            id,
            compression: blob.compression,
            offset: 8,
            stored_len: blob.sealed.len() as u32,
            raw_len: blob.raw_len,
        };
        (text, blob, entry)
    }

    #[test]
    fn a_sealed_blob_opens_to_its_plaintext_and_detects_swaps() {
        let sealer = Sealer::new([3; 32], true);
        let key = [4; 32];
        let (text, blob, entry) = sealed_text(&sealer, &key);
        assert_eq!(blob.compression, Compression::Zstd);
        assert_eq!(open(&sealer, &key, BlobKind::Data, &entry, &blob.sealed).unwrap(), text);
        assert!(open(&sealer, &key, BlobKind::Tree, &entry, &blob.sealed).is_err());
        let other = BlobEntry { id: blob_id(&key, b"x"), ..entry };
        assert!(open(&sealer, &key, BlobKind::Data, &other, &blob.sealed).is_err());
    }

    #[test]
    fn a_stored_blob_verifies_only_as_the_entry_it_was_sealed_for() {
        let key = [4; 32];
        for encrypted in [true, false] {
            let sealer = Sealer::new([3; 32], encrypted);
            let (_, blob, entry) = sealed_text(&sealer, &key);
            let verify = |kind, entry: &BlobEntry, sealed: &[u8]| {
                verify_stored(&sealer, &key, kind, entry, sealed).is_ok()
            };
            assert!(verify(BlobKind::Data, &entry, &blob.sealed));
            assert!(!verify(BlobKind::Tree, &entry, &blob.sealed));
            for other in [
                BlobEntry { id: blob_id(&key, b"x"), ..entry },
                BlobEntry { compression: Compression::None, ..entry },
                BlobEntry { raw_len: entry.raw_len + 1, ..entry },
            ] {
                assert!(!verify(BlobKind::Data, &other, &blob.sealed));
            }
            for at in 0..blob.sealed.len() {
                let mut bad = blob.sealed.clone();
                bad[at] ^= 4;
                assert!(!verify(BlobKind::Data, &entry, &bad), "byte {at}");
            }
        }
    }

    /// Opening a box read into a buffer of its own checks what opening it from a slice does.
    #[test]
    fn an_owned_box_opens_and_is_checked_as_a_borrowed_one() {
        let key = [4; 32];
        for encrypted in [true, false] {
            let sealer = Sealer::new([3; 32], encrypted);
            let (text, blob, entry) = sealed_text(&sealer, &key);
            let owned = |kind, entry: &BlobEntry, sealed: Vec<u8>| {
                open_owned(&sealer, &key, kind, entry, sealed)
            };
            assert_eq!(owned(BlobKind::Data, &entry, blob.sealed.clone()).unwrap(), text);
            assert!(owned(BlobKind::Tree, &entry, blob.sealed.clone()).is_err());
            for other in [
                BlobEntry { id: blob_id(&key, b"x"), ..entry },
                BlobEntry { raw_len: entry.raw_len + 1, ..entry },
            ] {
                assert!(owned(BlobKind::Data, &other, blob.sealed.clone()).is_err());
            }
            let mut bad = blob.sealed.clone();
            bad[30] ^= 4;
            assert!(owned(BlobKind::Data, &entry, bad).is_err());
            let mut noise = vec![0u8; 70_000];
            crate::crypto::fill_random(&mut noise);
            let id = blob_id(&key, &noise);
            let raw = seal(&sealer, id, BlobKind::Data, &noise, CompressionMode::Auto);
            assert_eq!(raw.compression, Compression::None);
            let entry = BlobEntry {
                stored_len: raw.sealed.len() as u32,
                raw_len: raw.raw_len,
                compression: raw.compression,
                id,
                ..entry
            };
            assert_eq!(owned(BlobKind::Data, &entry, raw.sealed).unwrap(), noise);
        }
    }

    #[test]
    fn incompressible_blobs_are_stored_raw() {
        let sealer = Sealer::new([3; 32], false);
        let mut noise = vec![0u8; 4096];
        crate::crypto::fill_random(&mut noise);
        let blob =
            seal(&sealer, blob_id(&[0; 32], &noise), BlobKind::Data, &noise, CompressionMode::Auto);
        assert_eq!(blob.compression, Compression::None);
        assert_eq!(blob.sealed.len(), 4096 + crate::crypto::SEAL_OVERHEAD);
    }
}
