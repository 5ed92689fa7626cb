//! Per-blob zstd compression, kept only where it shrinks the blob. Each thread keeps its zstd
//! contexts: creating one costs more than compressing a small file. Every blob gets a whole
//! attempt at the repository's level, whatever it holds: zstd's match finder strides faster
//! the longer it finds nothing, so data that does not compress (media, archives, encrypted
//! files) costs a small fraction of what text does per byte (docs/benchmarks/journal.md, "First
//! backup CPU and repository size (issue 24)"). Sampling large blobs first, to skip those that
//! would not shrink, cost more CPU than it saved and left raw the blobs whose gain the samples
//! missed.

use std::cell::RefCell;

use crate::format::CompressionMode;

/// Level of `auto`.
const AUTO_LEVEL: i32 = 3;

thread_local! {
    static COMPRESSOR: RefCell<Option<(i32, zstd::bulk::Compressor<'static>)>> =
        const { RefCell::new(None) };
    static DECOMPRESSOR: RefCell<Option<zstd::bulk::Decompressor<'static>>> =
        const { RefCell::new(None) };
}

/// Runs `f` with this thread's context set to `level`. A context that was set to another level
/// is told the new one rather than made anew, which would allocate and fault in its tables.
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

/// The most bytes a zstd frame of `len` bytes of input can take.
pub fn bound(len: usize) -> usize {
    zstd::zstd_safe::compress_bound(len)
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
    fn every_size_of_noise_is_stored_raw_text_and_mixed_blobs_compressed() {
        let mut noise = vec![0u8; 4 << 20];
        crate::crypto::fill_random(&mut noise);
        for len in [1, 100, 4 << 10, 64 << 10, 1 << 20, 4 << 20] {
            assert_eq!(compress(&noise[..len], CompressionMode::Auto), None, "{len} bytes");
        }
        let text: Vec<u8> =
            (0..200_000u32).flat_map(|i| format!("line {i}\n").into_bytes()).collect();
        let frame = compress(&text, CompressionMode::Auto).expect("text compresses");
        assert_eq!(decompress(&frame, text.len()).unwrap(), text);
        // Half noise, half text: the text half pays for compression.
        let mut mixed = noise[..text.len() / 2].to_vec();
        mixed.extend_from_slice(&text[..text.len() / 2]);
        let frame = compress(&mixed, CompressionMode::Auto).expect("the text half compresses");
        assert!(frame.len() < mixed.len() * 3 / 4);
        assert_eq!(decompress(&frame, mixed.len()).unwrap(), mixed);
    }

    #[test]
    fn a_large_blob_that_gains_a_little_is_kept_compressed() {
        // 2 MiB of noise with 40 KiB of zeros a sixth of the way in: under 2 % to gain, in a
        // place that four evenly spread samples of 16 KiB would not see.
        let mut blob = vec![0u8; 2 << 20];
        crate::crypto::fill_random(&mut blob);
        let at = blob.len() / 6;
        blob[at..at + (40 << 10)].fill(0);
        let frame = compress(&blob, CompressionMode::Auto).expect("the zeros shrink it");
        assert!(frame.len() < blob.len() - (30 << 10), "{} of {}", frame.len(), blob.len());
        assert_eq!(decompress(&frame, blob.len()).unwrap(), blob);
    }
}
