//! The sealed box of docs/store-format.md §2: XChaCha20-Poly1305 with a random 24-byte nonce in
//! encrypted repositories, a keyed BLAKE3 checksum in unencrypted ones; 40 bytes of overhead.
//!
//! XChaCha20-Poly1305 is computed as its definition (draft-irtf-cfrg-xchacha §2.3) builds it:
//! HChaCha20 of the key and the nonce's first 16 bytes gives a one-box key for the ChaCha20-Poly1305
//! of RFC 8439, whose 12-byte nonce is four zero bytes and the nonce's last 8. That AEAD is ring's,
//! whose assembly seals and opens 2-3 times as fast as the portable crates on this kind of
//! processor; the boxes are the same bytes either way (the tests seal with one and open with the
//! other).

use std::sync::Arc;

use chacha20::cipher::consts::U10;
use chacha20::cipher::{KeyIvInit, StreamCipher};
use chacha20::{XChaCha20, XNonce};
use poly1305::universal_hash::{KeyInit, UniversalHash};
use poly1305::Poly1305;
use ring::aead::{Aad, LessSafeKey, Nonce, UnboundKey, CHACHA20_POLY1305};
use zeroize::{Zeroize, Zeroizing};

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
            let (key, inner) = self.box_key(&nonce);
            let tag = key
                .seal_in_place_separate_tag(inner, Aad::from(ad), &mut out[start + NONCE_LEN..])
                .expect("ChaCha20-Poly1305 seals up to 256 GiB per message; blobs are far smaller");
            let mut bytes = [0u8; TAG_LEN];
            bytes.copy_from_slice(tag.as_ref());
            bytes
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
        // ring opens a body followed by its tag in place: one copy of both, the tag then cut off.
        let mut plain = rest.to_vec();
        let (key, inner) = self.box_key(nonce.try_into().map_err(|_| OpenError)?);
        let len = key.open_in_place(inner, Aad::from(ad), &mut plain).map_err(|_| OpenError)?.len();
        plain.truncate(len);
        Ok(plain)
    }

    /// The payload of the box `sealed`, opened where it lies: a reader that read the box into a
    /// buffer of its own (a data chunk of a pack) gets the payload in that buffer, with no copy
    /// of it; the same check as [`Sealer::open`].
    pub fn open_owned(&self, ad: &[u8], mut sealed: Vec<u8>) -> Result<Vec<u8>, OpenError> {
        self.open_in_buffer(ad, &mut sealed, 0)?;
        Ok(sealed)
    }

    /// Opens the box that `buf` holds from `start` to its end, with associated data `ad`,
    /// leaving only the payload in `buf` (moved to its front): a large file read whole is
    /// then never held twice, sealed and opened. On failure `buf`'s content is unspecified.
    pub fn open_in_buffer(
        &self,
        ad: &[u8],
        buf: &mut Vec<u8>,
        start: usize,
    ) -> Result<(), OpenError> {
        if buf.len() < start + SEAL_OVERHEAD {
            return Err(OpenError);
        }
        let mut nonce = [0u8; NONCE_LEN];
        nonce.copy_from_slice(&buf[start..start + NONCE_LEN]);
        let body = start + NONCE_LEN;
        let len = if self.encrypted {
            let (key, inner) = self.box_key(&nonce);
            key.open_within(inner, Aad::from(ad), buf, body..).map_err(|_| OpenError)?.len()
        } else {
            let end = buf.len() - TAG_LEN;
            if nonce != [0u8; NONCE_LEN] || buf[end..] != self.checksum(ad, &buf[body..end]) {
                return Err(OpenError);
            }
            buf.copy_within(body..end, 0);
            end - body
        };
        buf.truncate(len);
        Ok(())
    }

    /// The ChaCha20-Poly1305 key and 12-byte nonce that the XChaCha20 construction makes of this
    /// sealer's key and a box's 24-byte `nonce`.
    fn box_key(&self, nonce: &[u8; NONCE_LEN]) -> (LessSafeKey, Nonce) {
        let (head, tail) = nonce.split_at(16);
        let mut derived = chacha20::hchacha::<U10>((&**self.key).into(), head.into());
        let key = UnboundKey::new(&CHACHA20_POLY1305, &derived)
            .expect("a ChaCha20-Poly1305 key is 32 bytes, as HChaCha20's output");
        derived.as_mut_slice().zeroize();
        let mut inner = [0u8; 12];
        inner[4..].copy_from_slice(tail);
        (LessSafeKey::new(key), Nonce::assume_unique_for_key(inner))
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
    fn opening_in_place_gives_what_opening_gives_and_refuses_the_same_damage() {
        for encrypted in [true, false] {
            let sealer = Sealer::new([7; 32], encrypted);
            for len in [0, 1, 17, 1000] {
                let payload: Vec<u8> = (0..len).map(|i| i as u8).collect();
                let mut file = b"head".to_vec();
                sealer.seal_into(b"ad", &payload, &mut file);
                let mut owned = file.clone();
                assert_eq!(sealer.open_in_buffer(b"ad", &mut owned, 4), Ok(()), "{len}");
                assert_eq!(owned, payload);
                assert_eq!(sealer.open_in_buffer(b"other", &mut file.clone(), 4), Err(OpenError));
                for at in 4..file.len() {
                    let mut bad = file.clone();
                    bad[at] ^= 0x80;
                    assert_eq!(
                        sealer.open_in_buffer(b"ad", &mut bad, 4),
                        Err(OpenError),
                        "byte {at}"
                    );
                }
                let mut short = file[..4 + SEAL_OVERHEAD - 1].to_vec();
                assert_eq!(sealer.open_in_buffer(b"ad", &mut short, 4), Err(OpenError));
            }
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

    /// A box opened where it lies gives what opening a copy gives, at lengths around ChaCha20's
    /// blocks and the assembly's 512-byte strides (the body moves 24 bytes forward as it is
    /// decrypted), and refuses every damaged byte.
    #[test]
    fn a_box_opened_in_its_own_buffer_opens_as_a_copy_would() {
        for encrypted in [true, false] {
            let sealer = Sealer::new([9; 32], encrypted);
            for len in [0, 1, 15, 16, 17, 63, 64, 65, 511, 512, 513, 4097, 65_536, 300 * 1024 + 5] {
                let payload: Vec<u8> = (0..len).map(|i| (i * 13 + len) as u8).collect();
                let ad = &b"data blob 0123456789"[..len % 21];
                let sealed = sealer.seal(ad, &payload);
                assert_eq!(sealer.open_owned(ad, sealed.clone()), Ok(payload), "{len}");
                assert_eq!(sealer.open_owned(b"x", sealed.clone()), Err(OpenError), "{len}");
                let wrong = Sealer::new([8; 32], encrypted);
                assert_eq!(wrong.open_owned(ad, sealed.clone()), Err(OpenError), "{len}");
                let step = (sealed.len() / 64).max(1);
                for at in (0..sealed.len()).step_by(step).chain([sealed.len() - 1]) {
                    let mut bad = sealed.clone();
                    bad[at] ^= 0x10;
                    assert_eq!(sealer.open_owned(ad, bad), Err(OpenError), "{len}, byte {at}");
                }
            }
            assert_eq!(sealer.open_owned(b"", vec![0; SEAL_OVERHEAD - 1]), Err(OpenError));
        }
    }

    fn hex(text: &str) -> Vec<u8> {
        let digits: Vec<u8> = text.bytes().filter(u8::is_ascii_hexdigit).collect();
        digits
            .chunks(2)
            .map(|pair| u8::from_str_radix(std::str::from_utf8(pair).unwrap(), 16).unwrap())
            .collect()
    }

    /// draft-irtf-cfrg-xchacha-03, A.3.1: the box of its test vector opens to its plaintext, so
    /// the construction through ring is XChaCha20-Poly1305 as the format names it.
    #[test]
    fn the_xchacha20_poly1305_test_vector_opens() {
        let key: [u8; 32] = std::array::from_fn(|i| 0x80 + i as u8);
        let nonce: Vec<u8> = (0x40..0x58).collect();
        let ad = hex("50515253c0c1c2c3c4c5c6c7");
        let plain = b"Ladies and Gentlemen of the class of '99: If I could offer you only one \
            tip for the future, sunscreen would be it.";
        let mut sealed = nonce;
        sealed.extend(hex("bd6d179d3e83d43b9576579493c0e939572a1700252bfaccbed2902c21396cbb
             731c7f1b0b4aa6440bf3a82f4eda7e39ae64c6708c54c216cb96b72e1213b452
             2f8c9ba40db5d945b11b69b982c1bb9e3f3fac2bc369488f76b2383565d3fff9
             21f9664c97637da9768812f615c68b13b52e"));
        sealed.extend(hex("c0875924c1c7987947deafd8780acf49"));
        let sealer = Sealer::new(key, true);
        assert_eq!(sealer.open(&ad, &sealed).as_deref(), Ok(&plain[..]));
        assert_eq!(sealer.verify(&ad, &sealed), Ok(()));
    }

    /// Boxes sealed here open with the portable XChaCha20-Poly1305 crate and the reverse, at
    /// lengths around ChaCha20's 64-byte blocks and Poly1305's 16-byte padding, up to 300 KiB.
    #[test]
    fn boxes_are_the_portable_xchacha20_poly1305s() {
        use chacha20poly1305::aead::{AeadInPlace, KeyInit};
        use chacha20poly1305::{Tag, XChaCha20Poly1305};

        let key: [u8; 32] = std::array::from_fn(|i| (i * 7 + 3) as u8);
        let sealer = Sealer::new(key, true);
        let portable = XChaCha20Poly1305::new((&key).into());
        let mut lengths = vec![0, 1, 15, 16, 17, 63, 64, 65, 127, 128, 129, 1000, 4097];
        lengths.extend([65_535, 65_536, 131_073, 300 * 1024 + 5]);
        for len in lengths {
            let payload: Vec<u8> = (0..len).map(|i| (i * 31 + len) as u8).collect();
            let ad = &b"pack 0123456789 data"[..len % 21];
            let sealed = sealer.seal(ad, &payload);
            let (nonce, rest) = sealed.split_at(NONCE_LEN);
            let (body, tag) = rest.split_at(rest.len() - TAG_LEN);
            let mut opened = body.to_vec();
            portable
                .decrypt_in_place_detached(nonce.into(), ad, &mut opened, Tag::from_slice(tag))
                .unwrap_or_else(|_| panic!("the portable crate refused a box of {len} bytes"));
            assert_eq!(opened, payload, "{len}");

            let mut theirs = payload.clone();
            let tag = portable.encrypt_in_place_detached(nonce.into(), ad, &mut theirs).unwrap();
            let mut boxed = nonce.to_vec();
            boxed.extend_from_slice(&theirs);
            boxed.extend_from_slice(&tag);
            assert_eq!(boxed, sealed, "{len}: the same nonce gives the same box");
            assert_eq!(sealer.open(ad, &boxed).as_deref(), Ok(&payload[..]), "{len}");
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
