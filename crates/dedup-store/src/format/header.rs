//! The 8-byte header that opens config, pack, index, snapshot and writer files: magic, version,
//! flags (encrypted) and sub-kind (a pack's blob kind). Every file is of version 1 but packs,
//! which have a version 2 (padded, format version 4).

use super::DecodeError;

/// Length of the header.
pub const HEADER_LEN: usize = 8;

/// Version of the header layout and of the files that use it.
const HEADER_VERSION: u8 = 1;

/// The newest version of a pack (docs/store-format.md §7).
pub const PACK_VERSION_MAX: u8 = 2;

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
        self.encode_version(HEADER_VERSION)
    }

    /// The 8 bytes of a file of `version` (a pack's 1 or 2; every other file is of version 1).
    pub fn encode_version(&self, version: u8) -> [u8; HEADER_LEN] {
        let mut out = [0u8; HEADER_LEN];
        out[..4].copy_from_slice(self.magic.bytes());
        out[4] = version;
        out[5] = if self.encrypted { FLAG_ENCRYPTED } else { 0 };
        out[6] = self.sub_kind;
        out
    }

    /// Decodes the header at the start of `file`, which must be of kind `magic` and version 1.
    pub fn decode(file: &[u8], magic: Magic) -> Result<Header, DecodeError> {
        Self::decode_version(file, magic, HEADER_VERSION).map(|(header, _)| header)
    }

    /// Decodes the header of a pack, of version 1 or 2; returns it and the version.
    pub fn decode_pack(file: &[u8]) -> Result<(Header, u8), DecodeError> {
        Self::decode_version(file, Magic::Pack, PACK_VERSION_MAX)
    }

    /// Decodes the header at the start of `file` of kind `magic` and of a version from 1 to
    /// `newest`.
    fn decode_version(file: &[u8], magic: Magic, newest: u8) -> Result<(Header, u8), DecodeError> {
        let bytes = file.get(..HEADER_LEN).ok_or(DecodeError::Truncated)?;
        if &bytes[..4] != magic.bytes() {
            return Err(DecodeError::Magic { expected: magic.name() });
        }
        let version = bytes[4];
        if !(HEADER_VERSION..=newest).contains(&version) {
            return Err(DecodeError::Version { found: version, known: newest });
        }
        if bytes[5] & !FLAG_ENCRYPTED != 0 {
            return Err(DecodeError::invalid(format!("unknown header flags 0x{:02x}", bytes[5])));
        }
        if bytes[7] != 0 {
            return Err(DecodeError::invalid(format!(
                "header byte 7 (reserved) is 0x{:02x}, not 0x00",
                bytes[7]
            )));
        }
        let sub_kind = bytes[6];
        if sub_kind > u8::from(magic == Magic::Pack) {
            return Err(DecodeError::invalid(format!("unknown sub-kind {sub_kind}")));
        }
        Ok((Header { magic, encrypted: bytes[5] & FLAG_ENCRYPTED != 0, sub_kind }, version))
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

    #[test]
    fn packs_have_a_version_2_and_no_other_file_does() {
        let pack = Header { magic: Magic::Pack, encrypted: true, sub_kind: 0 };
        let bytes = pack.encode_version(2);
        assert_eq!(Header::decode_pack(&bytes), Ok((pack, 2)));
        assert_eq!(Header::decode_pack(&pack.encode()), Ok((pack, 1)));
        assert!(matches!(Header::decode(&bytes, Magic::Pack), Err(DecodeError::Version { .. })));
        for bad in [0, 3] {
            let bytes = pack.encode_version(bad);
            assert!(matches!(Header::decode_pack(&bytes), Err(DecodeError::Version { .. })));
        }
        let index = Header { magic: Magic::Index, encrypted: true, sub_kind: 0 }.encode_version(2);
        assert!(matches!(Header::decode(&index, Magic::Index), Err(DecodeError::Version { .. })));
    }
}
