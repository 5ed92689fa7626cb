//! Per-blob zstd compression, kept only where it shrinks the blob. Each thread keeps its zstd
//! contexts: creating one costs more than compressing a small file. Large blobs are first
//! probed on a few samples, so data that does not compress (media, archives, encrypted files)
//! costs a fraction of a full compression attempt.

use std::cell::RefCell;

use crate::format::CompressionMode;

/// Level of `auto`.
const AUTO_LEVEL: i32 = 3;
/// Blobs from this size on are probed before they are compressed whole.
const PROBE_FROM: usize = 256 << 10;
/// Bytes of each probe sample, and how many samples, spread over the blob.
const PROBE_LEN: usize = 16 << 10;
const PROBES: usize = 4;
/// Level of the probe: the fastest, which finds whatever redundancy is easy to find.
const PROBE_LEVEL: i32 = 1;
/// A blob whose samples do not shrink below this fraction (in 1/1000) is stored raw.
const PROBE_KEEP_PER_MILLE: usize = 970;

thread_local! {
    static COMPRESSOR: RefCell<Option<(i32, zstd::bulk::Compressor<'static>)>> =
        const { RefCell::new(None) };
    static DECOMPRESSOR: RefCell<Option<zstd::bulk::Decompressor<'static>>> =
        const { RefCell::new(None) };
}

/// `data` compressed at `level` with this thread's context. The probe's level and the blob's
/// alternate: the context is told the level rather than made anew, which would allocate and
/// fault in its tables twice per large blob.
fn compress_at(data: &[u8], level: i32) -> Option<Vec<u8>> {
    COMPRESSOR.with(|cell| {
        let mut slot = cell.borrow_mut();
        match slot.as_mut() {
            None => *slot = Some((level, zstd::bulk::Compressor::new(level).ok()?)),
            Some((current, compressor)) if *current != level => {
                compressor.set_compression_level(level).ok()?;
                *current = level;
            }
            Some(_) => {}
        }
        let (_, compressor) = slot.as_mut()?;
        compressor.compress(data).ok()
    })
}

/// Whether samples of `data` shrink enough to be worth compressing it whole.
fn looks_compressible(data: &[u8]) -> bool {
    let step = (data.len() - PROBE_LEN) / (PROBES - 1);
    let mut raw = 0;
    let mut packed = 0;
    for i in 0..PROBES {
        let sample = &data[i * step..i * step + PROBE_LEN];
        raw += sample.len();
        packed += compress_at(sample, PROBE_LEVEL).map_or(sample.len(), |f| f.len());
    }
    packed * 1000 < raw * PROBE_KEEP_PER_MILLE
}

/// The zstd frame of `data`, or `None` when compression is off or does not shrink it.
pub fn compress(data: &[u8], mode: CompressionMode) -> Option<Vec<u8>> {
    let level = match mode {
        CompressionMode::Off => return None,
        CompressionMode::Auto => AUTO_LEVEL,
        CompressionMode::Level(level) => level,
    };
    if data.len() >= PROBE_FROM && !looks_compressible(data) {
        return None;
    }
    let frame = compress_at(data, level)?;
    (frame.len() < data.len()).then_some(frame)
}

/// Decompresses one frame that must yield at most `raw_len` bytes.
pub fn decompress(frame: &[u8], raw_len: usize) -> Result<Vec<u8>, String> {
    DECOMPRESSOR.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            *slot = Some(zstd::bulk::Decompressor::new().map_err(|e| e.to_string())?);
        }
        let decompressor = slot.as_mut().expect("created above");
        decompressor.decompress(frame, raw_len).map_err(|e| e.to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_shrinks_and_round_trips_noise_does_not() {
        let text = b"abcabcabc".repeat(1000);
        let frame = compress(&text, CompressionMode::Auto).expect("text compresses");
        assert!(frame.len() < text.len() / 10);
        assert_eq!(decompress(&frame, text.len()).unwrap(), text);
        assert!(
            decompress(&frame, text.len() - 1).is_err(),
            "a frame larger than its record is refused"
        );
        assert_eq!(compress(&text, CompressionMode::Off), None);
        let mut noise = vec![0u8; 10_000];
        crate::crypto::fill_random(&mut noise);
        assert_eq!(compress(&noise, CompressionMode::Level(19)), None);
    }

    #[test]
    fn large_blobs_are_probed_noise_is_stored_raw_text_compressed() {
        let mut noise = vec![0u8; 4 << 20];
        crate::crypto::fill_random(&mut noise);
        assert_eq!(compress(&noise, CompressionMode::Auto), None);
        let text: Vec<u8> =
            (0..200_000u32).flat_map(|i| format!("line {i}\n").into_bytes()).collect();
        assert!(text.len() >= PROBE_FROM);
        let frame = compress(&text, CompressionMode::Auto).expect("text compresses");
        assert_eq!(decompress(&frame, text.len()).unwrap(), text);
        // Half noise, half text: the samples see both, and the text half pays for compression.
        let mut mixed = noise[..text.len() / 2].to_vec();
        mixed.extend_from_slice(&text[..text.len() / 2]);
        let frame = compress(&mixed, CompressionMode::Auto).expect("the text half compresses");
        assert!(frame.len() < mixed.len() * 3 / 4);
    }
}
