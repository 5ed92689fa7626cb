//! Byte buffers for reading file content, placed where the kernel copies into them fastest.
//!
//! On this project's reference machine the kernel copies page-cache data into a buffer that
//! starts a few bytes past a page boundary at a fraction of its usual speed, and glibc places
//! every large allocation exactly 16 bytes past one. A large [`ReadBuf`] starts on a page boundary instead.
//! docs/benchmarks/find.md has the measurement (`bench/copy-alignment.py`).

const PAGE: usize = 4096;

/// A zero-initialised byte buffer of a chosen length that can be reused for any length up to
/// its room without being reallocated.
pub struct ReadBuf {
    /// Initialised up to `start` plus the longest length the buffer has had.
    storage: Vec<u8>,
    start: usize,
    len: usize,
    room: usize,
}

impl ReadBuf {
    /// Buffers at least this long are large: page-aligned, and worth keeping for reuse. Smaller
    /// ones come cheaply from glibc's heap, placed anywhere in a page, so they rarely land on the
    /// slow offsets, and the alignment's padding (up to a page, zeroed) would cost more than the
    /// slow copies it avoids.
    pub const LARGE: usize = 64 << 10;

    /// `len` zeros; page-aligned when `len` is [`ReadBuf::LARGE`] or more.
    pub fn new(len: usize) -> ReadBuf {
        if len < ReadBuf::LARGE {
            return ReadBuf { storage: vec![0; len], start: 0, len, room: len };
        }
        let mut buf = ReadBuf::with_room(len);
        buf.set_len(len);
        buf
    }

    /// An empty buffer for up to `room` bytes, starting on a page boundary.
    pub fn with_room(room: usize) -> ReadBuf {
        let mut storage: Vec<u8> = Vec::with_capacity(room + PAGE - 1);
        let start = storage.as_ptr().align_offset(PAGE);
        storage.resize(start, 0);
        ReadBuf { storage, start, len: 0, room }
    }

    /// Make it `len` bytes long (at most its room). Bytes it never held before are zeroed by
    /// `memset`: pages first touched in user space cost less than pages first touched inside the
    /// kernel's copy (docs/benchmarks/find.md).
    pub fn set_len(&mut self, len: usize) {
        assert!(len <= self.room, "a buffer for {} bytes cannot hold {len}", self.room);
        if self.storage.len() < self.start + len {
            // Within the capacity: no reallocation, so the start stays aligned.
            self.storage.resize(self.start + len, 0);
        }
        self.len = len;
    }

    /// The most bytes it can hold.
    pub fn room(&self) -> usize {
        self.room
    }

    /// Its `len` bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.storage[self.start..self.start + self.len]
    }

    /// Its `len` bytes, to read into.
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        &mut self.storage[self.start..self.start + self.len]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn aligned(buf: &ReadBuf) -> bool {
        (buf.bytes().as_ptr() as usize).is_multiple_of(PAGE)
    }

    #[test]
    fn large_buffers_start_on_a_page_boundary() {
        for len in [ReadBuf::LARGE, 300_000, 1 << 20, (4 << 20) + 1] {
            let buf = ReadBuf::new(len);
            assert!(aligned(&buf), "{len}");
            assert_eq!(buf.bytes().len(), len);
            assert!(buf.bytes().iter().all(|&b| b == 0));
        }
        assert_eq!(ReadBuf::new(100).bytes(), &[0; 100][..]);
        assert_eq!(ReadBuf::new(PAGE).bytes(), &[0; PAGE][..]);
    }

    #[test]
    fn growing_within_the_room_keeps_the_place_and_zeroes_only_new_bytes() {
        let mut buf = ReadBuf::with_room(1 << 20);
        buf.set_len(300_000);
        buf.bytes_mut().fill(0xff);
        let addr = buf.bytes().as_ptr();
        buf.set_len(500_000);
        assert_eq!(buf.bytes().as_ptr(), addr);
        assert!(aligned(&buf));
        assert!(buf.bytes()[..300_000].iter().all(|&b| b == 0xff));
        assert!(buf.bytes()[300_000..].iter().all(|&b| b == 0));
        buf.set_len(10);
        assert_eq!(buf.bytes().len(), 10);
    }

    #[test]
    #[should_panic(expected = "cannot hold")]
    fn a_buffer_does_not_grow_past_its_room() {
        ReadBuf::with_room(PAGE).set_len(PAGE + 1);
    }
}
