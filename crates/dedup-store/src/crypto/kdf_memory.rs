//! argon2's working memory (64 MiB at the default parameters) as a fresh anonymous mapping.
//!
//! The argon2 crate allocates its blocks itself with a 64-byte alignment, which std serves with
//! `posix_memalign` and a `memset`: the whole area is faulted in and zeroed on the calling thread
//! before the lanes start, a large share of the key derivation's CPU on one core while the
//! others wait. A mapping starts zeroed without anyone writing it, so its pages are faulted in by the
//! lanes themselves, on the threads that compute them in parallel. Unmapping the area takes a
//! while more, which a thread of its own spends while the caller goes on (the pages hold
//! password-derived state either way until the kernel reuses them; it zeroes them first). The
//! mapping is left out of core dumps (`MADV_DONTDUMP`).

#![allow(unsafe_code)]

use argon2::Block;
use memmap2::MmapMut;

/// A zeroed area of argon2 blocks.
pub(crate) struct KdfMemory {
    map: MmapMut,
    blocks: usize,
}

impl KdfMemory {
    /// Room for `blocks` blocks, not yet faulted in.
    pub fn new(blocks: usize) -> std::io::Result<Self> {
        let len = blocks
            .checked_mul(size_of::<Block>())
            .ok_or_else(|| std::io::Error::other("argon2 memory size overflows"))?;
        let map = MmapMut::map_anon(len.max(1))?;
        // The blocks hold state derived from the password: no core dump should carry them.
        #[cfg(target_os = "linux")]
        let _ = map.advise(memmap2::Advice::DontDump);
        Ok(KdfMemory { map, blocks })
    }

    /// The blocks.
    pub fn blocks(&mut self) -> &mut [Block] {
        let ptr = self.map.as_mut_ptr();
        debug_assert_eq!(ptr.align_offset(align_of::<Block>()), 0);
        // SAFETY: the mapping is page-aligned (a Block needs 64 bytes), holds `blocks` blocks
        // (checked in `new`), and is zero-filled by the kernel: a zeroed Block, an array of u64,
        // is a valid one. The slice borrows `self` mutably, so nothing else can reach the bytes
        // while it lives, and the mapping outlives it.
        unsafe { std::slice::from_raw_parts_mut(ptr.cast::<Block>(), self.blocks) }
    }

    /// Unmaps the area on a thread of its own (here, if no thread can be started).
    pub fn release_in_background(self) {
        let map = self.map;
        // On failure the closure, and the mapping with it, is dropped right here.
        let _ = std::thread::Builder::new().name("kdf-release".into()).spawn(move || drop(map));
    }
}
