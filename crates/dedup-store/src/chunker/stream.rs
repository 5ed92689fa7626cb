//! Chunks of a `Read` stream through one window: a chunk is cut as soon as the bytes read
//! decide it (a boundary found), and the window is refilled — what is left moved to its start —
//! only when they do not. The window starts at a few average chunks and grows towards twice the
//! largest chunk only for a chunk that finds no boundary in it (runs of zeros); a worker that
//! chunks many files hands the same window from one stream to the next (allocating and zeroing
//! megabytes per file cost more than reading a small file), shrunk back to its usual size.
//! Each chunk is borrowed from the window, never copied.

use std::io::{self, Read};

use super::Chunker;

/// The window's usual size: four average chunks of the default parameters. Twice the largest
/// chunk (16 MiB) per file worker was most of a backup's memory beside its packs.
const WINDOW: usize = 4 << 20;

/// Yields the chunks of a reader.
pub struct ChunkStream<'c, R> {
    chunker: &'c Chunker,
    reader: R,
    buf: Vec<u8>,
    /// The usual size of `buf`.
    window: usize,
    start: usize,
    end: usize,
    eof: bool,
}

impl<'c, R: Read> ChunkStream<'c, R> {
    /// Chunks `reader` with `chunker`.
    pub fn new(chunker: &'c Chunker, reader: R) -> Self {
        Self::with_buffer(chunker, reader, Vec::new())
    }

    /// Chunks `reader` with `chunker` in `buf`, sized to the usual window.
    pub fn with_buffer(chunker: &'c Chunker, reader: R, buf: Vec<u8>) -> Self {
        Self::with_window(chunker, reader, buf, Self::usual_window(chunker))
    }

    /// The window of [`ChunkStream::with_buffer`] for `chunker`.
    pub fn usual_window(chunker: &Chunker) -> usize {
        WINDOW.min(chunker.max_size().saturating_mul(2)).max(1 << 16)
    }

    /// Chunks `reader` with `chunker` in `buf`, sized to `window` bytes: a window larger than
    /// the stream reads it in one request and one more that finds its end (a smaller one works
    /// too, refilled and grown as needed).
    pub fn with_window(chunker: &'c Chunker, reader: R, mut buf: Vec<u8>, window: usize) -> Self {
        if buf.len() != window {
            buf.resize(window, 0);
            buf.shrink_to(window);
        }
        ChunkStream { chunker, reader, buf, window, start: 0, end: 0, eof: false }
    }

    /// The buffer, for the next stream.
    pub fn into_buffer(self) -> Vec<u8> {
        self.buf
    }

    /// The next chunk, or `None` at the end of the stream.
    pub fn next_chunk(&mut self) -> io::Result<Option<&[u8]>> {
        let cut = loop {
            let read = &self.buf[self.start..self.end];
            if self.eof {
                if read.is_empty() {
                    return Ok(None);
                }
                break self.chunker.cut(read);
            }
            if let Some(cut) = self.chunker.cut_if_decided(read) {
                break cut;
            }
            self.refill()?;
        };
        let chunk = &self.buf[self.start..self.start + cut];
        self.start += cut;
        Ok(Some(chunk))
    }

