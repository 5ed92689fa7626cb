//! 32-byte identifiers: of the store's files (BLAKE3 of the bytes as stored, which backends name
//! objects by) and of its blobs (keyed BLAKE3 of the plaintext), shown as 64 lowercase hex
//! digits.

use std::fmt;

/// A 32-byte id.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Id(pub [u8; 32]);

impl Id {
    /// The id of a repository file: BLAKE3 of its complete bytes.
    pub fn of_file(bytes: &[u8]) -> Id {
        Id(*blake3::hash(bytes).as_bytes())
    }

    /// A random id (writer markers, repository ids).
    pub fn random() -> Id {
        let mut bytes = [0u8; 32];
        // Without a working random source no id (nor key) can be made safely: stopping is the
        // only correct answer, and Linux's getrandom(2) does not fail once booted.
        getrandom::fill(&mut bytes).expect("the operating system's random source failed");
        Id(bytes)
    }

    /// The 64 hex digits.
    pub fn to_hex(&self) -> String {
        let mut out = String::with_capacity(64);
        for byte in self.0 {
            out.push(char::from(HEX[usize::from(byte >> 4)]));
            out.push(char::from(HEX[usize::from(byte & 15)]));
        }
        out
    }

    /// The first `n` hex digits, for display.
    pub fn short(&self, n: usize) -> String {
        let mut hex = self.to_hex();
        hex.truncate(n);
        hex
    }

    /// Parses exactly 64 hex digits (either case).
    pub fn from_hex(text: &str) -> Option<Id> {
        let bytes = text.as_bytes();
        if bytes.len() != 64 {
            return None;
        }
        let mut out = [0u8; 32];
        for (i, pair) in bytes.chunks_exact(2).enumerate() {
            out[i] = (hex_value(pair[0])? << 4) | hex_value(pair[1])?;
        }
        Some(Id(out))
    }
}

const HEX: &[u8; 16] = b"0123456789abcdef";

fn hex_value(digit: u8) -> Option<u8> {
    match digit {
        b'0'..=b'9' => Some(digit - b'0'),
        b'a'..=b'f' => Some(digit - b'a' + 10),
        b'A'..=b'F' => Some(digit - b'A' + 10),
        _ => None,
    }
}

impl fmt::Display for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_hex())
    }
}

impl fmt::Debug for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Id({})", self.short(12))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trips_and_rejects_bad_text() {
        let id = Id::of_file(b"abc");
        assert_eq!(Id::from_hex(&id.to_hex()), Some(id));
        assert_eq!(Id::from_hex(&id.to_hex().to_uppercase()), Some(id));
        assert_eq!(Id::from_hex("00"), None);
        assert_eq!(Id::from_hex(&"g".repeat(64)), None);
        assert_eq!(Id::from_hex(&"é".repeat(32)), None);
    }
}
