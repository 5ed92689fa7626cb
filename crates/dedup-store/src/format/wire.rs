//! Little-endian primitives for the codecs: a growable writer and a bounds-checked reader whose
//! every read returns an error instead of panicking on short or hostile input.

use super::DecodeError;
use crate::id::Id;

/// Appends fields to a byte vector.
#[derive(Default)]
pub struct Writer {
    /// The bytes written so far.
    pub buf: Vec<u8>,
}

impl Writer {
    pub fn u8(&mut self, value: u8) {
        self.buf.push(value);
    }
    pub fn u32(&mut self, value: u32) {
        self.buf.extend_from_slice(&value.to_le_bytes());
    }
    pub fn u64(&mut self, value: u64) {
        self.buf.extend_from_slice(&value.to_le_bytes());
    }
    pub fn i64(&mut self, value: i64) {
        self.buf.extend_from_slice(&value.to_le_bytes());
    }
    pub fn i32(&mut self, value: i32) {
        self.buf.extend_from_slice(&value.to_le_bytes());
    }
    pub fn id(&mut self, id: &Id) {
        self.buf.extend_from_slice(&id.0);
    }
    pub fn raw(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }
    /// A `u32` length, then the bytes. Lengths beyond `u32` never occur: callers bound them.
    pub fn bytes(&mut self, bytes: &[u8]) {
        self.len(bytes.len());
        self.buf.extend_from_slice(bytes);
    }
    /// `value` as a LEB128 varint: 7 bits a byte, low bits first, the top bit set on every byte
    /// but the last; the shortest such encoding.
    pub fn varint(&mut self, mut value: u64) {
        while value >= 0x80 {
            self.buf.push(value as u8 | 0x80);
            value >>= 7;
        }
        self.buf.push(value as u8);
    }
    /// `value - previous` (wrapping), zigzag-mapped (0, -1, 1, -2 … to 0, 1, 2, 3 …), as a
    /// varint: close values take a byte or two.
    pub fn delta(&mut self, value: u64, previous: u64) {
        let d = value.wrapping_sub(previous) as i64;
        self.varint(((d << 1) ^ (d >> 63)) as u64);
    }
    /// A count or length as `u32`, saturating (decoders then reject the mismatch).
    pub fn len(&mut self, len: usize) {
        self.u32(u32::try_from(len).unwrap_or(u32::MAX));
    }
}

/// Reads fields from a byte slice, front to back.
pub struct Reader<'a> {
    data: &'a [u8],
}

impl<'a> Reader<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Reader { data }
    }

    /// The bytes not read yet.
    pub fn rest(&self) -> &'a [u8] {
        self.data
    }

    pub fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        if n > self.data.len() {
            return Err(DecodeError::Truncated);
        }
        let (head, rest) = self.data.split_at(n);
        self.data = rest;
        Ok(head)
    }

    pub fn array<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N)?);
        Ok(out)
    }

    pub fn u8(&mut self) -> Result<u8, DecodeError> {
        Ok(self.array::<1>()?[0])
    }
    pub fn u32(&mut self) -> Result<u32, DecodeError> {
        Ok(u32::from_le_bytes(self.array()?))
    }
    pub fn u64(&mut self) -> Result<u64, DecodeError> {
        Ok(u64::from_le_bytes(self.array()?))
    }
    pub fn i64(&mut self) -> Result<i64, DecodeError> {
        Ok(i64::from_le_bytes(self.array()?))
    }
    pub fn i32(&mut self) -> Result<i32, DecodeError> {
        Ok(i32::from_le_bytes(self.array()?))
    }
    pub fn id(&mut self) -> Result<Id, DecodeError> {
        Ok(Id(self.array()?))
    }

    /// A `u32`-prefixed byte string of at most `max` bytes.
    pub fn bytes(&mut self, max: usize, what: &str) -> Result<&'a [u8], DecodeError> {
        let len = self.u32()? as usize;
        if len > max {
            return Err(DecodeError::invalid(format!(
                "{what}: {len} bytes, at most {max} allowed"
            )));
        }
        self.take(len)
    }

    /// A `u32`-prefixed UTF-8 string of at most `max` bytes.
    pub fn str(&mut self, max: usize, what: &str) -> Result<String, DecodeError> {
        let bytes = self.bytes(max, what)?;
        String::from_utf8(bytes.to_vec())
            .map_err(|_| DecodeError::invalid(format!("{what}: not UTF-8")))
    }

    /// A `u32` count of items each at least `min_item` bytes long: a count the remaining bytes
    /// cannot hold is rejected before anything is allocated for it.
    pub fn count(&mut self, min_item: usize, what: &str) -> Result<usize, DecodeError> {
        let count = self.u32()? as usize;
        if count.saturating_mul(min_item.max(1)) > self.data.len() {
            return Err(DecodeError::invalid(format!("{what}: count {count} exceeds the data")));
        }
        Ok(count)
    }

    /// Succeeds only when every byte was read.
    pub fn finish(self) -> Result<(), DecodeError> {
        match self.data.len() {
            0 => Ok(()),
            n => Err(DecodeError::Trailing(n)),
        }
    }

    /// A varint ([`Writer::varint`]); an encoding longer than the shortest, or beyond 64 bits,
    /// is refused.
    pub fn varint(&mut self) -> Result<u64, DecodeError> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = self.u8()?;
            let bits = u64::from(byte & 0x7f);
            if shift == 63 && bits > 1 {
                return Err(DecodeError::Invalid("varint beyond 64 bits".into()));
            }
            value |= bits << shift;
            if byte & 0x80 == 0 {
                if byte == 0 && shift > 0 {
                    return Err(DecodeError::Invalid("varint longer than it needs".into()));
                }
                return Ok(value);
            }
        }
        Err(DecodeError::Invalid("varint beyond 64 bits".into()))
    }

    /// The value a [`Writer::delta`] from `previous` wrote.
    pub fn delta(&mut self, previous: u64) -> Result<u64, DecodeError> {
        let z = self.varint()?;
        let d = ((z >> 1) as i64) ^ -((z & 1) as i64);
        Ok(previous.wrapping_add(d as u64))
    }

    /// Reads a version byte and checks it is one of those this program knows.
    pub fn version_in(&mut self, known: std::ops::RangeInclusive<u8>) -> Result<u8, DecodeError> {
        match self.u8()? {
            v if known.contains(&v) => Ok(v),
            found => Err(DecodeError::Version { found, known: *known.end() }),
        }
    }

    /// Reads the version byte and checks it against the one this program knows.
    pub fn version(&mut self, known: u8) -> Result<(), DecodeError> {
        match self.u8()? {
            v if v == known => Ok(()),
            found => Err(DecodeError::Version { found, known }),
        }
    }
}
