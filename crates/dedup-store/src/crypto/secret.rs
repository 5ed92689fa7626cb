//! Memory for keys: each secret in an anonymous mapping of its own, left out of core dumps
//! (`MADV_DONTDUMP`), kept out of swap where the limit on locked memory allows (`mlock`), and
//! zeroed when dropped. A secret is neither `Clone` nor printable: a copy is made on purpose
//! (`SecretBytes::new(*other)`), and `Debug` shows only that it is hidden.
//!
//! Copies on the stack while a key is derived or moved in are not covered (Rust gives no
//! control over them); the long-lived copy, the one a core dump or a swapped page would keep,
//! is. A machine that refuses the mapping gets the bytes on the heap, zeroed on drop all the
//! same.

use std::fmt;
use std::ops::Deref;

use memmap2::MmapMut;
use zeroize::Zeroize;

/// `N` secret bytes.
pub struct SecretBytes<const N: usize> {
    store: Store<N>,
}

enum Store<const N: usize> {
    /// A mapping of its own (at least `N` bytes long).
    Mapped(MmapMut),
    /// The fallback where no mapping could be made.
    Heap(Box<[u8; N]>),
}

impl<const N: usize> SecretBytes<N> {
    /// Zero bytes, to be filled in place (by [`SecretBytes::fill`]).
    fn zeroed() -> Self {
        match MmapMut::map_anon(N.max(1)) {
            Ok(map) => {
                // Both are best effort: a kernel without MADV_DONTDUMP, or a limit on locked
                // memory, leaves the bytes in a dump or in swap, as on the heap.
                #[cfg(target_os = "linux")]
                let _ = map.advise(memmap2::Advice::DontDump);
                let _ = map.lock();
                SecretBytes { store: Store::Mapped(map) }
            }
            Err(_) => SecretBytes { store: Store::Heap(Box::new([0; N])) },
        }
    }

    /// Secret bytes that `fill` writes in place (no copy of them is left elsewhere).
    pub fn fill(fill: impl FnOnce(&mut [u8; N])) -> Self {
        let mut secret = Self::zeroed();
        fill(secret.bytes_mut());
        secret
    }

    /// A copy of `bytes`; the argument (a copy the caller made) is zeroed.
    pub fn new(mut bytes: [u8; N]) -> Self {
        let secret = Self::fill(|into| *into = bytes);
        bytes.zeroize();
        secret
    }

    fn bytes_mut(&mut self) -> &mut [u8; N] {
        match &mut self.store {
            Store::Mapped(map) => {
                <&mut [u8; N]>::try_from(&mut map[..N]).expect("the mapping holds N bytes")
            }
            Store::Heap(bytes) => bytes,
        }
    }
}

impl<const N: usize> Deref for SecretBytes<N> {
    type Target = [u8; N];

    fn deref(&self) -> &[u8; N] {
        match &self.store {
            Store::Mapped(map) => {
                <&[u8; N]>::try_from(&map[..N]).expect("the mapping holds N bytes")
            }
            Store::Heap(bytes) => bytes,
        }
    }
}

impl<const N: usize> Drop for SecretBytes<N> {
    fn drop(&mut self) {
        self.bytes_mut().zeroize();
    }
}

impl<const N: usize> fmt::Debug for SecretBytes<N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SecretBytes<{N}>(hidden)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_bytes_hold_what_was_put_in_and_never_print_it() {
        let secret = SecretBytes::new([0xab; 32]);
        assert_eq!(*secret, [0xab; 32]);
        assert!(matches!(secret.store, Store::Mapped(_)), "a mapping of its own");
        let shown = format!("{secret:?}");
        assert!(!shown.contains("ab") && !shown.contains("171"), "{shown}");
        let filled = SecretBytes::<4>::fill(|bytes| bytes.copy_from_slice(b"abcd"));
        assert_eq!(&*filled, b"abcd");
    }
}
