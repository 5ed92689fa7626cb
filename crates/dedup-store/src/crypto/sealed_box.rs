//! The sealed box of docs/store-format.md §2: XChaCha20-Poly1305 with a random 24-byte nonce in
//! encrypted repositories, a keyed BLAKE3 checksum in unencrypted ones; 40 bytes of overhead.

use std::sync::Arc;

use chacha20::cipher::{KeyIvInit, StreamCipher};
use chacha20::XChaCha20;
use chacha20poly1305::aead::{AeadInPlace, KeyInit};
use chacha20poly1305::{Tag, XChaCha20Poly1305, XNonce};
use poly1305::universal_hash::UniversalHash;
use poly1305::Poly1305;
use zeroize::Zeroizing;

use crate::crypto::secret::SecretBytes;

/// Nonce length.
pub const NONCE_LEN: usize = 24;
/// Tag length.
pub const TAG_LEN: usize = 16;
/// Bytes a box adds to its payload.
pub const SEAL_OVERHEAD: usize = NONCE_LEN + TAG_LEN;

/// Fills `buf` from the operating system's CSPRNG.
pub fn fill_random(buf: &mut [u8]) {
    // A machine without a working random source cannot make keys or nonces safely: stopping
    // is the only correct answer, and Linux's getrandom(2) does not fail once booted.
    getrandom::fill(buf).expect("the operating system's random source failed");
}

/// A box opened with the wrong key, or damaged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("authentication failed (damaged, or the wrong key)")]
pub struct OpenError;

/// Seals and opens boxes under one key. Clones share the key (one copy, in memory of its own:
/// [`SecretBytes`]), so that threads can each hold a sealer.
#[derive(Clone)]
pub struct Sealer {
    key: Arc<SecretBytes<32>>,
    encrypted: bool,
}

impl std::fmt::Debug for Sealer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sealer").field("encrypted", &self.encrypted).finish_non_exhaustive()
    }
}

impl Sealer {
    /// A sealer with `key`; `encrypted` false gives checksummed plaintext boxes.
    pub fn new(key: [u8; 32], encrypted: bool) -> Self {
        Sealer { key: Arc::new(SecretBytes::new(key)), encrypted }
    }

    /// A sealer with a copy of the secret `key`.
    pub fn from_secret(key: &SecretBytes<32>, encrypted: bool) -> Self {
        Sealer { key: Arc::new(SecretBytes::fill(|copy| copy.copy_from_slice(&**key))), encrypted }
    }

    /// Whether boxes are encrypted.
    pub fn encrypted(&self) -> bool {
        self.encrypted
    }

    /// Appends the box of `payload` with associated data `ad` to `out`.
    pub fn seal_into(&self, ad: &[u8], payload: &[u8], out: &mut Vec<u8>) {
        let start = out.len();
        out.reserve(payload.len() + SEAL_OVERHEAD);
        out.extend_from_slice(&[0u8; NONCE_LEN]);
        out.extend_from_slice(payload);
        self.seal_in_place(ad, out, start);
    }

    /// Seals the payload that `out` holds from `start + NONCE_LEN` to its end, where it was
    /// written (compressed) without a copy: the `NONCE_LEN` bytes from `start` are room for the
    /// nonce, and the tag is appended, so that the box is `out[start..]`.
    pub fn seal_in_place(&self, ad: &[u8], out: &mut Vec<u8>, start: usize) {
        let mut nonce = [0u8; NONCE_LEN];
        let tag = if self.encrypted {
            fill_random(&mut nonce);
            let cipher = XChaCha20Poly1305::new((&**self.key).into());
            let tag = cipher
                .encrypt_in_place_detached(
                    XNonce::from_slice(&nonce),
                    ad,
                    &mut out[start + NONCE_LEN..],
                )
                .expect("XChaCha20 encrypts up to 256 GiB per message; blobs are far smaller");
            tag.into()
        } else {
            self.checksum(ad, &out[start + NONCE_LEN..])
        };
        out[start..start + NONCE_LEN].copy_from_slice(&nonce);
        out.extend_from_slice(&tag);
    }

    /// The box of `payload` with associated data `ad`.
    pub fn seal(&self, ad: &[u8], payload: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        self.seal_into(ad, payload, &mut out);
        out
    }

    /// The payload of `sealed`, if it verifies under this key and `ad`.
    pub fn open(&self, ad: &[u8], sealed: &[u8]) -> Result<Vec<u8>, OpenError> {
        if sealed.len() < SEAL_OVERHEAD {
            return Err(OpenError);
        }
        let (nonce, rest) = sealed.split_at(NONCE_LEN);
        let (body, tag) = rest.split_at(rest.len() - TAG_LEN);
        if !self.encrypted {
            if nonce != [0u8; NONCE_LEN] || tag != self.checksum(ad, body) {
                return Err(OpenError);
            }
            return Ok(body.to_vec());
        }
        let mut plain = body.to_vec();
        let cipher = XChaCha20Poly1305::new((&**self.key).into());
        cipher
            .decrypt_in_place_detached(
                XNonce::from_slice(nonce),
                ad,
                &mut plain,
                Tag::from_slice(tag),
            )
            .map_err(|_| OpenError)?;
        Ok(plain)
    }

