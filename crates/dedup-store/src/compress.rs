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

/// Runs `f` with this thread's context set to `level`. The probe's level and the blob's
/// alternate: the context is told the level rather than made anew, which would allocate and
/// fault in its tables twice per large blob.
fn with_compressor<T>(
    level: i32,
    f: impl FnOnce(&mut zstd::bulk::Compressor<'static>) -> Option<T>,
) -> Option<T> {
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
        f(compressor)
    })
}

/// `data` compressed at `level` with this thread's context.
fn compress_at(data: &[u8], level: i32) -> Option<Vec<u8>> {
    with_compressor(level, |compressor| compressor.compress(data).ok())
}

/// The most bytes a zstd frame of `len` bytes of input can take.
pub fn bound(len: usize) -> usize {
    zstd::zstd_safe::compress_bound(len)
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
    let mut out = Vec::new();
    compress_into(data, mode, &mut out).then_some(out)
}

/// Appends the zstd frame of `data` to `out` when compression is on and shrinks it (true);
/// otherwise leaves `out` as it was (false). Writing into the caller's buffer spares a copy of
/// every blob: a blob's box is compressed into where it will be sealed.
pub fn compress_into(data: &[u8], mode: CompressionMode, out: &mut Vec<u8>) -> bool {
    let level = match mode {
        CompressionMode::Off => return false,
        CompressionMode::Auto => AUTO_LEVEL,
        CompressionMode::Level(level) => level,
    };
    if data.len() >= PROBE_FROM && !looks_compressible(data) {
        return false;
    }
    let start = out.len();
    out.reserve(bound(data.len()));
    let written = with_compressor(level, |compressor| {
        let mut cursor = std::io::Cursor::new(&mut *out);
        cursor.set_position(start as u64);
        compressor.compress_to_buffer(data, &mut cursor).ok()
    });
    match written {
        Some(len) if len < data.len() => true,
        _ => {
            out.truncate(start);
            false
        }
    }
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
