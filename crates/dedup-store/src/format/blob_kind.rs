//! The two kinds of blob a repository holds, and their codes on disk (docs/store-format.md).

use super::DecodeError;

/// Data (file chunks) or tree (directory listings).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum BlobKind {
    /// A chunk of a file.
    Data,
    /// A directory listing.
    Tree,
}

impl BlobKind {
    pub(crate) fn code(self) -> u8 {
        match self {
            BlobKind::Data => 0,
            BlobKind::Tree => 1,
        }
    }

    pub(crate) fn from_code(code: u8) -> Result<Self, DecodeError> {
        match code {
            0 => Ok(BlobKind::Data),
            1 => Ok(BlobKind::Tree),
            other => Err(DecodeError::Invalid(format!("unknown blob kind {other}"))),
        }
    }

    /// `data` or `tree`.
    pub fn name(self) -> &'static str {
        match self {
            BlobKind::Data => "data",
            BlobKind::Tree => "tree",
        }
    }
}