    /// Reads more after what is left, moved to the window's start; grows the window when what
    /// is left fills it.
    fn refill(&mut self) -> io::Result<()> {
        self.buf.copy_within(self.start..self.end, 0);
        self.end -= self.start;
        self.start = 0;
        if self.end == self.buf.len() {
            let most = self.chunker.max_size().saturating_mul(2).max(self.window);
            let grown = (self.buf.len() * 2).min(most).max(self.end + 1);
            self.buf.resize(grown, 0);
        }
        loop {
            match self.reader.read(&mut self.buf[self.end..]) {
                Ok(0) => self.eof = true,
                Ok(n) => self.end += n,
                Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                Err(err) => return Err(err),
            }
            return Ok(());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::ChunkerParams;

    /// A reader that hands out at most 100 bytes per call, as pipes do.
    struct Trickle<'a>(&'a [u8]);

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = buf.len().min(self.0.len()).min(100);
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    /// The chunks of `data` cut from the whole buffer at once.
    fn cut_whole(chunker: &Chunker, data: &[u8]) -> Vec<Vec<u8>> {
        let mut whole = Vec::new();
        let mut pos = 0;
        while pos < data.len() {
            let cut = chunker.cut(&data[pos..]);
            whole.push(data[pos..pos + cut].to_vec());
            pos += cut;
        }
        whole
    }

    #[test]
    fn streamed_chunks_equal_chunks_of_the_whole() {
        let chunker =
            Chunker::new(ChunkerParams::FastCdc { min: 256, avg: 1024, max: 4096 }, &[5; 32]);
        let mut data = vec![0u8; 100_000];
        blake3::Hasher::new().finalize_xof().fill(&mut data);
        let whole = cut_whole(&chunker, &data);
        let mut stream = ChunkStream::new(&chunker, Trickle(&data));
        let mut streamed = Vec::new();
        while let Some(chunk) = stream.next_chunk().unwrap() {
            streamed.push(chunk.to_vec());
        }
        assert_eq!(streamed, whole);
    }

    #[test]
    fn a_small_window_grows_for_chunks_without_a_boundary_and_cuts_the_same() {
        let chunker =
            Chunker::new(ChunkerParams::FastCdc { min: 256, avg: 1024, max: 4096 }, &[7; 32]);
        // Noise, then runs of one byte value in which the gear hash never meets a boundary
        // (chunks of the largest size), then noise.
        let flat = (0..=255u8)
            .find(|&b| chunker.cut(&[b; 5000]) == 4096)
            .expect("some byte value repeated has no boundary");
        let mut data = vec![0u8; 60_000];
        blake3::Hasher::new().update(b"z").finalize_xof().fill(&mut data);
        data[10_000..30_000].fill(flat);
        data[40_000..40_300].fill(flat);
        let whole = cut_whole(&chunker, &data);
        let sizes: Vec<usize> = whole.iter().map(Vec::len).collect();
        assert!(sizes.contains(&4096), "the flat runs make largest chunks: {sizes:?}");
        for window in [300, 1000, 5000] {
            let mut stream = ChunkStream::with_window(&chunker, Trickle(&data), Vec::new(), window);
            let mut streamed = Vec::new();
            while let Some(chunk) = stream.next_chunk().unwrap() {
                streamed.push(chunk.to_vec());
            }
            assert_eq!(streamed, whole, "window {window}");
        }
    }

    #[test]
    fn a_reused_buffer_chunks_the_next_stream_as_a_fresh_one() {
        let chunker =
            Chunker::new(ChunkerParams::FastCdc { min: 256, avg: 1024, max: 4096 }, &[6; 32]);
        let mut first = vec![0u8; 50_000];
        blake3::Hasher::new().update(b"a").finalize_xof().fill(&mut first);
        let second = &first[..7_000];
        let collect = |mut stream: ChunkStream<'_, &[u8]>| {
            let mut out = Vec::new();
            while let Some(chunk) = stream.next_chunk().unwrap() {
                out.push(chunk.to_vec());
            }
            (out, stream.into_buffer())
        };
        let (_, buf) = collect(ChunkStream::new(&chunker, &first[..]));
        let (reused, _) = collect(ChunkStream::with_buffer(&chunker, second, buf));
        let (fresh, _) = collect(ChunkStream::new(&chunker, second));
        assert_eq!(reused, fresh);
        assert_eq!(reused.concat(), second);
    }

    #[test]
    fn fixed_chunks_are_exact_and_empty_streams_have_none() {
        let chunker = Chunker::new(ChunkerParams::Fixed { size: 10 }, &[0; 32]);
        let mut stream = ChunkStream::new(&chunker, &[1u8; 25][..]);
        let mut sizes = Vec::new();
        while let Some(chunk) = stream.next_chunk().unwrap() {
            sizes.push(chunk.len());
        }
        assert_eq!(sizes, [10, 10, 5]);
        assert!(ChunkStream::new(&chunker, &[][..]).next_chunk().unwrap().is_none());
    }
}
