//! What the chunkers' unit tests share: reproducible incompressible data, and a cutter run over
//! a buffer to the list of chunk lengths.

/// `len` bytes that are the same for the same `seed`.
pub(super) fn noise(len: usize, seed: u8) -> Vec<u8> {
    let mut out = vec![0u8; len];
    blake3::Hasher::new_keyed(&[seed; 32]).finalize_xof().fill(&mut out);
    out
}

/// The chunk lengths `cut` gives `data`, cutting again after each chunk.
pub(super) fn lengths(data: &[u8], cut: impl Fn(&[u8]) -> usize) -> Vec<usize> {
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < data.len() {
        let len = cut(&data[pos..]);
        out.push(len);
        pos += len;
    }
    out
}
