//! Per-blob zstd compression, kept only where it shrinks the blob.

use crate::format::CompressionMode;

/// Level of `auto`.
const AUTO_LEVEL: i32 = 3;

/// The zstd frame of `data`, or `None` when compression is off or does not shrink it.
pub fn compress(data: &[u8], mode: CompressionMode) -> Option<Vec<u8>> {
    let level = match mode {
        CompressionMode::Off => return None,
        CompressionMode::Auto => AUTO_LEVEL,
        CompressionMode::Level(level) => level,
    };
    let frame = zstd::bulk::compress(data, level).ok()?;
    (frame.len() < data.len()).then_some(frame)
}

/// Decompresses one frame that must yield at most `raw_len` bytes.
pub fn decompress(frame: &[u8], raw_len: usize) -> Result<Vec<u8>, String> {
    zstd::bulk::decompress(frame, raw_len).map_err(|e| e.to_string())
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
}
