//! Packs (docs/store-format.md §7): the writers that gather sealed blobs of one kind behind a
//! header and close them with a sealed trailer (in memory, or straight to the storage), padded
//! in format version 4, and the reader of trailers.

mod reader;
mod streamed;
mod tail;
mod writer;

pub use reader::{parse_pack, read_trailer, ParsedPack};
pub use streamed::{StreamedPack, StreamedPackWriter};
pub use tail::{bucket, padded_len, PackLayout, MIN_PADDED_PACK};
pub(crate) use tail::{unpadded_len, PADDING_AD};
pub use writer::{FinishedPack, PackWriter};

/// The tail magic after the trailer length.
pub(crate) const TAIL_MAGIC: &[u8; 4] = b"DDPT";
/// Associated data appended to the header for the trailer box.
pub(crate) const TRAILER_AD: &[u8] = b"trailer";

/// The repository path of pack `id`.
pub fn pack_path(id: &crate::Id) -> String {
    let hex = id.to_hex();
    format!("data/{}/{hex}", &hex[..2])
}