    /// Whether `sealed` verifies under this key and `ad`, without decrypting it: the same tag
    /// check as [`Sealer::open`] (RFC 8439 §2.8: Poly1305 keyed from the first block of the
    /// XChaCha20 keystream, over the padded associated data, the padded ciphertext and both
    /// lengths), with no keystream spent on the body and no copy of it.
    pub fn verify(&self, ad: &[u8], sealed: &[u8]) -> Result<(), OpenError> {
        if sealed.len() < SEAL_OVERHEAD {
            return Err(OpenError);
        }
        let (nonce, rest) = sealed.split_at(NONCE_LEN);
        let (body, tag) = rest.split_at(rest.len() - TAG_LEN);
        if !self.encrypted {
            let fits = nonce == [0u8; NONCE_LEN] && tag == self.checksum(ad, body);
            return if fits { Ok(()) } else { Err(OpenError) };
        }
        let mut mac_key = Zeroizing::new([0u8; 32]);
        XChaCha20::new((&**self.key).into(), XNonce::from_slice(nonce))
            .apply_keystream(&mut *mac_key);
        let mut mac = Poly1305::new((&*mac_key).into());
        mac.update_padded(ad);
        mac.update_padded(body);
        let mut lengths = poly1305::Block::default();
        lengths[..8].copy_from_slice(&(ad.len() as u64).to_le_bytes());
        lengths[8..].copy_from_slice(&(body.len() as u64).to_le_bytes());
        mac.update(&[lengths]);
        // Constant-time comparison, as in the AEAD's own open.
        mac.verify(poly1305::Block::from_slice(tag)).map_err(|_| OpenError)
    }

    fn checksum(&self, ad: &[u8], payload: &[u8]) -> [u8; TAG_LEN] {
        let mut hasher = blake3::Hasher::new_keyed(&self.key);
        hasher.update(&(ad.len() as u64).to_le_bytes());
        hasher.update(ad);
        hasher.update(payload);
        let mut tag = [0u8; TAG_LEN];
        tag.copy_from_slice(&hasher.finalize().as_bytes()[..TAG_LEN]);
        tag
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boxes_open_only_with_their_key_and_associated_data() {
        for encrypted in [true, false] {
            let sealer = Sealer::new([7; 32], encrypted);
            let sealed = sealer.seal(b"ad", b"hello world");
            assert_eq!(sealed.len(), 11 + SEAL_OVERHEAD);
            assert_eq!(sealer.open(b"ad", &sealed).as_deref(), Ok(&b"hello world"[..]));
            assert_eq!(sealer.open(b"other", &sealed), Err(OpenError));
            assert_eq!(Sealer::new([8; 32], encrypted).open(b"ad", &sealed), Err(OpenError));
            for at in 0..sealed.len() {
                let mut bad = sealed.clone();
                bad[at] ^= 1;
                assert_eq!(sealer.open(b"ad", &bad), Err(OpenError), "byte {at}");
            }
            assert_eq!(sealer.open(b"ad", &sealed[..10]), Err(OpenError));
        }
    }

    #[test]
    fn verifying_agrees_with_opening_on_every_damage() {
        for encrypted in [true, false] {
            let sealer = Sealer::new([7; 32], encrypted);
            // Lengths around the 16-byte padding of associated data and body.
            for len in [0, 1, 15, 16, 17, 64, 1000] {
                let payload: Vec<u8> = (0..len).map(|i| i as u8).collect();
                let ad = &b"associated data!"[..len % 17];
                let sealed = sealer.seal(ad, &payload);
                assert_eq!(sealer.verify(ad, &sealed), Ok(()), "{len}");
                assert_eq!(sealer.verify(b"x", &sealed), Err(OpenError));
                assert_eq!(Sealer::new([8; 32], encrypted).verify(ad, &sealed), Err(OpenError));
                for at in 0..sealed.len() {
                    let mut bad = sealed.clone();
                    bad[at] ^= 0x80;
                    assert_eq!(sealer.verify(ad, &bad), Err(OpenError), "{len}, byte {at}");
                    assert_eq!(sealer.open(ad, &bad), Err(OpenError));
                }
                assert_eq!(sealer.verify(ad, &sealed[..sealed.len() - 1]), Err(OpenError));
            }
            assert_eq!(sealer.verify(b"", &[0; SEAL_OVERHEAD - 1]), Err(OpenError));
        }
    }

    #[test]
    fn encrypted_boxes_hide_the_payload_and_differ_each_time() {
        let sealer = Sealer::new([7; 32], true);
        let a = sealer.seal(b"", &[0u8; 64]);
        let b = sealer.seal(b"", &[0u8; 64]);
        assert_ne!(a, b);
        assert!(!a.windows(16).any(|w| w == [0u8; 16]));
    }
}
