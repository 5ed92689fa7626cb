//! Chunks of a `Read` stream through one buffer of twice the largest chunk: refilled only when
//! less than a largest chunk is left, so each chunk is cut once and borrowed, never copied. A
//! worker that chunks many files hands the same buffer from one stream to the next: allocating
//! (and zeroing) megabytes per file cost more than reading a small file.

use std::io::{self, Read};

use super::Chunker;

/// Yields the chunks of a reader.
pub struct ChunkStream<'c, R> {
    chunker: &'c Chunker,
    reader: R,
    buf: Vec<u8>,
    start: usize,
    end: usize,
    eof: bool,
}

impl<'c, R: Read> ChunkStream<'c, R> {
    /// Chunks `reader` with `chunker`.
    pub fn new(chunker: &'c Chunker, reader: R) -> Self {
        Self::with_buffer(chunker, reader, Vec::new())
    }

    /// Chunks `reader` with `chunker` in `buf`, grown if it is too small for the chunker.
    pub fn with_buffer(chunker: &'c Chunker, reader: R, mut buf: Vec<u8>) -> Self {
        let size = chunker.max_size().saturating_mul(2).max(1 << 16);
        if buf.len() < size {
            buf.resize(size, 0);
        }
        ChunkStream { chunker, reader, buf, start: 0, end: 0, eof: false }
    }

    /// The buffer, for the next stream.
    pub fn into_buffer(self) -> Vec<u8> {
        self.buf
    }

    /// The next chunk, or `None` at the end of the stream.
    pub fn next_chunk(&mut self) -> io::Result<Option<&[u8]>> {
        let want = self.chunker.max_size();
        if self.end - self.start < want && !self.eof {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
            while self.end < want && !self.eof {
                match self.reader.read(&mut self.buf[self.end..]) {
                    Ok(0) => self.eof = true,
                    Ok(n) => self.end += n,
                    Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                    Err(err) => return Err(err),
                }
            }
        }
        if self.start == self.end {
            return Ok(None);
        }
        let cut = self.chunker.cut(&self.buf[self.start..self.end]);
        let chunk = &self.buf[self.start..self.start + cut];
        self.start += cut;
        Ok(Some(chunk))
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

    #[test]
    fn streamed_chunks_equal_chunks_of_the_whole() {
        let chunker =
            Chunker::new(ChunkerParams::FastCdc { min: 256, avg: 1024, max: 4096 }, &[5; 32]);
        let mut data = vec![0u8; 100_000];
        blake3::Hasher::new().finalize_xof().fill(&mut data);
        let mut whole = Vec::new();
        let mut pos = 0;
        while pos < data.len() {
            let cut = chunker.cut(&data[pos..]);
            whole.push(data[pos..pos + cut].to_vec());
            pos += cut;
        }
        let mut stream = ChunkStream::new(&chunker, Trickle(&data));
        let mut streamed = Vec::new();
        while let Some(chunk) = stream.next_chunk().unwrap() {
            streamed.push(chunk.to_vec());
        }
        assert_eq!(streamed, whole);
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
