//! Codecs of the on-disk structures of docs/store-format.md: each file kind encodes to bytes and
//! decodes from untrusted bytes, returning an error (never panicking) on anything malformed.

mod blob_kind;
mod config;
mod deletion_plan;
mod entries;
mod header;
mod index_file;
mod key_file;
mod snapshot;
mod status_tree;
mod tree;
mod tree_entry;
mod tree_view;
mod wire;
mod writer_marker;

pub use blob_kind::BlobKind;
pub use config::{
    ChunkerParams, CompressionMode, Config, MAX_CHUNK, PACK_SIZE_RANGE, PADDED_PACKS_VERSION,
};
pub use deletion_plan::DeletionPlan;
pub use entries::{BlobEntry, Compression, ENTRY_LEN};
pub use header::{Header, Magic, HEADER_LEN, PACK_VERSION_MAX};
pub use index_file::{IndexFile, IndexedPack};
pub use key_file::{Kdf, KdfParams, KeyFile};
pub use snapshot::{Snapshot, Summary};
pub use status_tree::{EntryStatus, StatusTree};
pub use tree::{valid_name, Content, Node, NodeKind, Tree, TreeStatus};
pub use tree_entry::{encode_entries, ContentView, EncodedEntry, EntryView};
pub use tree_view::TreeView;
pub use writer_marker::WriterInfo;

/// The newest repository format version this program reads and writes (it reads and writes
/// every older one too: docs/store-format.md §13).
pub const FORMAT_VERSION: u8 = 4;

/// Why bytes do not decode.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// The bytes end before the structure does.
    #[error("truncated")]
    Truncated,
    /// Bytes are left over after the structure.
    #[error("{0} unexpected bytes after the end")]
    Trailing(usize),
    /// The magic number is not the expected one.
    #[error("not a {expected} file (wrong magic number)")]
    Magic {
        /// What was expected.
        expected: &'static str,
    },
    /// A version this program does not know.
    #[error("version {found}, this program knows {known}")]
    Version {
        /// Found.
        found: u8,
        /// Known.
        known: u8,
    },
    /// A field holds a value the format does not allow.
    #[error("{0}")]
    Invalid(String),
}

impl DecodeError {
    fn invalid(reason: impl Into<String>) -> Self {
        DecodeError::Invalid(reason.into())
    }
}

/// Decode `bytes` with one byte flipped (`byte` XORed in at `at`), then cut to a length from
/// `cut`: the property tests of every decoder use it to show that damaged input is an error,
/// never a panic.
#[cfg(test)]
fn damaged_input<T>(bytes: &[u8], at: usize, byte: u8, cut: usize, decode: impl Fn(&[u8]) -> T) {
    let mut bytes = bytes.to_vec();
    if !bytes.is_empty() {
        let at = at % bytes.len();
        bytes[at] ^= byte;
    }
    let _ = decode(&bytes);
    bytes.truncate(cut % (bytes.len() + 1));
    let _ = decode(&bytes);
}
