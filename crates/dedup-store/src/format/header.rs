//! The 8-byte header that opens config, pack, index, snapshot and writer files: magic, version,
//! flags (encrypted) and sub-kind (a pack's blob kind).

use super::DecodeError;

/// Length of the header.
pub const HEADER_LEN: usize = 8;

/// Version of the header layout and of the files that use it.
const HEADER_VERSION: u8 = 1;

/// Flag bit: the repository is encrypted.
const FLAG_ENCRYPTED: u8 = 1;

/// Which file a header opens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Magic {
    /// `config`.
    Config,
    /// A pack.
    Pack,
    /// An index file.
    Index,
    /// A snapshot.
    Snapshot,
    /// A writer marker.
    Writer,
    /// A deletion plan of prune.
    Deletion,
}

impl Magic {
    fn bytes(self) -> &'static [u8; 4] {
        match self {
            Magic::Config => b"DDSC",
            Magic::Pack => b"DDSP",
            Magic::Index => b"DDSI",
            Magic::Snapshot => b"DDSS",
            Magic::Writer => b"DDSW",
            Magic::Deletion => b"DDSD",
        }
    }

    fn name(self) -> &'static str {
        match self {
            Magic::Config => "config",
            Magic::Pack => "pack",
            Magic::Index => "index",
            Magic::Snapshot => "snapshot",
            Magic::Writer => "writer marker",
            Magic::Deletion => "deletion plan",
        }
    }
}

/// A decoded header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// The file kind.
    pub magic: Magic,
    /// Whether the repository encrypts.
    pub encrypted: bool,
    /// A pack's blob kind (0 data, 1 tree); 0 elsewhere.
    pub sub_kind: u8,
}

impl Header {
    /// The 8 bytes.
    pub fn encode(&self) -> [u8; HEADER_LEN] {
        let mut out = [0u8; HEADER_LEN];
        out[..4].copy_from_slice(self.magic.bytes());
        out[4] = HEADER_VERSION;
        out[5] = if self.encrypted { FLAG_ENCRYPTED } else { 0 };
        out[6] = self.sub_kind;
        out
    }

    /// Decodes the header at the start of `file`, which must be of kind `magic`.
    pub fn decode(file: &[u8], magic: Magic) -> Result<Header, DecodeError> {
        let bytes = file.get(..HEADER_LEN).ok_or(DecodeError::Truncated)?;
        if &bytes[..4] != magic.bytes() {
            return Err(DecodeError::Magic { expected: magic.name() });
        }
        if bytes[4] != HEADER_VERSION {
            return Err(DecodeError::Version { found: bytes[4], known: HEADER_VERSION });
        }
        if bytes[5] & !FLAG_ENCRYPTED != 0 || bytes[7] != 0 {
            return Err(DecodeError::invalid("unknown header flags"));
        }
        let sub_kind = bytes[6];
        if sub_kind > u8::from(magic == Magic::Pack) {
            return Err(DecodeError::invalid(format!("unknown sub-kind {sub_kind}")));
        }
        Ok(Header { magic, encrypted: bytes[5] & FLAG_ENCRYPTED != 0, sub_kind })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trips_and_rejects_other_kinds() {
        let header = Header { magic: Magic::Pack, encrypted: true, sub_kind: 1 };
        let bytes = header.encode();
        assert_eq!(Header::decode(&bytes, Magic::Pack), Ok(header));
        assert!(matches!(Header::decode(&bytes, Magic::Index), Err(DecodeError::Magic { .. })));
        assert_eq!(Header::decode(&bytes[..5], Magic::Pack), Err(DecodeError::Truncated));
        let mut bad = bytes;
        bad[4] = 9;
        assert!(matches!(Header::decode(&bad, Magic::Pack), Err(DecodeError::Version { .. })));
    }
}
