//! Splitting a stream into chunks (docs/store-format.md §5): keyed FastCDC with PRF-placed cuts
//! (the default since format version 4), flat (format version 2) or normalised (as repositories
//! of format version 1 cut), or fixed-size blocks for disk images, and a reader that feeds any
//! of them from a `Read` through one reused buffer.

mod bounds;
mod fastcdc;
mod prf_cut;
mod stream;
#[cfg(test)]
mod test_support;

pub use fastcdc::FastCdc;
pub use prf_cut::PrfCut;
pub use stream::ChunkStream;

use crate::format::ChunkerParams;

/// A configured chunker.
#[derive(Clone)]
pub enum Chunker {
    /// Content-defined, keyed, cut where the hash's bits say.
    FastCdc(Box<FastCdc>),
    /// Content-defined, keyed, cut where a PRF says.
    PrfCut(Box<PrfCut>),
    /// Fixed-size blocks.
    Fixed(u32),
}

impl Chunker {
    /// The chunker of a repository's config, with its gear key.
    pub fn new(params: ChunkerParams, gear_key: &[u8; 32]) -> Self {
        match params {
            ChunkerParams::FastCdc { min, avg, max } => {
                Chunker::FastCdc(Box::new(FastCdc::flat(gear_key, min, avg, max)))
            }
            ChunkerParams::FastCdcNormalised { min, avg, max } => {
                Chunker::FastCdc(Box::new(FastCdc::normalised(gear_key, min, avg, max, 2)))
            }
            ChunkerParams::FastCdcPrf { min, avg, max } => {
                Chunker::PrfCut(Box::new(PrfCut::new(gear_key, min, avg, max)))
            }
            ChunkerParams::Fixed { size } => Chunker::Fixed(size),
        }
    }

    /// The largest chunk; `cut` needs this many bytes (or the whole rest of the stream).
    pub fn max_size(&self) -> usize {
        match self {
            Chunker::FastCdc(cdc) => cdc.max_size(),
            Chunker::PrfCut(cdc) => cdc.max_size(),
            Chunker::Fixed(size) => *size as usize,
        }
    }

    /// Length of the chunk at the start of `data`, which holds at least [`Chunker::max_size`]
    /// bytes or the whole rest of the stream. Never 0 for non-empty `data`.
    pub fn cut(&self, data: &[u8]) -> usize {
        match self {
            Chunker::FastCdc(cdc) => cdc.cut(data),
            Chunker::PrfCut(cdc) => cdc.cut(data),
            Chunker::Fixed(size) => data.len().min(*size as usize),
        }
    }

    /// Length of the chunk at the start of `data`, the bytes of the stream read so far, when
    /// they decide it (`None`: more bytes are needed). Fewer than [`Chunker::max_size`] bytes
    /// decide a chunk only where they hold a boundary.
    pub fn cut_if_decided(&self, data: &[u8]) -> Option<usize> {
        match self {
            Chunker::FastCdc(cdc) => cdc.cut_if_decided(data),
            Chunker::PrfCut(cdc) => cdc.cut_if_decided(data),
            Chunker::Fixed(size) => (data.len() >= *size as usize).then_some(*size as usize),
        }
    }
}
