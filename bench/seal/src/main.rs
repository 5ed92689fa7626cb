//! Prints MB/s of sealing and opening 1 MiB and 64 KiB boxes with the portable
//! XChaCha20-Poly1305 and with ring's ChaCha20-Poly1305 keyed by HChaCha20 (the construction
//! dedup-store's sealer uses), and of keyed BLAKE3 and zstd level 3 on the same random bytes.
//! Each figure is the median of seven timings.

use std::time::Instant;

use chacha20::cipher::consts::U10;
use chacha20poly1305::aead::{AeadInPlace, KeyInit};
use chacha20poly1305::{Tag, XChaCha20Poly1305, XNonce};
use ring::aead::{Aad, LessSafeKey, Nonce, UnboundKey, CHACHA20_POLY1305};

const KEY: [u8; 32] = [7; 32];
const NONCE: [u8; 24] = [9; 24];
const AD: &[u8] = b"data 0123456789abcdef";

fn random(len: usize) -> Vec<u8> {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

fn ring_key() -> (LessSafeKey, Nonce) {
    let derived = chacha20::hchacha::<U10>((&KEY).into(), NONCE[..16].into());
    let key = LessSafeKey::new(UnboundKey::new(&CHACHA20_POLY1305, &derived).unwrap());
    let mut inner = [0u8; 12];
    inner[4..].copy_from_slice(&NONCE[16..]);
    (key, Nonce::assume_unique_for_key(inner))
}

/// Median MB/s of `f` run over `bytes` bytes enough times to take about 0.2 s, seven times.
fn rate(bytes: usize, mut f: impl FnMut()) -> f64 {
    let rounds = (200 << 20) / bytes;
    let mut rates: Vec<f64> = (0..7)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..rounds {
                f();
            }
            (rounds * bytes) as f64 / 1e6 / start.elapsed().as_secs_f64()
        })
        .collect();
    rates.sort_by(f64::total_cmp);
    rates[3]
}

fn main() {
    let portable = XChaCha20Poly1305::new((&KEY).into());
    for len in [1 << 20, 64 << 10] {
        let plain = random(len);
        let mut buf = plain.clone();
        let seal_portable = rate(len, || {
            portable.encrypt_in_place_detached(XNonce::from_slice(&NONCE), AD, &mut buf).unwrap();
        });
        let seal_ring = rate(len, || {
            let (key, nonce) = ring_key();
            key.seal_in_place_separate_tag(nonce, Aad::from(AD), &mut buf).unwrap();
        });
        let mut sealed = plain.clone();
        let tag = portable
            .encrypt_in_place_detached(XNonce::from_slice(&NONCE), AD, &mut sealed)
            .unwrap();
        let open_portable = rate(len, || {
            let mut body = sealed.clone();
            portable
                .decrypt_in_place_detached(XNonce::from_slice(&NONCE), AD, &mut body, &tag)
                .unwrap();
        });
        let mut with_tag = sealed.clone();
        with_tag.extend_from_slice(Tag::as_slice(&tag));
        let open_ring = rate(len, || {
            let mut body = with_tag.clone();
            let (key, nonce) = ring_key();
            key.open_in_place(nonce, Aad::from(AD), &mut body).unwrap();
        });
        let hash = rate(len, || {
            std::hint::black_box(blake3::keyed_hash(&KEY, &plain));
        });
        let mut zstd = zstd::bulk::Compressor::new(3).unwrap();
        let compress = rate(len, || {
            std::hint::black_box(zstd.compress(&plain).unwrap());
        });
        println!(
            "{} KiB: seal portable {seal_portable:.0}, ring {seal_ring:.0} MB/s; open portable \
             {open_portable:.0}, ring {open_ring:.0} MB/s (each with a copy of the box); keyed \
             BLAKE3 {hash:.0} MB/s; zstd -3 of random bytes {compress:.0} MB/s",
            len >> 10
        );
    }
}
